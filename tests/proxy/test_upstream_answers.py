"""What an upstream may answer, through the proxy's own upstream connection (conformance/proxy/upstream.py):
interim answers, HEAD, a body delimited by the connection's close, chunked bodies with trailers, answers that are not
HTTP, connections closed early, keep-alive. Each is what a client of the upstream would get directly; a failure is
the proxy's 502 with the documented error body."""
from __future__ import annotations

import asyncio
import json
import os
import time

import httpx
import pytest

from misbehaving_target import MisbehavingTarget, fixed, send
from proxy_helpers import RunningProxy


def _behaviour(data: bytes, *, close: bool = False):
    async def behaviour(request, writer: asyncio.StreamWriter) -> None:
        await send(writer, data)
        if close:
            writer.close()
    return behaviour


def test_interim_answers_are_passed_over_and_the_final_one_forwarded():
    answer = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
              b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    with MisbehavingTarget(_behaviour(answer)) as target, RunningProxy(target.url) as proxy:
        got = httpx.post(proxy.url + "/v1/x", content=b"{}", timeout=5)
    assert got.status_code == 201 and got.content == b"{}"


def test_a_head_answer_has_no_body_whatever_its_length_says_and_the_next_request_still_works():
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 42\r\n\r\n"
    with MisbehavingTarget(_behaviour(answer)) as target, RunningProxy(target.url) as proxy, httpx.Client(timeout=5) as client:
        head = client.head(proxy.url + "/v1/x")
        after = client.head(proxy.url + "/v1/y")
    assert head.status_code == 200 and head.headers["content-length"] == "42" and head.content == b""
    assert after.status_code == 200
    assert target.paths() == ["HEAD /v1/x", "HEAD /v1/y"]


def test_a_body_delimited_by_the_close_of_the_connection_is_forwarded_whole():
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + b"all of it " * 1000
    with MisbehavingTarget(_behaviour(answer, close=True)) as target, RunningProxy(target.url) as proxy:
        got = httpx.get(proxy.url + "/v1/x", timeout=5)
        again = httpx.get(proxy.url + "/v1/y", timeout=5)
    assert got.status_code == 200 and got.content == b"all of it " * 1000
    assert again.content == got.content and target.connections == 2


def test_a_chunked_answer_with_trailers_arrives_whole():
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"5\r\n{\"a\":\r\n3;ext=1\r\n 1}\r\n0\r\nX-Checksum: abc\r\n\r\n")
    with MisbehavingTarget(_behaviour(answer)) as target, RunningProxy(target.url) as proxy:
        got = httpx.get(proxy.url + "/v1/x", timeout=5)
    assert got.status_code == 200 and got.json() == {"a": 1}


@pytest.mark.parametrize("answer", [b"garbage that is not HTTP\r\n\r\n", b"HTTP/1.1 20x OK\r\n\r\n", b""],
                         ids=["not-http", "bad-status", "closed-at-once"])
def test_an_answer_that_is_not_http_or_none_at_all_is_502_with_the_documented_body(answer):
    with MisbehavingTarget(_behaviour(answer, close=True)) as target, RunningProxy(target.url) as proxy:
        got = httpx.get(proxy.url + "/v1/payments/sepa-credit-transfers/x", timeout=5)
    assert got.status_code == 502
    assert got.json()["tppMessages"][0]["code"] == "SYSTEM_ERROR"
    assert any(f["rule"] == "upstream-unreachable" for f in _findings(proxy))


def test_one_upstream_connection_serves_a_client_connections_requests_in_turn():
    with MisbehavingTarget(fixed(200, b"{}")) as target, RunningProxy(target.url) as proxy, \
            httpx.Client(timeout=5) as client:
        statuses = [client.get(proxy.url + f"/v1/x{i}").status_code for i in range(5)]
        statuses.append(client.post(proxy.url + "/v1/y", content=b'{"z": 1}').status_code)
    assert statuses == [200] * 6
    assert target.connections == 1 and target.requests[-1].body == b'{"z": 1}'


def test_bytes_the_upstream_sends_unasked_retire_its_connection():
    async def answer_twice(request, writer):   # the answer, then bytes nobody asked for
        await send(writer, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n")
    with MisbehavingTarget(answer_twice) as target, RunningProxy(target.url) as proxy, \
            httpx.Client(timeout=5) as client:
        first = client.get(proxy.url + "/v1/x")
        second = client.get(proxy.url + "/v1/y")
    assert (first.status_code, first.content, second.status_code, second.content) == (200, b"{}", 200, b"{}")
    assert target.connections == 2


def test_the_judging_process_runs_below_the_forwarding_unless_it_enforces():
    def lower(proxy: RunningProxy) -> int:
        judge = proxy.judging._process.pid
        return os.getpriority(os.PRIO_PROCESS, judge) - os.getpriority(os.PRIO_PROCESS, 0)

    with MisbehavingTarget(fixed(200, b"{}")) as target:
        with RunningProxy(target.url) as proxy:
            deadline = time.monotonic() + 15   # the worker lowers its priority as it starts
            while lower(proxy) != 10 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert lower(proxy) == 10
        with RunningProxy(target.url, enforce=True) as proxy:
            httpx.get(proxy.url + "/v1/x", timeout=15)   # answered after the judge's word: the worker is running
            assert lower(proxy) == 0


def _findings(proxy: RunningProxy) -> list[dict]:
    proxy.stop()
    lines = [json.loads(line) for line in proxy.log.read_text("utf-8").splitlines()]
    return [line for line in lines if line["type"] == "finding"]
