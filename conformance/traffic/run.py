"""A recording judged: each entry of a :class:`~conformance.traffic.har.Recording`, in recorded order, by one
:class:`~conformance.exchange.ExchangeJudge` (one session: what earlier exchanges showed feeds later judgements),
each at its own recorded time (the request's ``at`` is the entry's ``startedDateTime``: signatures and execution
dates are judged by that clock, whenever the recording is judged).

Entries the judge cannot be given are skipped here, with the reason: a URL that is no HTTP(S) request (a browser's
``data:`` or extension URL) and a request whose body the recording did not keep (judging it without would invent
a Digest mismatch). Everything else is the judge's: its skipped exchanges (the SCA page, other hosts, static files)
and its findings, party ``client`` (the request's defects) or ``server`` (the answer's).
"""
from __future__ import annotations

import datetime as _dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator
from urllib.parse import urlsplit

from conformance.exchange import ExchangeFinding, ExchangeJudge, RecordedAnswer, RecordedRequest

from .har import HarEntry, har_time

CLIENT, SERVER = "client", "server"
NOT_HTTP = "not an HTTP request ({scheme}: URL)"
BODY_NOT_RECORDED = "the request's body was not recorded (bodySize > 0, no postData): it cannot be judged as sent"
JUDGE_FAILED = "not judged: the judge failed"


@dataclass(frozen=True, slots=True)
class EntryResult:
    """One entry's verdict."""

    entry: int
    method: str
    target: str                       # path and query as sent
    origin: str | None
    at: _dt.datetime
    status: int | None                # the answer's; None: no answer recorded
    request_id: str | None
    operation: str | None
    skipped: str | None
    findings: tuple[ExchangeFinding, ...] = ()
    predicted: tuple[int, str | None] | None = None

    @property
    def judged(self) -> bool:
        return self.skipped is None

    def as_dict(self) -> dict[str, Any]:
        """The JSON result: ``entry``, ``operation``, ``skipped`` and ``findings`` (the issue's shape), then what
        the entry was (method, target, origin, time, requestId, status) and the answer a conforming bank gives."""
        return {
            "entry": self.entry, "operation": self.operation, "skipped": self.skipped,
            "findings": [finding_dict(f) for f in self.findings],
            "method": self.method, "target": self.target, "origin": self.origin, "startedDateTime": har_time(self.at),
            "requestId": self.request_id, "status": self.status,
            "predicted": None if self.predicted is None else {"status": self.predicted[0], "code": self.predicted[1]},
        }


def finding_dict(finding: ExchangeFinding) -> dict[str, Any]:
    return {"party": finding.party, "rule": finding.rule, "severity": finding.severity, "ref": finding.ref,
            "pointer": finding.pointer, "message": finding.message, "expected": finding.expected,
            "actual": finding.actual}


def _first(headers, name: str) -> str | None:
    return next((value for key, value in headers if key.lower() == name), None)


def judge_entry(judge: ExchangeJudge, entry: HarEntry) -> EntryResult:
    """The entry's verdict (the judge learns from it)."""
    base = dict(entry=entry.index, method=entry.method, target=entry.target, origin=entry.origin, at=entry.started,
                status=entry.status, request_id=_first(entry.headers, "x-request-id"))
    scheme = urlsplit(entry.url).scheme.lower()
    if scheme not in ("http", "https"):
        return EntryResult(**base, operation=None, skipped=NOT_HTTP.format(scheme=scheme or "relative"))
    if entry.body is None:
        return EntryResult(**base, operation=None, skipped=BODY_NOT_RECORDED)
    request = RecordedRequest(entry.method, entry.target, entry.headers, entry.body, entry.started, entry.origin)
    answer = None if entry.status is None else RecordedAnswer(entry.status, entry.answer_headers, entry.answer_body,
                                                              entry.answer_truncated)
    try:
        judgement = judge.judge(request, answer)
    except Exception as exc:  # noqa: BLE001 - one entry the judge cannot take is reported, the run goes on
        return EntryResult(**base, operation=None, skipped=f"{JUDGE_FAILED} ({type(exc).__name__}: {exc})")
    return EntryResult(**base, operation=judgement.operation, skipped=judgement.skipped,
                       findings=tuple(judgement.findings), predicted=judgement.predicted)


def judged(entries: Iterable[HarEntry], judge: ExchangeJudge) -> Iterator[EntryResult]:
    for entry in entries:
        yield judge_entry(judge, entry)


@dataclass
class Tally:
    """The counts of a run, kept as results stream by (nothing per clean entry is held)."""

    entries: int = 0
    skipped: int = 0
    clean: int = 0
    with_findings: int = 0
    errors: int = 0
    warnings: int = 0
    by_party: Counter = field(default_factory=Counter)
    by_rule: Counter = field(default_factory=Counter)
    skipped_by_reason: Counter = field(default_factory=Counter)
    judge_failures: int = 0

    def add(self, result: EntryResult) -> None:
        self.entries += 1
        if result.skipped is not None:
            self.skipped += 1
            self.judge_failures += result.skipped.startswith(JUDGE_FAILED)
            self.skipped_by_reason[_reason_head(result.skipped)] += 1
            return
        if not result.findings:
            self.clean += 1
            return
        self.with_findings += 1
        for finding in result.findings:
            self.by_party[finding.party] += 1
            self.by_rule[finding.rule] += 1
            if finding.severity == "error":
                self.errors += 1
            elif finding.severity == "warning":
                self.warnings += 1

    def failing(self, fail_on: str) -> bool:
        return self.errors > 0 or (fail_on == "warning" and self.warnings > 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries, "judged": self.entries - self.skipped, "skipped": self.skipped,
            "clean": self.clean, "with_findings": self.with_findings, "errors": self.errors,
            "warnings": self.warnings, "by_party": {p: self.by_party.get(p, 0) for p in (CLIENT, SERVER)},
            "by_rule": dict(sorted(self.by_rule.items())),
            "skipped_by_reason": dict(sorted(self.skipped_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


def _reason_head(reason: str) -> str:
    """A skip reason without what varies per entry: ``another origin (https://x): not the bank's`` counts under
    ``another origin``; the rest of the text up to its first parenthesis or colon."""
    for mark in (" (", ": "):
        if mark in reason:
            reason = reason.split(mark, 1)[0]
    return reason
