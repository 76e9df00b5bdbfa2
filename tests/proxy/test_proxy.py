"""``obvalidate proxy`` in front of the reference sandbox, a misbehaving target and nothing at all.

Which fault switches a TPP's ordinary session exercises (:func:`proxy_helpers.ordinary_session`: valid, signed
requests creating, reading, basketing, authorising and cancelling payments) -- each must be a server finding in the
log, and the faithful sandbox none:

- ``created-200`` (every creation), ``transaction-status-missing`` (the status read after a creation and after the
  authorisation), ``detail-amount-as-sent`` (the detail read of the NOK bulk payment sent as "250"),
  ``cancellation-202-unknown-link`` (the cancellation), ``status-link-unresolved`` (the links of every creation):
  the answer to a valid request of the session is itself wrong.

Not exercised by an ordinary session, so not asserted here (each has its scenario in
tests/sandbox/test_sandbox_faults.py and the judge's tests): the switches that only show on a defective request --
a refusal the sandbox skips or words wrongly (``minor-units-ignored``, ``signature-not-verified``,
``digest-not-checked``, ``past-execution-date-accepted``, ``basket-over-limit``, ``basket-accepts-bulk``,
``signed-headers-partial``, ``refusal-path-elsewhere``, ``error-body-undocumented``; the ``--enforce`` test below
puts the proxy in front of ``minor-units-ignored``); those needing another TPP or an id nobody issued
(``foreign-payment-readable``, ``unknown-id-readable``), a retried request (``request-id-replay-duplicates``),
concurrent creations (``write-lost-under-concurrency``), boundary values an ordinary TPP does not send
(``empty-name-refused``, ``request-id-not-uuid-refused``), states reached only through the sandbox's clock or
batch, an account without funds or a second authorisation (``pdng-deletion-allowed``, ``lack-of-funds-500``,
``sca-success-without-effect``), and data the judge cannot know from the traffic (``pagination-off-by-one``: which
transactions exist; ``detail-other-payment``, ``basket-best-case``: the judge holds a bank to what it saw, and this
session's reads give it nothing to compare them with).
"""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from conformance.bounded import Limits
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from conformance.server_process import free_port
from conformance.traffic.har import Recording
from misbehaving_target import MisbehavingTarget, fixed, huge_body, send, slow_body, when
from proxy_helpers import TPP, RunningProxy, children, client, ordinary_session, peak_rss_mb, proxy_command, running
from sandbox.flows import sepa_body
from validator.context import Profile

ORDINARY = {
    F.CREATED_200: "status-undeclared",
    F.STATUS_MISSING: "schema-required",
    F.DETAIL_AMOUNT_AS_SENT: "response-amount-digits",
    F.CANCELLATION_202_UNKNOWN_LINK: "link-unresolved",
    F.STATUS_LINK_UNRESOLVED: "link-unresolved",
}


@pytest.fixture
def sandbox():
    started = []

    def start(*faults: str) -> ReferenceServer:
        server = ReferenceServer(faults=faults).start()
        started.append(server)
        return server
    yield start
    for server in started:
        server.stop()


def test_the_faithful_sandbox_gives_no_finding_and_every_exchange_a_line(sandbox, tmp_path):
    upstream = sandbox()
    with RunningProxy(upstream.url, record=tmp_path / "session.har") as proxy:
        ordinary_session(client(proxy.url))
    tally = proxy.stop()
    assert proxy.findings() == [], proxy.findings()
    lines = proxy.lines()
    assert len(lines) == tally.exchanges == tally.judged >= 12
    assert all(line.split()[-1] == "ok" for line in lines), lines
    assert lines[0].split()[1:4] == ["POST", "/v1/payments/sepa-credit-transfers", "201"]
    # the recording reads back as HAR 1.2 (obvalidate traffic's reader), every exchange in it, bytes intact
    entries = list(Recording(tmp_path / "session.har"))
    assert len(entries) == tally.exchanges
    assert entries[0].url == upstream.url + "/v1/payments/sepa-credit-transfers"
    logged = proxy.logged("exchange")
    assert [e["request"]["method"] for e in logged] == [e.method for e in sorted(entries, key=lambda e: e.started)]


@pytest.mark.parametrize("fault", sorted(ORDINARY))
def test_each_fault_an_ordinary_session_exercises_is_a_server_finding(sandbox, fault):
    upstream = sandbox(fault)
    with RunningProxy(upstream.url) as proxy:
        ordinary_session(client(proxy.url))
    proxy.stop()
    server = proxy.findings("server")
    assert ORDINARY[fault] in {f["rule"] for f in server}, server
    assert proxy.findings("client") == []
    first = server[0]
    assert first["requestId"] and first["method"] in ("GET", "POST", "DELETE") and first["status"]
    assert first["curl"].startswith("curl ") and upstream.url in first["curl"]
    assert any("FAIL server:" in line for line in proxy.lines())


def _raw_request(port: int, data: bytes, end: bytes = b"ok") -> bytes:
    """The bytes of the answer to ``data`` sent as is, read until they end with ``end``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        received = b""
        while b"\r\n\r\n" not in received or not received.endswith(end):
            piece = sock.recv(65536)
            if not piece:
                break
            received += piece
        return received


@pytest.mark.parametrize("preserve_host", [False, True])
def test_request_bytes_arrive_upstream_unchanged(preserve_host):
    """Header names as sent, in order, a header sent twice twice, the target not re-encoded, a chunked body's
    bytes; only Host names the upstream (unless --preserve-host)."""
    with MisbehavingTarget(fixed(200, b"ok", [("Content-Type", "text/plain"), ("X-Twice", "1"), ("x-twice", "2")])) \
            as target, RunningProxy(target.url, preserve_host=preserve_host) as proxy:
        body = b'{"a": "\xc3\xa6\xc3\xb8\xc3\xa5", "b": [1, 2]}'
        chunked = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in (body[:7], body[7:])) + \
            b"0\r\n\r\n"
        head = (f"POST /v1/payments/sepa-credit-transfers?x=%2F&y=a%20b HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{proxy.port}\r\nX-Request-ID: 5a1c3f9e-0d4b-4c2a-9e7f-3b6d8a1c2e4f\r\n"
                f"accept: application/json\r\nACCEPT: text/plain\r\nTPP-Explicit-Authorisation-Preferred: true\r\n"
                f"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n").encode()
        answer = _raw_request(proxy.port, head + chunked)
    (got,) = target.requests
    assert got.method == "POST" and got.target == "/v1/payments/sepa-credit-transfers?x=%2F&y=a%20b"
    host = f"127.0.0.1:{proxy.port}" if preserve_host else f"127.0.0.1:{target.port}"
    assert got.headers == [("Host", host), ("X-Request-ID", "5a1c3f9e-0d4b-4c2a-9e7f-3b6d8a1c2e4f"),
                           ("accept", "application/json"), ("ACCEPT", "text/plain"),
                           ("TPP-Explicit-Authorisation-Preferred", "true"), ("Transfer-Encoding", "chunked"),
                           ("Content-Type", "application/json")]
    assert got.body == body
    # and the answer comes back as the upstream wrote it: its header lines, duplicates, nothing added
    status, *lines = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    assert status.startswith(b"HTTP/1.1 200")
    assert lines == [b"Content-Type: text/plain", b"X-Twice: 1", b"x-twice: 2", b"Content-Length: 2"]


def test_a_content_length_body_and_a_bodiless_get_get_nothing_added():
    with MisbehavingTarget(fixed(204, b"", [])) as target, RunningProxy(target.url) as proxy:
        httpx.post(proxy.url + "/v1/x", content=b"\x00\x01 exact", headers={"Digest": "SHA-256=abc"}, timeout=5)
        _raw_request(proxy.port, f"GET /v1/y HTTP/1.1\r\nHost: a\r\nX-Request-ID: 1\r\n\r\n".encode(), b"\r\n\r\n")
    posted, got = target.requests
    assert posted.body == b"\x00\x01 exact" and posted.header("Content-Length") == "8"
    assert got.headers == [("Host", f"127.0.0.1:{target.port}"), ("X-Request-ID", "1")] and got.body == b""


def test_enforce_answers_a_client_error_as_predicted_and_does_not_forward_it(sandbox):
    lax = sandbox(F.MINOR_UNITS_IGNORED)     # accepts 10.001 EUR
    with MisbehavingTarget(upstream=lax.url) as recorder:
        with RunningProxy(recorder.url) as plain:
            accepted = client(plain.url).call("createSepaCreditTransfer", body=sepa_body("10.001"))
        with RunningProxy(recorder.url, enforce=True) as enforcing:
            tpp = client(enforcing.url)
            refused = tpp.call("createSepaCreditTransfer", body=sepa_body("10.001"))
            valid = tpp.call("createSepaCreditTransfer", body=sepa_body("11.00"))
    assert accepted.status_code == 201
    assert "amount-minor-units" in {f["rule"] for f in plain.findings("server")}
    assert refused.status_code == 400
    message = refused.json()["tppMessages"][0]
    assert message["code"] == "FORMAT_ERROR" and message["category"] == "ERROR"
    assert message["path"] == "/instructedAmount/amount"
    assert refused.headers["content-type"] == "application/json"
    assert valid.status_code == 201
    # the refused request never reached the sandbox: two creations went up, the plain one and the valid one
    assert [r.path for r in recorder.requests] == ["/v1/payments/sepa-credit-transfers"] * 2
    assert json.loads(recorder.requests[1].body)["instructedAmount"]["amount"] == "11.00"
    assert enforcing.findings("server") == []
    assert [f["rule"] for f in enforcing.findings("client")] == ["amount-minor-units"]
    assert "answered by the proxy (--enforce)" in enforcing.lines()[0]


def test_an_upstream_that_is_down_is_502_with_the_documented_error_body():
    down = f"http://127.0.0.1:{free_port()}"
    with RunningProxy(down) as proxy:
        answer = client(proxy.url).call("createSepaCreditTransfer", body=sepa_body())
    assert answer.status_code == 502
    (message,) = answer.json()["tppMessages"]
    assert message["code"] == "SYSTEM_ERROR" and down in message["text"]
    assert answer.headers["x-request-id"]
    (finding,) = proxy.findings("server")
    assert finding["rule"] == "upstream-unreachable" and finding["status"] == 502
    assert "answered by the proxy" in proxy.lines()[0]


def test_the_profile_chooses_the_error_body_of_the_proxys_own_answers():
    down = f"http://127.0.0.1:{free_port()}"
    with RunningProxy(down, profile=Profile.from_mapping({"error-body": "bulk"})) as proxy:
        answer = httpx.get(proxy.url + "/v1/payments/sepa-credit-transfers/x/status", timeout=5)
    body = answer.json()
    assert answer.status_code == 502 and body["code"] == "SYSTEM_ERROR" and body["status"] == 502
    assert set(body) == {"id", "system", "status", "code", "message"}


def test_any_method_redirects_and_absolute_links_pass_untouched():
    elsewhere = "https://sca.bank.example/authorise?token=a%2Fb"
    with MisbehavingTarget(fixed(303, b"", [("Location", elsewhere), ("Content-Length", "0")], reason="See Other")) \
            as target, RunningProxy(target.url) as proxy:
        answer = httpx.request("PROPFIND", proxy.url + "/v1/anything", timeout=5)
    assert answer.status_code == 303 and answer.headers["location"] == elsewhere
    assert [(r.method, r.target) for r in target.requests] == [("PROPFIND", "/v1/anything")]


def test_an_upstream_too_slow_is_504_and_holds_no_other_exchange():
    slow = when(lambda r: r.path == "/slow", slow_body(length=50, interval=0.2),
                fixed(200, b'{"ok": true}', [("Content-Type", "application/json")]))
    with MisbehavingTarget(slow) as target, RunningProxy(target.url, limits=Limits(seconds=1.0)) as proxy:
        answers = {}
        thread = threading.Thread(target=lambda: answers.setdefault(
            "slow", _safe(lambda: httpx.get(proxy.url + "/slow", timeout=10))))
        thread.start()
        time.sleep(0.2)
        with httpx.Client(timeout=5) as other:   # made before the clock starts (a client's set-up is not the proxy's)
            began = time.monotonic()
            fast = [other.get(proxy.url + "/fast", headers={"Connection": "close"}) for _ in range(5)]
            fast_seconds = time.monotonic() - began
        thread.join(10)
    assert all(a.status_code == 200 for a in fast) and fast_seconds < 1.0, fast_seconds
    # the slow one started its answer (200 and headers) and then ran out of time: cut, and a finding
    assert isinstance(answers["slow"], Exception) or len(answers["slow"].content) < 50
    assert {f["rule"] for f in proxy.findings("server")} == {"request-timeout"}


def test_no_answer_within_the_deadline_is_504():
    async def silent(request, writer):
        await asyncio.sleep(5)
    with MisbehavingTarget(silent) as target, RunningProxy(target.url, limits=Limits(seconds=0.5)) as proxy:
        answer = httpx.get(proxy.url + "/v1/payments/sepa-credit-transfers/x/status", timeout=5)
    assert answer.status_code == 504
    assert answer.json()["tppMessages"][0]["code"] == "SYSTEM_ERROR"
    assert [f["rule"] for f in proxy.findings("server")] == ["request-timeout"]


def test_a_large_answer_is_forwarded_whole_and_judged_on_its_cap(sandbox):
    big = b'{"padding": "' + b"a" * 300_000 + b'"}'

    async def large(request, writer):
        await send(writer, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                   + b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (big[:100_000], big[100_000:]))
                   + b"0\r\n\r\n")
    with MisbehavingTarget(large) as target, RunningProxy(target.url, limits=Limits(max_bytes=64_000)) as proxy:
        answer = httpx.get(proxy.url + "/anything", timeout=5)
    assert answer.content == big
    assert [f["rule"] for f in proxy.findings("server")] == ["answer-too-large"]
    (exchange,) = proxy.logged("exchange")
    assert exchange["response"]["_truncated"] is True


def _safe(call):
    try:
        return call()
    except Exception as exc:   # the slow answer is cut: httpx says so
        return exc


def test_sigint_finishes_flushes_reports_and_exits_1_with_findings(sandbox, tmp_path):
    upstream = sandbox(F.CREATED_200)
    with proxy_command("--upstream", upstream.url, "--log", str(tmp_path / "log.jsonl"), "--record",
                       str(tmp_path / "rec.har"), "--report-dir", str(tmp_path / "report")) as (process, port):
        tpp = client(f"http://127.0.0.1:{port}")
        assert tpp.call("createSepaCreditTransfer", body=sepa_body()).status_code == 200
        tpp.call("createSepaCreditTransfer", body=sepa_body("10.001"))
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 1, err
    assert len(out.splitlines()) == 2 and "FAIL server: " in out.splitlines()[0]
    assert "2 exchanges" in err and "report:" in err
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [v["type"] for v in log if v["type"] == "exchange"] == ["exchange"] * 2
    assert {(v["party"], v["rule"]) for v in log if v["type"] == "finding"} >= {
        ("server", "status-undeclared"), ("client", "amount-minor-units")}
    assert len(list(Recording(tmp_path / "rec.har"))) == 2
    assert [e.status for e in Recording(tmp_path / "log.jsonl")] == [200, 400]   # the log is a recording too
    data = json.loads((tmp_path / "report" / "proxy.json").read_text())
    assert data["summary"]["exchanges"] == 2 and data["summary"]["server_findings"] >= 1
    assert (tmp_path / "report" / "proxy.junit.xml").read_text().count("<failure") >= 2
    assert "obvalidate proxy: FAIL" in (tmp_path / "report" / "proxy.html").read_text()


def test_sigterm_with_nothing_wrong_exits_0(sandbox, tmp_path):
    upstream = sandbox()
    with proxy_command("--upstream", upstream.url, "--quiet") as (process, port):
        assert client(f"http://127.0.0.1:{port}").call("createSepaCreditTransfer",
                                                        body=sepa_body()).status_code == 201
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert out == "" and "1 exchanges, 0 with findings" in err


def test_usage_errors_exit_2(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "validator", "proxy", "--upstream", "ftp://x"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "http:// or https://" in bad.stderr and "Traceback" not in bad.stderr


def test_target_text_is_escaped_on_the_terminal():
    import datetime as _dt

    from conformance.exchange import ExchangeFinding, Judgement, RecordedAnswer, RecordedRequest
    from conformance.proxy.forward import Exchange
    from conformance.proxy.judging import line

    request = RecordedRequest("GET", "/v1/\x1b[2J\rPASS", (("Host", "bank"),), b"",
                              _dt.datetime.now(_dt.timezone.utc), "http://bank")
    finding = ExchangeFinding("server", "rule\x1b]0;title\x07", "error", "A7", "", "m")
    text = line(Exchange(3, request, RecordedAnswer(200, (), b""), 1.0), Judgement("getX", None, (finding,)),
                (finding,))
    assert "\x1b" not in text and "\r" not in text and "\\x1b[2J\\rPASS" in text and "\\x07" in text


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak RSS read from /proc (Linux)")
def test_a_huge_answer_streams_through_in_bounded_memory():
    """200 MB through the proxy (a command, its own process): its peak RSS stays far below the answer's size."""
    size = 200 * 1000 * 1000
    with MisbehavingTarget(huge_body(size)) as target, \
            proxy_command("--upstream", target.url, "--quiet") as (process, port):
        received = 0
        with httpx.stream("GET", f"http://127.0.0.1:{port}/big", timeout=60) as answer:
            for piece in answer.iter_raw(1 << 20):
                received += len(piece)
        peak = peak_rss_mb(process.pid)
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
    assert received == size
    assert peak < 150, f"peak RSS {peak:.0f} MB forwarding {size / 1e6:.0f} MB"
    assert process.returncode == 1 and "1 with findings" in err   # over the judge's cap: answer-too-large


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="processes found through /proc (Linux)")
def test_the_judging_process_ends_when_the_proxy_is_killed(sandbox):
    upstream = sandbox()
    with proxy_command("--upstream", upstream.url, "--quiet") as (process, _port):
        judges = children(process.pid)
        assert judges, "the judge runs in a process of its own"
        process.kill()
        process.wait(10)
        deadline = time.monotonic() + 10
        while any(running(pid) for pid in judges):
            assert time.monotonic() < deadline, "the judging process outlived the proxy"
            time.sleep(0.1)
