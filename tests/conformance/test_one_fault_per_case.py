"""Issue 27 §3, one fault per case: a check needing an accepted request sends a valid control first in every suite; a
control accepted with another 2xx is a finding about that answer, not a refusal; a fault of parts (the keyId's serial
and issuer) is broken one part at a time; header-oversized fills a header without negotiation meaning."""
from __future__ import annotations

import pytest

from conformance.gate.session import Identities
from conformance.mutations import REQUEST_MUTATIONS, REQUEST_OPERATIONS
from conformance.sandbox import faults as F
from gate_helpers import describe, gate_run, serve
from validator.spec import load_spec


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(identities, *, answer=None, faults=(), suites=("security",), checks=()):
    return gate_run(serve(answer, faults), suites=suites, checks=checks, identities=identities)


def outcomes(result) -> dict[str, tuple[str, str]]:
    return {o.check: (o.status, o.reason) for o in result.outcomes}


SIGNING = ("security:unsigned", "security:tampered-body", "security:wrong-digest", "security:header-unsigned",
           "security:replayed-signature", "security:keyid-other-serial", "security:keyid-other-issuer")


def test_the_signing_checks_need_the_target_to_accept_a_correctly_signed_request(identities):
    """A target refusing every creation for a reason of its own (here 401 SIGNATURE_INVALID, as a bank refusing the
    run's certificate answers): a check expecting that refusal would pass for nothing, so each is not exercised,
    saying the control was refused."""
    def refuse_creations(method, path, headers):
        if method == "POST" and path == "/v1/payments/sepa-credit-transfers":
            return 401, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"SIGNATURE_INVALID"}]}', {}
        return None

    result = gate(identities, answer=refuse_creations, checks=SIGNING)
    reason = "the valid control was refused (401 SIGNATURE_INVALID)"
    assert outcomes(result) == {check: ("not-exercised", reason) for check in SIGNING}, outcomes(result)
    clean = gate(identities, checks=SIGNING)
    assert not clean.findings, describe(clean)
    assert {status for status, _reason in outcomes(clean).values()} == {"passed"}


def test_the_keyid_is_broken_one_part_at_a_time(identities):
    """A target comparing only the keyId's issuer with the certificate accepts another serial: the serial's own case
    catches it, the issuer's passes."""
    result = gate(identities, faults=(F.KEYID_SERIAL_NOT_CHECKED,),
                  checks=("security:keyid-other-serial", "security:keyid-other-issuer"))
    assert {(f.check, f.rule) for f in result.findings} == {
        ("security:keyid-other-serial", "signature-keyid-mismatch")}, describe(result)


def test_a_control_accepted_with_another_2xx_is_a_finding_not_a_refusal(identities):
    """Creations answered 200 instead of 201: the control's answer is a finding, and the mutation checks still run,
    the basket's on a payment created with 200 too (before, every one was "not exercised: the valid control was
    refused (200)")."""
    checks = ("semantic:amount-minor-units", "semantic:remittance-exclusive", "semantic:accept-fix-required")
    result = gate(identities, faults=(F.CREATED_200,), suites=("semantic",), checks=checks)
    assert not [o for o in result.outcomes if o.status == "not-exercised"], outcomes(result)
    accepted = [f for f in result.findings if f.rule == "valid-control"]
    assert accepted and all("accepted with 200" in f.message for f in accepted), describe(result)
    assert {o.check for o in result.outcomes} == set(checks)


def test_header_oversized_fills_a_header_without_negotiation_meaning(identities):
    """Its long value goes in PSU-User-Agent, never Accept*: a target answering 406 to a charset it does not offer
    has no reason to refuse it, and the check passes; a 5xx to the long value is still caught."""
    spec = load_spec()
    sites = {op: REQUEST_MUTATIONS["header-oversized"].sites(spec.operation(op)) for op in REQUEST_OPERATIONS}
    assert {site for found in sites.values() for site in found} == {"PSU-User-Agent"}, sites

    def negotiating(method, path, headers):
        if "accept-charset" in headers and "utf-8" not in headers["accept-charset"].lower():
            return 406, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR"}]}', {}
        return None

    check = ("semantic:header-oversized",)
    clean = gate(identities, answer=negotiating, suites=("semantic",), checks=check)
    assert not clean.findings, describe(clean)
    broken = gate(identities, suites=("semantic",), checks=check,
                  answer=lambda m, p, h: (500, "text/plain", b"boom", {}) if len(h.get("psu-user-agent", "")) > 8192
                  else None)
    assert {f.check for f in broken.findings} == set(check), describe(broken)


def test_a_realistic_payment_holds_only_values_every_reading_accepts():
    """The base of every "break one rule" case: non-empty names, one to three payments, every account in the
    payment's own currency (a bank may refuse a euro transfer from an account it holds in another)."""
    import datetime as dt

    from hypothesis import HealthCheck, given, settings

    from conformance.generate import valid_payloads

    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bulk=valid_payloads("bulk-payment", today=dt.date(2026, 7, 1), realistic=True),
           sepa=valid_payloads("sepa-credit-transfer", today=dt.date(2026, 7, 1), realistic=True))
    def check(bulk, sepa):
        assert {sepa["debtorAccount"]["currency"], sepa["creditorAccount"]["currency"]} == {"EUR"}
        assert {bulk["debtorAccount"]["currency"], *(p["creditorAccount"]["currency"] for p in bulk["payments"])} \
            == {"NOK"}
        assert 1 <= len(bulk["payments"]) <= 3

    check()


def test_an_alias_is_a_case_of_its_own_never_part_of_a_valid_control(identities):
    """A target knowing only the published x-accept-fix names, refusing any other (A18 leaves aliases open): the
    valid controls send none, so they pass; the alias is accept-fix-unknown's own control, reported there."""
    from validator.spec import load_spec

    published = set(load_spec().schema("AcceptFixName")["enum"])

    def published_only(method, path, headers):
        names = [n.strip() for n in headers.get("x-accept-fix", "").split(",") if n.strip()]
        if any(n not in published for n in names):
            return 400, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR"}]}', {}
        return None

    result = gate(identities, answer=published_only, suites=("semantic",),
                  checks=("semantic:valid-control", "semantic:accept-fix-unknown"))
    assert {f.check for f in result.findings} == {"semantic:accept-fix-unknown"}, describe(result)
    assert any("longer-names" in f.message or "alias" in f.message for f in result.findings), describe(result)
