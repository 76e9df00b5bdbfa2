"""The run's reports: text for the terminal, JSON, JUnit XML (a testcase per suite × check × operation), a
self-contained HTML summary, and clause coverage (which rules, decisions and document sections the run exercised,
which it could not reach and why).

A defect is reported once: findings with the same fingerprint (:func:`~conformance.gate.model.fingerprint`: the
operation, rule, expected and actual status and code, whichever suite or check saw them) are one finding naming every
check that saw it and how often; the summary counts those (``findings``) and every sighting (``occurrences``). Each
finding keeps the answer's headers (bounded, escaped) and its fingerprint, in every format, so a later run can be
compared with a baseline. The summary also counts what was not exercised, by reason.

Each finding has a run-unique ``id`` (F1, F2, ... in report order) next to its ``fingerprint``. Compared with a
baseline (``conform --baseline``, baseline.py), each finding is marked ``known`` or ``new`` and every summary counts
known, new, resolved and not rechecked; the text report then prints a known finding as its one line only.

What came from the target (messages quoting its answers, its codes, bodies and headers) is data, never markup or
terminal control, in every format (validator.formats.escape): each line of the text report and each JUnit name,
message and line is one printable line (controls, ESC, C1, separators shown as ``\\x1b``, ``\\r``, ``\\n``), the HTML
is that and markup-free, the JSON carries the values as they were, escaped by JSON (C1 and DEL too).

Everything but the ``run`` block (target URL, duration), the curl commands (their Date and Signature) and the
answers' own Date headers is the same for two runs with the same seed against the reference sandbox.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

from validator.formats import write_documents
from validator.formats.escape import printable, printable_lines
from validator.formats.json_format import dumps
from validator.rules import catalogue
from validator.spec import Spec, load_spec

from . import ci, html
from .ci import difference_note
from .baseline import Comparison, compare
from .model import DIFFERENCE, FAILURE, REGISTRY, FindingGroup, grouped
from .runner import RunResult
from .suites.links import CHECK_ID as LINKS_CHECK, links_coverage

STATUS_ORDER = ("failed", "error", "not-exercised", "passed")
TEXT_ALSO = 3   # other sightings' messages the text report prints under a finding
SAME_ANSWER_REQUESTS = 3   # an answer body this many requests got, byte for byte, is said once (same_answers)


def summary(result: RunResult) -> dict[str, Any]:
    counts = Counter(o.status for o in result.outcomes)
    tiers = Counter(g.tier for g in groups(result))
    return {"checks": len({o.check for o in result.outcomes}), "outcomes": len(result.outcomes),
            **{s: counts.get(s, 0) for s in STATUS_ORDER}, "findings": len(groups(result)),
            "failures": tiers.get(FAILURE, 0), "differences": tiers.get(DIFFERENCE, 0),
            "occurrences": len(result.findings), "cases": len(result.cases),
            "not_exercised_by_reason": not_exercised_by_reason(result), **_baseline_counts(result)}


def _baseline_counts(result: RunResult) -> dict[str, Any]:
    comparison = baseline_comparison(result)
    return {"baseline": comparison.counts()} if comparison else {}


def not_exercised_by_reason(result: RunResult) -> dict[str, int]:
    """How many check × operation outcomes stay "not exercised", per reason (its first line), most frequent first."""
    reasons = Counter((o.reason.splitlines() or [""])[0] for o in result.outcomes if o.status == "not-exercised")
    return dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0])))


def groups(result: RunResult) -> list[FindingGroup]:
    """The run's defects: its findings grouped by fingerprint, in report order (marked known or new when the run is
    compared with a baseline)."""
    return _compared(result)[0]


def baseline_comparison(result: RunResult) -> Comparison | None:
    """The run against its baseline (None without one): known, new, resolved, not rechecked."""
    return _compared(result)[1]


def _compared(result: RunResult) -> tuple[list[FindingGroup], Comparison | None]:
    found = grouped(_findings(result))
    if result.baseline is None:
        return found, None
    return found, compare(result.baseline, found, result.outcomes)


def same_answers(result: RunResult, found: list[FindingGroup] | None = None) -> list[dict[str, Any]]:
    """Answer bodies identical byte for byte across at least :data:`SAME_ANSWER_REQUESTS` requests of the run (a
    mock's canned body) that findings carry: each once, with how many requests got it, for which operations, and
    the findings whose answer it is (their ids), most requests first. A reader sees the one cause before its
    findings."""
    found = groups(result) if found is None else found
    causing: dict[str, list[str]] = {}
    for g in found:
        for f in g.occurrences:
            if f.answer_sha256 and g.id not in causing.setdefault(f.answer_sha256, []):
                causing[f.answer_sha256].append(g.id)
    out = []
    for digest, ids in causing.items():
        seen = result.answers.get(digest)
        if seen is None or seen[0] < SAME_ANSWER_REQUESTS:
            continue
        count, size, excerpt, operations = seen
        out.append({"sha256": digest, "requests": count, "bytes": size, "operations": sorted(operations),
                    "excerpt": excerpt, "findings": ids})
    return sorted(out, key=lambda a: (-a["requests"], a["sha256"]))


def _headers_line(headers: dict[str, str]) -> str:
    return "; ".join(f"{name}: {value}" for name, value in headers.items())


def coverage(result: RunResult, spec: Spec | None = None) -> dict[str, Any]:
    """Which rules, decisions (A1-A32) and document sections the run exercised; the others and why not."""
    spec = spec or load_spec()
    rules = catalogue()
    ran = {o.check for o in result.outcomes if o.status in ("passed", "failed")}
    skipped = {o.check: o.reason for o in result.outcomes if o.status in ("not-exercised", "error")}
    exercised_rules = {r for r in result.exercised_rules if r in rules}
    refs: set[str] = set(result.exercised_refs)
    for check_id in ran:
        refs.update(REGISTRY[check_id].refs if check_id in REGISTRY else ())
    for rule_id in exercised_rules:
        refs.add(rules[rule_id].ref)
        refs.update(rules[rule_id].assumptions)
    checks_by_ref: dict[str, list[str]] = {}
    for chk in REGISTRY.values():
        for ref in chk.refs:
            checks_by_ref.setdefault(ref, []).append(chk.id)

    def rule_reason(rule_id: str) -> str:
        rule = rules[rule_id]
        check_id = f"semantic:{rule_id}"
        if check_id in skipped:
            return skipped[check_id].splitlines()[0]
        from .suites.semantic import left_out_reason

        left_out = left_out_reason(rule_id)
        if left_out:
            return left_out
        if rule.direction == "response":
            return "a response rule: no answer of the run broke or reached it"
        if check_id not in REGISTRY:
            return "no check of the gate sends a request breaking it (no single-rule mutation, no targeted check)"
        return "its check did not run (suite not selected)"

    def decision_reason(ref: str) -> str:
        checks = checks_by_ref.get(ref, [])
        if not checks:
            return "no check of the gate enforces it"
        why = [f"{c}: {skipped[c].splitlines()[0]}" for c in checks if c in skipped]
        return "; ".join(why) or "its checks did not run (suite not selected)"

    decisions = list(spec.assumptions)
    sections = sorted({r.ref for r in rules.values() if r.ref} | {ref for c in REGISTRY.values() for ref in c.refs
                                                               if not ref.startswith("A")})
    return {
        "rules": {
            "exercised": sorted(exercised_rules),
            "not_exercised": {r: rule_reason(r) for r in sorted(rules) if r not in exercised_rules},
        },
        "decisions": {
            "exercised": [d for d in decisions if d in refs],
            "not_exercised": {d: decision_reason(d) for d in decisions if d not in refs},
        },
        "sections": {
            "exercised": [s for s in sections if s in refs],
            "not_exercised": {s: "no check of the run reached a rule of this section" for s in sections if s not in refs},
        },
        "links": links_coverage(spec, refs, ran=LINKS_CHECK in ran),
    }


def as_json(result: RunResult, spec: Spec | None = None) -> dict[str, Any]:
    return {
        "run": {"target": result.base_url, "seconds": round(result.seconds, 2), **_tls(result)},
        "seed": result.options.seed,
        "max_examples": result.options.max_examples,
        "judged_by": result.options.judged_by(),
        "suites": list(result.options.suites),
        "summary": summary(result),
        "cases_digest": result.cases_digest,
        "outcomes": [_stable(o.as_dict()) for o in _ordered(result)],
        "same_answers": same_answers(result),
        "findings": [g.as_dict() for g in groups(result)],
        **_baseline_block(result),
        "coverage": coverage(result, spec),
    }


def _baseline_block(result: RunResult) -> dict[str, Any]:
    comparison = baseline_comparison(result)
    return {"baseline": comparison.as_dict()} if comparison else {}


def _tls(result: RunResult) -> dict[str, Any]:
    """The run's TLS as the report records it (the files, whether the target's certificate was verified)."""
    return {"tls": result.options.tls.as_dict()} if result.options.tls is not None else {}


def _stable(outcome: dict) -> dict:
    outcome = dict(outcome)
    outcome.pop("seconds", None)
    outcome.pop("findings", None)
    return outcome


def _ordered(result: RunResult):
    return sorted(result.outcomes, key=lambda o: (o.suite, o.check, o.operation))


def _findings(result: RunResult):
    return [f for o in _ordered(result) for f in o.findings]


def gating(result: RunResult) -> list[FindingGroup]:
    """The findings that fail the run: the failures (with a baseline, the new ones); a difference never does."""
    return [g for g in groups(result) if g.tier == FAILURE and g.baseline != "known"]


def text(result: RunResult) -> str:
    s = summary(result)
    lines = []
    found = groups(result)
    for same in same_answers(result, found):
        lines.append(f"SAME ANSWER {same['requests']} requests ({', '.join(same['operations'])}) got the same "
                     f"{same['bytes']}-byte body, byte for byte (a canned answer?); the findings "
                     f"{', '.join(same['findings'])} carry it: {same['excerpt']}")
    differences_begin = True
    for g in found:
        f = g.finding
        if g.tier == DIFFERENCE and differences_begin:
            differences_begin = False
            lines.append(f"DIFFERENCES ({s['differences']}): answers following another reading of a point the "
                         "interface document leaves open -- never failing the run; a profile line states the "
                         "target's choice, pinned-decisions (or --strict) makes our decision a requirement")
        # one line per defect: its id, how often it was seen, where, and its fingerprint (a known one is only this)
        if g.tier == DIFFERENCE:
            head = f"DIFF from {f.decision}" if f.decision else "NOTE"
        else:
            head = "KNOWN" if g.baseline == "known" else "FAIL" if g.baseline is None else "FAIL new"
        lines.append(f"{head} {g.id} {len(g.occurrences)}× {f.check} [{f.operation}] rule {f.rule} ({f.ref}) "
                     f"fingerprint {f.fingerprint}")
        if g.tier == DIFFERENCE and f.profile_line:
            lines.append(f"     profile line stating the target's choice: {f.profile_line}")
        if g.baseline == "known" and g.tier == FAILURE:
            continue
        if len(g.occurrences) > 1:
            lines.append(f"     seen {len(g.occurrences)} times, by {', '.join(g.checks)}")
        lines.append(f"     {f.message}")
        also = g.also()
        for other in also[:TEXT_ALSO]:
            lines.append(f"     also ({other['check']}): {other['message']}")
        if len(also) > TEXT_ALSO:
            lines.append(f"     … {len(also) - TEXT_ALSO} more in the JSON report")
        lines.append(f"     expected {f.expected}; actual {f.actual}")
        if f.refusals:
            lines.append(f"     refusals ({len(f.refusals)} listed): {' | '.join(f.refusals)}")
        if f.excerpt:
            lines.append(f"     body: {f.excerpt}")
        if f.headers:
            lines.append(f"     headers: {_headers_line(f.headers)}")
        if f.curl:
            lines.append(f"     reproduce: {f.curl}")
    for o in _ordered(result):
        if o.status == "error":
            lines.append(f"ERROR {o.check}: {o.reason.splitlines()[0]}")
    not_exercised = sorted({(o.check, o.reason) for o in result.outcomes if o.status == "not-exercised"})
    for check_id, reason in not_exercised:
        lines.append(f"not exercised: {check_id}: {reason}")
    for reason, count in s["not_exercised_by_reason"].items():
        lines.append(f"not exercised, {count} × {reason}")
    comparison = baseline_comparison(result)
    for entry in comparison.resolved if comparison else ():
        lines.append(f"resolved: {entry.fingerprint} {entry.title}")
    lines.append(summary_line(result, s))
    if comparison:
        lines.append(baseline_line(s))
    if result.options.tls is not None and result.options.tls.insecure:
        lines.append("TLS: the target's certificate was not verified (--insecure)")
    # every line one printable line: the target's words (and a baseline file's) can neither control the terminal
    # nor start a line of their own
    return "\n".join(printable(line) for line in lines) + "\n"


def baseline_line(s: dict[str, Any]) -> str:
    b = s["baseline"]
    return (f"baseline {b['file']}: {b['known']} known, {b['new']} new, {b['resolved']} resolved, "
            f"{b['not_rechecked']} not rechecked (their checks did not run on their operations)")


def summary_line(result: RunResult, s: dict[str, Any] | None = None) -> str:
    """The text report's last line: the outcomes, findings and requests of the run."""
    s = s or summary(result)
    repeated = f" ({_count(s['occurrences'], 'sighting')})" if s["occurrences"] != s["findings"] else ""
    return (f"{_count(s['checks'], 'check')}, {_count(s['outcomes'], 'check × operation outcome')}: "
            f"{s['passed']} passed, {s['failed']} failed, {s['not-exercised']} not exercised, "
            f"{_count(s['error'], 'error')}; {_count(s['findings'], 'finding')}{repeated}: "
            f"{_count(s['failures'], 'failure')}, {_count(s['differences'], 'difference')}; "
            f"{_count(s['cases'], 'request')} in {result.seconds:.1f} s (seed {result.options.seed}) against "
            f"{result.base_url}")


def _count(n: int, noun: str) -> str:
    """``1 check``, ``2 checks``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def junit(result: RunResult) -> str:
    s = summary(result)
    root = ET.Element("testsuites", name="obvalidate conform", tests=str(s["outcomes"]),
                      failures=str(s["failed"]), errors=str(s["error"]), skipped=str(s["not-exercised"]))
    # JUnit has a testcase per check × operation: a defect several checks saw fails each, naming the others.
    found = {g.finding.fingerprint: g for g in groups(result)}
    by_suite: dict[str, list] = {}
    for o in _ordered(result):
        by_suite.setdefault(o.suite, []).append(o)
    for suite, outcomes in by_suite.items():
        counts = Counter(o.status for o in outcomes)
        node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(outcomes)),
                             failures=str(counts["failed"]), errors=str(counts["error"]),
                             skipped=str(counts["not-exercised"]))
        if "baseline" in s:
            properties = ET.SubElement(node, "properties")
            for name, value in s["baseline"].items():
                ET.SubElement(properties, "property", name=f"baseline.{name}", value=str(value))
        for o in outcomes:
            case = ET.SubElement(node, "testcase", classname=f"{suite}.{o.check}", name=o.operation,
                                 time=f"{o.seconds:.3f}")
            if o.status == "failed":
                for f in (f for f in o.findings if f.tier == FAILURE):
                    group = found[f.fingerprint]
                    mark = f", {group.baseline}" if group.baseline else ""
                    failure = ET.SubElement(case, "failure", type=f.rule,
                                            message=f"{group.id}{mark}: {f.message} (expected {f.expected}, actual "
                                                    f"{f.actual}; fingerprint {f.fingerprint})")
                    seen = ", ".join(group.checks)
                    failure.text = "\n".join(printable(line) for line in (
                        f.ref, f"fingerprint: {f.fingerprint}", f"seen by: {seen}", f"body: {f.excerpt}",
                        f"headers: {_headers_line(f.headers)}", f"reproduce: {f.curl}"))
            elif o.status == "error":
                ET.SubElement(case, "error", message=o.reason.splitlines()[0]).text = o.reason
            elif o.status == "not-exercised":
                ET.SubElement(case, "skipped", message=o.reason)
    _differences_suite(root, [g for g in found.values() if g.tier == DIFFERENCE])
    _printable_tree(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _differences_suite(root: ET.Element, differences: list[FindingGroup]) -> None:
    """The differences in a test suite of their own: a passing testcase per difference (they never fail a run), its
    decision, profile line and evidence as the testcase's output."""
    if not differences:
        return
    node = ET.SubElement(root, "testsuite", name="differences", tests=str(len(differences)), failures="0",
                         errors="0", skipped="0")
    for g in differences:
        f = g.finding
        case = ET.SubElement(node, "testcase", classname=f"differences.{f.check}", name=f"{g.id} {f.operation}",
                             time="0.000")
        ET.SubElement(case, "system-out").text = "\n".join(printable(line) for line in (
            f"{g.id}: {f.message} (expected {f.expected}, actual {f.actual}{difference_note(f)})",
            f"decision: {f.decision}", f"profile line: {f.profile_line or '-'}", f"fingerprint: {f.fingerprint}",
            f"seen by: {', '.join(g.checks)}", f"body: {f.excerpt}", f"reproduce: {f.curl}"))


def _printable_tree(root: ET.Element) -> None:
    """Every attribute one printable line, every text printable line by line (a traceback keeps its lines): well-
    formed XML whatever the target answered, and nothing a CI page passes on to a terminal."""
    for node in root.iter():
        for name, value in node.attrib.items():
            node.set(name, printable(value))
        if node.text:
            node.text = printable_lines(node.text)


def github(result: RunResult, spec: Spec | None = None) -> str:
    """GitHub Actions workflow annotations: an ``::error`` per finding, a ``::notice`` with the summary."""
    s = summary(result)
    line = summary_line(result, s) + (f"; {baseline_line(s)}" if s.get("baseline") else "")
    return ci.github(groups(result), line, spec or load_spec())


def sarif(result: RunResult, spec: Spec | None = None) -> str:
    """A SARIF 2.1.0 log: a result per finding, its fingerprint in ``partialFingerprints``."""
    run = {"target": result.base_url, "seed": result.options.seed, "suites": list(result.options.suites),
           "summary": summary(result)}
    return ci.sarif(groups(result), spec or load_spec(), run)


def html_report(result: RunResult, spec: Spec | None = None) -> str:
    """conform.html: the JSON report rendered for a person (html.py)."""
    return html.page(as_json(result, spec))


def write(result: RunResult, directory: str | Path, spec: Spec | None = None) -> list[Path]:
    """conform.json, conform.junit.xml, conform.html, conform.sarif and coverage.json in ``directory``, and the files
    the findings' curls read there (``certificate-<hash>.txt``: the certificate a finding about it sent)."""
    data = as_json(result, spec)
    # the files the findings' curls read (the certificate a certificate finding is about), beside the reports
    shipped = {name: text for f in result.findings for name, text in f.files.items()}
    files = {
        **shipped,
        "conform.json": dumps(data) + "\n",
        "conform.junit.xml": junit(result),
        "conform.html": html_report(result, spec),
        "conform.sarif": sarif(result, spec),
        "coverage.json": dumps(data["coverage"]) + "\n",
    }
    return write_documents(directory, files)
