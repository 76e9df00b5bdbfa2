"""The judging half of ``obvalidate proxy``: one worker process owns the session's :class:`ExchangeJudge` (one
judge, one session: it learns created ids, statuses and X-Request-IDs from each exchange in turn) and judges each
exchange once its answer is complete, off the path the answer takes -- the client has its answer's bytes while the
judge reads them, and the judge's work runs on another core than the forwarding's. For each exchange the worker then
writes, in this order, the terminal line, the ``--log`` lines and the ``--record`` HAR entry, and keeps the session's
tally for the report, which it hands back when the proxy stops.

The exchanges go to the worker through a pipe the serving loop writes itself, without blocking and without a thread
of its own (a feeder thread, as ``multiprocessing.Queue`` has, takes the interpreter lock from the forwarding for
every exchange). What the pipe cannot take at once waits in the serving process, bounded (``backlog`` bytes): when
the judge falls that far behind, the next exchange to complete waits for room before its answer's last piece goes
out, so the proxy slows to the pace of its judge instead of holding an unbounded queue. ``--enforce`` asks the same
judge about a request alone before it is forwarded (in turn with the exchanges before it: the judge's state is
theirs too).
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import pickle
import shlex
import signal
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from conformance.exchange import ExchangeFinding, ExchangeJudge, Judgement, RecordedRequest
from conformance.traffic import har
from validator.formats.escape import printable

from .forward import Exchange, Refusal
from .limits import BACKLOG, JUDGE_SECONDS, STOP_SECONDS

LOGGED_FINDINGS = 100        # finding lines of one exchange in --log, at most (then one line with the count left)
INLINE_CURL_BYTES = 1024     # a body longer than this is not repeated in a finding's curl: read from its exchange line
GATHER_SECONDS = 0.005       # exchanges completed within this go to the judge together
GATHER_BYTES = 256 * 1024    # ... or as soon as this much is gathered
JUDGE_NICENESS = 10         # the judging process's CPU priority below the forwarding's (see _work)
PIPE_BYTES = 1024 * 1024     # the pipe's own buffer, asked for (Linux grants it up to /proc/sys/fs/pipe-max-size)
ERROR = "error"
EXAMPLES = 5      # exchanges the report names for each finding (the first ones)
_STOP, _ASK, _JUDGE = "stop", "ask", "judge"


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
    only_logged: int = 0       # queued when the proxy stopped, past its --stop-seconds: logged, not judged
    answered_by_proxy: int = 0
    with_findings: int = 0     # exchanges with an error finding
    warnings: int = 0
    findings: Counter = field(default_factory=Counter)        # party -> findings
    statuses: Counter = field(default_factory=Counter)
    skip_reasons: Counter = field(default_factory=Counter)
    groups: dict[tuple[str, str, str | None], FindingGroup] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)          # connections refused before a request, by rule

    def add_refusal(self, refusal: Refusal) -> None:
        self.refused[refusal.rule] += 1
        self.statuses[refusal.status] += 1

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


def curl(request: RecordedRequest, *, log: str | None = None, entry: int | None = None) -> str:
    """A curl command sending the request again as the proxy forwarded it, to the upstream: every header but
    ``Host`` (the URL's) and ``Content-Length`` (curl's own count), the exact body. A body over
    :data:`INLINE_CURL_BYTES` with the ``log`` it is written in (its exchange line, ``entry``) is read from there
    (jq) rather than repeated in each finding's command: an exchange's body is in the log once."""
    parts = ["curl", "-sS", "-i", "-X", shlex.quote(request.method), shlex.quote(har.request_url(request))]
    for name, value in request.headers:
        if name.lower() not in ("host", "content-length"):
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if log is not None and entry is not None and len(request.body) > INLINE_CURL_BYTES:
        decode = ""
        try:
            request.body.decode("utf-8")
        except UnicodeDecodeError:   # the log holds it in base64
            decode = " | base64 -d"
        select = f'select(.type == "exchange" and .entry == {entry}) | .request.postData.text'
        return f"jq -j {shlex.quote(select)} {shlex.quote(log)}{decode} | {' '.join(parts)} --data-binary @-"
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


@dataclass(frozen=True)
class Outputs:
    """Where the worker writes: ``out`` the terminal lines (``"-"``: standard output; a path; None: none), ``log``
    the JSON lines (a path), ``record`` the HAR (a path)."""
    out: str | None = "-"
    log: str | None = None
    record: str | None = None


class Judging:
    """The judging worker, a process of its own: the judge's work never holds the interpreter lock the forwarding
    needs (in a thread of the serving process, each socket operation of the forwarding waited for the judge's turn
    to end: milliseconds an exchange). ``profile``, ``base_path``, ``origins`` as :class:`ExchangeJudge` takes them.

    The serving loop hands over each completed exchange (:meth:`submit`, pickled into the pipe; at most ``backlog``
    bytes wait for it), asks about a request alone (:meth:`ask`, ``--enforce``); :meth:`close` judges what is queued, flushes
    the outputs and returns the session's :class:`Tally`."""

    def __init__(self, outputs: Outputs = Outputs(), *, profile=None, base_path: str = "",
                 origins: tuple[str, ...] = (), backlog: int = BACKLOG, asks: bool = False,
                 judge_seconds: float = JUDGE_SECONDS, stop_seconds: float = STOP_SECONDS) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")   # the serving process may have threads: no fork
        receiving, self._sending = context.Pipe(duplex=False)
        self._replies = context.Queue()
        self._stop_by = context.Value("d", 0.0, lock=False)   # once stopping: the time judging ends, logging goes on
        self.stop_seconds = stop_seconds
        self._stopping = False
        self._process = context.Process(target=_work, name="obvalidate-proxy-judge", daemon=True,
                                        args=(receiving, self._replies, outputs, profile, base_path, origins, asks,
                                              judge_seconds, self._stop_by))
        self._process.start()
        receiving.close()
        self._fd = self._sending.fileno()
        with contextlib.suppress(OSError, AttributeError):   # a larger pipe: fewer waits for the judge to read
            import fcntl

            fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        os.set_blocking(self._fd, False)
        self._backlog = self.limit = backlog
        self._kept = 0   # bytes of bodies the exchanges in flight keep for the judge (reserve)
        self._waiting: collections.deque[memoryview] = collections.deque()   # what the pipe has not taken yet
        self._waiting_bytes = 0
        self._gathered: list[bytes] = []   # exchanges handed over together, GATHER_SECONDS after the first
        self._gathered_bytes = 0
        self._gather_timer: asyncio.TimerHandle | None = None
        self._writer_loop: asyncio.AbstractEventLoop | None = None
        self._room: asyncio.Event | None = None
        self._room_loop: asyncio.AbstractEventLoop | None = None
        self._broken = False
        self._asked: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._numbers = itertools.count()
        self._tally: Tally | None = None
        self._tallied = threading.Event()
        self._reader = threading.Thread(target=self._read_replies, name="obvalidate-proxy-replies", daemon=True)
        self._reader.start()

    # ---- from the serving loop
    def reserve(self, size: int) -> bool:
        """Room for ``size`` more bytes of an exchange's bodies, kept for the judge: False when the backlog (what
        every exchange in flight keeps, and what waits for the pipe) would pass its bound -- that exchange is then
        forwarded all the same and logged as not judged, whatever the number of exchanges at once."""
        if self._kept + self._waiting_bytes + self._gathered_bytes + size > self._backlog:
            return False
        self._kept += size
        return True

    def release(self, size: int) -> None:
        """Bytes :meth:`reserve` granted that are kept no more (handed over, or dropped)."""
        self._kept -= size

    def stopping(self) -> None:
        """The proxy stops (SIGINT/SIGTERM): what is queued is judged for ``stop_seconds`` more, then only logged;
        exchanges completing meanwhile are handed over without waiting for room (a stop never drops an exchange
        whose answer went out)."""
        if not self._stopping:
            self._stopping = True
            self._stop_by.value = time.time() + self.stop_seconds
            room, loop = self._room, self._room_loop
            if room is not None and loop is not None:   # from the serving loop's thread or another one
                with contextlib.suppress(RuntimeError):   # the loop has ended: nobody waits for room
                    loop.call_soon_threadsafe(room.set)

    async def submit(self, exchange: Exchange, kept: int = 0) -> None:
        """Hand a completed exchange to the judge (``kept``: the bytes :meth:`reserve` granted it, released here);
        while the pipe's backlog is full, wait (the proxy slows to its judge's pace)."""
        await self._put((_JUDGE, 0, exchange), kept)

    async def ask(self, request: RecordedRequest) -> Judgement:
        """The judgement of a request alone (what a conforming bank answers it), from the session's judge."""
        loop = asyncio.get_running_loop()
        number = next(self._numbers)
        answer: asyncio.Future = loop.create_future()
        self._asked[number] = (loop, answer)
        await self._put((_ASK, number, request))
        return await answer

    async def _put(self, item, kept: int = 0) -> None:
        # Past half the backlog queued for the pipe, wait (the proxy slows to its judge's pace); the other half is
        # for the bodies exchanges in flight keep. The exchange's own bytes stay reserved while it waits: what
        # waits counts, so the bound holds however many exchanges end at once.
        while self._waiting_bytes > self._backlog // 2 and not self._broken and not self._stopping:
            if self._room is None:
                self._room = asyncio.Event()
                self._room_loop = asyncio.get_running_loop()
            self._room.clear()
            await self._room.wait()
        if self._broken:   # the judge is gone: nothing to hand over (close() reports how it ended)
            self.release(kept)
            return
        frame = _frame(item)
        self.release(kept)   # its bytes are the frame's now, counted as gathered or waiting
        if item[0] == _ASK:   # a request waits for this answer: at once, behind the exchanges gathered before it
            self._send_gathered()
            self._write(frame)
        else:
            self._gathered.append(frame)
            self._gathered_bytes += len(frame)
            if self._gathered_bytes >= GATHER_BYTES:
                self._send_gathered()
            elif self._gather_timer is None:
                self._gather_timer = asyncio.get_running_loop().call_later(GATHER_SECONDS, self._send_gathered)
        self._watch_pipe()

    def _watch_pipe(self) -> None:
        """While anything waits for the pipe, the serving loop writes it as soon as the pipe has room."""
        if self._waiting and self._writer_loop is None:
            self._writer_loop = asyncio.get_running_loop()
            self._writer_loop.add_writer(self._fd, self._flush)

    def _send_gathered(self) -> None:
        """Hand the gathered exchanges to the pipe in one write: one system call and one wake-up of the judge for
        all of them, not one per exchange (each write woke the judge, which then took the forwarding's turn on a
        busy machine)."""
        if self._gather_timer is not None:
            self._gather_timer.cancel()
            self._gather_timer = None
        if self._gathered:
            data = b"".join(self._gathered)
            self._gathered.clear()
            self._gathered_bytes = 0
            self._write(data)
            self._watch_pipe()

    def _write(self, frame: bytes) -> None:
        """Write what the pipe takes now, in order; keep the rest."""
        if not self._waiting:
            try:
                written = os.write(self._fd, frame)
            except BlockingIOError:
                written = 0
            except OSError:   # the judge ended (a broken pipe)
                self._broken = True
                return
            if written == len(frame):
                return
            frame = frame[written:]
        self._waiting.append(memoryview(frame))
        self._waiting_bytes += len(frame)

    def _flush(self) -> None:
        """The pipe has room (called by the serving loop): write what waits, in order."""
        while self._waiting:
            piece = self._waiting[0]
            try:
                written = os.write(self._fd, piece)
            except BlockingIOError:
                return
            except OSError:
                self._broken = True
                self._waiting.clear()
                self._waiting_bytes = 0
                break
            self._waiting_bytes -= written
            if written < len(piece):
                self._waiting[0] = piece[written:]
                return
            self._waiting.popleft()
        if self._writer_loop is not None:
            self._writer_loop.remove_writer(self._fd)
            self._writer_loop = None
        if self._room is not None:
            self._room.set()

    def _read_replies(self) -> None:
        while True:
            try:
                kind, number, value = self._replies.get()
            except (EOFError, OSError):
                self._tallied.set()
                return
            if kind == _ASK:
                loop, future = self._asked.pop(number)
                loop.call_soon_threadsafe(_settle, future, value)
            else:
                self._tally = value
                self._tallied.set()
                return

    # ---- the end
    def close(self, timeout: float | None = None) -> Tally:
        """Judge what is handed over for ``stop_seconds`` at most, log the rest unjudged, flush and close the
        outputs; the session's tally. Called once the serving loop has ended: what still waits for the pipe is
        written here, blocking. ``timeout``: seconds to wait for the worker's end (by default ``stop_seconds`` and
        a minute to write what is left)."""
        self.stopping()
        if timeout is None:
            timeout = self.stop_seconds + 60
        if self._writer_loop is not None:
            with contextlib.suppress(Exception):   # the loop may be closed already: its selector is gone with it
                self._writer_loop.remove_writer(self._fd)
            self._writer_loop = None
        if self._gather_timer is not None:
            with contextlib.suppress(Exception):
                self._gather_timer.cancel()
            self._gather_timer = None
        if self._gathered:
            self._waiting.append(memoryview(b"".join(self._gathered)))
            self._gathered.clear()
        if self._tally is None and self._process.is_alive() and not self._broken:
            try:
                os.set_blocking(self._fd, True)
                for piece in (*self._waiting, memoryview(_frame((_STOP, 0, None)))):
                    while len(piece):
                        piece = piece[os.write(self._fd, piece):]
                self._waiting.clear()
            except OSError:
                self._broken = True
            else:
                self._tallied.wait(timeout)
        self._sending.close()
        self._process.join(10)
        if self._process.is_alive():   # pragma: no cover - a judge that does not stop
            self._process.kill()
        if self._tally is None:
            self._tally = Tally(errors=[f"the judging process ended with exit code {self._process.exitcode}"])
        return self._tally


def _frame(item) -> bytes:
    """``item`` as one message of a ``multiprocessing`` connection (its framing: a 4-byte big-endian length, or -1
    and an 8-byte one), which the worker reads with ``Connection.recv``."""
    data = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
    if len(data) > 0x7FFFFFFF:
        return struct.pack("!iQ", -1, len(data)) + data
    return struct.pack("!i", len(data)) + data


def _work(exchanges, replies, outputs: Outputs, profile, base_path: str, origins: tuple[str, ...],
          asks: bool = False, judge_seconds: float = JUDGE_SECONDS, stop_by=None) -> None:
    """The worker process: one judge, the outputs, the tally; until told to stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C reaches the whole process group: the proxy says when
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # ... and so may SIGTERM (kill of the group): the same
    if not asks:
        # Forwarding goes first: on a machine short of CPU the judge runs behind the traffic (the backlog holds the
        # exchanges meanwhile) and catches up when the traffic pauses, rather than each exchange waiting for its
        # judgement; a backlog that fills slows the forwarding to the judge's pace. With --enforce each request
        # waits for its judgement, so the judge keeps the forwarding's priority.
        with contextlib.suppress(OSError, AttributeError):
            os.nice(JUDGE_NICENESS)
    from validator.context import DEFAULT_PROFILE

    import multiprocessing

    judge = ExchangeJudge(profile=profile or DEFAULT_PROFILE, base_path=base_path, origins=origins)
    worker = _Worker(judge, outputs, judge_seconds, stop_by)
    parent = multiprocessing.parent_process()
    try:
        while True:
            try:
                if not exchanges.poll(1.0):
                    if parent is not None and not parent.is_alive():   # the proxy was killed: no one to judge for
                        break
                    continue
                kind, number, item = exchanges.recv()
            except (EOFError, OSError):   # the proxy closed its end without saying stop (it ended)
                break
            if kind == _STOP:
                break
            if kind == _ASK:
                try:
                    judgement = worker.within(judge.judge, item, None)
                except _TooLong:
                    judgement = Judgement(None, f"not judged: over {judge_seconds:g} s (--judge-seconds)", ())
                except Exception as exc:   # a defect of the judge: the request is forwarded unjudged
                    judgement = Judgement(None, f"not judged: the judge failed ({type(exc).__name__}: {exc})", ())
                replies.put((_ASK, number, judgement))
                continue
            try:
                worker.judge_one(item)
            except Exception as exc:   # never lose the worker: the exchange is counted as not judged
                worker.tally.errors.append(printable(f"entry {item.index}: {type(exc).__name__}: {exc}"))
    finally:
        worker.close()
        replies.put((_STOP, 0, worker.tally))


class _TooLong(BaseException):
    """The judge's time for one exchange is up (a BaseException: no ``except Exception`` of the judge holds it)."""


def _time_up(_signal, _frame) -> None:
    raise _TooLong()


class _Worker:
    def __init__(self, judge: ExchangeJudge, outputs: Outputs, judge_seconds: float = JUDGE_SECONDS,
                 stop_by=None) -> None:
        self.judge = judge
        self.judge_seconds = judge_seconds
        self.stop_by = stop_by
        self.log_path = outputs.log
        self.tally = Tally()
        self._timer = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        if self._timer:
            signal.signal(signal.SIGALRM, _time_up)
        self.out = sys.stdout if outputs.out == "-" else open(outputs.out, "w", encoding="utf-8") \
            if outputs.out else None   # noqa: SIM115 - closed in close()
        self.log = open(outputs.log, "w", encoding="utf-8") if outputs.log else None   # noqa: SIM115
        self.record = har.HarWriter(outputs.record) if outputs.record else None
        self._own_out = outputs.out not in (None, "-")

    def close(self) -> None:
        if self.out is not None:
            self.out.flush()
            if self._own_out:
                self.out.close()
        if self.log is not None:
            self.log.close()
        if self.record is not None:
            self.record.close()

    def within(self, call, *args):
        """``call(*args)``, cut after ``judge_seconds`` (:class:`_TooLong`): one exchange never holds the judge
        (and every exchange queued behind it) for longer."""
        if not self._timer:
            return call(*args)
        signal.setitimer(signal.ITIMER_REAL, self.judge_seconds)
        try:
            return call(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def refusal(self, refusal: Refusal) -> None:
        """A connection the proxy refused before any request: counted, a terminal line, a ``refusal`` log line."""
        self.tally.add_refusal(refusal)
        if self.out is not None:
            self.out.write(printable(f"    - {refusal.client} {refusal.status} refused: {refusal.message}") + "\n")
            self.out.flush()
        if self.log is not None:
            self.log.write(har.refusal_line(refusal.at, refusal.client, refusal.status, refusal.rule,
                                            refusal.message) + "\n")
            self.log.flush()

    def judge_one(self, exchange: Exchange | Refusal) -> None:
        if isinstance(exchange, Refusal):
            self.refusal(exchange)
            return
        judgement = exchange.judgement
        if judgement is None and exchange.answered_by == "upstream" and exchange.note is None:
            if self.stop_by is not None and self.stop_by.value and time.time() > self.stop_by.value:
                exchange.note = "only logged: the proxy was stopping and its --stop-seconds were up"
                self.tally.only_logged += 1
            else:
                try:
                    judgement = self.within(self.judge.judge, exchange.request, exchange.answer)
                except _TooLong:
                    exchange.note = f"not judged: judging it took over {self.judge_seconds:g} s (--judge-seconds)"
                except Exception as exc:
                    exchange.note = printable(f"not judged: the judge failed ({type(exc).__name__}: {exc})")
                    self.tally.errors.append(exchange.note)
        findings = tuple(exchange.own) + (judgement.findings if judgement else ())
        # a reproducer is for a finding; a long body is read from the exchange's line in the log, not repeated
        command = curl(exchange.request, log=self.log_path, entry=exchange.index) if findings else ""
        self.tally.add(exchange, judgement, findings, command)
        if self.out is not None:
            self.out.write(line(exchange, judgement, findings) + "\n")
            self.out.flush()
        if self.log is not None:
            self.log.write(har.exchange_line(exchange.index, exchange.request, exchange.answer,
                                             time_ms=exchange.time_ms, body_size=exchange.request_size) + "\n")
            for finding in findings[:LOGGED_FINDINGS]:
                self.log.write(har.finding_line(exchange.index, finding, exchange.request, exchange.answer,
                                                command) + "\n")
            if len(findings) > LOGGED_FINDINGS:   # the rest counted (the report counts them all)
                self.log.write(har.more_findings_line(exchange.index, len(findings) - LOGGED_FINDINGS) + "\n")
            self.log.flush()
        if self.record is not None:
            self.record.add(exchange.request, exchange.answer, time_ms=exchange.time_ms,
                            body_size=exchange.request_size)


def _settle(future: asyncio.Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)
