"""Issue 17, sections 2-4, against targets that are not the reference sandbox: fixtures that do not mask the rule
under test, checks that no longer misfire (each still catching the real defect), and Content-Type (A33).

Targets are the reference sandbox with a fault switch, or the reference sandbox behind a small ASGI layer that
behaves as another web stack legitimately may (a 406 to a charset it does not offer, a 431 to an over-long header, a
415 to a body without Content-Type, a plain 405) or wrongly (a 500, a 200 to a method no operation takes)."""
from __future__ import annotations

import pytest

from conformance.client import SignedClient
from conformance.gate.model import SUITES
from conformance.gate.session import Identities
from conformance.sandbox import faults as F
from gate_helpers import describe, gate_run, serve

QUICK = 1


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(identities, *, answer=None, faults=(), suites=SUITES, checks=(), max_examples=QUICK):
    return gate_run(serve(answer, faults), suites=suites, checks=checks, identities=identities,
                    max_examples=max_examples)


# ---------------------------------------------------------------- section 2: fixtures that do not mask the rule
def test_an_empty_name_refused_is_reported_once_as_the_valid_request_refused(identities):
    """A target refusing a valid empty creditorName: the mutation checks start from realistic payloads (non-empty
    names, 1-3 payments) and a control the target accepted, so none of them blames its rule; the valid controls,
    which keep the boundary values, report the refusal itself."""
    result = gate(identities, faults=(F.EMPTY_NAME_REFUSED,), suites=("semantic",))
    assert result.findings, "the refused empty name is not reported"
    assert {(f.check, f.rule) for f in result.findings} == {("semantic:valid-control", "valid-control")}, describe(result)
    assert all("creditorName must not be empty" in f.excerpt for f in result.findings), describe(result)
    failed = {o.check for o in result.outcomes if o.status == "failed"}
    assert failed == {"semantic:valid-control"}


def test_a_non_uuid_request_id_refused_is_reported_by_its_own_rule_only(identities):
    """A target refusing an X-Request-ID that is not a UUID (A17 makes it a warning): the schema suite sends a fresh
    UUID per call, so it has nothing to say; the one check that sends such an id names the defect."""
    result = gate(identities, faults=(F.REQUEST_ID_NOT_UUID_REFUSED,), suites=("schema", "semantic"),
                  checks=("schema:generated-requests", "semantic:header-recommended-format", "semantic:valid-control"))
    assert result.findings, "the refused X-Request-ID is not reported"
    assert {f.rule for f in result.findings} == {"header-recommended-format"}, describe(result)
    assert {f.check for f in result.findings} == {"semantic:header-recommended-format"}


def test_a_refused_control_makes_the_mutation_checks_not_exercised_with_the_reason(identities):
    """Where the target refuses the realistic valid request itself, a mutation check is not exercised, saying why
    (status, code and the target's message), instead of one finding per mutation."""
    def refuse_sepa(method, path, headers):
        if method == "POST" and path == "/v1/payments/sepa-credit-transfers":
            return 400, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR",' \
                                             b'"text":"closed for maintenance"}]}', {}
        return None

    result = gate(identities, answer=refuse_sepa, suites=("semantic",),
                  checks=("semantic:amount-minor-units", "semantic:psu-identity-invalid"))
    sepa = [o for o in result.outcomes if o.operation == "createSepaCreditTransfer"]
    assert sepa and all(o.status == "not-exercised" for o in sepa), [(o.check, o.status) for o in sepa]
    assert all(o.reason == "the valid control was refused (400, FORMAT_ERROR, closed for maintenance)" for o in sepa)
    assert not [f for f in result.findings if f.operation == "createSepaCreditTransfer"], describe(result)


def test_realistic_payloads_stay_away_from_the_boundaries():
    import datetime as dt

    from hypothesis import HealthCheck, given, settings

    from conformance.generate import valid_payloads

    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(bulk=valid_payloads("bulk-payment", today=dt.date(2026, 7, 1), realistic=True),
           sepa=valid_payloads("sepa-credit-transfer", today=dt.date(2026, 7, 1), realistic=True))
    def check(bulk, sepa):
        assert 1 <= len(bulk["payments"]) <= 3
        names = [sepa["creditorName"], *(p["creditorName"] for p in bulk["payments"])]
        assert all(n and n == n.strip() and len(n) < 70 for n in names), names

    check()


# ---------------------------------------------------------------- section 3: misfires gone, defects still caught
def refuse_other_charsets(method, path, headers):
    """406 to an Accept-Charset without utf-8: legitimate content negotiation (RFC 9110 section 12.5.1)."""
    charset = headers.get("accept-charset")
    if charset is not None and "utf-8" not in charset.lower() and "*" not in charset:
        return 406, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR"}]}', {}
    return None


def test_a_406_to_a_random_charset_is_not_drawn_and_the_schema_check_still_catches_a_defect(identities):
    clean = gate(identities, answer=refuse_other_charsets, checks=("schema:generated-requests",))
    assert not clean.findings, describe(clean)
    broken = gate(identities, answer=refuse_other_charsets, faults=(F.CREATED_200,), checks=("schema:generated-requests",))
    assert any(f.check == "schema:generated-requests" for f in broken.findings), "created-200 no longer caught"


def _long_header(headers) -> bool:
    return any(len(v) > 8192 for v in headers.values())


def test_an_over_long_header_may_be_taken_or_refused_but_never_with_a_5xx(identities):
    """A33: no header length is documented. A 431 is HTTP's answer and passes; a 500 is a defect and is caught."""
    check = ("semantic:header-oversized",)
    refused = gate(identities, checks=check,
                   answer=lambda m, p, h: (431, "text/plain", b"Request Header Fields Too Large", {}) if _long_header(h) else None)
    assert not refused.findings, describe(refused)
    broken = gate(identities, checks=check,
                  answer=lambda m, p, h: (500, "text/plain", b"internal error", {}) if _long_header(h) else None)
    assert broken.findings and {f.check for f in broken.findings} == set(check), describe(broken)


def test_unsupported_methods_are_judged_by_status_and_not_where_a_link_offers_them(identities):
    """A plain-text 405 with Allow passes (no operation takes the method, so no documented error body applies); GET on
    a sandbox customer's self, which its link offers, is not probed; a 200 to PATCH is still caught."""
    probed = []

    def plain_405(method, path, headers):
        if method not in ("GET", "POST", "DELETE"):
            probed.append((method, path))
            return 405, "text/plain", b"Method Not Allowed", {"allow": "GET, POST, DELETE"}
        if method == "GET" and path.startswith("/v1/sandbox/customers/"):
            probed.append((method, path))
        return None

    check = ("negative:unsupported-methods",)
    clean = gate(identities, answer=plain_405, checks=check)
    assert not clean.findings, describe(clean)
    assert probed and not [p for p in probed if p[0] == "GET"], "GET on a linked customer was probed"
    broken = gate(identities, checks=check,
                  answer=lambda m, p, h: (200, "application/json", b"{}", {}) if m == "PATCH" else None)
    assert {f.rule for f in broken.findings} == {"method-not-allowed"}, describe(broken)


# ---------------------------------------------------------------- section 4: Content-Type (A33)
def require_json_content_type(method, path, headers):
    """415 to a body without Content-Type application/json, as Spring, Starlette or Prism answer."""
    if int(headers.get("content-length", "0") or 0) and not path.startswith("/sca/") \
            and not headers.get("content-type", "").startswith("application/json"):
        return 415, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR",' \
                                         b'"text":"Content-Type application/json required"}]}', {}
    return None


def test_a_target_answering_415_without_content_type_passes_the_gate(identities):
    result = gate(identities, answer=require_json_content_type)
    assert not result.findings, describe(result)
    errors = [o for o in result.outcomes if o.status == "error"]
    assert not errors, [o.reason for o in errors]


def test_the_signed_client_sends_content_type_on_every_body(identities):
    client = SignedClient("http://127.0.0.1:9", identities.tpp)
    with_body = client.prepare("createSepaCreditTransfer")
    assert ("Content-Type", "application/json") in with_body.headers
    assert not [n for n, _v in client.prepare("listSandboxCustomers").headers if n.lower() == "content-type"]
    left_out = client.prepare("createSepaCreditTransfer", headers={"Content-Type": None})
    assert not [n for n, _v in left_out.headers if n.lower() == "content-type"]


# ---------------------------------------------------------------- readings of other stacks (issue 17, sections 1, 3)
ERROR_BODY_CHECKS = ("semantic:json-syntax", "semantic:path-unknown", "semantic:amount-minor-units", "security:unsigned",
                     "security:tampered-body", "negative:schema-invalid-requests")


def test_refusals_without_a_documented_error_body_are_one_a6_finding_not_one_per_rule(identities):
    """A framework's default error body names no code: each refusal's status is judged, and the body is one finding
    for the run (A6) with the count, not a finding per rule whose refusal wears it. The faithful sandbox: none."""
    faithful = gate(identities, checks=ERROR_BODY_CHECKS)
    assert not faithful.findings, describe(faithful)
    broken = gate(identities, faults=(F.ERROR_BODY_UNDOCUMENTED,), checks=ERROR_BODY_CHECKS)
    assert {(f.rule, f.ref) for f in broken.findings} == {("error-body", "A6")}, describe(broken)
    (finding,) = broken.findings
    assert int(finding.message.split(" ", 1)[0]) >= len(ERROR_BODY_CHECKS), finding.message
    assert '"error"' in finding.excerpt, "the example quotes the target's answer"


def refuse_templates_with_400(method, path, headers):
    """A router matching templates: DELETE /v1/signing-baskets/{id}/status fits the payment cancellation's
    /v1/{payment-service}/{payment-product}/{paymentId}, and 'signing-baskets' is no payment service."""
    parts = path.strip("/").split("/")
    if method == "DELETE" and len(parts) == 4 and parts[1] == "signing-baskets":
        return 400, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR",' \
                                        b'"path":"/payment-service","text":"unknown payment service"}]}', {}
    return None


def test_a_method_another_template_takes_may_be_refused_as_that_operations_parameter(identities):
    result = gate(identities, answer=refuse_templates_with_400, checks=("negative:unsupported-methods",))
    assert not result.findings, describe(result)


def refuse_get_with_a_body(status):
    def answer(method, path, headers):
        if method == "GET" and (headers.get("content-length", "0") != "0" or "transfer-encoding" in headers):
            return status, "application/json", b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR",' \
                                               b'"text":"a GET takes no body"}]}', {}
        return None
    return answer


def test_a_body_on_a_get_may_be_ignored_or_refused_but_not_with_a_5xx(identities):
    """RFC 9110 section 9.3.1: content in a GET has no defined semantics and may be rejected."""
    check = ("semantic:body-not-accepted",)
    refused = gate(identities, answer=refuse_get_with_a_body(400), checks=check)
    assert not refused.findings, describe(refused)
    assert [o for o in refused.outcomes if o.status == "passed"]
    failing = gate(identities, answer=refuse_get_with_a_body(500), checks=check)
    assert {f.rule for f in failing.findings} == {"body-not-accepted"}, describe(failing)


def test_an_unknown_path_that_fits_a_template_may_be_answered_as_that_template():
    """404 RESOURCE_UNKNOWN (A7) for a path no operation has; where the path fits a template, also a 405 (no code)
    when the template does not take the method, or a 400 FORMAT_ERROR for a parameter value when it does."""
    from conformance.client import PreparedRequest
    from conformance.gate.model import Answer
    from conformance.gate.session import Session
    from validator.context import DEFAULT_PROFILE
    from validator.spec import load_spec

    session = Session("http://127.0.0.1:9", load_spec(), DEFAULT_PROFILE, Identities.throwaway())
    try:
        def expected(method, path):
            return session.predict(PreparedRequest(method, path, [], b""), success=(200,))[0]

        post = expected("POST", "/v1/signing-baskets/obvalidate-aa/obvalidate-aa")
        assert post.allows(Answer(404, "RESOURCE_UNKNOWN")) and post.allows(Answer(405))
        assert not post.allows(Answer(400, "FORMAT_ERROR")) and not post.allows(Answer(404, "FORMAT_ERROR"))
        get = expected("GET", "/v1/0.5/0/0/authorisations/0")
        assert get.allows(Answer(400, "FORMAT_ERROR")) and get.allows(Answer(404, "RESOURCE_UNKNOWN"))
        assert not get.allows(Answer(405)) and not get.allows(Answer(200))
        nowhere = expected("GET", "/v2/nothing")
        assert nowhere.allows(Answer(404, "RESOURCE_UNKNOWN")) and not nowhere.allows(Answer(405))
    finally:
        session.close()
