"""Living with known findings (issue 18): fingerprints that stay the same across seeds for the same defects, a
run-unique id per finding in every format, a baseline written by one run and compared by the next (known, new,
resolved, not rechecked; exit 1 only for new findings; a broken baseline file exits 2), and the whole certificate in
the curl only with --full-curl."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.client import Identity, SignedClient
from conformance.gate import baseline, report
from conformance.gate.cli import conform
from conformance.gate.session import curl
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from gate_helpers import gate_run

# Two defects whose checks do not overlap: A, a past execution date accepted (the semantic check of that rule);
# B, another TPP's payment readable (the security check).
FAULT_A, FAULT_B = F.PAST_EXECUTION_DATE, F.FOREIGN_PAYMENT_READABLE
CHECK_A, CHECK_B = "semantic:execution-date-past", "security:foreign-payment"
SUITES, CHECKS = "semantic,security", f"{CHECK_A},{CHECK_B}"


def _run(faults=(), seed=0):
    return gate_run(ReferenceServer(faults=faults).start(), suites=("semantic", "security", "stateful"),
                    checks=(CHECK_A, CHECK_B, "stateful:links"), seed=seed)


def test_the_same_faults_have_the_same_fingerprints_whatever_the_seed():
    faults = (FAULT_A, FAULT_B, F.CREATED_200)
    first, second = _run(faults, seed=0), _run(faults, seed=1)
    prints = [{g.finding.fingerprint for g in report.groups(r)} for r in (first, second)]
    assert len(prints[0]) >= 8, report.text(first)
    assert prints[0] == prints[1], (report.text(first), report.text(second))
    # what does change with the seed and the run (generated values, issued ids, dates) is in the findings all the
    # same: the fingerprint is not over it
    curls = [{f.curl for f in r.findings} for r in (first, second)]
    assert curls[0] != curls[1]
    # and each finding has a run-unique id, in report order
    assert [g.id for g in report.groups(first)] == [f"F{n}" for n in range(1, len(prints[0]) + 1)]


def _conform(tmp_path: Path, name: str, *args: str):
    reports = tmp_path / name
    result = CliRunner().invoke(conform, ["--suite", SUITES, "--check", CHECKS, "--max-examples", "1",
                                          "--report-dir", str(reports), *args])
    data = json.loads((reports / "conform.json").read_text(encoding="utf-8")) if reports.exists() else None
    return result, data, reports


def test_a_baseline_marks_findings_known_or_new_and_counts_what_is_resolved(tmp_path):
    file = tmp_path / "baseline.json"
    written, data_a, _ = _conform(tmp_path, "a", "--fault", FAULT_A, "--write-baseline", str(file))
    assert written.exit_code == 1, written.output
    stored = json.loads(file.read_text(encoding="utf-8"))
    prints_a = {f["fingerprint"] for f in data_a["findings"]}
    assert prints_a and [e["fingerprint"] for e in stored["findings"]] == sorted(prints_a)
    assert all(e["rule"] and e["operation"] and e["checks"] == [CHECK_A] and e["title"] for e in stored["findings"])
    # a reviewer's note is kept as read, never judged
    stored["findings"][0]["note"] = "ticket PAY-123"
    file.write_text(json.dumps(stored, indent=2), encoding="utf-8")

    # faults A and B, another seed: A's findings known, B's new, exit 1
    both, data, reports = _conform(tmp_path, "ab", "--fault", FAULT_A, "--fault", FAULT_B, "--seed", "1",
                                   "--baseline", str(file))
    assert both.exit_code == 1, both.output
    marks = {f["fingerprint"]: f["baseline"] for f in data["findings"]}
    assert {fp for fp, mark in marks.items() if mark == "known"} == prints_a
    new = [f for f in data["findings"] if f["baseline"] == "new"]
    assert new and all(f["checks"] == [CHECK_B] for f in new)
    counts = data["summary"]["baseline"]
    assert counts == {"file": str(file), "known": len(prints_a), "new": len(new), "resolved": 0,
                      "not_rechecked": 0}
    assert [f["id"] for f in data["findings"]] == [f"F{n}" for n in range(1, len(data["findings"]) + 1)]
    # in the text, a known finding is its one line; a new one its details; the summary says the counts
    lines = both.output.splitlines()
    known_lines = [line for line in lines if line.startswith("KNOWN ")]
    assert len(known_lines) == len(prints_a) and all(CHECK_A in line for line in known_lines)
    assert sum(line.startswith("FAIL new F") for line in lines) == len(new)
    assert f"baseline {file}: {len(prints_a)} known, {len(new)} new, 0 resolved, 0 not rechecked" in both.output
    # JUnit and HTML carry the id, the mark and the counts
    junit = ET.parse(reports / "conform.junit.xml").getroot()
    properties = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert properties["baseline.known"] == str(len(prints_a)) and properties["baseline.new"] == str(len(new))
    messages = [f.get("message") for f in junit.iter("failure")]
    assert any(m.startswith(f"{new[0]['id']}, new: ") for m in messages)
    page = (reports / "conform.html").read_text(encoding="utf-8")
    assert f"{len(prints_a)} known, {len(new)} new, 0 resolved" in page and "obvalidate conform: FAIL" in page

    # no fault: A's findings resolved (their check ran on their operations), exit 0
    none, data, reports = _conform(tmp_path, "none", "--baseline", str(file))
    assert none.exit_code == 0, none.output
    assert data["summary"]["baseline"]["resolved"] == len(prints_a)
    assert set(data["baseline"]["resolved_fingerprints"]) == prints_a
    assert "obvalidate conform: PASS" in (reports / "conform.html").read_text(encoding="utf-8")
    assert sum(line.startswith("resolved: ") for line in none.output.splitlines()) == len(prints_a)

    # only A, another seed: every finding known, exit 0 (the report still lists them)
    only_a, data, reports = _conform(tmp_path, "only-a", "--fault", FAULT_A, "--seed", "1", "--baseline", str(file))
    assert only_a.exit_code == 0, only_a.output
    assert data["findings"] and all(f["baseline"] == "known" for f in data["findings"])
    assert data["summary"]["baseline"]["known"] == len(prints_a)
    assert "obvalidate conform: PASS" in (reports / "conform.html").read_text(encoding="utf-8")

    # A's check filtered out: its fingerprints are not rechecked, never resolved
    filtered = CliRunner().invoke(conform, ["--suite", SUITES, "--check", CHECK_B, "--max-examples", "1",
                                            "--baseline", str(file), "--format", "json"])
    assert filtered.exit_code == 0, filtered.output
    counts = json.loads(filtered.stdout)["summary"]["baseline"]
    assert counts["resolved"] == 0 and counts["not_rechecked"] == len(prints_a)


def test_a_baseline_is_sorted_and_the_same_bytes_for_the_same_defects():
    first, second = _run((FAULT_A,), seed=0), _run((FAULT_A,), seed=1)
    assert baseline.dumps(report.groups(first)) == baseline.dumps(report.groups(second))


@pytest.mark.parametrize("content, says", [
    (None, "cannot read the baseline"),
    ("{not json", "is not JSON"),
    ('["07b49223bc38a73c"]', "is not an obvalidate baseline"),
    ('{"format": "obvalidate-baseline", "version": 9, "findings": []}', "has version 9"),
    ('{"format": "obvalidate-baseline", "version": 1, "findings": [{"fingerprint": "F1"}]}', "entry 1 has no "
     "fingerprint"),
    ('{"format": "obvalidate-baseline", "version": 1, "findings": [{"fingerprint": "07b49223bc38a73c", '
     '"checks": "schema:generated-requests"}]}', "checks must be a list"),
])
def test_an_unreadable_or_malformed_baseline_stops_the_run_with_exit_2(tmp_path, content, says):
    file = tmp_path / "baseline.json"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(conform, ["--check", CHECK_A, "--baseline", str(file)])
    assert result.exit_code == 2 and says in result.stderr and "Traceback" not in result.output
    assert not result.stdout, "the run does not start"


def test_an_unwritable_baseline_exits_2(tmp_path):
    result = CliRunner().invoke(conform, ["--suite", "security", "--check", CHECK_B, "--write-baseline",
                                          str(tmp_path / "missing" / "baseline.json")])
    assert result.exit_code == 2 and "cannot write the baseline" in result.stderr


# ---------------------------------------------------------------- the certificate in the curl
def test_full_curl_carries_the_certificate_and_the_default_leaves_it_out(tmp_path):
    request = SignedClient("http://127.0.0.1:9", Identity.generate()).prepare("createSepaCreditTransfer")
    certificate = dict(request.headers)["TPP-Signature-Certificate"]
    assert f"'TPP-Signature-Certificate: {certificate}'" in curl("http://127.0.0.1:9", request, full=True)
    assert certificate not in curl("http://127.0.0.1:9", request)

    args = ["--suite", "security", "--check", "security:tampered-body", "--fault", F.DIGEST_NOT_CHECKED,
            "--format", "json"]
    full = json.loads(CliRunner().invoke(conform, [*args, "--full-curl"]).stdout)["findings"]
    short = json.loads(CliRunner().invoke(conform, args).stdout)["findings"]
    assert full and short
    assert all("-H 'TPP-Signature-Certificate: MII" in f["curl"] and "${TPP_SIGNATURE_CERTIFICATE" not in f["curl"]
               for f in full)
    assert all("TPP-Signature-Certificate: MII" not in f["curl"] and "${TPP_SIGNATURE_CERTIFICATE" in f["curl"]
               for f in short)
