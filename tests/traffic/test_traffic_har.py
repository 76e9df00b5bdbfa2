"""HAR 1.2 and the proxy's JSONL log, read and written (conformance/traffic/har.py): what a recorder wrote comes back
byte for byte, recordings of browsers and mitmproxy read as they are, entries come in recorded order, and a file
that is not a readable recording says why."""
from __future__ import annotations

import base64
import datetime as _dt
import io
import json
from dataclasses import dataclass

import pytest

from conformance.traffic import har

UTC = _dt.timezone.utc
T0 = _dt.datetime(2026, 7, 1, 8, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Sent:        # the attributes of conformance.exchange.record.RecordedRequest the writer reads
    method: str
    target: str
    headers: tuple
    body: bytes
    at: _dt.datetime
    origin: str | None = "https://bank.example"


@dataclass(frozen=True)
class Answered:    # ... and of RecordedAnswer
    status: int
    headers: tuple
    body: bytes
    truncated: bool = False


def write(path, exchanges):
    with har.HarWriter(path) as writer:
        for request, answer in exchanges:
            writer.add(request, answer, time_ms=12.5)
    return path


def test_written_exchanges_read_back_exactly(tmp_path):
    headers = (("X-Request-ID", "a"), ("Accept", "application/json"), ("accept", "text/plain"), ("Digest", "x"))
    binary = bytes(range(256))
    exchanges = [
        (Sent("POST", "/v1/payments/sepa-credit-transfers?x=1&x=2", headers, b'{"a": "\xc3\xa6"}', T0),
         Answered(201, (("Content-Type", "application/json"), ("Set-Cookie", "a"), ("Set-Cookie", "b")), b'{"ok":1}')),
        (Sent("PUT", "/upload", (), binary, T0 + _dt.timedelta(seconds=1)), Answered(200, (), binary, truncated=True)),
        (Sent("GET", "/v1/x", (), b"", (T0 + _dt.timedelta(seconds=2)).astimezone(_dt.timezone(_dt.timedelta(hours=2)))),
         None),
    ]
    path = write(tmp_path / "r.har", exchanges)
    document = json.loads(path.read_text())
    assert document["log"]["version"] == "1.2" and len(document["log"]["entries"]) == 3
    assert document["log"]["entries"][1]["response"]["content"]["encoding"] == "base64"
    recording = har.Recording(path)
    assert recording.scan() == 3 and recording.in_order
    first, second, third = list(recording)
    assert first.index == 0 and first.started == T0 and first.method == "POST"
    assert first.url == "https://bank.example/v1/payments/sepa-credit-transfers?x=1&x=2"
    assert first.target == "/v1/payments/sepa-credit-transfers?x=1&x=2" and first.origin == "https://bank.example"
    assert first.headers == headers and first.body == b'{"a": "\xc3\xa6"}'
    assert first.status == 201 and first.answer_headers[1:] == (("Set-Cookie", "a"), ("Set-Cookie", "b"))
    assert first.answer_body == b'{"ok":1}' and not first.answer_truncated and first.time_ms == 12.5
    assert second.body == binary and second.answer_body == binary and second.answer_truncated
    assert third.status is None and third.started == T0 + _dt.timedelta(seconds=2) and third.body == b""
    assert recording.bytes_read == path.stat().st_size


def test_a_writer_on_a_stream_and_an_entry_without_origin(tmp_path):
    stream = io.StringIO()
    writer = har.HarWriter(stream)
    writer.add(Sent("GET", "https://other.example/a", (), b"", T0, origin=None), Answered(204, (), b""))
    with pytest.raises(ValueError, match="origin"):
        writer.add(Sent("GET", "/a", (), b"", T0, origin=None), None)
    with pytest.raises(ValueError, match="timezone-aware"):
        har.har_time(_dt.datetime(2026, 7, 1))
    writer.close()
    assert not stream.closed
    assert json.loads(stream.getvalue())["log"]["entries"][0]["request"]["url"] == "https://other.example/a"


def devtools_entry(started: str, path: str = "/v1/x", **changes) -> dict:
    """An entry as Chrome's devtools export it over HTTP/2 (pseudo-headers, lower-case names, base64 content)."""
    entry = {
        "_initiator": {"type": "script"}, "_priority": "High", "_resourceType": "fetch", "cache": {},
        "connection": "443", "pageref": "page_1", "startedDateTime": started, "time": 48.2,
        "request": {"method": "GET", "url": f"https://bank.example{path}", "httpVersion": "http/2.0",
                    "headers": [{"name": ":authority", "value": "bank.example"}, {"name": ":method", "value": "GET"},
                                {"name": ":path", "value": path}, {"name": ":scheme", "value": "https"},
                                {"name": "x-request-id", "value": "r1"}],
                    "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
                     "headers": [{"name": "content-type", "value": "application/json"}], "cookies": [],
                     "content": {"size": 2, "mimeType": "application/json", "text": base64.b64encode(b"{}").decode(),
                                 "encoding": "base64"},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 120, "_error": None},
        "serverIPAddress": "10.0.0.1", "timings": {"blocked": 1, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1,
                                                   "wait": 40, "receive": 1},
    }
    entry.update(changes)
    return entry


def har_file(tmp_path, entries, name="devtools.har"):
    path = tmp_path / name
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                                        "pages": [], "entries": entries}}))
    return path


def test_a_devtools_recording(tmp_path):
    entries = [devtools_entry("2026-07-01T08:30:00.123Z")]
    no_text = devtools_entry("2026-07-01T10:30:01.5+02:00")
    no_text["response"]["content"] = {"size": 1450, "mimeType": "application/json"}   # not kept by the browser
    no_text["request"]["bodySize"] = 30   # a body the browser did not keep either
    entries.append(no_text)
    first, second = list(har.Recording(har_file(tmp_path, entries)))
    assert first.headers == (("x-request-id", "r1"),)
    assert first.answer_body == b"{}" and not first.answer_truncated
    assert first.started == _dt.datetime(2026, 7, 1, 8, 30, 0, 123000, tzinfo=UTC)
    assert second.started == _dt.datetime(2026, 7, 1, 8, 30, 1, 500000, tzinfo=UTC)
    assert second.answer_truncated and second.answer_body == b"" and second.body is None


def test_entries_come_in_recorded_order_whatever_the_file_order(tmp_path):
    times = ["2026-07-01T08:30:05Z", "2026-07-01T08:30:01Z", "2026-07-01T08:30:03Z", "2026-07-01T10:30:01+02:00",
             "2026-07-01T08:30:00Z"]
    path = har_file(tmp_path, [devtools_entry(t, f"/v1/{i}") for i, t in enumerate(times)])
    recording = har.Recording(path)
    recording.scan()
    assert not recording.in_order
    # by time; the two entries at 08:30:01 (one written in +02:00) in file order
    assert [e.index for e in recording] == [4, 1, 3, 2, 0]


def test_the_proxy_log_reads_its_exchange_lines(tmp_path):
    request = Sent("POST", "/v1/a", (("X-Request-ID", "r9"),), b"{}", T0)
    answer = Answered(400, (("Content-Type", "application/json"),), b'{"tppMessages":[]}')

    @dataclass
    class Finding:
        party: str = "client"
        rule: str = "digest-mismatch"
        severity: str = "error"
        ref: str = "4.2"
        pointer: str = "/headers/Digest"
        message: str = "no"

    lines = [har.exchange_line(1, request, answer, time_ms=3),
             har.finding_line(1, Finding(), request, answer, "curl -X POST ..."),
             json.dumps({"type": "something-later", "entry": 7}),
             "",
             har.exchange_line(0, request, None)]
    path = tmp_path / "proxy.jsonl"
    path.write_text("\n".join(lines) + "\n")
    finding = json.loads(lines[1])
    assert finding == {"type": "finding", "entry": 1, "party": "client", "rule": "digest-mismatch",
                       "severity": "error", "ref": "4.2", "pointer": "/headers/Digest", "message": "no",
                       "expected": None, "actual": None, "requestId": "r9", "method": "POST", "path": "/v1/a",
                       "status": 400, "curl": "curl -X POST ..."}
    recording = har.Recording(path)
    assert recording.format == "jsonl" and recording.scan() == 2
    read = list(recording)
    assert [(e.index, e.status) for e in read] == [(1, 400), (0, None)]   # equal times: file order
    assert read[0].body == b"{}" and read[0].headers == (("X-Request-ID", "r9"),)


@pytest.mark.parametrize("text, problem", [
    ("", "not valid JSON"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00Z", ', "not valid JSON"),
    ("[1, 2]", "not a HAR file: the JSON is not an object"),
    ('{"har": {}}', 'not a HAR file: no "log" object'),
    ('{"log": {"version": "1.2"}}', "not a HAR file: no log.entries array"),
    ('{"log": {"entries": {}}}', "log.entries is not an array"),
    ('{"log": {"entries": [1]}}', "entry 0: the entry is not an object"),
    ('{"log": {"entries": [{"request": {}}]}}', "entry 0: startedDateTime is missing"),
    ('{"log": {"entries": [{"startedDateTime": "yesterday"}]}}', "'yesterday' is not an ISO 8601 time"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00"}]}}', "has no UTC offset"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00Z"}]}}', "entry 0: request is missing"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00Z", "request": {"method": "GET", "url": "/"},'
     ' "response": {"status": "200"}}]}}', "response.status '200' is not an HTTP status"),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00Z", "request": {"method": "GET", "url": "/",'
     ' "headers": [["a", "b"]]}, "response": {"status": 200}}]}}', 'request.headers[0] is not {"name"'),
    ('{"log": {"entries": [{"startedDateTime": "2026-07-01T08:30:00Z", "request": {"method": "GET", "url": "/"},'
     ' "response": {"status": 200}}]} trailing', "not valid JSON"),
    ('\xff\xfe{"log"', "not valid JSON"),
])
def test_an_unreadable_recording_says_why(tmp_path, text, problem):
    path = tmp_path / "bad.har"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(har.HarError, match=problem.replace("(", r"\(").replace("[", r"\[").replace("{", r"\{")):
        list(har.Recording(path))


@pytest.mark.parametrize("text, problem", [
    ("{not json\n", "line 1 is not JSON"),
    ("[1]\n", "line 1 is not a JSON object"),
    ('{"type": "exchange", "entry": "1"}\n', "line 1: an exchange line's \"entry\" must be a number"),
    ('{"type": "exchange", "entry": 0, "startedDateTime": "2026-07-01T08:30:00Z"}\n', "entry 0: request is missing"),
])
def test_an_unreadable_log_says_why(tmp_path, text, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(har.HarError, match=problem):
        list(har.Recording(path))


def test_an_empty_recording_has_no_entries(tmp_path):
    assert list(har.Recording(har_file(tmp_path, []))) == []


def test_a_recording_that_is_no_regular_file_or_changes_while_read(tmp_path):
    import os

    fifo = tmp_path / "pipe.har"
    os.mkfifo(fifo)
    with pytest.raises(har.HarError, match="not a regular file"):
        har.Recording(fifo)
    path = har_file(tmp_path, [devtools_entry("2026-07-01T08:30:00Z"), devtools_entry("2026-07-01T08:30:01Z")])
    recording = har.Recording(path)
    assert recording.scan() == 2
    har_file(tmp_path, [devtools_entry("2026-07-01T08:30:00Z")])   # rewritten between the two passes
    with pytest.raises(har.HarError, match="changed while it was read: 2 entries, then 1"):
        list(recording)
