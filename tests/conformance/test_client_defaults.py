"""SignedClient's default bodies are valid on the client's day, whatever day that is (issue 21, point 1): the spec
example's dates are moved to the client's clock, so an execution date never goes stale."""
from __future__ import annotations

import datetime as _dt

import pytest

from conformance.client import Identity, SignedClient
from conformance.gate.target import ReferenceServer
from conformance.sandbox.clock import Clock
from validator.api import Validator
from validator.findings import ERROR
from validator.request.build import first_body_example
from validator.spec import load_spec

SPEC = load_spec()
IDENTITY = Identity.generate("PSDNO-FSA-DEFAULTS")
# The day the issue found the stale example on; the ends of February in a common and a leap year; 23:30 UTC, which is
# already the next day in Oslo; and a far-future day within the throwaway certificate's validity (until 2040).
DAYS = ("2026-11-25T10:00:00Z", "2027-02-28T12:00:00Z", "2028-02-29T12:00:00Z", "2031-03-14T23:30:00Z",
        "2039-12-30T09:00:00Z")
CREATIONS = ("createSepaCreditTransfer", "createBulkPayment", "createPeriodicPayment")
BODY_OPERATIONS = tuple(op.operation_id for op in SPEC.operations.values() if op.request_schema_ref)


@pytest.fixture(scope="module")
def reference():
    clock = Clock(DAYS[0], frozen=True)
    server = ReferenceServer(clock=clock).start()
    yield server, clock
    server.stop()


@pytest.mark.parametrize("instant", DAYS)
def test_default_payments_are_created_on_the_targets_day(reference, instant):
    server, clock = reference
    clock.set(instant)
    with SignedClient(server.url, IDENTITY, clock=clock.now) as client:
        for operation in CREATIONS:
            answer = client.call(operation)
            assert answer.status_code == 201, (operation, instant, answer.text)
            assert answer.json()["transactionStatus"] == "RCVD"


@pytest.mark.parametrize("instant", DAYS)
def test_every_default_body_passes_the_validator_on_the_clients_day(instant):
    clock = Clock(instant, frozen=True)
    client = SignedClient("http://127.0.0.1:9", IDENTITY, spec=SPEC, clock=clock.now)
    validator = Validator(spec=SPEC, today=clock.today())
    for operation in BODY_OPERATIONS:
        kind = next(k.name for k in SPEC.kinds.values() if k.is_request and k.operations[0].startswith(operation + " "))
        report = validator.validate(client.default_body(operation), kind)
        assert not [f for f in report.findings if f.severity == ERROR], (operation, instant, report.findings)


def test_the_example_dates_move_by_the_days_from_the_examples_day():
    example = first_body_example(SPEC, SPEC.operation("createSepaCreditTransfer"))
    ahead = (_dt.date.fromisoformat(example["requestedExecutionDate"])
             - _dt.date.fromisoformat(SPEC.example_today)).days
    client = SignedClient("http://127.0.0.1:9", IDENTITY, spec=SPEC, clock=Clock("2031-03-14T23:30:00Z").now)
    body = client.default_body("createSepaCreditTransfer")
    assert body["requestedExecutionDate"] == (_dt.date(2031, 3, 15) + _dt.timedelta(days=ahead)).isoformat()  # Oslo's day
    periodic = client.default_body("createPeriodicPayment")
    assert periodic["startDate"] >= "2031-03-15"
    assert {k: v for k, v in body.items() if k != "requestedExecutionDate"} == \
        {k: v for k, v in example.items() if k != "requestedExecutionDate"}


def test_a_body_given_is_sent_as_given():
    client = SignedClient("http://127.0.0.1:9", IDENTITY, spec=SPEC, clock=Clock("2031-03-14T10:00:00Z").now)
    body = first_body_example(SPEC, SPEC.operation("createSepaCreditTransfer"))
    sent = client.prepare("createSepaCreditTransfer", body=body)
    assert f'"requestedExecutionDate":"{body["requestedExecutionDate"]}"'.encode() in sent.body
