"""`obvalidate conform --replay`: a report's findings re-sent signed anew (or their checks run again) and judged
again -- still failing against the same faulty sandbox, fixed against a faithful one; --finding selects; an
unreadable report exits 2. And the requests a finding records: each deliberate defect re-created, never copied."""
from __future__ import annotations

import datetime as _dt
import json

import pytest
from click.testing import CliRunner

from conformance.gate.cli import conform
from conformance.gate.recorded import NotReplayable, rebuild, record
from conformance.gate.session import Identities, Session
from conformance.gate.suites import security
from conformance.sandbox import faults as F
from validator.context import DEFAULT_PROFILE
from validator.spec import load_spec

# One finding a request re-creates (a tampered body the sandbox accepts) and one only its scenario re-creates (a
# creation answered 200: the lifecycle's later steps depend on it), and one the spec's declared answers judge (a
# status without its transactionStatus).
CHECKS = "security:tampered-body,stateful:lifecycle"
FAULTS = ("--fault", F.DIGEST_NOT_CHECKED, "--fault", F.CREATED_200, "--fault", F.STATUS_MISSING)


@pytest.fixture(scope="module")
def faulty_report(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("replay")
    result = CliRunner().invoke(conform, ["--check", CHECKS, *FAULTS, "--max-examples", "1",
                                          "--report-dir", str(directory)])
    assert result.exit_code == 1, result.output
    return str(directory / "conform.json")


def _replay(*args: str):
    result = CliRunner().invoke(conform, ["--format", "json", *args])
    verdicts = json.loads(result.output) if result.exit_code in (0, 1) else None
    return result, verdicts


def test_findings_carry_the_request_the_expectation_and_how_to_replay(faulty_report):
    findings = json.loads(open(faulty_report, encoding="utf-8").read())["findings"]
    tampered = next(f for f in findings if f["check"] == "security:tampered-body" and f["rule"] == "digest-mismatch")
    assert tampered["replay"] == {"by": "request"}
    expectation = {k: v for k, v in tampered["expectation"].items() if k != "readings"}
    assert expectation == {"statuses": [400], "codes": ["FORMAT_ERROR"], "codeless": []}
    # the other reading of A8, which the document leaves open (another 4xx with a code of the code set), travels too
    assert [r["decision"] for r in tampered["expectation"]["readings"]] == ["A8"]
    request = tampered["request"]
    assert request["method"] == "POST" and request["target"].startswith("/v1/payments/sepa-credit-transfers")
    assert request["altered"] == ["digest"] and request["identity"] == "tpp" and request["signed"] is True
    assert not {n.lower() for n, _v in request["headers"]} & {"signature", "date", "digest",
                                                               "tpp-signature-certificate"}
    declared = [f for f in findings if f["expectation"] == {"declared_answer": True}]
    assert declared and all(f["expected"] == "an answer the spec declares" for f in declared)
    scenario = [f for f in findings if f["check"] == "stateful:lifecycle"]
    assert scenario and all(f["replay"]["by"] == "check" and "scenario" in f["replay"]["why"] for f in scenario)


def test_replay_against_the_same_faulty_sandbox_still_fails(faulty_report):
    result, verdicts = _replay("--replay", faulty_report, *FAULTS)
    assert result.exit_code == 1, result.output
    assert verdicts and {v["status"] for v in verdicts} == {"still failing"}, result.output
    assert {v["by"] for v in verdicts} == {"request", "check"}


def test_replay_against_a_faithful_sandbox_is_fixed(faulty_report):
    result, verdicts = _replay("--replay", faulty_report)
    assert result.exit_code == 0, result.output
    assert verdicts and {v["status"] for v in verdicts} == {"fixed"}, result.output
    text = CliRunner().invoke(conform, ["--replay", faulty_report, "--finding", "F1"])
    assert text.exit_code == 0 and "FIXED" in text.output and "replayed 1 finding: 1 fixed" in text.output


def test_finding_selects_by_id_or_fingerprint(faulty_report):
    findings = json.loads(open(faulty_report, encoding="utf-8").read())["findings"]
    tampered = next(i for i, f in enumerate(findings) if f["rule"] == "digest-mismatch")
    fingerprint = findings[tampered]["fingerprint"]
    for name in (findings[tampered].get("id", f"F{tampered + 1}"), fingerprint, fingerprint[:8]):
        result, verdicts = _replay("--replay", faulty_report, *FAULTS, "--finding", name)
        assert result.exit_code == 1, result.output
        assert [v["fingerprint"] for v in verdicts] == [fingerprint]
    result = CliRunner().invoke(conform, ["--replay", faulty_report, "--finding", "no-such-finding"])
    assert result.exit_code == 2 and "matches no finding" in result.output


@pytest.mark.parametrize("content", ["{not json", '{"findings": 3}', '[1, 2]', None])
def test_an_unreadable_report_exits_2(tmp_path, content):
    path = tmp_path / "conform.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(conform, ["--replay", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(path) in result.output


# ---------------------------------------------------------------- each deliberate defect re-created, not copied
@pytest.fixture(scope="module")
def session():
    s = Session("http://127.0.0.1:9", load_spec(), DEFAULT_PROFILE, Identities.throwaway())
    yield s
    s.close()


def _rules(session, request, at):
    return sorted({f.rule for f in session.findings_for(request, at=at) if f.severity == "error"})


def _header(request, name):
    return next((v for n, v in request.headers if n.lower() == name), None)


@pytest.mark.parametrize("build,altered", [
    (security.tampered_body, ["digest"]),
    (security.wrong_digest, ["digest"]),
    (security.unsigned, []),
])
def test_a_rebuilt_request_breaks_what_the_original_broke(session, build, altered):
    then = session.now() - _dt.timedelta(hours=2)
    original = build(session, then)
    recorded = record(original, session.identities, then)
    assert recorded["altered"] == altered and "not_replayable" not in recorded
    now = session.now()
    again = rebuild(recorded, session.identities, now)
    assert _rules(session, again, now) == _rules(session, original, then) != []
    assert _header(again, "x-request-id") != _header(original, "x-request-id")
    if recorded["signed"]:
        assert _header(again, "date") != _header(original, "date")
        assert _header(again, "signature") != _header(original, "signature")


def test_a_stale_date_stays_as_stale_and_a_fresh_one_is_fresh(session):
    then = session.now() - _dt.timedelta(hours=3)
    stale = security.stale_date(session, then - _dt.timedelta(hours=1))
    recorded = record(stale, session.identities, then)
    assert recorded["altered"] == ["date"] and abs(recorded["date_offset"] + 3600) <= 1  # a Date has whole seconds
    now = session.now()
    again = rebuild(recorded, session.identities, now)
    assert _rules(session, again, now) == _rules(session, stale, then) != []
    fresh = rebuild(record(security.tampered_body(session, then), session.identities, then), session.identities, now)
    assert "date" not in str(_rules(session, fresh, now))


def test_a_request_id_under_test_is_kept(session):
    request = session.client().prepare("createSepaCreditTransfer", headers={"X-Request-ID": "not-a-uuid"})
    recorded = record(request, session.identities, session.now())
    assert "x-request-id" in recorded["altered"]
    assert _header(rebuild(recorded, session.identities, session.now()), "x-request-id") == "not-a-uuid"


@pytest.mark.parametrize("build,why", [
    (security.algorithm_confusion, "Signature"),
    (security.key_id_other_serial, "Signature"),
    (security.key_id_other_issuer, "Signature"),
    (security.expired_certificate, "certificate the check made"),
])
def test_what_one_request_cannot_recreate_is_left_to_its_check(session, build, why):
    recorded = record(build(session, session.now()), session.identities, session.now())
    assert why in recorded["not_replayable"]
    with pytest.raises(NotReplayable):
        rebuild(recorded, session.identities, session.now())


def test_a_finding_edited_beyond_use_is_not_replayable(faulty_report, tmp_path):
    data = json.loads(open(faulty_report, encoding="utf-8").read())
    finding = next(f for f in data["findings"] if f["rule"] == "digest-mismatch")
    finding["request"] = {"method": "POST", "headers": "not pairs", "date_offset": "soon"}
    data["findings"] = [finding]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result, verdicts = _replay("--replay", str(path))
    assert result.exit_code == 0, result.output
    assert [v["status"] for v in verdicts] == ["not replayable"] and "incomplete" in verdicts[0]["detail"]
