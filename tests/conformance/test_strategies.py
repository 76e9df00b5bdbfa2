"""conformance.strategies, the public Hypothesis strategies of a TPP's tests (issue 21, point 2): valid payloads and
whole signed requests on any day, and payloads breaking exactly the rule named, with the bank's answer."""
from __future__ import annotations

import datetime as _dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.client import Identity, SignedClient
from conformance.gate.target import ReferenceServer
from conformance.mutations import MUTATIONS
from conformance.sandbox.clock import Clock
from conformance.strategies import Broken, breakable_rules, breaking, kind_of_operation, payloads, signed_requests
from validator.api import Validator
from validator.context import Context
from validator.findings import ERROR
from validator.spec import load_spec

SPEC = load_spec()
FAR = _dt.date(2039, 12, 30)
VALIDATOR = Validator(spec=SPEC, today=FAR)
FEW = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                     HealthCheck.too_slow])


@pytest.mark.parametrize("kind", ["sepa-credit-transfer", "bulk-payment", "periodic-payment", "card-transactions"])
def test_payloads_pass_the_validator_on_a_far_day(kind):
    @FEW
    @given(payloads(kind, today=FAR))
    def check(payload):
        report = VALIDATOR.validate(payload, kind)
        assert report.findings == [], report.findings

    check()


def test_an_unknown_kind_is_refused_at_once():
    with pytest.raises(Exception, match="no-such-kind"):
        payloads("no-such-kind")


@pytest.fixture(scope="module")
def reference():
    clock = Clock("2039-12-30T08:00:00Z", frozen=True)
    server = ReferenceServer(clock=clock).start()
    with SignedClient(server.url, Identity.generate("PSDNO-FSA-STRATEGIES"), clock=clock.now) as client:
        yield client
    server.stop()


@pytest.mark.parametrize("operation", ["createSepaCreditTransfer", "createBulkPayment", "createPeriodicPayment"])
def test_signed_requests_are_created_on_the_clients_day(reference, operation):
    """Whole signed requests of the client's day (2039-12-30 by its clock): the sandbox creates each."""
    @FEW
    @given(signed_requests(operation, reference, query={"allowLogicalDuplicate": "true"}))
    def check(request):
        assert request.target.endswith("?allowLogicalDuplicate=true")
        assert {"Digest", "Signature", "TPP-Signature-Certificate", "Date"} <= {n for n, _v in request.headers}
        answer = reference.send_prepared(request)
        assert answer.status_code == 201, answer.text

    check()


def test_signed_requests_take_bodies_and_operations_without_one(reference):
    @FEW
    @given(st.data())
    def check(data):
        broken = data.draw(breaking("iban-invalid", "sepa-credit-transfer", today=FAR))
        request = data.draw(signed_requests("createSepaCreditTransfer", reference, bodies=st.just(broken.payload)))
        answer = reference.send_prepared(request)
        assert (answer.status_code, answer.json()["tppMessages"][0]["code"]) == (broken.status, broken.code)
        listing = data.draw(signed_requests("listSandboxCustomers", reference))
        assert listing.body == b"" and reference.send_prepared(listing).status_code == 200

    check()
    assert kind_of_operation("createBulkPayment") == "bulk-payment" and kind_of_operation("getPayment") is None


CASES = [("kid-invalid", "bulk-payment"), ("execution-date-past", "sepa-credit-transfer"),
         ("amount-minor-units", "periodic-payment"), ("basket-duplicate-ids", "signing-basket"),
         ("bban-check-digit", "bulk-payment"), ("unknown-property", "sepa-credit-transfer")]


@pytest.mark.parametrize(("rule", "kind"), CASES)
def test_breaking_breaks_exactly_the_rule_named(rule, kind):
    @FEW
    @given(breaking(rule, kind, today=FAR))
    def check(broken: Broken):
        assert (broken.rule, broken.kind) == (rule, kind)
        assert VALIDATOR.validate(broken.valid, kind).findings == []
        context = Context.from_mapping(broken.context) if broken.context else None
        findings = Validator(spec=SPEC, today=FAR, context=context).validate(broken.payload, kind).findings
        assert {f.rule for f in findings} == {rule}, findings
        [first] = [f for f in findings if f.pointer == broken.pointer][:1]
        assert (first.status, first.code, first.severity) == (broken.status, broken.code, broken.severity)
        if broken.severity == ERROR:
            assert broken.status and broken.code

    check()


def test_breaking_names_what_it_can_break():
    assert set(breakable_rules("bulk-payment")) == {r for r, (kinds, _fn) in MUTATIONS.items() if "bulk-payment" in kinds}
    assert "kid-invalid" in breakable_rules("bulk-payment") and "kid-invalid" not in breakable_rules("sepa-credit-transfer")
    with pytest.raises(ValueError, match="no mutation breaks rule 'no-such-rule'"):
        breaking("no-such-rule", "bulk-payment")
    with pytest.raises(ValueError, match="sepa-credit-transfer offers: amount-grammar"):
        breaking("kid-invalid", "sepa-credit-transfer")
