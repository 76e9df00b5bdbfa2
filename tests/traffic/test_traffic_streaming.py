"""A large recording is streamed: judging a HAR many times the size of any one entry holds one entry at a time
(tracemalloc's peak stays a small fraction of the file), whether the file is in recorded order or not; the JSON
report is written as the entries are judged."""
from __future__ import annotations

import json
import tracemalloc

from conformance.exchange import ExchangeJudge
from conformance.traffic.har import Recording
from conformance.traffic.output import JsonOutput
from conformance.traffic.run import Tally, judged
from traffic_recording import SandboxRecorder, ordinary_session

MB = 1_000_000
STATIC_BODY = "/* bundled script */\n" + "var x = 1;\n" * 30_000   # ~330 kB: what a browser's HAR is mostly made of


def large_har(path, session_entries: list[dict], copies: int, *, reverse: bool = False) -> int:
    """A devtools-like HAR: the recorded session, then ``copies`` large static-file answers (distinct), written
    entry by entry; ``reverse`` writes them newest first."""
    statics = [{"startedDateTime": f"2026-07-01T08:{31 + i // 60:02d}:{i % 60:02d}.000Z", "time": 3,
                "request": {"method": "GET", "url": f"http://testserver/static/app-{i}.js", "httpVersion": "HTTP/1.1",
                            "headers": [{"name": "Accept", "value": "*/*"}], "queryString": [], "cookies": [],
                            "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                             "headers": [{"name": "Content-Type", "value": "text/javascript"}],
                             "content": {"size": len(STATIC_BODY), "mimeType": "text/javascript",
                                         "text": f"/* {i} */" + STATIC_BODY},
                             "redirectURL": "", "headersSize": -1, "bodySize": len(STATIC_BODY)},
                "cache": {}, "timings": {"send": 0, "wait": 3, "receive": 0}} for i in range(copies)]
    session = [{**item, "startedDateTime": f"2026-07-01T08:30:00.{n:03d}Z"} for n, item in enumerate(session_entries)]
    items = session + statics   # each at its own millisecond: the recorded order is the session's
    if reverse:
        items = items[::-1]
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [\n')
        for n, item in enumerate(items):
            out.write(("" if n == 0 else ",\n") + json.dumps(item))
        out.write("\n]}}\n")
    return path.stat().st_size


def peak_while_judging(path, report_path) -> tuple[int, Tally]:
    tally = Tally()
    with open(report_path, "w", encoding="utf-8") as stream:
        # a judge that has judged once: what it compiles on first use is not what is measured; then a fresh
        # session's judge for the recording
        list(judged(Recording(report_path.with_name("warm.har")), ExchangeJudge()))
        judge = ExchangeJudge()
        tracemalloc.start()
        try:
            report = JsonOutput(stream, str(path))
            for result in judged(Recording(path), judge):
                tally.add(result)
                report.add(result)
            report.finish(tally)
            _size, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return peak, tally


def test_a_large_recording_is_judged_one_entry_at_a_time(tmp_path):
    recorder = SandboxRecorder(tmp_path / "warm.har")
    ordinary_session(recorder)
    session = json.loads(recorder.close().read_text())["log"]["entries"]
    for reverse in (False, True):
        big = tmp_path / ("reversed.har" if reverse else "big.har")
        size = large_har(big, session, 45, reverse=reverse)
        assert size > 15 * MB
        peak, tally = peak_while_judging(big, tmp_path / "report.json")
        assert tally.entries == len(session) + 45 and tally.with_findings == 0
        assert tally.skipped_by_reason["not an operation of the spec"] >= 45
        # one entry (its text and bytes) and the judge's session state; never the file
        assert peak < size / 5, f"peak {peak / MB:.1f} MB judging a {size / MB:.0f} MB HAR (reversed={reverse})"
        report = json.loads((tmp_path / "report.json").read_text())
        assert len(report["results"]) == tally.entries
        # judged in recorded order: a file written newest first is judged oldest first (from its last entry)
        order = [r["entry"] for r in report["results"]]
        assert order == sorted(order, reverse=reverse)


def test_the_peak_bound_can_fail(tmp_path):
    """The same measure on a reader that holds the whole file (json.load, what a non-streaming reader does) is
    far above the bound: the assertion above measures what it says."""
    recorder = SandboxRecorder(tmp_path / "warm.har")
    ordinary_session(recorder)
    session = json.loads(recorder.close().read_text())["log"]["entries"]
    big = tmp_path / "big.har"
    size = large_har(big, session, 45)
    tracemalloc.start()
    try:
        with open(big, encoding="utf-8") as stream:
            held = json.load(stream)
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(held["log"]["entries"]) == len(session) + 45
    assert peak / 5 > size / 5 > 3 * MB   # above the bound the streamed run stays under
