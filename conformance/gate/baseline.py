"""Living with known findings: a baseline file lists the defects a team has reviewed and accepted for now, by
fingerprint, and a run compared with it marks each of its findings "known" or "new" and counts what it no longer
sees ("resolved").

The unit is the finding group's fingerprint (model.fingerprint: operation, rule, expected and actual status and
code, not the suite or the check), so one defect several checks see is one line of the baseline, and a check
added later that sees a known defect does not make it new.

The file is JSON, sorted by fingerprint, one entry per defect with what a reviewer reads (rule, operation, checks, a
title made of the fingerprint's own facts), so two baselines of the same defects are the same bytes whatever the
seed, and a change is a readable diff. Entries may carry further keys (a reviewer's "note"): they are kept as read,
never judged.

"Resolved" is claimed with care: a baseline fingerprint not seen in this run is resolved only if one of the checks
that saw it ran in this run on its operation (an outcome passed or failed there); otherwise (the check filtered out
by --suite/--check, not exercised, or broken) it is "not rechecked", counted apart, and never resolved.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from validator.formats.json_format import dumps as json_dumps

from .model import SEVERAL_ANSWERS, FindingGroup, Outcome

FORMAT = "obvalidate-baseline"
VERSION = 1
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
KNOWN, NEW = "known", "new"


class BaselineError(Exception):
    """The baseline file cannot be read or is not a baseline (the run cannot be compared: exit 2)."""


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    operation: str
    rule: str
    checks: tuple[str, ...]
    title: str
    extra: tuple[tuple[str, Any], ...] = ()   # a reviewer's own keys, kept as read

    def as_dict(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "rule": self.rule, "operation": self.operation,
                "checks": list(self.checks), "title": self.title, **dict(self.extra)}


def title(group: FindingGroup) -> str:
    """A defect's one-line title from its fingerprint's facts only (no message: those name generated values)."""
    f = group.finding
    answered = "" if f.actual == SEVERAL_ANSWERS else f", answered {f.actual}"   # several answers: no one answer
    return f"{f.rule} on {f.operation}: expected {f.expected}{answered}"


def entries(groups: Iterable[FindingGroup]) -> list[Entry]:
    return sorted((Entry(g.finding.fingerprint, g.finding.operation, g.finding.rule, tuple(sorted(g.checks)),
                         title(g)) for g in groups), key=lambda e: e.fingerprint)


def dumps(groups: Iterable[FindingGroup]) -> str:
    return json_dumps({"format": FORMAT, "version": VERSION, "findings": [e.as_dict() for e in entries(groups)]}) + "\n"


def write(groups: Iterable[FindingGroup], path: str | Path) -> None:
    """Store the run's defects as a baseline (raises OSError when the file cannot be written)."""
    Path(path).write_text(dumps(groups), encoding="utf-8")


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: dict[str, Entry]


def load(path: str | Path) -> Baseline:
    """The baseline file's entries by fingerprint; :class:`BaselineError` saying what is wrong when it is not one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaselineError(f"the baseline {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("findings"), list):
        raise BaselineError(f"the baseline {path} is not an obvalidate baseline (an object with \"format\": "
                            f"\"{FORMAT}\" and a \"findings\" list, as --write-baseline writes it)")
    if data.get("version") != VERSION:
        raise BaselineError(f"the baseline {path} has version {data.get('version')!r}; this obvalidate reads "
                            f"version {VERSION}")
    out: dict[str, Entry] = {}
    for number, item in enumerate(data["findings"], 1):
        fp = item.get("fingerprint") if isinstance(item, dict) else None
        if not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp):
            raise BaselineError(f"the baseline {path}: entry {number} has no fingerprint (16 lower-case hex digits)")
        checks = item.get("checks", [])
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            raise BaselineError(f"the baseline {path}: entry {number} ({fp}): checks must be a list of check ids")
        known = {"fingerprint", "rule", "operation", "checks", "title"}
        out[fp] = Entry(fp, str(item.get("operation", "")), str(item.get("rule", "")), tuple(checks),
                        str(item.get("title", "")), tuple((k, v) for k, v in item.items() if k not in known))
    return Baseline(str(path), out)


@dataclass
class Comparison:
    """A run against a baseline: its findings' fingerprints known or new, and the baseline's others resolved (its
    check ran on its operation and did not see it) or not rechecked (it did not)."""

    path: str
    known: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    resolved: list[Entry] = field(default_factory=list)
    not_rechecked: list[Entry] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        return {"file": self.path, "known": len(self.known), "new": len(self.new), "resolved": len(self.resolved),
                "not_rechecked": len(self.not_rechecked)}

    def as_dict(self) -> dict[str, Any]:
        return {**self.counts(), "resolved_fingerprints": [e.fingerprint for e in self.resolved],
                "not_rechecked_fingerprints": [e.fingerprint for e in self.not_rechecked]}


def compare(baseline: Baseline, groups: list[FindingGroup], outcomes: Iterable[Outcome]) -> Comparison:
    """Mark each group known or new (``group.baseline``) and sort the baseline's unseen entries."""
    comparison = Comparison(baseline.path)
    for g in groups:
        g.baseline = KNOWN if g.finding.fingerprint in baseline.entries else NEW
        (comparison.known if g.baseline == KNOWN else comparison.new).append(g.finding.fingerprint)
    seen = {g.finding.fingerprint for g in groups}
    ran = {(o.check, o.operation) for o in outcomes if o.status in ("passed", "failed")}
    for fp, entry in sorted(baseline.entries.items()):
        if fp in seen:
            continue
        rechecked = any((c, entry.operation) in ran for c in entry.checks)
        (comparison.resolved if rechecked else comparison.not_rechecked).append(entry)
    return comparison
