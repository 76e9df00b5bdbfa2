"""The judging half of ``obvalidate proxy``: one worker thread owns the session's :class:`ExchangeJudge` (one judge,
one session: it learns created ids, statuses and X-Request-IDs from each exchange in turn) and judges each exchange
once its answer is complete, off the path the answer takes -- the client has its answer's bytes while the judge
reads them. For each exchange it then writes, in this order, the terminal line, the ``--log`` lines and the
``--record`` HAR entry, and keeps the session's tally for the report.

The backlog of exchanges waiting for the judge is bounded (``backlog``): when the judge falls that far behind, the
next exchange to complete waits for room before its answer's last piece goes out, so the proxy slows to the pace of
its judge instead of holding an unbounded queue. ``--enforce`` asks the same judge about a request alone before it is
forwarded; such a question goes ahead of the waiting exchanges.
"""
from __future__ import annotations

import asyncio
import itertools
import queue
import shlex
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any

from conformance.exchange import ExchangeFinding, ExchangeJudge, Judgement, RecordedRequest
from conformance.traffic import har
from validator.formats.escape import printable

from .forward import Exchange

BACKLOG = 256
ERROR = "error"
EXAMPLES = 5      # exchanges the report names for each finding (the first ones)
_STOP, _ASK, _JUDGE = 2, 0, 1   # priorities: a question first, exchanges in order, the stop last


@dataclass
class FindingGroup:
    """A finding of the session: the same party, rule and operation, counted, with the first exchanges showing it."""
    party: str
    rule: str
    operation: str | None
    severity: str
    ref: str
    message: str
    expected: str | None
    actual: str | None
    count: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Tally:
    """What the session saw: counts, and the findings grouped (bounded: a group per party, rule and operation)."""
    started: float = field(default_factory=time.time)
    exchanges: int = 0
    judged: int = 0
    skipped: int = 0
    not_judged: int = 0
    answered_by_proxy: int = 0
    with_findings: int = 0     # exchanges with an error finding
    warnings: int = 0
    findings: Counter = field(default_factory=Counter)        # party -> findings
    statuses: Counter = field(default_factory=Counter)
    skip_reasons: Counter = field(default_factory=Counter)
    groups: dict[tuple[str, str, str | None], FindingGroup] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, exchange: Exchange, judgement: Judgement | None, findings: tuple[ExchangeFinding, ...],
            curl: str) -> None:
        self.exchanges += 1
        self.statuses[exchange.answer.status if exchange.answer else "no answer"] += 1
        if exchange.answered_by == "proxy":
            self.answered_by_proxy += 1
        if judgement is None:
            self.not_judged += 1
        elif judgement.skipped:
            self.skipped += 1
            self.skip_reasons[judgement.skipped] += 1
        else:
            self.judged += 1
        if any(f.severity == ERROR for f in findings):
            self.with_findings += 1
        operation = judgement.operation if judgement else None
        for f in findings:
            if f.severity == ERROR:
                self.findings[f.party] += 1
            else:
                self.warnings += 1
            group = self.groups.get((f.party, f.rule, operation))
            if group is None:
                group = self.groups[(f.party, f.rule, operation)] = FindingGroup(
                    f.party, f.rule, operation, f.severity, f.ref, f.message, f.expected, f.actual)
            group.count += 1
            if len(group.examples) < EXAMPLES:
                request = exchange.request
                group.examples.append({
                    "entry": exchange.index, "requestId": request.header("x-request-id"), "method": request.method,
                    "path": request.target, "status": exchange.answer.status if exchange.answer else None,
                    "pointer": f.pointer, "message": f.message, "expected": f.expected, "actual": f.actual,
                    "curl": curl})


def curl(request: RecordedRequest) -> str:
    """A curl command sending the request again as the proxy forwarded it, to the upstream: every header but
    ``Host`` (the URL's) and ``Content-Length`` (curl's own count), the exact body."""
    parts = ["curl", "-sS", "-i", "-X", shlex.quote(request.method), shlex.quote(har.request_url(request))]
    for name, value in request.headers:
        if name.lower() not in ("host", "content-length"):
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if request.body:
        try:
            parts += ["--data-binary", shlex.quote(request.body.decode("utf-8"))]
        except UnicodeDecodeError:   # bytes that are not text: as printf escapes, byte for byte
            escaped = "".join(f"\\x{b:02x}" for b in request.body)
            parts = ["printf", shlex.quote(escaped), "|", *parts, "--data-binary", "@-"]
    return " ".join(parts)


def verdict(exchange: Exchange, judgement: Judgement | None, findings: tuple[ExchangeFinding, ...]) -> str:
    """The terminal's verdict of an exchange: ``ok``, ``skipped: why``, the findings' rules by party."""
    parts, warnings = [], []
    for party in ("client", "server"):
        rules = list(dict.fromkeys(f.rule for f in findings if f.party == party and f.severity == ERROR))
        if rules:
            parts.append(f"{party}: {', '.join(rules)}")
        rules = list(dict.fromkeys(f.rule for f in findings if f.party == party and f.severity != ERROR))
        if rules:
            warnings.append(f"{party} {', '.join(rules)}")
    if judgement is None:
        text = "FAIL " + "; ".join(parts) if parts else "not judged"
    elif judgement.skipped and not findings:
        text = f"skipped ({judgement.skipped})"
    else:
        text = "FAIL " + "; ".join(parts) if parts else "ok"
    if warnings:
        text += f" (warnings: {'; '.join(warnings)})"
    if exchange.note:
        text += f" [{exchange.note}]"
    return text


def line(exchange: Exchange, judgement: Judgement | None, findings: tuple[ExchangeFinding, ...]) -> str:
    """One terminal line: entry, method, path, status, operation, verdict -- the request's and the answer's text
    escaped (target text is data)."""
    status = exchange.answer.status if exchange.answer else "---"
    operation = f" {judgement.operation}" if judgement and judgement.operation else ""
    return printable(f"{exchange.index:>5} {exchange.request.method} {exchange.request.target} {status}{operation} "
                     f"{verdict(exchange, judgement, findings)}")


class Judging:
    """The worker thread and its outputs. ``out`` the terminal stream (None: no lines), ``log`` an open text
    stream for the JSON lines, ``record`` a :class:`conformance.traffic.har.HarWriter`."""

    def __init__(self, judge: ExchangeJudge, *, out: IO[str] | None = sys.stdout, log: IO[str] | None = None,
                 record: har.HarWriter | None = None, backlog: int = BACKLOG) -> None:
        self.judge = judge
        self.out, self.log, self.record = out, log, record
        self.tally = Tally()
        self._queue: queue.PriorityQueue = queue.PriorityQueue()
        self._order = itertools.count()
        self._async_room: asyncio.Semaphore | None = None
        self._backlog = backlog
        self._thread = threading.Thread(target=self._run, name="obvalidate-proxy-judge", daemon=True)
        self._thread.start()

    # ---- from the serving loop
    async def submit(self, exchange: Exchange) -> None:
        """Queue a completed exchange (waits only while the backlog is full)."""
        if self._async_room is None:
            self._async_room = asyncio.Semaphore(self._backlog)
        await self._async_room.acquire()
        loop = asyncio.get_running_loop()
        self._queue.put((_JUDGE, next(self._order), exchange, (loop, self._async_room.release)))

    async def ask(self, request: RecordedRequest) -> Judgement:
        """The judgement of a request alone (what a conforming bank answers it), from the session's judge."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future = loop.create_future()
        self._queue.put((_ASK, next(self._order), request, (loop, answer)))
        return await answer

    # ---- the end
    def close(self, timeout: float | None = None) -> Tally:
        """Judge what is queued, flush and close the log and the recording; the session's tally."""
        self._queue.put((_STOP, next(self._order), None, None))
        self._thread.join(timeout)
        if self.log is not None:
            self.log.flush()
        if self.record is not None:
            self.record.close()
        return self.tally

    # ---- the worker
    def _run(self) -> None:
        while True:
            kind, _n, item, reply = self._queue.get()
            if kind == _STOP:
                return
            if kind == _ASK:
                loop, future = reply
                try:
                    judgement = self.judge.judge(item, None)
                except Exception as exc:   # a defect of the judge: the request is forwarded unjudged
                    judgement = Judgement(None, f"not judged: the judge failed ({type(exc).__name__}: {exc})", ())
                loop.call_soon_threadsafe(_settle, future, judgement)
                continue
            loop, release = reply
            try:
                self._judge_one(item)
            except Exception as exc:   # never lose the worker: the exchange is counted as not judged
                self.tally.errors.append(printable(f"entry {item.index}: {type(exc).__name__}: {exc}"))
            finally:
                loop.call_soon_threadsafe(release)

    def _judge_one(self, exchange: Exchange) -> None:
        judgement = exchange.judgement
        if judgement is None and exchange.answered_by == "upstream" and exchange.note is None:
            try:
                judgement = self.judge.judge(exchange.request, exchange.answer)
            except Exception as exc:
                exchange.note = printable(f"not judged: the judge failed ({type(exc).__name__}: {exc})")
                self.tally.errors.append(exchange.note)
        findings = tuple(exchange.own) + (judgement.findings if judgement else ())
        command = curl(exchange.request)
        self.tally.add(exchange, judgement, findings, command)
        if self.out is not None:
            self.out.write(line(exchange, judgement, findings) + "\n")
            self.out.flush()
        if self.log is not None:
            self.log.write(har.exchange_line(exchange.index, exchange.request, exchange.answer,
                                             time_ms=exchange.time_ms) + "\n")
            for finding in findings:
                self.log.write(har.finding_line(exchange.index, finding, exchange.request, exchange.answer,
                                                command) + "\n")
            self.log.flush()
        if self.record is not None:
            self.record.add(exchange.request, exchange.answer, time_ms=exchange.time_ms)


def _settle(future: asyncio.Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)
