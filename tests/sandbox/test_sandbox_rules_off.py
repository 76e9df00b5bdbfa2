"""A profile that switches rules off (`severity: off`) states what an implementation does not check; it does not make
the sandbox able to book a payment without an amount. Whatever such a profile lets through that the handlers cannot
process is refused as the default profile refuses it (400, its code and path) -- never a 500 or a hang."""
from __future__ import annotations

import time

import pytest
import yaml

from conformance.client import SignedClient
from conformance.sandbox import Sandbox
from conformance.sandbox.clock import Clock
from validator.context import Profile
from validator.rules import catalogue
from validator.spec import load_spec

from conftest import START

# Bodies no handler can process: wrong JSON types, members of the wrong type, an amount whose exponent would take
# the conversion to minor units minutes and gigabytes.
BODIES = [{}, [], "x", 5, None, {"instructedAmount": None}, {"payments": [1, None, {}]}, {"payments": None},
          {"instructedAmount": {"amount": "1e999999999", "currency": "NOK"}}, {"paymentIds": [None, 5, {}]},
          {"paymentIds": "x"}, {"customerNumber": None}, {"transactions": [None]}, {"transactions": "x"}, {"name": 5}]


@pytest.fixture
def every_rule_off(server, tmp_path):
    path = tmp_path / "off.yaml"
    path.write_text(yaml.safe_dump({"name": "checks nothing", "rules": {r: {"severity": "off"} for r in catalogue()}}))
    sandbox = Sandbox.create(profile=Profile.load(str(path)), clock=Clock(START, frozen=True))
    server.app.state.sandbox = sandbox
    yield sandbox
    sandbox.store.close()


def test_no_body_makes_the_sandbox_fail_with_every_rule_off(server, every_rule_off, identities):
    spec = load_spec()
    answers = {}
    with SignedClient(server.url, identities["A"], clock=every_rule_off.clock.now) as client:
        for operation_id, operation in spec.operations.items():
            if operation.method.upper() != "POST":
                continue
            for body in BODIES:
                started = time.monotonic()
                response = client.call(operation_id, body=body)
                assert time.monotonic() - started < 10, (operation_id, body)
                answers[(operation_id, repr(body))] = response.status_code
    failed = {case: status for case, status in answers.items() if status >= 500}
    assert not failed
    # the bodies the handlers cannot process are refused as the default profile refuses them
    assert answers[("createSepaCreditTransfer", "{}")] == 400
    assert answers[("createSigningBasket", "{'paymentIds': 'x'}")] == 400
    assert answers[("createSandboxCustomer", "{'customerNumber': None}")] == 400


def test_what_the_books_can_take_is_still_created_with_every_rule_off(server, every_rule_off, identities):
    body = {"debtorAccount": {"iban": "NO9386011117947"}, "creditorAccount": {"iban": "DE89370400440532013000"},
            "instructedAmount": {"currency": "EUR", "amount": "-1"}, "creditorName": ""}
    with SignedClient(server.url, identities["A"], clock=every_rule_off.clock.now) as client:
        created = client.call("createSepaCreditTransfer", body=body)
        assert created.status_code == 201, created.text   # amount-positive off: the implementation takes it
        huge = dict(body, instructedAmount={"currency": "EUR", "amount": "1e999999999"})
        refused = client.call("createSepaCreditTransfer", body=huge)
    assert refused.status_code == 400
    assert refused.json()["tppMessages"][0]["path"] == "/instructedAmount/amount"
