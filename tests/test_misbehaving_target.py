"""The misbehaving test target itself (tests/misbehaving_target.py): it records what it got, and each ready behaviour
answers as its name says -- the tests of the gate against it rely on both."""
from __future__ import annotations

import socket
import time

import httpx
import pytest

from conformance.gate.target import ReferenceServer
from misbehaving_target import (MisbehavingTarget, endless_chunked, endless_continue, fixed, huge_body, rewrite,
                                slow_body, when)


def _raw(url: str, request: bytes, *, want: int, seconds: float = 5.0) -> bytes:
    """At most ``want`` bytes of the answer to ``request`` sent on a plain socket, reading for up to ``seconds``."""
    host, port = url.removeprefix("http://").split(":")
    received = bytearray()
    with socket.create_connection((host, int(port)), timeout=seconds) as sock:
        sock.sendall(request)
        deadline = time.monotonic() + seconds
        while len(received) < want and time.monotonic() < deadline:
            data = sock.recv(min(65536, want - len(received)))
            if not data:
                break
            received += data
    return bytes(received)


def test_it_records_every_request_as_sent_with_chunked_and_sized_bodies():
    with MisbehavingTarget(fixed(204, reason="No Content")) as target:
        with httpx.Client(base_url=target.url) as client:
            assert client.post("/v1/payments/x?y=1", content=b"sized", headers={"Host": "bank.example"}
                               ).status_code == 204
            assert client.put("/v1/other", content=iter([b"chun", b"ked"])).status_code == 204
    first, second = target.requests
    assert (first.method, first.target, first.path, first.body) == ("POST", "/v1/payments/x?y=1", "/v1/payments/x",
                                                                    b"sized")
    assert first.host == "bank.example"
    assert second.header("transfer-encoding") == "chunked" and second.body == b"chunked"
    assert target.paths() == ["POST /v1/payments/x", "PUT /v1/other"]


def test_a_huge_body_is_valid_json_of_the_announced_size_streamed():
    size = 3 * 1000 * 1000
    with MisbehavingTarget(huge_body(size)) as target:
        answer = httpx.get(target.url + "/")
    assert answer.headers["content-length"] == str(size) and len(answer.content) == size
    assert answer.json()["padding"] == "a" * (size - len('{"padding":""}'))
    assert target.sent_bytes > size
    with MisbehavingTarget(huge_body(size, announced=False)) as target:
        answer = httpx.get(target.url + "/")
    assert "content-length" not in answer.headers and answer.headers["transfer-encoding"] == "chunked"
    assert len(answer.content) == size and answer.json()["padding"].startswith("aaa")


def test_an_endless_chunked_body_goes_on_until_the_client_leaves():
    with MisbehavingTarget(endless_chunked()) as target:
        got = _raw(target.url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", want=5_000_000)
        assert len(got) == 5_000_000 and b"Transfer-Encoding: chunked" in got
    assert target.sent_bytes >= 5_000_000


def test_a_slow_body_sends_a_byte_each_interval():
    with MisbehavingTarget(slow_body(length=100, interval=0.2)) as target:
        started = time.monotonic()
        got = _raw(target.url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", want=10_000, seconds=1.0)
    head, _, body = got.partition(b"\r\n\r\n")
    assert b"Content-Length: 100" in head and 3 <= len(body) <= 7, (len(body), time.monotonic() - started)


def test_endless_continue_never_gives_a_final_answer():
    with MisbehavingTarget(endless_continue(interval=0.01)) as target:
        got = _raw(target.url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", want=10_000, seconds=0.5)
    assert got.count(b"HTTP/1.1 100 Continue\r\n\r\n") >= 10
    assert set(got.split(b"\r\n\r\n")) <= {b"HTTP/1.1 100 Continue", b""}


@pytest.fixture(scope="module")
def reference():
    server = ReferenceServer().start()
    yield server
    server.stop()


def test_rewrite_proxies_to_the_upstream_and_edits_the_answer_keeping_the_host(reference):
    def tagged(request, answer):
        answer.set_header("X-Rewritten", "yes")
        if answer.status == 404:
            answer.set_json({"_links": {"scaRedirect": {"href": "http://169.254.169.254/"}}})

    behaviour = when(lambda request: request.path.startswith("/nowhere"), rewrite(tagged))
    with MisbehavingTarget(behaviour, upstream=reference.url) as target:
        with httpx.Client(base_url=target.url) as client:
            edited, plain = client.get("/nowhere"), client.get("/nowhere-else-either")
            untouched = client.get("/v1/payments/sepa-credit-transfers/none")
    assert edited.headers["x-rewritten"] == "yes"
    assert edited.json() == {"_links": {"scaRedirect": {"href": "http://169.254.169.254/"}}}
    assert plain.headers["x-rewritten"] == "yes"
    assert "x-rewritten" not in untouched.headers and untouched.status_code >= 400
    assert {r.host for r in target.requests} == {target.url.removeprefix("http://")}


def test_stopping_ends_the_behaviours_that_never_end():
    target = MisbehavingTarget(endless_continue()).start()
    with socket.create_connection(("127.0.0.1", target.port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 100")
        started = time.monotonic()
        target.stop()
        assert time.monotonic() - started < 2 and not target._thread.is_alive()
