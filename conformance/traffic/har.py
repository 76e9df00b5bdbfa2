"""Recorded traffic on disk: HAR 1.2 files and the JSONL log of ``obvalidate proxy``, read streamed and written
streamed (a recording of any size is never held whole, in either direction).

Reading (:class:`Recording`) accepts HAR 1.2 as browser devtools, mitmproxy's HAR export, Charles and the proxy's
``--record`` write it, and the proxy's ``--log`` JSONL. Each entry becomes a :class:`HarEntry`: the request as sent
(method, absolute URL, headers in order with duplicates and names as recorded -- HTTP/2 pseudo-headers such as
``:authority`` dropped --, the exact body bytes) at its ``startedDateTime`` (timezone-aware; a time without an offset
is refused: HAR 1.2 requires one, and a guessed zone would move every signature check), and the answer (status,
headers, body; ``status`` 0, the devtools' mark of a request that got no answer, reads as no answer). Bodies are
``postData.text`` / ``content.text``, base64-decoded when ``encoding`` says ``base64`` (Charles, mitmproxy and the
proxy write binary bodies so). A request whose body was not recorded (``bodySize`` > 0 without ``postData``) reads
with ``body=None``; an answer body that was not recorded (no ``content.text`` though ``content.size`` > 0) or that
the recorder cut (``_truncated``, the proxy's cap) reads as ``answer_truncated``.

Entries come in recorded order: by ``startedDateTime``, file order among equal times (the HAR 1.2 text asks readers
to sort, as writers need not: the proxy writes an exchange when its answer ends). A first pass reads only the
times (and fails early on a file that is not a HAR, or an unreadable time); when the file is in order -- the usual
case -- the second pass judges as it reads; entries that come before their turn wait in a temporary file, not in
memory.

Writing (:class:`HarWriter`) appends one entry per exchange and flushes it, so the file on disk is a complete HAR
after :meth:`HarWriter.close` and a HAR missing only its closing ``]}}`` before. The request and answer passed in are
:class:`conformance.exchange.record.RecordedRequest` / ``RecordedAnswer`` (any object with their attributes):
``method``, ``target``, ``headers``, ``body``, ``at``, ``origin``; ``status``, ``headers``, ``body``, ``truncated``.

The JSONL log (``obvalidate proxy --log FILE.jsonl``), one JSON object per line, in the order things happen:

``{"type": "exchange", "entry": N, "startedDateTime": ..., "time": ..., "request": {...}, "response": {...}, ...}``
    one per exchange when its answer is complete (or failed): ``entry`` (0-based, in the order the proxy saw the
    requests) and then exactly a HAR 1.2 entry (:func:`exchange_line`).
``{"type": "finding", "entry": N, "party": "client"|"server", "rule", "severity", "ref", "pointer", "message",
"expected", "actual", "requestId", "method", "path", "status", "curl"}``
    one per finding of that exchange, after its exchange line (:func:`finding_line`): ``requestId`` the request's
    X-Request-ID (null without one), ``path`` the request target, ``status`` the answer's (null without one),
    ``curl`` a command that sends the request again (a body over 1 KiB read from the exchange line with jq: an
    exchange's body is written once).
``{"type": "more-findings", "entry": N, "count": K}``
    after the first 100 finding lines of an exchange: how many more it had (the report counts them all).
``{"type": "refusal", "startedDateTime": ..., "client": "127.0.0.1", "status": 503, "rule", "message"}``
    a connection the proxy refused before any request came (over ``--max-connections`` or the client's share of
    it), answered with the documented error body. A request the proxy refuses itself (a head too large or too
    slow, ``--enforce``) is an exchange line with its finding.

Any other ``type`` is skipped by readers (later additions stay readable); ``obvalidate traffic FILE.jsonl`` judges
the exchange lines, each numbered by its ``entry``.
"""
from __future__ import annotations

import base64
import datetime as _dt
import http
import json
import os
import pickle
import stat
import tempfile
import threading
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator
from urllib.parse import parse_qsl, urlsplit

import ijson

HAR_VERSION = "1.2"
FORMATS = ("har", "jsonl")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
EXCHANGE, FINDING, MORE_FINDINGS, REFUSAL = "exchange", "finding", "more-findings", "refusal"


class HarError(ValueError):
    """The recording cannot be read as HAR 1.2 (or the proxy's JSONL log): the message says where and why."""


@dataclass(frozen=True, slots=True)
class HarEntry:
    """One recorded exchange, decoded from its HAR entry."""

    index: int                              # 0-based: the position in log.entries (a JSONL line's "entry")
    started: _dt.datetime                   # startedDateTime, timezone-aware
    method: str
    url: str                                # absolute, as recorded
    headers: tuple[tuple[str, str], ...]
    body: bytes | None                      # None: the request had a body the recording did not keep
    status: int | None                      # None: no answer was recorded (HAR status 0)
    answer_headers: tuple[tuple[str, str], ...] = ()
    answer_body: bytes = b""
    answer_truncated: bool = False          # the answer's body is cut or missing: body rules cannot judge it
    time_ms: float | None = None

    @property
    def origin(self) -> str | None:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None

    @property
    def target(self) -> str:
        """The request-line target: path and query exactly as recorded (``/`` when the URL has no path)."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


# ------------------------------------------------------------------ reading
def recording_format(path: str | Path) -> str:
    """``jsonl`` for ``*.jsonl`` / ``*.ndjson`` (the proxy's log), else ``har``."""
    return "jsonl" if str(path).lower().endswith(JSONL_SUFFIXES) else "har"


class _CountingReader:
    """A binary file that counts the bytes read from it (the progress of a streamed parse)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data


class Recording:
    """A recording on disk, read twice: :meth:`scan` (times only: the count and the order) and iterating (the
    entries in recorded order). ``bytes_read`` follows the second pass, for progress lines."""

    def __init__(self, path: str | Path, fmt: str | None = None) -> None:
        self.path = Path(path)
        self.format = fmt or recording_format(path)
        if self.format not in FORMATS:
            raise ValueError(f"unknown recording format {self.format!r}; one of {', '.join(FORMATS)}")
        status = self.path.stat()
        if not stat.S_ISREG(status.st_mode):
            raise HarError("not a regular file: a recording is read twice (its times, then its entries)")
        self.size = status.st_size
        self.bytes_read = 0
        self.cut: str | None = None   # where a recording cut short ends (a killed recorder's HAR): its last entry
        self.count: int | None = None
        self.in_order = True
        self._order: list[int] | None = None   # judging position of each entry by its place in the file

    # ---- first pass
    def scan(self) -> int:
        """The first pass: how many entries there are, and whether they are in recorded order."""
        times = array("d")
        for index, started in self._times():
            times.append(started.timestamp())
        self.count = len(times)
        self.in_order = all(times[i] <= times[i + 1] for i in range(len(times) - 1))
        if not self.in_order:
            by_time = sorted(range(len(times)), key=times.__getitem__)   # stable: file order among equal times
            position = [0] * len(times)
            for rank, index in enumerate(by_time):
                position[index] = rank
            self._order = position
        return self.count

    def _times(self) -> Iterator[tuple[int, _dt.datetime]]:
        """Each entry's time, every entry decoded (and dropped): a malformed entry stops the run before any
        verdict is given, not half-way through the report."""
        if self.format == "jsonl":
            for index, _line, item in self._jsonl_entries(counting=False):
                yield index, _entry(index, item).started
            return
        with self.path.open("rb") as raw:
            index = -1
            try:
                for index, item in enumerate(ijson.items(raw, "log.entries.item", use_float=True)):
                    yield index, _entry(index, item).started
            except ijson.JSONError as exc:
                self._cut_short(exc, index)
        if index == -1:
            self._check_empty_har()

    def _check_empty_har(self) -> None:
        """No entry was read: an empty ``log.entries`` is a recording of nothing; anything else is not a HAR."""
        seen_log = False
        with self.path.open("rb") as raw:
            try:
                for prefix, event, _value in ijson.parse(raw):
                    if prefix == "" and event not in ("start_map", "map_key", "end_map"):
                        raise HarError('not a HAR file: the JSON is not an object with a "log"')
                    if prefix == "log":
                        seen_log = True
                        if event not in ("start_map", "map_key", "end_map"):
                            raise HarError('not a HAR file: "log" is not an object')
                    elif prefix == "log.entries":
                        if event == "end_array":
                            return
                        if event != "start_array":
                            raise HarError("not a HAR file: log.entries is not an array")
                    elif prefix == "log.entries.item":
                        raise HarError("log.entries[0] is not an object")
            except ijson.JSONError as exc:
                raise HarError(_json_problem(exc, -1)) from None
        raise HarError("not a HAR file: no log.entries array" if seen_log else 'not a HAR file: no "log" object')

    # ---- second pass
    def __iter__(self) -> Iterator[HarEntry]:
        if self.count is None:
            self.scan()
        entries = self._checked(self._entries())
        if self.in_order:
            yield from entries
            return
        yield from _reordered(entries, self._order)

    def _checked(self, entries: Iterator[HarEntry]) -> Iterator[HarEntry]:
        read = 0
        for entry in entries:
            read += 1
            if read > self.count:
                break
            yield entry
        if read != self.count:
            raise HarError(f"the file changed while it was read: {self.count} entries, then {read}")

    def _entries(self) -> Iterator[HarEntry]:
        if self.format == "jsonl":
            for index, _line, entry in self._jsonl_entries():
                yield _entry(index, entry)
            return
        with self.path.open("rb") as raw:
            counting = _CountingReader(raw)
            index = -1
            try:
                for index, item in enumerate(ijson.items(counting, "log.entries.item", use_float=True)):
                    self.bytes_read = counting.count
                    yield _entry(index, item)
            except ijson.JSONError as exc:
                self._cut_short(exc, index)
            self.bytes_read = counting.count

    def _cut_short(self, exc: Exception, index: int) -> None:
        """A HAR that ends before its closing ``]}}`` after complete entries (a recorder killed mid-session: the
        proxy writes each entry whole and flushes it) is read up to its last complete entry, and says so; any other
        JSON error is the file's."""
        if index < 0 or "premature EOF" not in str(exc.args[0] if exc.args else exc):
            raise HarError(_json_problem(exc, index)) from None
        self.cut = (f"the file ends before its closing ]}}: cut short after entry {index} (the last complete one; "
                    f"{self.size:,} bytes), anything after it lost")

    def _jsonl_entries(self, *, counting: bool = True) -> Iterator[tuple[int, int, dict]]:
        """(entry, line number, HAR entry) of each exchange line of the proxy's log."""
        seen: set[int] = set()
        with self.path.open("rb") as raw:
            for number, line in enumerate(raw, 1):
                if counting:
                    self.bytes_read += len(line)
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    if not line.endswith(b"\n") and seen:   # a last line cut short (a killed proxy's log)
                        self.cut = (f"the file ends in the middle of line {number}: cut short after entry "
                                    f"{max(seen)}, the rest of the line lost")
                        return
                    raise HarError(f"line {number} is not JSON: {exc}") from None
                if not isinstance(value, dict):
                    raise HarError(f"line {number} is not a JSON object (the log has one object per line)")
                if value.get("type") != EXCHANGE:
                    continue
                index = value.get("entry")
                if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                    raise HarError(f"line {number}: an exchange line's \"entry\" must be a number from 0, not "
                                   f"{index!r}")
                if index in seen:
                    raise HarError(f"line {number}: entry {index} appears twice")
                seen.add(index)
                yield index, number, value


def _reordered(entries: Iterator[HarEntry], position: list[int]) -> Iterator[HarEntry]:
    """``entries`` (in file order) in judging order; an entry read before its turn waits in a temporary file.
    ``position`` is indexed by the place in the file (a JSONL line's ``entry`` need not be it)."""
    waiting: dict[int, tuple[int, int]] = {}   # judging position -> (offset, length) in the spill file
    turn = 0
    with tempfile.TemporaryFile(prefix="obvalidate-traffic-") as spill:
        for place, entry in enumerate(entries):
            rank = position[place]
            if rank != turn:
                data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
                spill.seek(0, os.SEEK_END)
                waiting[rank] = (spill.tell(), len(data))
                spill.write(data)
                continue
            yield entry
            turn += 1
            while turn in waiting:
                offset, length = waiting.pop(turn)
                spill.seek(offset)
                yield pickle.loads(spill.read(length))
                turn += 1


def _json_problem(exc: Exception, index: int) -> str:
    where = "before the first entry" if index < 0 else f"after entry {index}"
    # yajl's message is the problem, then a snippet of the file and a "(right here)" marker: the problem only.
    detail = exc.args[0] if exc.args else str(exc)
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    detail = str(detail).strip().splitlines()[0] if str(detail).strip() else type(exc).__name__
    return f"not valid JSON ({where}): {detail}"


def _started(index: int, value: Any) -> _dt.datetime:
    if not isinstance(value, str):
        raise HarError(f"entry {index}: startedDateTime is {'missing' if value is None else repr(value)}, not an "
                       "ISO 8601 time")
    try:
        started = _dt.datetime.fromisoformat(value)
    except ValueError:
        raise HarError(f"entry {index}: startedDateTime {value!r} is not an ISO 8601 time") from None
    if started.tzinfo is None or started.utcoffset() is None:
        raise HarError(f"entry {index}: startedDateTime {value!r} has no UTC offset (HAR 1.2 requires one; the "
                       "time signatures and execution dates are judged by cannot be guessed)")
    return started


def _object(index: int, value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise HarError(f"entry {index}: {where} is {'missing' if value is None else 'not an object'}")
    return value


def _headers(index: int, value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise HarError(f"entry {index}: {where}.headers is not a list")
    out = []
    for n, header in enumerate(value):
        if not isinstance(header, dict) or not isinstance(header.get("name"), str) \
                or not isinstance(header.get("value"), str):
            raise HarError(f"entry {index}: {where}.headers[{n}] is not {{\"name\": text, \"value\": text}}")
        name = header["name"]
        if name.startswith(":"):
            continue   # HTTP/2 pseudo-headers (devtools): the method, target and authority, recorded elsewhere
        out.append((name, header["value"]))
    return tuple(out)


def _decoded(index: int, holder: dict, where: str) -> bytes:
    text = holder.get("text")
    if not isinstance(text, str):
        raise HarError(f"entry {index}: {where}.text is not text")
    if holder.get("encoding") == "base64" or holder.get("_encoding") == "base64":
        try:
            return base64.b64decode(text, validate=False)
        except ValueError:
            raise HarError(f"entry {index}: {where}.text is not base64 though its encoding says so") from None
    return text.encode("utf-8", "surrogatepass")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_entry(index: int, item: Any) -> HarEntry:
    """One HAR entry (a decoded JSON object: an item of log.entries, or a JSONL log's exchange line) numbered
    ``index``; HarError says what is wrong with it."""
    return _entry(index, item)


def _entry(index: int, item: Any) -> HarEntry:
    entry = _object(index, item, "the entry")
    started = _started(index, entry.get("startedDateTime"))
    request = _object(index, entry.get("request"), "request")
    method, url = request.get("method"), request.get("url")
    if not isinstance(method, str) or not method:
        raise HarError(f"entry {index}: request.method is missing")
    if not isinstance(url, str) or not url:
        raise HarError(f"entry {index}: request.url is missing")
    post = request.get("postData")
    if isinstance(post, dict) and "text" in post:
        body: bytes | None = _decoded(index, post, "request.postData")
    elif post is not None and not isinstance(post, dict):
        raise HarError(f"entry {index}: request.postData is not an object")
    else:
        size = _number(request.get("bodySize"))
        body = None if size is not None and size > 0 else b""
    response = entry.get("response")
    if response is None:
        response = {"status": 0}
    response = _object(index, response, "response")
    status = response.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= 999:
        raise HarError(f"entry {index}: response.status {status!r} is not an HTTP status")
    time_ms = _number(entry.get("time"))
    if status == 0:
        return HarEntry(index, started, method, url, _headers(index, request.get("headers"), "request"), body,
                        None, time_ms=time_ms)
    content = response.get("content")
    truncated = bool(response.get("_truncated"))
    if isinstance(content, dict) and "text" in content:
        answer_body = _decoded(index, content, "response.content")
        truncated = truncated or bool(content.get("_truncated"))
    else:
        answer_body = b""
        size = _number(content.get("size")) if isinstance(content, dict) else None
        truncated = truncated or size is None or size > 0
    return HarEntry(index, started, method, url, _headers(index, request.get("headers"), "request"), body, status,
                    _headers(index, response.get("headers"), "response"), answer_body, truncated, time_ms)


# ------------------------------------------------------------------ writing
def har_time(at: _dt.datetime) -> str:
    """``2026-07-01T08:30:00.000Z``: ISO 8601 in UTC with milliseconds, as browsers write startedDateTime."""
    if at.tzinfo is None:
        raise ValueError("a recorded time must be timezone-aware")
    return at.astimezone(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(data: bytes) -> dict[str, str]:
    """``{"text": ...}`` of a body: as text when it is UTF-8, else base64 with ``"encoding": "base64"``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


def _first(headers, name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers if key.lower() == wanted), None)


def request_url(request: Any) -> str:
    target = request.target
    if target.startswith(("http://", "https://")):
        return target
    if not request.origin:
        raise ValueError("a HAR entry needs the request's origin (scheme://host[:port]) for its url")
    return request.origin.rstrip("/") + (target if target.startswith("/") else "/" + target)


def entry(request: Any, answer: Any | None, *, time_ms: float | None = None,
          body_size: int | None = None) -> dict[str, Any]:
    """The HAR 1.2 entry of an exchange (``answer`` None: no answer, written as status 0 as browsers do;
    ``body_size``: the request's body was not kept, this was its size -- written without ``postData``, which
    readers take as a body not recorded)."""
    url = request_url(request)
    headers = [{"name": n, "value": v} for n, v in request.headers]
    har_request: dict[str, Any] = {
        "method": request.method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": headers,
        "queryString": [{"name": n, "value": v} for n, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
        "headersSize": -1, "bodySize": len(request.body) if body_size is None else body_size,
    }
    if request.body:
        har_request["postData"] = {"mimeType": _first(request.headers, "content-type") or "", **_text(request.body)}
    if answer is None:
        har_response: dict[str, Any] = {
            "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
            "content": {"size": 0, "mimeType": ""}, "redirectURL": "", "headersSize": -1, "bodySize": -1,
        }
    else:
        content: dict[str, Any] = {"size": len(answer.body), "mimeType": _first(answer.headers, "content-type") or ""}
        content.update(_text(answer.body))
        try:
            reason = http.HTTPStatus(answer.status).phrase
        except ValueError:
            reason = ""
        har_response = {
            "status": answer.status, "statusText": reason, "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": n, "value": v} for n, v in answer.headers], "content": content,
            "redirectURL": _first(answer.headers, "location") or "", "headersSize": -1, "bodySize": len(answer.body),
        }
        if getattr(answer, "truncated", False):
            har_response["_truncated"] = True   # the body is cut at the recorder's cap (HAR custom field)
    wait = round(time_ms, 3) if time_ms is not None else 0
    return {
        "startedDateTime": har_time(request.at), "time": wait, "request": har_request, "response": har_response,
        "cache": {}, "timings": {"send": 0, "wait": wait, "receive": 0},
    }


def _dumps(value: Any) -> str:
    # ASCII: header values decoded from arbitrary bytes may hold lone surrogates, which UTF-8 cannot carry.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def exchange_line(index: int, request: Any, answer: Any | None, *, time_ms: float | None = None,
                  body_size: int | None = None) -> str:
    """The JSONL log's line for an exchange (no newline): ``{"type": "exchange", "entry": index, ...HAR entry}``."""
    return _dumps({"type": EXCHANGE, "entry": index, **entry(request, answer, time_ms=time_ms, body_size=body_size)})


def finding_line(index: int, finding: Any, request: Any, answer: Any | None, curl: str) -> str:
    """The JSONL log's line for one finding of exchange ``index`` (an ``ExchangeFinding``; no newline)."""
    return _dumps({
        "type": FINDING, "entry": index, "party": finding.party, "rule": finding.rule, "severity": finding.severity,
        "ref": finding.ref, "pointer": finding.pointer, "message": finding.message,
        "expected": getattr(finding, "expected", None), "actual": getattr(finding, "actual", None),
        "requestId": _first(request.headers, "x-request-id"), "method": request.method, "path": request.target,
        "status": answer.status if answer is not None else None, "curl": curl,
    })


def more_findings_line(index: int, count: int) -> str:
    """The JSONL log's line for the findings of exchange ``index`` past the ones written (no newline)."""
    return _dumps({"type": MORE_FINDINGS, "entry": index, "count": count})


def refusal_line(at: _dt.datetime, client: str, status: int, rule: str, message: str) -> str:
    """The JSONL log's line for a connection the proxy refused before any request (no newline)."""
    return _dumps({"type": REFUSAL, "startedDateTime": har_time(at), "client": client, "status": status,
                   "rule": rule, "message": message})


class HarWriter:
    """A HAR 1.2 file written one entry at a time (thread-safe): each :meth:`add` is on disk when it returns.

    ``HarWriter(path)`` creates (truncates) the file; ``HarWriter(stream)`` writes to an open text stream, which
    :meth:`close` leaves open."""

    def __init__(self, target: str | Path | IO[str], *, creator: str = "obvalidate", version: str | None = None,
                 flush: bool = True) -> None:
        if version is None:
            from validator import __version__ as version
        self._own = isinstance(target, (str, Path))
        self._stream: IO[str] = open(target, "w", encoding="utf-8") if self._own else target  # noqa: SIM115
        self._flush = flush
        self._lock = threading.Lock()
        self._count = 0
        self._closed = False
        self._stream.write('{"log":{"version":"%s","creator":%s,"entries":[' % (
            HAR_VERSION, _dumps({"name": creator, "version": version})))
        self._sync()

    def _sync(self) -> None:
        if self._flush:
            self._stream.flush()

    @property
    def count(self) -> int:
        return self._count

    def add(self, request: Any, answer: Any | None, *, time_ms: float | None = None,
            body_size: int | None = None) -> int:
        """Append the exchange; its 0-based index in log.entries."""
        text = _dumps(entry(request, answer, time_ms=time_ms, body_size=body_size))
        with self._lock:
            if self._closed:
                raise ValueError("the HAR writer is closed")
            index = self._count
            self._stream.write(("\n" if index == 0 else ",\n") + text)
            self._count += 1
            self._sync()
            return index

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stream.write("\n]}}\n")
            self._stream.flush()
            if self._own:
                self._stream.close()

    def __enter__(self) -> "HarWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

