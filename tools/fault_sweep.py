"""Every fault switch of the reference sandbox against every suite of the conformance gate, with default settings:
which suites catch which switch, with how many new findings, under which rules, and which checks.

    python tools/fault_sweep.py [--switch NAME ...] [--suite S ...] [--check PATTERN ...] [--max-examples 10]
                                [--seed 0] [--workers 1] [--json FILE] [--reports DIR]

For each switch (``obvalidate sandbox faults``), and first for the faithful sandbox, a fresh reference sandbox is
started with only that switch on and ``obvalidate conform`` runs all suites against it (the same run as the
command's defaults). A switch's *new findings* are its run's findings (one per fingerprint, as the reports count
them) that the faithful sandbox's run does not have -- what a bank comparing with a baseline would see; one fault
should be one new finding (a consequence of a finding already reported is not a new finding of another rule). The
table gives, per switch, the new findings and their rules, the findings per suite, the tier the registry gives the
switch (faults.py ``decision``: a failure where it breaks the document, a difference from the decision it departs
from, a note, none where every reading accepts it) and the tier seen, then the check ids that found something (with
their counts). ``--reports DIR`` writes each run's reports (conform.json, .junit.xml, .html, .sarif, the text and
GitHub outputs) under DIR/<switch>/. Exit 1 when a switch is caught by no suite (one every reading accepts aside), is
caught in another tier (a failure for a switch following another reading, none for one breaking the document), or
when the faithful sandbox has a finding or a check errs; 0 otherwise. (CI runs only the checks enforcing each switch:
tests/conformance/test_gate.py.)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.gate import report  # noqa: E402
from conformance.gate.model import SUITES  # noqa: E402
from conformance.gate.runner import RunOptions, RunResult, run  # noqa: E402
from conformance.gate.session import Identities  # noqa: E402
from conformance.gate.target import ReferenceServer  # noqa: E402
from conformance.sandbox.faults import ANY_READING, FAULTS, NOTE  # noqa: E402

FAITHFUL = "(none)"


def sweep_one(switch: str, options: argparse.Namespace, identities: Identities,
              faithful: set[str] | None = None) -> dict:
    """One run of every suite against the reference sandbox with ``switch`` on (FAITHFUL: none); ``faithful`` the
    fingerprints the faithful sandbox's run found (a switch's new findings are the others)."""
    server = ReferenceServer(faults=() if switch == FAITHFUL else (switch,)).start()
    started = time.perf_counter()
    suites = tuple(options.suite or SUITES)
    try:
        result: RunResult = run(RunOptions(server.url, suites, identities=identities, seed=options.seed,
                                           max_examples=options.max_examples, workers=options.workers,
                                           checks=tuple(options.check or ())))
        if options.reports:
            _write_reports(result, Path(options.reports) / switch.strip("()"))
    finally:
        server.stop()
    by_suite = Counter(f.suite for f in result.findings)
    checks = Counter(f.check for f in result.findings)
    errors = sorted({o.check for o in result.outcomes if o.status == "error"})
    found = report.groups(result)
    new = [g for g in found if g.finding.fingerprint not in (faithful or set())]
    return {"switch": switch, "seconds": round(time.perf_counter() - started, 1),
            "findings": {suite: by_suite.get(suite, 0) for suite in suites},
            "fingerprints": sorted(g.finding.fingerprint for g in found),
            "new": len(new), "new_rules": dict(sorted(Counter(g.finding.rule for g in new).items())),
            "new_titles": [f"{g.finding.rule} on {g.finding.operation}: {g.finding.message}" for g in new],
            "checks": dict(sorted(checks.items())), "errors": errors, "requests": len(result.cases),
            "failures": sum(g.tier == "failure" for g in found),
            "differences": sorted({g.finding.decision or "note" for g in found if g.tier == "difference"}),
            "tier": None if switch == FAITHFUL else expected_tier(FAULTS[switch])}


def expected_tier(fault) -> str:
    """The tier the switch's registry entry gives it (faults.py: decision): failure, difference from A<n>, note, none."""
    if fault.decision is None:
        return "failure"
    return {NOTE: "note", ANY_READING: "none"}.get(fault.decision, f"difference from {fault.decision}")


def tier_seen(row: dict) -> str:
    if row["failures"]:
        return "failure"
    if row["differences"]:
        return " ".join("note" if d == "note" else f"difference from {d}" for d in row["differences"])
    return "none"


def _write_reports(result: RunResult, directory: Path) -> None:
    """Every output a run gives: the report files and what --format text/json/github/sarif print."""
    from validator.formats.json_format import dumps

    written = report.write(result, directory)
    (directory / "conform.txt").write_text(report.text(result), encoding="utf-8")
    (directory / "conform.github.txt").write_text(report.github(result), encoding="utf-8")
    (directory / "conform.stdout.json").write_text(dumps(report.as_json(result)), encoding="utf-8")
    assert written


def table(rows: list[dict]) -> str:
    suites = list(rows[0]["findings"]) if rows else list(SUITES)
    header = ["switch", "new findings", "their rules", *suites, "s", "tier (given: seen)", "caught by (check: findings)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        nothing = "no finding (as it must)" if row["switch"] == FAITHFUL or row["tier"] == "none" else "NOT CAUGHT"
        caught = ", ".join(f"{c}: {n}" for c, n in row["checks"].items()) or nothing
        if row["errors"]:
            caught += f"; errors in {', '.join(row['errors'])}"
        rules = ", ".join(f"{r} ({n})" if n > 1 else r for r, n in row["new_rules"].items()) or "-"
        new = "-" if row["switch"] == FAITHFUL else str(row["new"])
        tier = "-" if row["tier"] is None else f"{row['tier']}: {tier_seen(row)}"
        cells = [row["switch"], new, rules, *(str(row["findings"][s]) for s in suites), f"{row['seconds']:.0f}",
                 tier, caught]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--switch", action="append", choices=sorted(FAULTS), help="only these switches (repeat)")
    parser.add_argument("--suite", action="append", choices=SUITES, help="only these suites (repeat)")
    parser.add_argument("--check", action="append", metavar="PATTERN", help="only these checks (repeat; globs)")
    parser.add_argument("--reports", metavar="DIR", help="write each run's reports under DIR/<switch>/")
    parser.add_argument("--max-examples", type=int, default=10, help="as obvalidate conform (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="worker processes per run (suites spread)")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    options = parser.parse_args(argv)
    identities = Identities.throwaway()
    switches = [FAITHFUL, *(options.switch or sorted(FAULTS))]
    started = time.perf_counter()
    rows = []
    for switch in switches:
        faithful = set(rows[0]["fingerprints"]) if rows else None
        rows.append(sweep_one(switch, options, identities, faithful))
        print(f"{switch}: {rows[-1]['new']} new findings ({sum(rows[-1]['findings'].values())} sightings) in "
              f"{rows[-1]['seconds']} s", file=sys.stderr, flush=True)
    print(table(rows))
    total = time.perf_counter() - started
    print(f"\n{len(switches) - 1} switches + the faithful sandbox, "
          f"{'suites ' + ', '.join(options.suite) if options.suite else 'all suites'}, seed {options.seed}, "
          f"--max-examples {options.max_examples}: {total:.0f} s wall; "
          f"{sum(r['new'] == 1 for r in rows[1:])} switches give exactly one new finding")
    for row in rows[1:]:
        if row["new"] > 1:
            print(f"\n{row['switch']}: {row['new']} new findings", *(f"  - {t}" for t in row["new_titles"]), sep="\n")
    if options.json:
        Path(options.json).write_text(json.dumps({"rows": rows, "seconds": round(total, 1)}, indent=2) + "\n",
                                      encoding="utf-8")
    faithful, faulty = rows[0], rows[1:]
    missed = [r["switch"] for r in faulty if not r["checks"] and r["tier"] != "none"]
    problems = []
    if missed:
        problems.append(f"caught by no suite: {', '.join(missed)}")
    # a switch breaking the document must fail the run; one following another reading must not
    wrong_tier = [r["switch"] for r in faulty if (r["tier"] == "failure") != bool(r["failures"])]
    if wrong_tier:
        problems.append(f"caught in another tier than the registry gives: {', '.join(wrong_tier)}")
    if faithful["checks"] or faithful["errors"]:
        problems.append("the faithful sandbox has findings or errors")
    errs = [r["switch"] for r in rows if r["errors"]]
    if errs:
        problems.append(f"a check erred with: {', '.join(errs)}")
    for problem in problems:
        print(f"fault_sweep: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
