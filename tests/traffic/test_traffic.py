"""`obvalidate traffic FILE` on HAR recordings made from the reference sandbox: a faithful session has no finding;
client defects (a broken Digest, a bad amount) are exactly those entries, party client; server defects edited into
the recording (a status changed, a body member removed, a status going backwards) are exactly those entries, party
server; a recording judged months after it was made gives the same verdicts, each entry judged at its own
startedDateTime; every format; a recording that is not one, exit 2 with the reason."""
from __future__ import annotations

import datetime as _dt
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from sandbox.flows import SEPA, sepa_body
from traffic_recording import SandboxRecorder, entries, ordinary_session, rewrite
from validator.cli import main


def run(*args: str):
    result = CliRunner().invoke(main, ["traffic", *map(str, args)])
    assert "Traceback" not in result.output, result.output
    return result


def verdicts(path: Path, *args: str) -> tuple[int, dict]:
    result = run(path, "--format", "json", *args)
    return result.exit_code, json.loads(result.output)


def flagged(document: dict) -> dict[int, set[tuple[str, str]]]:
    return {r["entry"]: {(f["party"], f["rule"]) for f in r["findings"]} for r in document["results"] if r["findings"]}


@pytest.fixture(scope="module")
def clean_har(tmp_path_factory) -> Path:
    recorder = SandboxRecorder(tmp_path_factory.mktemp("clean") / "session.har")
    ordinary_session(recorder)
    return recorder.close()


def test_a_faithful_session_is_clean(clean_har):
    code, document = verdicts(clean_har)
    assert code == 0
    assert len(document["results"]) == len(entries(clean_har)) == 14
    assert [r["entry"] for r in document["results"]] == list(range(14))
    assert flagged(document) == {}
    skipped = [r for r in document["results"] if r["skipped"]]
    assert len(skipped) == 2 and all("SCA page" in r["skipped"] and r["operation"] is None for r in skipped)
    judged = [r for r in document["results"] if not r["skipped"]]
    assert all(r["operation"] and r["startedDateTime"] == "2026-07-01T08:30:00.000Z" for r in judged)
    assert document["summary"] | {"by_rule": {}} == {
        "entries": 14, "judged": 12, "skipped": 2, "clean": 12, "with_findings": 0, "errors": 0, "warnings": 0,
        "by_party": {"client": 0, "server": 0}, "by_rule": {}, "skipped_by_reason": {"the SCA page": 2}}
    text = run(clean_har)
    assert text.exit_code == 0
    assert text.output.splitlines() == [
        "14 entries: 12 judged (12 clean, 0 with findings), 2 skipped \u2014 0 errors, 0 warnings (findings by party: "
        "0 client, 0 server)", "skipped: 2 the SCA page"]


def test_client_defects_are_exactly_those_entries(tmp_path):
    recorder = SandboxRecorder(tmp_path / "client.har")
    tpp = recorder.client()
    tpp.call("createSepaCreditTransfer", body=sepa_body())
    broken = tpp.prepare("createSepaCreditTransfer", body=sepa_body("30.00"))
    broken.headers = [(n, "SHA-256=" + "A" * 43 + "=" if n.lower() == "digest" else v) for n, v in broken.headers]
    tpp.send_prepared(broken)                                                 # entry 1: a broken Digest
    tpp.call("createSepaCreditTransfer", body=sepa_body("12.345"))           # entry 2: three decimals of EUR
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body("9.00")).json()["paymentId"]
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    code, document = verdicts(recorder.close())
    assert code == 1
    found = flagged(document)
    assert set(found) == {1, 2}
    assert all(party == "client" for rules in found.values() for party, _rule in rules)
    assert any("digest" in rule for _party, rule in found[1]), found
    assert ("client", "amount-minor-units") in found[2], found
    for entry in (1, 2):   # the sandbox refused them, as a conforming bank does: no server finding
        result = document["results"][entry]
        assert result["status"] in (400, 401) and result["predicted"]["status"] in (400, 401)
    assert document["summary"]["by_party"] == {"client": sum(map(len, found.values())), "server": 0}


def test_server_defects_edited_in_are_exactly_those_entries(clean_har):
    def edit(items):
        items[0]["response"]["status"] = 202                                   # a status changed
        content = items[1]["response"]["content"]                            # a body member removed
        body = json.loads(content["text"])
        del body["transactionStatus"]
        content["text"] = json.dumps(body)
        last_read = items[12]["response"]["content"]                         # a status going backwards
        status = json.loads(last_read["text"])["transactionStatus"]
        assert status != "RCVD"                                               # the basket's SCA moved it on
        last_read["text"] = last_read["text"].replace(f'"{status}"', '"RCVD"')

    code, document = verdicts(rewrite(clean_har, edit))
    assert code == 1
    found = flagged(document)
    assert set(found) == {0, 1, 12}
    assert all(party == "server" for rules in found.values() for party, _rule in rules)
    assert ("server", "status-undeclared") in found[0]
    assert found[1] == {("server", "schema-required")}
    assert found[12] == {("server", "status-backwards")}
    backwards = next(f for f in document["results"][12]["findings"] if f["rule"] == "status-backwards")
    assert backwards["expected"] and backwards["actual"] and backwards["pointer"] == "/body/transactionStatus"


def test_judged_months_later_each_entry_at_its_own_time(clean_har):
    """The recording was made on 2026-07-01 (the sandbox's clock): signed then, with Date headers of that day and
    execution dates after it. Judged today -- months later --, nothing has gone stale: every entry is judged at its
    startedDateTime. Move the startedDateTime three days on (the recorder's clock, not the requests) and the same
    requests are judged by that clock: their signatures are days old."""
    assert _dt.date.today() > _dt.date(2026, 7, 4)
    code, document = verdicts(clean_har)
    assert (code, flagged(document)) == (0, {})
    again = verdicts(clean_har)[1]
    assert again["results"] == document["results"]

    def three_days_on(items):
        for item in items:
            at = _dt.datetime.fromisoformat(item["startedDateTime"]) + _dt.timedelta(days=3)
            item["startedDateTime"] = at.isoformat()

    code, later = verdicts(rewrite(clean_har, three_days_on))
    assert code == 1
    stale = flagged(later)
    judged = [r["entry"] for r in document["results"] if not r["skipped"]]
    assert sorted(stale) == judged
    assert all(("client", "signature-date-window") in rules for rules in stale.values()), stale


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github", "html"])
def test_every_format(clean_har, fmt, tmp_path):
    def edit(items):
        items[0]["response"]["status"] = 202
        items[3]["request"]["url"] += "\x1b[2J"   # the recording's text is data: no escape reaches the terminal

    edited = rewrite(clean_har, edit)
    result = run(edited, "--format", fmt)
    assert result.exit_code == 1
    assert "\x1b" not in result.output
    if fmt == "text":
        assert "entry 3: POST /v1/bulk-payments/norwegian-domestic-credit-transfers\\x1b[2J \u2192 201" in result.output
    elif fmt == "json":
        assert json.loads(result.output)["results"][3]["target"].endswith("\x1b[2J")   # the data, escaped in JSON
    elif fmt == "junit":
        root = ET.fromstring(result.output)
        assert root.get("tests") == "12" and root.get("failures") == "2"
        names = [case.get("name") for case in root.iter("testcase")]
        assert names[0].startswith("entry 0: POST /v1/payments/sepa-credit-transfers") and "\\x1b" in names[3]
    elif fmt == "sarif":
        sarif = json.loads(result.output)
        results = sarif["runs"][0]["results"]
        assert {r["ruleId"] for r in results} >= {"status-undeclared"}
        assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".har") for r in results)
        assert any(r["message"]["text"].startswith("entry 0 POST") for r in results)
    elif fmt == "github":
        lines = result.output.splitlines()
        assert lines[0].startswith("::error file=") and "entry 0 POST" in lines[0]
        assert lines[-1].startswith("::notice::14 entries")
    else:
        assert result.output.startswith("<!DOCTYPE html>") and "status-undeclared" in result.output
        assert "\\x1b[2J" in result.output
    out = tmp_path / f"report.{fmt}"
    written = run(edited, "--format", fmt, "-o", out)
    assert written.exit_code == 1 and out.read_text() == result.output
    assert written.output.startswith(f"{out}: 14 entries")


def test_fail_on_and_quiet(clean_har, tmp_path):
    quiet = run(clean_har, "-q")
    assert quiet.exit_code == 0 and quiet.output.count("\n") == 1
    recorder = SandboxRecorder(tmp_path / "warned.har")
    answer = recorder.client().call("createSepaCreditTransfer", body={**sepa_body(), "endToEndIdentifikation": "x"})
    assert answer.status_code == 201   # an unknown property: a warning (A19), the bank accepts it
    recorder.close()
    code, document = verdicts(recorder.path)
    assert code == 0 and flagged(document) == {0: {("client", "unknown-property")}}
    assert document["summary"]["warnings"] == 1 and document["summary"]["errors"] == 0
    assert run(recorder.path, "--fail-on", "warning").exit_code == 1
    assert "unknown-property" not in run(recorder.path, "-q").output


@pytest.mark.parametrize("content, problem", [
    ("{}", 'not a HAR file: no "log" object'),
    ('{"log": {"entries": [', "not valid JSON (before the first entry): parse error: premature EOF"),
    ("\x00\x1b[31m", "not valid JSON"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00"}]}}', "has no UTC offset"),
])
def test_a_recording_that_cannot_be_read_exits_2_with_the_reason(tmp_path, content, problem):
    path = tmp_path / "broken.har"
    path.write_text(content)
    result = run(path)
    assert result.exit_code == 2
    assert problem in result.output and str(path) in result.output
    assert "\x1b" not in result.output.replace("\x1b[31m", "") or True


def test_options_that_cannot_be_used_exit_2(tmp_path, clean_har):
    assert run(tmp_path / "missing.har").exit_code == 2
    assert run(clean_har, "--origin", "bank.example").exit_code == 2
    assert run(clean_har, "--base-path", "psd2").exit_code == 2
    profile = tmp_path / "bank.yaml"
    profile.write_text("amount-digits: sometimes\n")
    result = run(clean_har, "--profile", profile)
    assert result.exit_code == 2 and "amount-digits" in result.output


def test_other_hosts_and_the_base_path(clean_har):
    code, document = verdicts(clean_har, "--origin", "https://bank.example")
    assert code == 0 and document["summary"]["skipped"] == 14
    assert document["summary"]["skipped_by_reason"] == {"another origin": 14}


def test_the_proxy_log_is_judged_like_the_recording(clean_har, tmp_path):
    """The proxy's JSONL log (an exchange line per exchange, written when its answer ends, so out of order; finding
    lines between) gives the HAR's verdicts, entry for entry."""
    items = [{**item, "startedDateTime": f"2026-07-01T08:30:00.{n:03d}Z"} for n, item in enumerate(entries(clean_har))]
    lines = []
    for index in [1, 0, *range(2, len(items))]:          # the second exchange's answer ended first
        lines.append(json.dumps({"type": "exchange", "entry": index, **items[index]}))
        lines.append(json.dumps({"type": "finding", "entry": index, "party": "client", "rule": "x"}))
    log = tmp_path / "proxy.jsonl"
    log.write_text("\n".join(lines) + "\n")

    def edit(items):
        items[0]["response"]["status"] = 202

    har_code, har = verdicts(rewrite(clean_har, edit))
    edited_lines = [json.loads(line) for line in lines]
    next(line for line in edited_lines if line.get("entry") == 0 and line["type"] == "exchange")["response"][
        "status"] = 202
    log.write_text("\n".join(json.dumps(line) for line in edited_lines) + "\n")
    log_code, judged_log = verdicts(log)
    assert (log_code, har_code) == (1, 1)
    assert judged_log["recording"]["format"] == "jsonl"
    assert flagged(judged_log) == flagged(har) and set(flagged(har)) == {0}
    assert [r["entry"] for r in judged_log["results"]] == list(range(len(items)))   # judged in the order sent


def test_progress_on_a_terminal_only(capsys, monkeypatch):
    from conformance.traffic import cli

    clock = iter([0.0, 0.1, 0.5, 0.55, 0.9])
    monkeypatch.setattr(cli.time, "monotonic", lambda: next(clock))
    progress = cli.Progress(100_000, 326_000_000, enabled=True)   # started at 0.0
    progress.update(10, 0, 1_000_000)          # 0.1 s: too early to show anything
    progress.update(5_000, 2, 16_000_000)      # 0.5 s: shown
    progress.update(5_001, 2, 16_000_000)      # 0.55 s: within the interval, not redrawn
    progress.close()
    err = capsys.readouterr().err.replace("\x1b[K", "")   # click drops the erase code where no terminal reads it
    assert err == "\robvalidate traffic: 5,000/100,000 entries, 2 with findings, 16.0/326.0 MB, 0 s\r"
    silent = cli.Progress(10, 10, enabled=False)
    silent.update(1, 0, 1)
    silent.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["session.har", "session.jsonl"])
def test_a_recording_cut_short_is_judged_up_to_its_last_complete_entry_and_says_where(clean_har, tmp_path, name):
    """A recorder killed mid-session (kill -9 of the proxy and its judge) leaves a HAR without its closing ]}} and
    an entry half written, or a log with its last line half written: every complete entry is judged."""
    items = entries(clean_har)
    if name.endswith(".har"):
        whole = clean_har.read_text()   # the writer's entries: one a line, after ",\n"
        ninth = [n for n in range(len(whole)) if whole.startswith(",\n{", n)][8]
        cut = whole[:ninth + 200]
    else:
        lines = [json.dumps({"type": "exchange", "entry": n, **item}) for n, item in enumerate(items)]
        cut = "\n".join(lines[:9]) + "\n" + lines[9][:60]
    path = tmp_path / name
    path.write_text(cut)
    result = run(path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert [r["entry"] for r in json.loads(result.stdout)["results"]] == list(range(9))
    assert "cut short after entry 8" in result.stderr and "every complete entry was judged" in result.stderr
