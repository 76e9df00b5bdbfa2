"""The gate's findings for CI: GitHub Actions workflow annotations and a SARIF 2.1.0 log.

Both take the run's findings grouped by fingerprint (:func:`conformance.gate.report.groups`): one annotation, one
SARIF result per defect. The escaping of the annotations is the validator's (``validator.formats.github``: ``%``, CR
and LF in the message, and ``:`` and ``,`` in the properties too), so a message quoting a hostile target's answer
can neither end the command nor start another, and its controls are shown as escapes (``\\x1b``, ``\\n``); so is a
SARIF result's message text (validator.formats.escape.printable), its properties keeping the values as data.

A finding of the gate has no file: it is about an operation of the target. The annotations carry no ``file`` (GitHub
shows them on the run's summary page and in the log), and a SARIF result's location is a logical one: the
operation's method and path template from the spec (``POST /v1/payments/{payment-product}``), kind ``resource``.
The fingerprint goes into ``partialFingerprints``, so a dashboard follows a defect from run to run.
"""
from __future__ import annotations

from typing import Any, Sequence

from validator import __version__
from validator.formats import TOOL_NAME
from validator.formats.escape import printable
from validator.formats.github import command
from validator.formats.json_format import dumps
from validator.formats.sarif import SARIF_SCHEMA, SARIF_VERSION
from validator.rules import catalogue
from validator.spec import Spec

from .model import DIFFERENCE, REGISTRY, Finding, FindingGroup
from .rules import SCENARIO_RULES

FINGERPRINT_KEY = "obvalidateConformFingerprint/v1"
BASELINE_STATES = {"known": "unchanged", "new": "new"}   # SARIF's names for a finding compared with a baseline


def operation_location(spec: Spec, operation: str) -> str:
    """``METHOD /path/template`` of an operation id of the spec; anything else (``-``, a method no operation takes
    on a path) as the finding names it."""
    op = spec.operations.get(operation)
    return f"{op.method} {op.path}" if op else operation


def message(g: FindingGroup) -> str:
    """The check, the operation, what the target did wrong, the expected and the actual answer, the fingerprint
    (and whether a baseline knows it)."""
    f = g.finding
    seen = f" (seen {len(g.occurrences)} times)" if len(g.occurrences) > 1 else ""
    known = {"known": "; known (in the baseline)", "new": "; new (not in the baseline)"}.get(g.baseline or "", "")
    return (f"{f.check} [{f.operation}]: {f.message} — expected {f.expected}; actual {f.actual}{seen}"
            f"{difference_note(f)}; fingerprint {f.fingerprint}{known}")


def difference_note(f: Finding) -> str:
    """What a difference adds to its message: the decision it differs from and the profile line stating it."""
    if f.tier != DIFFERENCE:
        return ""
    line = f"; the profile states it with: {f.profile_line}" if f.profile_line else ""
    return f"; a difference from {f.decision}, not a failure{line}"


def github(groups: Sequence[FindingGroup], summary_line: str, spec: Spec) -> str:
    """One ``::error`` per failure (``::warning`` for one a baseline knows: it does not fail the run), then one
    ``::warning`` per difference (another reading of an open point, titled with its decision), then a ``::notice``
    with the run's summary."""
    lines = []
    for g in groups:
        f = g.finding
        location = operation_location(spec, f.operation)
        if g.tier == DIFFERENCE:
            lines.append(command("warning", message(g), title=f"difference from {f.decision}: {f.rule} {location}"))
            continue
        lines.append(command("warning" if g.baseline == "known" else "error", message(g),
                             title=f"{f.rule} ({f.ref}) {location}" if f.ref else f"{f.rule} {location}"))
    lines.append(command("notice", summary_line, title="obvalidate conform"))
    return "\n".join(lines) + "\n"


def _rule_descriptor(rule_id: str, f: Finding) -> dict[str, Any]:
    rule = catalogue().get(rule_id) or SCENARIO_RULES.get(rule_id)
    check = REGISTRY.get(f.check)
    summary = (getattr(rule, "summary", "") or getattr(rule, "title", "")) or (check.title if check else "") or rule_id
    ref = (rule.ref if rule else None) or f.ref
    return {
        "id": rule_id,
        "name": getattr(rule, "name", rule_id),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": f"{summary} (see {ref})" if ref else summary},
        "defaultConfiguration": {"level": "error"},
        "properties": {"documentRef": ref},
    }


def sarif_log(groups: Sequence[FindingGroup], spec: Spec, run_properties: dict[str, Any]) -> dict[str, Any]:
    """The SARIF log: one run, a result per defect, the rules that occur (sorted by id) as the driver's rules."""
    firsts: dict[str, Finding] = {}
    for g in groups:
        firsts.setdefault(g.finding.rule, g.finding)
    rule_ids = sorted(firsts)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results = []
    for g in groups:
        f = g.finding
        location = operation_location(spec, f.operation)
        results.append({
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": "note" if g.tier == DIFFERENCE else "error",   # a difference never fails the run
            "message": {"text": printable(message(g))},
            "locations": [{"logicalLocations": [{"fullyQualifiedName": location, "name": f.operation,
                                                 "kind": "resource"}]}],
            "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
            **({"baselineState": BASELINE_STATES[g.baseline]} if g.baseline in BASELINE_STATES else {}),
            "properties": {"id": g.id, "check": f.check, "checks": g.checks, "suites": g.suites, "operation": f.operation,
                           "expected": f.expected, "actual": f.actual, "documentRef": f.ref,
                           "occurrences": len(g.occurrences), "seed": f.seed, "tier": f.tier,
                           "decision": f.decision, "profile_line": f.profile_line},
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": TOOL_NAME, "version": __version__,
                                "rules": [_rule_descriptor(r, firsts[r]) for r in rule_ids]}},
            "automationDetails": {"id": "obvalidate-conform/"},
            "results": results,
            "properties": run_properties,
        }],
    }


def sarif(groups: Sequence[FindingGroup], spec: Spec, run_properties: dict[str, Any]) -> str:
    return dumps(sarif_log(groups, spec, run_properties)) + "\n"
