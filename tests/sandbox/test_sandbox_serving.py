"""`obvalidate sandbox serve` as a server: a port in use stops it before anything is created, an access log line per
request, and bounds on stalled clients (header and body deadlines, a connection limit), each with short values so
the tests take seconds."""
from __future__ import annotations

import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conformance.client import Identity, SignedClient
from conformance.sandbox.serving import AccessLog, ConnectionLimits, error_code
from conformance.server_process import free_port

SERVE = [sys.executable, "-m", "validator", "sandbox", "serve"]


def _started(args: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen([*SERVE, "--port", str(port), *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/", timeout=1)
            return process, url
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"the sandbox did not start: {log.read_text()}")
            time.sleep(0.05)


def _stopped(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def _connect(url: str, data: bytes = b"") -> socket.socket:
    host, port = url.rsplit("/", 1)[1].split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    if data:
        s.sendall(data)
    return s


def _until_closed(s: socket.socket) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and the seconds that took."""
    started, out = time.monotonic(), b""
    with s:
        while chunk := s.recv(4096):
            out += chunk
    return out, time.monotonic() - started


# ---------------------------------------------------------------- a port in use (issue 21, point 4)
def test_port_in_use_exits_2_with_one_line_and_creates_nothing(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([*SERVE, "--port", str(port), "--db", str(tmp_path / "sandbox.db")],
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"obvalidate sandbox: cannot listen on 127.0.0.1:{port}: the port is in use"]
    assert "sandbox on" not in result.stderr + result.stdout
    assert list(tmp_path.iterdir()) == []  # no sandbox.db, -wal or -shm


def test_a_database_that_cannot_be_used_stops_with_one_line_and_is_left_as_it_was(tmp_path):
    db = tmp_path / "sandbox.db"
    db.write_bytes(b"not a database, " * 100)
    result = subprocess.run([*SERVE, "--port", str(free_port()), "--db", str(db)], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("obvalidate sandbox: cannot start"), \
        result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sandbox.db"]  # the user's file kept, nothing added
    assert db.read_bytes() == b"not a database, " * 100


# ---------------------------------------------------------------- the access log (point 4)
def test_access_log_names_method_path_status_code_request_id_and_time(tmp_path):
    log = tmp_path / "serve.log"
    process, url = _started(["--db", ":memory:", "--access-log"], log)
    try:
        with SignedClient(url, Identity.generate("PSDNO-FSA-LOG")) as client:
            created = client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"})
            created_id = next(v for n, v in created.request.headers.items() if n.lower() == "x-request-id")
            refused = client.call("getPaymentStatus", path={"payment-service": "payments",
                                                            "payment-product": "sepa-credit-transfers",
                                                            "paymentId": "no-such-payment"})
            refused_id = refused.request.headers["x-request-id"]
        # a C1 control (CSI) as a raw byte: HTTP/1.1 lets it through in a header (obs-text), a terminal obeys it
        _until_closed(_connect(url, b"GET /v1/red HTTP/1.1\r\nHost: sandbox\r\nX-Request-ID: id\x9b2J\r\n"
                                    b"Connection: close\r\n\r\n"))
    finally:
        _stopped(process)
    lines = log.read_text().splitlines()
    code = error_code(created.content) or "-"  # 201, or a refusal of the example body: its code is logged
    assert any(line.startswith(f"POST /v1/payments/sepa-credit-transfers {created.status_code} {code} ")
               and f"X-Request-ID={created_id} " in line for line in lines), lines
    assert refused.status_code == 404
    refused_line = next(line for line in lines if f"X-Request-ID={refused_id} " in line)
    assert refused_line.startswith("GET /v1/payments/sepa-credit-transfers/no-such-payment/status 404 RESOURCE_UNKNOWN ")
    assert refused_line.endswith(" ms") and refused_line.split()[-2].isdigit()
    assert not any("\x9b" in line for line in lines)  # a header's control characters are escaped
    assert any(line.startswith("GET /v1/red ") and "X-Request-ID=id\\x9b2J " in line for line in lines), lines


def test_access_log_off_with_the_option_and_off_by_default_without_a_terminal(tmp_path):
    for args in (["--no-access-log"], []):  # stderr is a file here, not a terminal
        log = tmp_path / "serve.log"
        process, url = _started(["--db", ":memory:", *args], log)
        try:
            httpx.get(url + "/v1/sandbox/customers", timeout=5)
        finally:
            _stopped(process)
        assert not [line for line in log.read_text().splitlines() if " ms" in line], log.read_text()


def test_access_log_on_by_default_on_a_terminal():
    main, terminal = pty.openpty()  # the server's stderr is a terminal, as when a person runs it
    port = free_port()
    process = subprocess.Popen([*SERVE, "--port", str(port), "--db", ":memory:"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    output = b""
    try:
        deadline = time.monotonic() + 30
        while b" ms" not in output and time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/sandbox/customers", timeout=1,
                          headers={"X-Request-ID": "on-a-terminal"})
            except httpx.TransportError:
                time.sleep(0.1)
                continue
            while select.select([main], [], [], 0.5)[0]:
                output += os.read(main, 4096)
    finally:
        _stopped(process)
        os.close(main)
    assert b"GET /v1/sandbox/customers 401 SIGNATURE_MISSING X-Request-ID=on-a-terminal " in output, output


def test_access_log_line_without_a_server():
    scope = {"method": "POST", "raw_path": b"/v1/signing-baskets", "headers": [(b"x-request-id", b"id\x1b[2J")]}
    line = AccessLog.line(scope, 400, b'{"tppMessages":[{"category":"ERROR","code":"FORMAT_ERROR"}]}', 0.0123)
    assert line == "POST /v1/signing-baskets 400 FORMAT_ERROR X-Request-ID=id\\x1b[2J 12 ms"
    assert error_code(b'{"id":"x","code":"RESOURCE_UNKNOWN","status":404}') == "RESOURCE_UNKNOWN"
    assert error_code(b"not json") == error_code(b"[1]") == ""


# ---------------------------------------------------------------- stalled clients (point 8)
def test_defaults_bound_every_connection():
    limits = ConnectionLimits()
    assert 0 < limits.header_timeout <= 30 and 0 < limits.body_timeout <= 60 and limits.max_connections >= 64
    assert limits.uvicorn_options()["limit_concurrency"] == limits.max_connections


def test_slow_headers_slow_bodies_and_idle_connections_are_closed(tmp_path):
    log = tmp_path / "serve.log"
    process, url = _started(["--db", ":memory:", "--header-timeout", "0.5", "--body-timeout", "0.5"], log)
    try:
        idle = _connect(url)
        slow_headers = _connect(url, b"GET /v1/sandbox/customers HTTP/1.1\r\nHost: sandbox\r\n")
        slow_body = _connect(url, b"POST /v1/sandbox/initialize HTTP/1.1\r\nHost: sandbox\r\n"
                                  b"Content-Length: 100\r\n\r\n0123456789")
        honest = httpx.get(url + "/v1/sandbox/customers", timeout=5)  # served meanwhile
        for s, answer in ((idle, b""), (slow_headers, b"HTTP/1.1 408 "), (slow_body, b"HTTP/1.1 408 ")):
            received, seconds = _until_closed(s)
            assert received.startswith(answer) and seconds < 3, (received, seconds)
        trickle = _connect(url, b"GET /v1/sandbox/customers HTTP/1.1\r\n")
        with trickle:  # a byte now and then does not keep it open: the deadline counts from the connection
            started = time.monotonic()
            try:
                for _ in range(30):
                    time.sleep(0.1)
                    trickle.sendall(b"X")
            except OSError:
                pass
            assert time.monotonic() - started < 2.5
    finally:
        _stopped(process)
    assert honest.status_code in (200, 401)
    assert "Traceback" not in log.read_text() and "Exception in ASGI" not in log.read_text()


def test_many_stalled_connections_are_all_closed_while_honest_clients_are_served(tmp_path):
    """The issue's attack in small: slow-header and slow-body connections (each trickling a byte now and then) are
    all closed within their deadlines, and an honest request meanwhile is answered at once."""
    log = tmp_path / "serve.log"
    process, url = _started(["--db", ":memory:", "--header-timeout", "1", "--body-timeout", "1"], log)
    try:
        stalled = [_connect(url, b"GET /v1/sandbox/customers HTTP/1.1\r\nHost: sandbox\r\n") for _ in range(60)]
        stalled += [_connect(url, b"POST /v1/sandbox/initialize HTTP/1.1\r\nHost: sandbox\r\nContent-Length: 999\r\n"
                                  b"\r\n{") for _ in range(30)]
        started = time.monotonic()
        honest = httpx.get(url + "/v1/sandbox/customers", timeout=5)
        honest_seconds = time.monotonic() - started
        open_ones = set(range(len(stalled)))
        while open_ones and time.monotonic() - started < 6:
            for i in list(open_ones):
                try:
                    stalled[i].setblocking(False)
                    if stalled[i].recv(4096) == b"":
                        open_ones.discard(i)
                except BlockingIOError:
                    try:
                        stalled[i].sendall(b"X")  # a byte now and then
                    except OSError:
                        open_ones.discard(i)
                except OSError:
                    open_ones.discard(i)
            time.sleep(0.1)
        closed_after = time.monotonic() - started
    finally:
        for s in stalled:
            s.close()
        _stopped(process)
    assert not open_ones, f"{len(open_ones)} of {len(stalled)} stalled connections still open"
    assert closed_after < 4 and honest_seconds < 1 and honest.status_code == 401  # unsigned: refused, but answered


def test_connections_beyond_the_limit_are_answered_503_and_served_once_stalled_ones_are_gone(tmp_path):
    log = tmp_path / "serve.log"
    process, url = _started(["--db", ":memory:", "--header-timeout", "1", "--max-connections", "3"], log)
    try:
        stalled = [_connect(url) for _ in range(3)]
        time.sleep(0.2)
        over = httpx.get(url + "/v1/sandbox/customers", timeout=5, headers={"Connection": "close"})
        for s in stalled:
            _until_closed(s)
        after = httpx.get(url + "/v1/sandbox/customers", timeout=5, headers={"Connection": "close"})
    finally:
        _stopped(process)
    assert over.status_code == 503
    assert after.status_code != 503
