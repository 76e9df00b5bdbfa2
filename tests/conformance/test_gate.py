"""The conformance gate (`obvalidate conform`) against the reference sandbox: clean when faithful, failing with a
finding that names the broken behaviour for each fault switch, deterministic for a seed; its command line, reports
and pytest plugin. Quick profile: few Hypothesis examples (CI budget)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from conformance.gate import report
from conformance.gate.cli import conform
from conformance.gate.model import REGISTRY, SUITES
from conformance.gate.runner import checks_of
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from gate_helpers import describe, gate_run
from validator.rules import catalogue

QUICK = 1  # Hypothesis examples per rule and operation in CI (the README note gives a full run)


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(faults=(), *, suites=SUITES, checks=(), seed=0, identities=None, max_examples=QUICK):
    return gate_run(ReferenceServer(faults=faults).start(), suites=suites, checks=checks, seed=seed,
                    identities=identities, max_examples=max_examples)


# ---------------------------------------------------------------- the registry
def test_checks_have_stable_ids_suites_and_references():
    checks = checks_of(SUITES)
    assert {c.suite for c in checks} == set(SUITES)
    rules = catalogue()
    for c in checks:
        assert re.fullmatch(r"(schema|negative|security|semantic|stateful):[a-z0-9-]+", c.id), c.id
        assert c.refs and c.title, c.id
        if c.id.startswith("semantic:") and c.id != "semantic:valid-control":
            assert c.id.split(":", 1)[1] in rules, f"{c.id} names no catalogue rule"


# ---------------------------------------------------------------- the faithful reference: no finding
def test_reference_sandbox_passes_every_suite(identities):
    started = time.perf_counter()
    result = gate(identities=identities)
    elapsed = time.perf_counter() - started
    assert not result.findings, describe(result)
    errors = [o for o in result.outcomes if o.status == "error"]
    assert not errors, [o.reason for o in errors]
    ran = {o.check for o in result.outcomes if o.status == "passed"}
    assert {c.id for c in checks_of(SUITES)} <= ran, "a check was not exercised against the reference"
    assert len(result.cases) > 200
    print(f"quick profile ({QUICK} examples): {len(result.cases)} requests in {elapsed:.1f} s")


# ---------------------------------------------------------------- each fault switch caught
SECTIONS = ("Endpoints", "Limits", "Errors")
# Switches whose description names no decision or section: the checks that enforce what they break; and what the
# Schemathesis suites catch (their citations are broad -- Endpoints, Errors, A7 -- so they are named where they do).
ENFORCED_BY = {F.WRITE_LOST: ("stateful:concurrent-creations",),
               F.EMPTY_NAME_REFUSED: ("semantic:valid-control",),
               F.CREATED_200: ("schema:generated-requests",),
               F.STATUS_MISSING: ("schema:generated-requests",),
               # other readings of open points (issue 27): the checks that meet them
               F.EMPTY_HEADER_ABSENT: ("semantic:header-format",),
               F.UNLISTED_HEADERS_IGNORED: ("stateful:unlisted-headers",),
               F.EXTRA_COLLECTION_READ: ("negative:unsupported-methods",),
               F.UNKNOWN_IDS_FIRST: ("negative:schema-invalid-requests", "semantic:header-format",
                                     "stateful:unknown-ids")}
FUZZ_SUITES = ("schema", "negative")


def _named(text: str) -> set[str]:
    return set(re.findall(r"\bA\d+\b", text)) | {w for w in SECTIONS if w in text}


def checks_enforcing(fault: F.Fault) -> tuple[str, ...]:
    """The checks that enforce what a switch breaks: those citing a decision or section its ``breaks`` names, those
    of a rule it hides, and ENFORCED_BY. (The full run of every suite against each switch is in the README's note;
    CI runs these to stay within its budget.)"""
    named = _named(fault.breaks)
    found = [c.id for c in checks_of(SUITES) if c.suite not in FUZZ_SUITES
             and (_named(" ".join(c.refs)) & named or c.id.split(":", 1)[1] in fault.hides)]
    return tuple(dict.fromkeys([*found, *ENFORCED_BY.get(fault.name, ())]))


def _names_the_behaviour(fault: F.Fault, finding) -> bool:
    """A finding names the broken behaviour: its rule is one the switch hides, or its section or its check cites a
    decision or section the switch's ``breaks`` names, or its check is one ENFORCED_BY names."""
    cited = _named(f"{finding.ref} {' '.join(REGISTRY[finding.check].refs)}")
    return (finding.rule in fault.hides or bool(_named(fault.breaks) & cited)
            or finding.check in ENFORCED_BY.get(fault.name, ()))


@pytest.mark.parametrize("name", sorted(F.FAULTS))
def test_each_fault_switch_is_caught_in_its_tier(name, identities):
    """A switch breaking the document is a failure naming what it breaks; one following another reading of a point
    the document leaves open is a difference from the decision it departs from (never a failure); an extension is a
    note (a difference naming no decision); what every reading accepts is no finding at all."""
    fault = F.FAULTS[name]
    checks = checks_enforcing(fault)
    assert checks, f"{name}: no check enforces what it breaks ({fault.breaks})"
    result = gate((name,), checks=checks, identities=identities)
    if fault.decision == F.ANY_READING:
        assert not result.findings, describe(result)
        return
    assert result.findings, f"{name}: no finding from {checks}"
    if fault.decision is None:
        naming = [f for f in result.findings if _names_the_behaviour(fault, f) and f.tier == "failure"]
        assert naming, f"{name} ({fault.breaks}): no failure names it:\n{describe(result)}"
        return
    assert {f.tier for f in result.findings} == {"difference"}, describe(result)
    wanted = None if fault.decision == F.NOTE else fault.decision
    assert {f.decision for f in result.findings} == {wanted}, describe(result)


# ---------------------------------------------------------------- determinism
DETERMINISM_CHECKS = ("semantic:amount-minor-units", "semantic:schema-enum", "stateful:lifecycle",
                      "stateful:basket-reference-mix", "security:tampered-body", "schema:generated-requests",
                      "negative:schema-invalid-requests")


def _stable(result) -> dict:
    data = report.as_json(result)
    data.pop("run")
    for f in data["findings"]:
        f.pop("curl")
        f.pop("request")   # as sent: its X-Request-ID is a fresh UUID each run
    return data


def test_same_seed_same_cases_and_report(identities):
    first = gate(checks=DETERMINISM_CHECKS, seed=7, identities=identities)
    second = gate(checks=DETERMINISM_CHECKS, seed=7, identities=identities)
    assert first.cases and first.cases_digest == second.cases_digest
    assert _stable(first) == _stable(second)
    semantic = DETERMINISM_CHECKS[:2]
    other = gate(checks=semantic, seed=8, identities=identities)
    assert sorted(other.cases) != sorted(c for c in first.cases if c[0].startswith("semantic:")), \
        "another seed sends other cases"


# ---------------------------------------------------------------- the command line and the reports
def test_conform_writes_reports_and_exits_0_when_clean(tmp_path):
    result = CliRunner().invoke(conform, ["--check", "security:unsigned,stateful:logical-duplicate", "--workers", "2",
                                          "--report-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)   # the progress lines go to standard error
    assert data["summary"]["findings"] == 0 and data["summary"]["passed"] >= 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conform.html", "conform.json", "conform.junit.xml",
                                                          "conform.sarif", "coverage.json"]
    suites = ET.parse(tmp_path / "conform.junit.xml").getroot()
    cases = [(c.get("classname"), c.get("name")) for c in suites.iter("testcase")]
    assert ("security.security:unsigned", "createSepaCreditTransfer") in cases
    page = (tmp_path / "conform.html").read_text(encoding="utf-8")
    assert "obvalidate conform: PASS" in page and page.count("<script") == 1 and "http" in page   # its own filter
    coverage = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    assert "A8" in coverage["decisions"]["exercised"] and "A30" in coverage["decisions"]["exercised"]
    assert coverage["rules"]["not_exercised"], "coverage says which rules the run did not reach"
    assert all(coverage["rules"]["not_exercised"].values()), "each unreached rule comes with a reason"


def test_conform_exits_1_with_a_reproducer_per_finding():
    result = CliRunner().invoke(conform, ["--check", "security:tampered-body", "--fault", F.DIGEST_NOT_CHECKED])
    assert result.exit_code == 1, result.output
    assert "FAIL F1 1× security:tampered-body [createSepaCreditTransfer] rule digest-mismatch" in result.output
    reproduce = next(line for line in result.output.splitlines() if "reproduce:" in line)
    assert "curl" in reproduce and "Signature: keyId=" in reproduce and "Digest: SHA-256=" in reproduce
    assert "PRIVATE KEY" not in result.output


@pytest.mark.parametrize("args,message", [
    (["--target", "http://127.0.0.1:9"], "not reachable"),
    (["--suite", "schema,nonsense"], "unknown suite"),
    (["--check", "security:nothing-like-this"], "no check"),
    (["--target", "ftp://example"], "http(s) URL"),
    (["--cert", __file__], "--cert and --key go together"),
])
def test_conform_exits_2_when_the_run_cannot_happen(args, message):
    result = CliRunner().invoke(conform, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_conform_is_an_obvalidate_subcommand():
    done = subprocess.run([sys.executable, "-m", "validator", "conform", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--target" in done.stdout and "--max-examples" in done.stdout


# ---------------------------------------------------------------- the same checks under pytest
def test_pytest_plugin_runs_the_checks(tmp_path):
    server = ReferenceServer(faults=(F.DIGEST_NOT_CHECKED,)).start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "conformance.gate.pytest_plugin", "--ob-target", server.url,
             "--ob-check", "security:tampered-body,security:unsigned", "-q", "-p", "no:cacheprovider",
             "--rootdir", str(tmp_path), str(tmp_path)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    finally:
        server.stop()
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "digest-mismatch" in done.stdout


def test_workers_start_the_other_suites_after_the_resetting_ones_end(monkeypatch):
    """With --workers the Schemathesis suites (which may reset the sandbox) end before the scenarios start."""
    from conformance.gate import runner

    events = []

    class Done:
        def __init__(self, suite):
            self.suite = suite

        def result(self):
            events.append(("end", self.suite))
            return runner.RunResult("http://127.0.0.1:9", None)

    class Pool:
        def __init__(self, **_options):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, _function, _options, _pems, suite):
            events.append(("start", suite))
            return Done(suite)

    monkeypatch.setattr(runner, "ProcessPoolExecutor", Pool)
    runner.run(runner.RunOptions("http://127.0.0.1:9", SUITES, workers=5))
    ended = [i for i, (what, suite) in enumerate(events) if what == "end" and suite in runner.RESETTING_SUITES]
    started = [i for i, (what, suite) in enumerate(events) if what == "start" and suite not in runner.RESETTING_SUITES]
    assert ended and started and max(ended) < min(started), events


def test_a_second_run_against_the_same_sandbox_finds_nothing_the_first_did_not():
    """A bank gates a persistent sandbox every night with the same seed: its earlier runs' bookings stay in the
    accounts, and the lifecycle must find this run's booking alone (its remittance names the run)."""
    from conformance.gate.runner import RunOptions, run

    server = ReferenceServer().start()
    try:
        runs = [run(RunOptions(server.url, ("stateful",), seed=0, max_examples=1, checks=("stateful:lifecycle",)))
                for _ in range(2)]
    finally:
        server.stop()
    assert [describe(result) for result in runs] == ["(no findings)", "(no findings)"]
