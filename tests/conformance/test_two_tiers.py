"""Issue 27, sections 1 and 5: the interface document is the judge. An answer contradicting it is a failure; one
following another reading of a point it leaves open is a difference -- naming the decision it differs from and the
profile line that states the target's choice, counted, never failing the run -- unless the profile pins the decision.

Per class of section 1 the reference sandbox serves the other reading (a profile choice or a switch): gated with no
profile, no failure and one difference naming the decision and the profile line; gated with our decision pinned, a
failure. The sandbox with every non-default profile choice, gated with the same profile, is clean in both tiers; and
each profile key is honoured by what sends and what judges (section 5)."""
from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest
import yaml
from click.testing import CliRunner

from conformance.gate import report
from conformance.gate.cli import conform
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.suites.stateful import UNKNOWN_PRODUCT
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from validator.context import Profile, profile_schema

PERIODIC = "periodic-payments/norwegian-domestic-credit-transfers"


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(tmp_path, served: dict | None, stated: dict | None, checks: tuple[str, ...], identities, *,
         faults: tuple[str, ...] = (), seed: int = 0, suites=None):
    """The gate (``checks``, one example) with the profile ``stated`` against the sandbox served with ``served``
    and ``faults``."""
    path = None
    if stated is not None:
        path = tmp_path / f"gate-{len(list(tmp_path.iterdir()))}.yaml"
        path.write_text(yaml.safe_dump({"name": "the bank", **stated}), encoding="utf-8")
    server = ReferenceServer(profile=Profile.from_mapping(served) if served else None, faults=faults).start()
    try:
        options = RunOptions(server.url, checks=checks, max_examples=1, identities=identities, seed=seed,
                             profile_path=str(path) if path else None)
        if suites:
            options.suites = suites
        return run(options)
    finally:
        server.stop()


def describe(result) -> str:
    return "\n".join(f"{g.id} {g.tier} {g.finding.decision} [{g.finding.profile_line}] {g.finding.check} "
                     f"[{g.finding.operation}] {g.finding.rule}: {g.finding.message} (expected {g.finding.expected}, "
                     f"actual {g.finding.actual})" for g in report.groups(result)) or "(no findings)"


def tiers(result) -> list[str]:
    return [g.tier for g in report.groups(result)]


@dataclasses.dataclass(frozen=True)
class Reading:
    """Another reading of a point the document leaves open, as the sandbox serves it, and what the gate says."""
    name: str
    checks: tuple[str, ...]
    decision: str | None          # the decision the difference names (None: a note, no decision)
    line: str | None              # the profile line it names
    served: dict | None = None    # the sandbox's profile ...
    faults: tuple[str, ...] = ()  # ... or switches
    pinned: dict | None = None    # the gate's profile pinning our decision (default: pinned-decisions: [decision])

    def __str__(self) -> str:
        return self.name


READINGS = [
    Reading("A7 status and code the document does not name", ("semantic:header-required",), "A7",
            "rules: {header-required: {status: 400, code: FORMAT_ERROR}}",
            served={"rules": {"header-required": {"status": 400, "code": "FORMAT_ERROR"}}}),
    Reading("A8 signature failure answered 403", ("security:replayed-signature",), "A8",
            "rules: {signature-invalid: {status: 403, code: SIGNATURE_INVALID}}",
            served={"rules": {"signature-invalid": {"status": 403, "code": "SIGNATURE_INVALID"}}}),
    Reading("A7 an unknown product's read answered RESOURCE_UNKNOWN", ("stateful:products-offered",), "A7",
            "rules: {product-unknown: {status: 404, code: RESOURCE_UNKNOWN}}",
            served={"rules": {"product-unknown": {"status": 404, "code": "RESOURCE_UNKNOWN"}}}),
    Reading("A31 a product outside the spec known but not offered", ("stateful:products-offered",), "A31",
            f"products-not-offered: [payments/{UNKNOWN_PRODUCT}]",
            served={"products-not-offered": [f"payments/{UNKNOWN_PRODUCT}"]}),
    Reading("A40 a repeated JSON key accepted", ("semantic:json-duplicate-key",), "A40",
            "rules: {json-duplicate-key: {severity: warning}}",
            served={"rules": {"json-duplicate-key": {"severity": "warning"}}}),
    Reading("A40 a repeated query parameter accepted", ("semantic:query-duplicate",), "A40",
            "rules: {query-duplicate: {severity: warning}}",
            served={"rules": {"query-duplicate": {"severity": "warning"}}}),
    Reading("A40 a repeated header accepted", ("semantic:header-duplicate",), "A40",
            "repeated-headers: {TPP-Session-ID: accepted}", served={"repeated-headers": {"TPP-Session-ID": "accepted"}}),
    Reading("A41 an empty optional header read as absent", ("semantic:header-format",), "A41",
            "rules: {header-format: {severity: warning}}", faults=(F.EMPTY_HEADER_ABSENT,)),
    Reading("A42 a header the operation's column does not list ignored", ("stateful:unlisted-headers",), "A42",
            "rules: {header-format: {severity: warning}}", faults=(F.UNLISTED_HEADERS_IGNORED,)),
    Reading("A24 lack of funds shown at the batch run", ("stateful:lack-of-funds",), "A24",
            "lack-of-funds: at-batch-run", served={"lack-of-funds": "at-batch-run"}),
    Reading("A1 the basket creation served elsewhere", ("stateful:basket-membership",), "A1",
            "paths: {createSigningBasket: <its path>}", served={"paths": {"createSigningBasket": "/v1/baskets"}}),
    Reading("an extension: a method the endpoint table does not list answered 200", ("negative:unsupported-methods",),
            None, None, faults=(F.EXTRA_COLLECTION_READ,), pinned={"pinned-decisions": "all"}),
]


@pytest.mark.parametrize("reading", READINGS, ids=str)
def test_another_reading_is_one_difference_and_a_failure_where_our_decision_is_pinned(reading, tmp_path, identities):
    default = gate(tmp_path, reading.served, None, reading.checks, identities, faults=reading.faults)
    assert tiers(default) == ["difference"], describe(default)
    (difference,) = report.groups(default)
    assert (difference.finding.decision, difference.finding.profile_line) == (reading.decision, reading.line), \
        describe(default)
    summary = report.summary(default)
    assert (summary["failures"], summary["differences"]) == (0, 1)
    assert not report.gating(default), "a difference never fails the run"
    pinned = gate(tmp_path, reading.served, reading.pinned or {"pinned-decisions": [reading.decision]},
                  reading.checks, identities, faults=reading.faults, seed=1)
    assert "failure" in tiers(pinned) and "difference" not in tiers(pinned), describe(pinned)


def test_a_header_format_the_document_lists_stays_the_documents(identities):
    """A42 concerns operations outside the header table only: PSU-ID of the wrong format on a payment creation (whose
    column lists it) accepted is a failure; on a basket read, a difference from A42."""
    from conformance.client import SignedClient
    from conformance.exchange.expect import DIFFERENCE, FAILURE
    from conformance.exchange.judge import ExchangeJudge
    from conformance.gate.model import Answer

    oracle = ExchangeJudge().oracle
    with SignedClient("http://127.0.0.1:9", identities.tpp) as tpp:
        read = tpp.prepare("getSigningBasket", path={"basketId": "enc!!YmFza2V0"}, headers={"PSU-ID": "not-a-uuid"})
        creation = tpp.prepare("createSepaCreditTransfer", headers={"PSU-ID": "not-a-uuid"})
    assert oracle.predict(read, success=(200,))[0].tier(Answer(200)) == DIFFERENCE
    assert oracle.predict(creation, success=(201,))[0].tier(Answer(201)) == FAILURE


def test_the_bulk_tables_format_error_is_right_by_the_document(tmp_path, identities):
    """Where the document names the answer -- the bulk operation's table, 400 FORMAT_ERROR -- a missing header answered
    so there is no finding at all, A7 pinned or not; elsewhere it is a difference from A7."""
    served = {"rules": {"header-required": {"status": 400, "code": "FORMAT_ERROR"}}}
    for stated in (None, {"pinned-decisions": ["A7"]}):
        result = gate(tmp_path, served, stated, ("semantic:header-required",), identities)
        assert result.findings, describe(result)
        assert not [f for f in result.findings if f.operation == "createBulkPayment"], describe(result)


@pytest.mark.parametrize("pinned", [None, {"pinned-decisions": "all"}])
def test_the_document_states_no_order_of_checks(pinned, tmp_path, identities):
    """A request with a wrong value and an id nobody issued refused as unknown (404 RESOURCE_UNKNOWN) first: every
    reading accepts it -- no finding, whatever is pinned."""
    result = gate(tmp_path, None, pinned, ("negative:schema-invalid-requests", "semantic:header-format"), identities,
                  faults=(F.UNKNOWN_IDS_FIRST,))
    assert not result.findings, describe(result)


def test_the_faithful_sandbox_is_clean_in_both_tiers_with_strict(identities):
    server = ReferenceServer().start()
    try:
        result = run(RunOptions(server.url, max_examples=1, identities=identities, strict=True,
                                checks=("semantic:header-required", "semantic:json-duplicate-key", "security:*",
                                        "stateful:lifecycle", "stateful:lack-of-funds", "stateful:cancellation",
                                        "negative:unsupported-methods")))
    finally:
        server.stop()
    assert not result.findings, describe(result)


# ---------------------------------------------------------------- every non-default choice (must show 4)
EVERY_CHOICE = {
    "rules": {"header-required": {"status": 400, "code": "FORMAT_ERROR"},
              "signature-invalid": {"status": 403, "code": "SIGNATURE_INVALID"},
              "signature-missing": {"status": 403, "code": "SIGNATURE_MISSING"},
              "product-unknown": {"status": 404, "code": "RESOURCE_UNKNOWN"},
              "json-duplicate-key": {"severity": "warning"},
              "header-recommended-format": {"severity": "error"}},
    "amount-digits": "exact",
    "kid": {"reference-types": ["SCOR"], "algorithms": ["mod11"]},
    "basket-status-ranking": [{"basket": "RJCT", "payments": ["RJCT", "CANC"]},
                              {"basket": "PATC", "payments": ["PDNG", "PART"]},
                              {"basket": "RCVD", "payments": ["RCVD"]},
                              {"basket": "ACTC", "payments": ["ACTC", "ACCP", "ACSP", "ACSC", "ACWC", "ACWP"]}],
    "signature": {"algorithms": ["rsa-sha256", "hs2019"], "date-window-seconds": 600,
                  "extra-headers": ["X-IBM-Client-Id"]},
    "paths": {"createSigningBasket": "/v1/baskets", "getSigningBasket": "/v1/baskets/{basketId}",
              "getSigningBasketStatus": "/v1/baskets/{basketId}/status",
              "deleteSigningBasket": "/v1/baskets/{basketId}",
              "startSigningBasketAuthorisation": "/v1/baskets/{basketId}/authorisations",
              "getSigningBasketAuthorisationStatus": "/v1/baskets/{basketId}/authorisations/{authorisationId}",
              "runSandboxBatch": "/v1/sandbox/batch"},
    "batch-run-times": ["07:00", "13:00"],
    "cancellation-refused": {"status": 403, "code": "FORBIDDEN"},
    "logical-duplicates": "allowed",
    "error-body": "bulk",
    "sca-redirect-status": 302,
    "synthetic-identity-numbers": "refused",
    "repeated-headers": {"PSU-ID": "accepted"},
    "request-id-replay": "new-request",
    "products-not-offered": [PERIODIC, f"payments/{UNKNOWN_PRODUCT}"],
    "absent-operations": ["deleteSandboxCustomer"],
    "gateway-headers": ["X-IBM-Client-Id"],
    "payment-baskets": "one",
    "open-authorisations": "one",
    "lack-of-funds": "at-batch-run",
    "pinned-decisions": "all",
}
# Keys EVERY_CHOICE leaves at their default, and why: the date rules' day is the run's clock in the gate and the
# sandbox (A13: a request is judged at the time it is sent), so a fixed day stated for offline validation is not a
# choice of the target's.
LEFT_AT_DEFAULT = {"name": "not a choice", "today": "the day of offline validation, not a choice of the target's"}


def test_every_profile_key_has_a_non_default_choice():
    keys = set(profile_schema()["properties"])
    assert keys == set(EVERY_CHOICE) | set(LEFT_AT_DEFAULT), keys ^ (set(EVERY_CHOICE) | set(LEFT_AT_DEFAULT))


def test_every_non_default_choice_gated_with_the_same_profile_is_clean_and_without_it_only_differs(tmp_path,
                                                                                                 identities):
    """Must show 4: the sandbox serving every non-default choice, every suite with the same profile: 0 failures, 0
    differences; with no profile the same sandbox gives differences only, each naming a decision and a profile
    line (none of its choices contradicts the document)."""
    stated = gate(tmp_path, EVERY_CHOICE, EVERY_CHOICE, (), identities)
    summary = report.summary(stated)
    assert (summary["failures"], summary["differences"], summary["error"]) == (0, 0, 0), describe(stated)
    default = gate(tmp_path, EVERY_CHOICE, None, (), identities, seed=1)
    assert report.summary(default)["failures"] == 0, describe(default)
    assert all(g.finding.decision and g.finding.profile_line for g in report.groups(default)), describe(default)
    named = {g.finding.decision for g in report.groups(default)}
    # (lack-of-funds at-batch-run is not seen here: without the profile's paths the batch run is at an unknown path)
    assert {"A1", "A5", "A7", "A8", "A16", "A25", "A29", "A30", "A31", "A35", "A40"} <= named, describe(default)


# ---------------------------------------------------------------- each profile key, sending and judging (section 5)
KEY_CHECKS = {
    "rules": ("semantic:header-required", "security:replayed-signature", "stateful:products-offered"),
    "amount-digits": ("semantic:amount-minor-units", "stateful:read-back"),
    "kid": ("semantic:kid-invalid",),
    "basket-status-ranking": ("stateful:basket-worst-case",),
    "signature": ("security:*",),
    "paths": ("stateful:basket-*", "schema:generated-requests", "semantic:accept-fix-required", "stateful:links"),
    "batch-run-times": ("stateful:lifecycle",),
    "cancellation-refused": ("stateful:cancellation", "stateful:links"),
    "logical-duplicates": ("stateful:logical-duplicate",),
    "error-body": ("semantic:header-required", "security:unsigned"),
    "sca-redirect-status": ("stateful:lifecycle",),
    "synthetic-identity-numbers": ("semantic:psu-identity-invalid",),
    "repeated-headers": ("semantic:header-duplicate",),
    "request-id-replay": ("stateful:request-id-replay",),
    "products-not-offered": ("stateful:products-offered", "semantic:product-unknown"),
    "absent-operations": ("schema:generated-requests",),
    "gateway-headers": ("semantic:valid-control", "semantic:header-not-accepted"),
    "payment-baskets": ("stateful:basket-membership",),
    "open-authorisations": ("stateful:sca-without-effect",),
    "lack-of-funds": ("stateful:lack-of-funds",),
    "pinned-decisions": ("semantic:header-required", "stateful:cancellation"),
}


def test_each_key_has_its_checks():
    assert set(KEY_CHECKS) == set(EVERY_CHOICE)


@pytest.mark.parametrize("key", sorted(KEY_CHECKS))
def test_each_profile_key_is_honoured_by_what_sends_and_what_judges(key, tmp_path, identities):
    """The sandbox serving the key's non-default choice, the checks that send and judge what it states, gated with the
    same profile: nothing found, nothing broken."""
    choice = {key: EVERY_CHOICE[key]}
    result = gate(tmp_path, choice, choice, KEY_CHECKS[key], identities)
    assert not result.findings, describe(result)
    assert not [o for o in result.outcomes if o.status == "error"], [o.reason for o in result.outcomes]
    assert [o for o in result.outcomes if o.status == "passed"], "the key's checks ran"


# ---------------------------------------------------------------- the two tiers in every output format
def test_a_difference_has_its_own_section_in_every_format_and_never_fails_the_run(tmp_path):
    options = ["--fault", F.REQUEST_ID_NOT_UUID_REFUSED, "--check", "semantic:header-recommended-format",
               "--max-examples", "1", "--quiet"]
    runner = CliRunner()
    baseline = tmp_path / "baseline.json"
    done = runner.invoke(conform, [*options, "--report-dir", str(tmp_path / "report"), "--write-baseline",
                                   str(baseline)])
    assert done.exit_code == 0, done.output
    assert json.loads(baseline.read_text(encoding="utf-8"))["findings"] == [], "a baseline lists failures only"
    assert "DIFFERENCES (1)" in done.output and "DIFF from A17 D1" in done.output
    line = "rules: {header-recommended-format: {severity: error, status: 400, code: FORMAT_ERROR}}"
    assert f"profile line stating the target's choice: {line}" in done.output
    assert "0 failures, 1 difference;" in done.output
    data = json.loads((tmp_path / "report" / "conform.json").read_text(encoding="utf-8"))
    (finding,) = data["findings"]
    assert (finding["tier"], finding["decision"], finding["profile_line"]) == ("difference", "A17", line)
    assert (data["summary"]["failures"], data["summary"]["differences"]) == (0, 1)
    junit = ET.fromstring((tmp_path / "report" / "conform.junit.xml").read_text(encoding="utf-8"))
    assert junit.get("failures") == "0"
    (suite,) = [s for s in junit.iter("testsuite") if s.get("name") == "differences"]
    assert "A17" in suite.find("testcase/system-out").text and line in suite.find("testcase/system-out").text
    sarif = json.loads((tmp_path / "report" / "conform.sarif").read_text(encoding="utf-8"))
    (result,) = sarif["runs"][0]["results"]
    assert result["level"] == "note" and result["properties"]["decision"] == "A17"
    html = (tmp_path / "report" / "conform.html").read_text(encoding="utf-8")
    assert '<h2 id="differences">Differences' in html and "obvalidate conform: PASS" in html
    github = runner.invoke(conform, [*options, "--format", "github"])
    assert github.exit_code == 0 and "::warning title=difference from A17" in github.output
    strict = runner.invoke(conform, [*options, "--strict"])
    assert strict.exit_code == 1 and "FAIL F1" in strict.output, strict.output


def test_a_replay_without_names_replays_the_failures():
    from conformance.gate.replay import select

    findings = [{"id": "F1", "fingerprint": "a" * 16, "tier": "failure"},
                {"id": "D1", "fingerprint": "b" * 16, "tier": "difference"}]
    assert [f["id"] for f in select(findings, ())] == ["F1"]
    assert [f["id"] for f in select(findings, ("D1",))] == ["D1"], "a difference named is replayed"
