"""The smaller defects a new user ran into (issue 7, item 4), each pinned."""
from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.api import Validator
from validator.rules.examples import spec_example
from validator.spec import load_spec

SPEC = load_spec()
ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
VALIDATOR = Validator(today=SPEC.example_today)


# ---- a lone UTF-16 surrogate
@pytest.mark.parametrize(("text", "pointer"), [
    (rb'{"paymentIds": ["A\ud800"]}', "/paymentIds/0"),
    (rb'{"paymentIds": ["enc!!UEFZ"], "x\uDC00y": 1}', "/x\udc00y"),
])
def test_a_lone_surrogate_is_a_finding(text, pointer):
    report = VALIDATOR.validate_bytes(text)
    found = [f for f in report.findings if f.rule == "json-encoding"]
    assert [f.pointer for f in found] == [pointer]
    assert "lone UTF-16 surrogate" in found[0].message and not report.valid


def test_a_surrogate_pair_and_an_escaped_backslash_are_fine():
    for text in (rb'{"paymentIds": ["A\ud83d\ude00"]}', rb'{"paymentIds": ["A\\ud800"]}'):
        assert VALIDATOR.validate_bytes(text, "signing-basket").findings == []


# ---- the bulk error body's status and code
BULK_ERROR = spec_example(SPEC, "createBulkPayment 400 formatError")


@pytest.mark.parametrize(("status", "code", "verdict"), [
    (400, "FORMAT_ERROR", None),
    (403, "PRODUCT_INVALID", None),
    (404, "RESOURCE_UNKNOWN", None),
    (500, "SYSTEM_ERROR", None),
    (400, "KID_INVALID", None),  # A7
    (401, "SIGNATURE_INVALID", None),  # A8
    (404, "FORMAT_ERROR", "/status"),
    (500, "PRODUCT_INVALID", "/status"),
    (400, "CONSENT_UNKNOWN", "/code"),  # a message code, but not one the bulk operation answers with
])
def test_bulk_error_status_goes_with_its_code(status, code, verdict):
    body = {**BULK_ERROR, "status": status, "code": code}
    found = [f.pointer for f in VALIDATOR.validate(body, "error").findings if f.rule == "error-status-code"]
    assert found == ([verdict] if verdict else [])


def test_the_pairs_are_the_spec_data_of_the_errors_table():
    pairs = SPEC.schema("ErrorBody")["x-status-codes"]
    table = {(p["status"], c) for p in pairs if "x-document-ref" in p for c in p["codes"]}
    assert table == {(400, "FORMAT_ERROR"), (403, "PRODUCT_INVALID"), (404, "RESOURCE_UNKNOWN"), (500, "SYSTEM_ERROR")}
    assert all(p.get("x-document-ref") or p.get("x-assumption") for p in pairs)


# ---- the bundled examples do not go stale, and the README's outputs are ignored
def test_the_good_example_is_valid_on_any_day():
    good = ROOT / "validator" / "examples" / "bulk-payment-good.json"
    for today in ("2026-07-01", "2031-12-31", dt.date.today().isoformat()):
        reports = Validator(today=today).validate_path(good)
        assert [r.findings for r in reports] == [[]]


def test_readme_walkthrough_outputs_are_ignored_by_git():
    paths = ["keys/key.pem", "signed.json", "signed.http", "out.sarif", "profile.schema.json"]
    result = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert result.stdout.split() == paths


def test_readme_using_it_does_not_assume_an_activated_venv():
    section = README.split("## Using it", 1)[1].split("\n## ", 1)[0]
    assert ".venv/bin/activate" in section and ".venv/bin/obvalidate" in section
    assert " -q" not in section.split("```sh", 1)[1].split("```", 1)[0]  # no example hides the progress silently
    assert "`-q` (`--quiet`) hides it" in section


# ---- findings in position order
def test_findings_follow_the_text():
    result = CliRunner().invoke(main, ["--today", "2026-07-01", "validator/examples/bulk-payment-bad.json"], catch_exceptions=False)
    positions = [tuple(map(int, m.groups())) for m in re.finditer(r"\.json:(\d+):(\d+):", result.output)]
    assert len(positions) == 8 and positions == sorted(positions)


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


# ---- --now and --today
@pytest.mark.parametrize(("args", "message"), [
    (["--today", "2026-13-01"], "--today '2026-13-01' is not a date: there is no month 13"),
    (["--today", "2026-02-30"], "--today '2026-02-30' is not a date: February 2026 has 28 days, not 30"),
    (["--today", "1.7.2026"], "--today must be a date written YYYY-MM-DD, e.g. 2026-07-01; got '1.7.2026'"),
    (["--now", "2026-13-01T10:00:00Z"], "--now '2026-13-01T10:00:00Z' is not a date-time: there is no month 13"),
    (["--now", "2026-07-01T24:00:00Z"], "--now '2026-07-01T24:00:00Z' is not a date-time: 24:00:00 is not a time of day"),
    (["--now", "yesterday"], "--now must be a date-time written YYYY-MM-DDTHH:MM:SSZ, e.g. 2026-07-01T10:00:00Z; got 'yesterday'"),
])
def test_now_and_today_are_worded_alike_and_blame_the_month(args, message):
    result = CliRunner().invoke(main, [*args, "validator/examples/bulk-payment-good.json"])
    assert result.exit_code == 2
    assert message in result.output


# ---- the Date window message
def test_date_window_message_has_whole_seconds():
    from validator.signing import SignableRequest, VerifyOptions, sign_request, test_vector_certificate, test_vector_key, verify_request

    body = b'{"paymentIds": ["enc!!UEFZ"]}'
    request = SignableRequest("POST", "/v1/signing-baskets", [("Date", "Tue, 01 Jul 2025 12:00:00 GMT"), ("X-Request-ID", "8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11")], body)
    signed = sign_request(request, test_vector_key(), test_vector_certificate())
    now = dt.datetime(2025, 7, 1, 12, 7, 12, 345678, tzinfo=dt.timezone.utc)
    (finding,) = [f for f in verify_request(signed, VerifyOptions(now=now)) if f.rule == "signature-date-window"]
    assert finding.message == (
        "Date Tue, 01 Jul 2025 12:00:00 GMT is 0:07:12 behind the clock (2025-07-01T12:07:12Z); the window is 0:05:00"
    )


def test_ndjson_is_jsonl_in_the_python_api_too(tmp_path):
    path = tmp_path / "batch.ndjson"
    line = json.dumps(spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin"))
    path.write_text(f"{line}\n\n{line}\n", encoding="utf-8")
    reports = VALIDATOR.validate_path(path)
    assert [r.source for r in reports] == [f"{path}:1", f"{path}:3"] and all(r.valid for r in reports)
