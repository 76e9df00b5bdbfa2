"""Every open point is the implementer's to state (issue 17, section 1): the reference sandbox served with the
non-default choice of a profile key, and the gate run (the relevant checks only, one example) with the same profile
finds nothing; with the default profile -- or, where the default accepts each documented form, with a profile
pinning another one -- it finds exactly one finding group (distinct rule and ref) naming that decision."""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from validator.context import Profile
from validator.rules import catalogue


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(tmp_path, sandbox_profile: dict | None, gate_profile: dict | None, checks: tuple[str, ...], identities):
    """The gate (``checks``, one example) with ``gate_profile`` against the sandbox served with ``sandbox_profile``."""
    served = Profile.from_mapping(sandbox_profile) if sandbox_profile is not None else None
    path = None
    if gate_profile is not None:
        path = tmp_path / f"gate-{len(list(tmp_path.iterdir()))}.yaml"
        path.write_text(yaml.safe_dump(gate_profile), encoding="utf-8")
    server = ReferenceServer(profile=served).start()
    try:
        return run(RunOptions(server.url, checks=checks, max_examples=1, identities=identities,
                              profile_path=str(path) if path else None))
    finally:
        server.stop()


def describe(result) -> str:
    return "\n".join(f"{f.check} [{f.operation}] {f.rule} ({f.ref}): {f.message} (expected {f.expected}, actual "
                     f"{f.actual})" for f in result.findings) or "(no findings)"


def groups(result) -> set[tuple[str, str]]:
    return {(f.rule, f.ref) for f in result.findings}


@dataclasses.dataclass(frozen=True)
class OpenPoint:
    name: str
    choice: dict                 # the non-default choice, served by the sandbox and stated to the gate
    checks: tuple[str, ...]
    rule: str                    # what the one finding group names: its rule ...
    ref: str | None = None       # ... and its decision, when one names it
    other: dict | None = None    # the gate's profile that disagrees; None: the default profile

    def __str__(self) -> str:
        return self.name


OPEN_POINTS = [
    # A6: the bulk body on every refusal; the default accepts either documented body, a tppMessages pin does not.
    OpenPoint("A6 error-body bulk", {"error-body": "bulk"},
              ("security:unsigned", "semantic:amount-minor-units", "schema:generated-requests",
               "negative:unsupported-methods", "stateful:basket-reference-mix"),
              "error-body", "A6", other={"error-body": "tpp-messages"}),
    OpenPoint("A6 error-body tpp-messages", {"error-body": "tpp-messages"}, ("semantic:amount-minor-units",),
              "error-body", "A6", other={"error-body": "per-operation"}),
    # A24: the SCA form answered 302; the default accepts 302 and 303, a 303 pin does not.
    OpenPoint("A24 sca-redirect-status 302", {"sca-redirect-status": 302},
              ("stateful:lifecycle", "stateful:cancellation", "stateful:basket-worst-case"), "sca-redirect", "A24",
              other={"sca-redirect-status": 303}),
    OpenPoint("A16 synthetic-identity-numbers refused", {"synthetic-identity-numbers": "refused"},
              ("semantic:psu-identity-invalid",), "psu-identity-invalid", "A16"),
    OpenPoint("no Date window", {"signature": {"date-window-seconds": None}}, ("security:stale-date",),
              "signature-date-window"),
    OpenPoint("repeated-headers accepted", {"repeated-headers": {"TPP-Session-ID": "accepted",
                                                                 "PSU-IP-Address": "accepted"}},
              ("semantic:header-duplicate",), "header-duplicate"),
    OpenPoint("repeated-headers refused", {"repeated-headers": {"Accept-Language": "refused"}},
              ("semantic:header-duplicate",), "header-duplicate"),
    # A17 and A18 are profile decisions through `rules`.
    OpenPoint("A17 non-UUID X-Request-ID refused", {"rules": {"header-recommended-format": {"severity": "error"}}},
              ("semantic:header-recommended-format",), "header-recommended-format"),
    OpenPoint("A18 unknown x-accept-fix name refused", {"rules": {"accept-fix-unknown": {"severity": "error"}}},
              ("semantic:accept-fix-unknown",), "accept-fix-unknown"),
    # severity: off never breaks a check: the check is "not exercised".
    OpenPoint("signature-date-window off", {"rules": {"signature-date-window": {"severity": "off"}}},
              ("security:stale-date",), "signature-date-window"),
    OpenPoint("amount-minor-units off", {"rules": {"amount-minor-units": {"severity": "off"}}},
              ("semantic:amount-minor-units",), "amount-minor-units"),
]


@pytest.mark.parametrize("point", OPEN_POINTS, ids=str)
def test_the_sandbox_with_a_choice_passes_the_gate_with_that_choice(point, tmp_path, identities):
    result = gate(tmp_path, point.choice, point.choice, point.checks, identities)
    assert not result.findings, describe(result)
    broken = [o.reason for o in result.outcomes if o.status == "error"]
    assert not broken, broken


@pytest.mark.parametrize("point", OPEN_POINTS, ids=str)
def test_the_sandbox_with_a_choice_is_one_finding_group_for_another_choice(point, tmp_path, identities):
    result = gate(tmp_path, point.choice, point.other, point.checks, identities)
    found = groups(result)
    assert len(found) == 1, describe(result)
    ((rule, ref),) = found
    assert rule == point.rule and (point.ref is None or point.ref in ref.split(", ")), describe(result)
    assert not [o for o in result.outcomes if o.status == "error"]


@pytest.mark.parametrize("point", [p for p in OPEN_POINTS if p.other is not None], ids=str)
def test_the_default_accepts_each_documented_form(point, tmp_path, identities):
    result = gate(tmp_path, point.choice, None, point.checks, identities)
    assert not result.findings, describe(result)


def test_another_error_body_is_one_finding_with_the_count(tmp_path, identities):
    result = gate(tmp_path, {"error-body": "bulk"}, {"error-body": "tpp-messages"},
                  ("security:unsigned", "security:tampered-body", "semantic:amount-minor-units"), identities)
    (finding,) = result.findings
    assert finding.rule == "error-body" and finding.ref == "A6"
    count = int(finding.message.split(" ", 1)[0])
    assert count == result.error_bodies >= 3, finding.message
    assert '"system"' in finding.excerpt, "the example quotes the answer"


def test_a_302_is_quoted_with_its_location(tmp_path, identities):
    result = gate(tmp_path, {"sca-redirect-status": 302}, {"sca-redirect-status": 303}, ("stateful:lifecycle",),
                  identities)
    (finding,) = result.findings
    assert finding.actual == "302", "the real answer, not 'no answer'"
    assert "answered 302 to 'https://tpp.example.no/callback" in finding.message
    location = {k.lower(): v for k, v in finding.headers.items()}.get("location", "")
    assert location.startswith("https://tpp.example.no/callback"), finding.headers


def test_an_off_rule_is_not_exercised_with_the_reason(tmp_path, identities):
    off = {"rules": {"signature-date-window": {"severity": "off"}, "amount-minor-units": {"severity": "off"}}}
    result = gate(tmp_path, off, off, ("security:stale-date", "semantic:amount-minor-units"), identities)
    reasons = {o.check: o.reason for o in result.outcomes}
    assert reasons == {"security:stale-date": "signature-date-window off in the profile",
                       "semantic:amount-minor-units": "amount-minor-units off in the profile"}
    assert {o.status for o in result.outcomes} == {"not-exercised"}


def test_no_date_window_is_not_exercised_with_the_reason(tmp_path, identities):
    none = {"signature": {"date-window-seconds": None}}
    result = gate(tmp_path, none, none, ("security:stale-date",), identities)
    (outcome,) = result.outcomes
    assert outcome.status == "not-exercised" and outcome.reason.startswith("no Date window in the profile")


def test_a_rule_made_a_warning_is_expected_accepted(tmp_path, identities):
    warning = {"rules": {"signature-date-window": {"severity": "warning"}}}
    result = gate(tmp_path, warning, warning, ("security:stale-date",), identities)
    assert [o.status for o in result.outcomes] == ["passed"]
    strict = gate(tmp_path, None, warning, ("security:stale-date",), identities)
    assert groups(strict) == {("signature-date-window", "A8, Signing")}, describe(strict)


def test_every_rule_off_breaks_no_check(tmp_path, identities):
    """The sweep: every error rule of the catalogue off at once, every check of every suite run against the sandbox
    served with the same profile: no check breaks, nothing is found, and each check of an off rule says so."""
    rules = {r.id: {"severity": "off"} for r in catalogue().values() if r.severity == "error"}
    off = {"rules": rules}
    result = gate(tmp_path, off, off, (), identities)
    broken = {o.check: o.reason for o in result.outcomes if o.status == "error"}
    assert not broken, broken
    assert not result.findings, describe(result)
    signing = [o for o in result.outcomes if o.check.startswith("security:") and o.check != "security:foreign-payment"]
    assert signing and all(o.status == "not-exercised" and o.reason.endswith(" off in the profile")
                                     for o in signing), [(o.check, o.status, o.reason) for o in signing]
    for o in result.outcomes:
        rule = o.check.split(":", 1)[1]
        if o.check.startswith("semantic:") and rule in rules:
            assert o.status == "not-exercised" and o.reason == f"{rule} off in the profile", (o.check, o.status)


# ---------------------------------------------------------------- A6 as the response check and the sandbox see it
TPP_BODY = b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR","text":"bad amount"}]}'
BULK_BODY = b'{"id":"1","system":"payments","status":400,"code":"FORMAT_ERROR","message":"bad amount"}'
OTHER_BODY = b'{"error":"bad amount"}'
MIX_BODY = b'{"id":"1","system":"signing-baskets","status":400,"code":"REFERENCE_MIX_INVALID","message":"bulk"}'
SEPA_PATH, BULK_PATH = "/v1/payments/sepa-credit-transfers", "/v1/bulk-payments/norwegian-domestic-credit-transfers"


@pytest.mark.parametrize("choice, path, body, accepted", [
    ("either", SEPA_PATH, TPP_BODY, True), ("either", SEPA_PATH, BULK_BODY, True),
    ("either", BULK_PATH, TPP_BODY, True), ("either", SEPA_PATH, OTHER_BODY, False),
    ("tpp-messages", BULK_PATH, TPP_BODY, True), ("tpp-messages", SEPA_PATH, BULK_BODY, False),
    ("bulk", SEPA_PATH, BULK_BODY, True), ("bulk", SEPA_PATH, TPP_BODY, False),
    ("per-operation", SEPA_PATH, BULK_BODY, False), ("per-operation", BULK_PATH, BULK_BODY, True),
    ("per-operation", BULK_PATH, TPP_BODY, False),
    # the bulk body borrowed by another operation answers that operation's codes (the bulk table's pairs do not
    # apply); on the bulk operation they do
    ("either", "/v1/signing-baskets", MIX_BODY, True), ("bulk", SEPA_PATH, MIX_BODY, True),
    ("either", BULK_PATH, MIX_BODY, False),
])
def test_the_error_body_choice_in_the_response_check(choice, path, body, accepted):
    from conformance.exchange.responses import ERROR_BODY_RULE, ResponseKinds
    from validator import Validator
    from validator.spec import load_spec

    profile = Profile.from_mapping({"error-body": choice})
    kinds = ResponseKinds(load_spec(), Validator(profile=profile), profile)
    problems = kinds.problems("POST", path, 400, "application/json", body)
    assert (problems == []) == accepted, problems
    assert all(p.rule == ERROR_BODY_RULE and p.ref == "A6" for p in problems)


@pytest.mark.parametrize("choice, operation, keys", [
    ("per-operation", "createSepaCreditTransfer", {"tppMessages"}),
    ("per-operation", "createBulkPayment", {"id", "system", "status", "code", "message"}),
    ("bulk", "createSepaCreditTransfer", {"id", "system", "status", "code", "message"}),
    ("tpp-messages", "createBulkPayment", {"tppMessages"}),
])
def test_the_sandbox_answers_the_pinned_error_body(choice, operation, keys):
    from conformance.sandbox.app import error_reply
    from validator.spec import load_spec

    reply = error_reply(load_spec().operation(operation), 400, [("FORMAT_ERROR", "/x", "bad")], choice)
    assert set(reply.body) == keys
    assert reply.body.get("code", (reply.body.get("tppMessages") or [{}])[0].get("code")) == "FORMAT_ERROR"


def test_worker_processes_report_another_error_body_once(tmp_path, identities):
    path = tmp_path / "gate.yaml"
    path.write_text("error-body: tpp-messages\n", encoding="utf-8")
    server = ReferenceServer(profile=Profile.from_mapping({"error-body": "bulk"})).start()
    try:
        result = run(RunOptions(server.url, suites=("semantic", "security"), workers=2, max_examples=1,
                                identities=identities, profile_path=str(path),
                                checks=("security:unsigned", "semantic:amount-minor-units")))
    finally:
        server.stop()
    (finding,) = result.findings
    assert finding.rule == "error-body" and int(finding.message.split(" ", 1)[0]) == result.error_bodies >= 2
    assert [o.check for o in result.outcomes if o.status == "failed"] == [finding.check]
