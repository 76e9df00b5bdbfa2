"""What a QA engineer reading the edge-case reports needs (issue 21, points 11-14): each row names its operation and
the decisions behind its verdict; every edge breaks exactly the rule it is listed under (verified by the validator,
over all edges); the reports count and explain what was not sent, and the chart claims agreement over what was sent
only; periodic payments and batch runs have their edges; the page stays small.

Kept lean: the all-kinds runs judge with the validator alone (--target none); runs against the reference sandbox
take one or two kinds and one Hypothesis example per rule."""
from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conformance.edges import report as edge_report
from conformance.edges.cli import edge_cases
from conformance.edges.derive import Deriver, Edge
from conformance.edges.run import NOT_SENT, run
from validator import Validator
from validator.findings import ERROR
from validator.spec import default_spec_path, load_spec

TODAY = "2026-11-22"
SEPA, BULK, PERIODIC, BATCH = "sepa-credit-transfer", "bulk-payment", "periodic-payment", "batch-run"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(edge_cases, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def _report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> Path:
    """Every request kind, judged by the validator alone."""
    out = tmp_path_factory.mktemp("all")
    code, output = _run("--target", "none", "--today", TODAY, "--out", str(out))
    assert code == 0, output
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """SEPA and bulk edges against the reference sandbox."""
    out = tmp_path_factory.mktemp("reference")
    code, output = _run("--target", "reference", "--kind", SEPA, "--kind", BULK, "--max-examples", "1",
                        "--out", str(out))
    assert code == 0, output
    return out


# ---------------------------------------------------------------------------------------------- 11: one rule each
def test_every_edge_breaks_exactly_the_rule_it_is_listed_under(contract):
    """The validator's whole-request check of every case of every kind: a refused edge is refused by its own rule
    alone, an accepted one breaks nothing (warnings of other rules may come with it)."""
    cases = _report(contract)["cases"]
    assert len({c["kind"] for c in cases}) == 10 and len(cases) > 700
    wrong = [(c["kind"], c["rule"], c["field"], c["edge"], sorted(errors))
             for c in cases if not (errors := {f["rule"] for f in c["findings"] if f["severity"] == ERROR})
             <= {c["rule"]}]
    assert wrong == []
    refused = [c for c in cases if c["verdict"] == "refused"]
    assert refused and all({f["rule"] for f in c["findings"] if f["severity"] == ERROR} == {c["rule"]}
                           for c in refused)


def test_a_currency_member_comes_with_an_amount_its_minor_units_allow(contract):
    byr = next(c for c in _report(contract)["cases"] if c["kind"] == SEPA and c["edge"] == "member 'BYR' (withdrawn)")
    assert byr["rule"] == "schema-enum" and byr["body"]["instructedAmount"] == {"amount": "1", "currency": "BYR"}
    assert "amount-minor-units" not in {f["rule"] for f in byr["findings"]}


def test_an_edge_is_listed_under_the_rule_it_breaks_or_left_out():
    day = _dt.date.fromisoformat(TODAY)
    spec = load_spec()
    deriver = Deriver(spec, Validator(spec=spec, today=day), day)
    edges = deriver.edges((SEPA, BULK))
    # a well-formed date in the past breaks the execution-date rule, not the date format: it is listed there
    yesterday = [e for e in edges if e.field == "SepaCreditTransferRequest.requestedExecutionDate"
                 and e.edge.startswith("yesterday (")]
    assert [e.rule for e in yesterday] == ["execution-date-past"]
    # over-long text where a BBAN's 11 digits are due breaks the length and the BBAN format: left out, with both
    assert any(e.field == "AccountReferenceBban.bban" and rules == ("bban-format", "schema-length")
               for e, rules in deriver.left_out)
    assert not [e for e in edges if e.field == "AccountReferenceBban.bban" and e.edge.startswith("max+1")]
    # the check itself: an edge whose body breaks two rules is left out, one breaking another rule is relabelled
    sepa = next(e for e in edges if e.kind == SEPA)
    two = {**sepa.body, "requestedExecutionDate": "2020-01-01", "creditorName": "x" * 71}
    deriver.left_out = []
    assert deriver._verified(Edge("schema-length", "f", "", "two rules", SEPA, two)) is None
    assert deriver.left_out[0][1] == ("execution-date-past", "schema-length")
    one = {**sepa.body, "requestedExecutionDate": "2020-01-01"}
    assert deriver._verified(Edge("schema-format", "f", "", "one rule", SEPA, one)).rule == "execution-date-past"


def test_rows_name_their_operation(reference):
    md = (reference / "report.md").read_text(encoding="utf-8")
    group = md.split("\n## schema-enum · Amount.currency\n")[1].split("\n## ")[0]
    assert "| edge | operation | input |" in group
    rows = [line for line in group.splitlines() if line.startswith("| member 'AED'")]
    assert len(rows) == 2 and {"createSepaCreditTransfer", "createBulkPayment"} == {
        line.split(" | ")[1] for line in rows}
    page = (reference / "report.html").read_text(encoding="utf-8")
    assert "<th>operation</th>" in page and "<td>createBulkPayment</td>" in page


# ---------------------------------------------------------------------------------------------- 12: sent, not sent
def test_the_reports_count_and_explain_what_was_not_sent(reference):
    report = _report(reference)
    unsent = [c for c in report["cases"] if c["agree"] is None]
    assert unsent and all(c["unsent"] == NOT_SENT and c["note"] for c in unsent)
    assert report["summary"]["not_sent"] == len(unsent)
    md = (reference / "report.md").read_text(encoding="utf-8")
    section = md.split("\n## Not sent\n")[1].split("\n## ")[0]
    assert f"{len(unsent)} cases were not sent" in section
    for why in {c["note"] for c in unsent}:
        n = sum(c["note"] == why for c in unsent)
        assert f"| {NOT_SENT} | {why} | {n} |" in section
    assert "left out by design" in section
    page = (reference / "report.html").read_text(encoding="utf-8")
    assert f"<p>{len(unsent)} cases were not sent to the target:</p>" in page and 'id="unsent"' in page
    assert "autofocus" not in page  # the page opens at its top, where the counts are, not scrolled to the search box
    # with a target, report.md keeps the validator's findings and the decisions behind them
    assert "| findings · decisions |" in md and "| target | agree |" in md


def test_the_chart_claims_agreement_over_what_was_sent_only(reference):
    report = _report(reference)
    rule = "execution-date-past"  # its midnight edges are judged at an instant: partly sent
    cases = [c for c in report["cases"] if c["rule"] == rule]
    sent = sum(c["agree"] is not None for c in cases)
    assert 0 < sent < len(cases)
    page = (reference / "report.html").read_text(encoding="utf-8")
    chart = page.split('<svg id="chart"')[1].split("</svg>")[0]
    label = f"100% of {sent} sent agree, {len(cases) - sent} not sent"
    assert label in chart and "100% agree" not in chart
    assert f"| {label} |" in (reference / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- 13: periodic, batch
def test_periodic_payments_get_their_edges(contract):
    cases = [c for c in _report(contract)["cases"] if c["kind"] == PERIODIC]
    verdicts = {(c["rule"], c["edge"]): c["verdict"] for c in cases}
    assert verdicts[("periodic-start-date-past", f"startDate today ({TODAY}, Europe/Oslo)")] == "accepted"
    assert verdicts[("periodic-start-date-past", "startDate yesterday (2026-11-21, Europe/Oslo)")] == "refused"
    assert verdicts[("periodic-end-before-start", f"endDate the startDate ({TODAY})")] == "accepted"
    assert verdicts[("periodic-end-before-start", "endDate the day before startDate (2026-11-21)")] == "refused"
    frequencies = load_spec().schema("PeriodicFrequency")["enum"]
    for frequency in frequencies:  # every frequency, with and without the months it may take
        assert (("months-of-execution-frequency", f"{frequency} without monthsOfExecution") in verdicts)
    assert verdicts[("months-of-execution-frequency", "Monthly with monthsOfExecution")] == "refused"
    assert verdicts[("months-of-execution-frequency", "MonthlyVariable without monthsOfExecution")] == "refused"
    assert verdicts[("months-of-execution-duplicate", "a month twice: ['1', '1']")] == "refused"
    days = {c["edge"]: c["verdict"] for c in cases if c["field"].endswith(".dayOfExecution")}
    assert days["member '31'"] == "accepted" and days["near-miss, after the last: '32'"] == "refused"
    assert days["near-miss, leading zero: '01'"] == "refused"


def test_batch_runs_get_their_times_in_oslo(contract):
    cases = {c["edge"]: c for c in _report(contract)["cases"] if c["kind"] == BATCH}
    times = load_spec().batch_run_times[1]
    for hh_mm in times:  # each run at Oslo's offset of the day (winter: +01:00) and the same instant in UTC
        local = cases[f"the {hh_mm} run in Oslo, Oslo's offset: {TODAY}T{hh_mm}:00+01:00"]
        utc_hour = int(hh_mm[:2]) - 1
        utc = cases[f"the {hh_mm} run in Oslo, in UTC: {TODAY}T{utc_hour:02d}:{hh_mm[3:]}:00Z"]
        assert local["verdict"] == utc["verdict"] == "accepted"
    summer = next(c for edge, c in cases.items() if edge.startswith("the 12:00 run on a summer-time day"))
    assert summer["input"].endswith("T12:00:00+02:00")
    assert cases[f"near-miss, no offset: '{TODAY}T12:00:00'"]["verdict"] == "refused"


def test_periodic_edges_are_sent_and_batch_runs_say_why_not(tmp_path):
    code, output = _run("--target", "reference", "--kind", PERIODIC, "--kind", BATCH, "--max-examples", "1",
                        "--out", str(tmp_path))
    assert code == 0, output
    cases = _report(tmp_path)["cases"]
    periodic = [c for c in cases if c["kind"] == PERIODIC]
    assert sum(c["agree"] is True for c in periodic) > 100  # the reference sandbox answers as the validator says
    batch = [c for c in cases if c["kind"] == BATCH]
    assert batch and all(c["agree"] is None and "batch run executes the target's pending payments" in c["note"]
                         for c in batch)


def test_a_kind_without_edges_exits_2(tmp_path, monkeypatch):
    document = yaml.safe_load(default_spec_path().read_text(encoding="utf-8"))
    body = document["paths"]["/v1/periodic-payments/norwegian-domestic-credit-transfers"]["post"]["requestBody"]
    body["content"]["application/json"].pop("examples")
    copy = tmp_path / "openapi.yaml"
    copy.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    spec = load_spec(copy)
    monkeypatch.setattr("validator.spec.load_spec", lambda *a, **k: spec)
    code, output = _run("--kind", PERIODIC, "--out", str(tmp_path / "out"))
    assert code == 2 and "no edge case for periodic-payment" in output
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------- 14: what stands behind
def test_verdicts_show_the_decisions_behind_them(reference):
    cases = _report(reference)["cases"]
    over = next(c for c in cases if c["kind"] == SEPA and c["edge"] == "EUR (2 minor units): one digit over")
    assert {"A9", "A10"} <= set(over["assumptions"])
    nin = next(c for c in cases if c["rule"] == "psu-identity-invalid")
    assert "A16" in nin["assumptions"]
    md = (reference / "report.md").read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if line.startswith("| EUR (2 minor units): one digit over |"))
    assert "amount-minor-units · A9, A10" in row
    assert "amount-minor-units · A9, A10" in (reference / "report.html").read_text(encoding="utf-8")


def test_the_bulk_execution_date_cites_the_bulk_section(reference):
    cases = _report(reference)["cases"]
    sections = {c["kind"]: c["section"] for c in cases if c["rule"] == "execution-date-past"
                and c["source"] == "derived"}
    resources = "Resources and their fields › "
    assert sections == {SEPA: resources + "Single SEPA credit transfer request",
                        BULK: resources + "Bulk payment request (Norwegian domestic credit transfers)"}


def test_the_two_oslo_midnight_rows_are_labelled_by_what_the_date_is_there(contract):
    rows = [c for c in _report(contract)["cases"] if c["kind"] == SEPA and c["rule"] == "execution-date-past"
            and "midnight" in c["edge"]]
    labels = {c["edge"].split(" ")[0]: c for c in rows}
    assert set(labels) == {"today's", "yesterday's"}
    assert labels["today's"]["verdict"] == "accepted" and "1 s before midnight" in labels["today's"]["edge"]
    assert labels["yesterday's"]["verdict"] == "refused" and "at midnight" in labels["yesterday's"]["edge"]
    assert labels["today's"]["input"] == labels["yesterday's"]["input"]  # the same date, a second apart


def test_the_page_stays_small(reference):
    """A curl per agreeing case made the page 1.5 MB for 545 cases; report.json keeps them all."""
    report = _report(reference)
    page = (reference / "report.html").stat().st_size
    assert page < 450 * len(report["cases"]), f"{page} bytes for {len(report['cases'])} cases"
    assert all(c["curl"] for c in report["cases"] if c["agree"] is not None)
    assert "<summary>curl</summary>" not in (reference / "report.html").read_text(encoding="utf-8")  # none disagree
