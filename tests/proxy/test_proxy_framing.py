"""Byte for byte, both ways: what the client sends is what the bank gets, and what the bank answers is what the
client gets -- answers without a body by definition, answers ended by the close or in HTTP/1.0, trailers, chunk
extensions and empty header values -- on the wire, read raw (tests/proxy/raw_wire.py)."""
from __future__ import annotations

import socket
import time

import pytest

from proxy_helpers import RunningProxy
from raw_wire import RawUpstream, exchange, read_answer

GET = b"GET /v1/x HTTP/1.1\r\nHost: bank\r\n\r\n"
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


@pytest.mark.parametrize("answer, method", [
    (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", b"GET"),
    (b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", b"GET"),
    (b"HTTP/1.1 204 No Content\r\nContent-Length: 17\r\n\r\n", b"DELETE"),
    (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n", b"DELETE"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"HEAD"),
], ids=["304-length", "304-chunked", "204-length", "1xx-then-204-chunked", "head-chunked"])
def test_an_answer_without_a_body_by_definition_has_none_and_the_connection_serves_the_next(answer, method):
    with RawUpstream(answer, OK) as upstream, RunningProxy(upstream.url) as proxy:
        first, second = exchange(proxy.port, method + b" /v1/x HTTP/1.1\r\nHost: bank\r\n\r\n", GET)
    final = b"HTTP/1.1 " + answer.rsplit(b"HTTP/1.1 ", 1)[1]
    assert first == final   # its status and header lines as sent, nothing after the head
    assert second == OK     # the connection is in step: the next answer is whole


def test_an_answer_ended_by_the_close_is_forwarded_so_and_an_http_1_0_answer_keeps_its_version():
    closed = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"until the close " * 100
    with RawUpstream(closed, close=True) as upstream, RunningProxy(upstream.url) as proxy:
        (got,) = exchange(proxy.port, GET, until_close=True)
    assert b"transfer-encoding" not in got.lower()
    assert got.split(b"\r\n\r\n", 1)[1] == b"until the close " * 100   # the body as sent; the close ended it
    old = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\": 1}"
    with RawUpstream(old, close=True) as upstream, RunningProxy(upstream.url) as proxy:
        (got,) = exchange(proxy.port, GET, until_close=True)
    assert got.startswith(b"HTTP/1.0 200 OK\r\n") and got.endswith(b"\r\n\r\n{\"a\": 1}")
    assert b"transfer-encoding" not in got.lower()


def test_an_answers_trailers_are_forwarded_as_trailers_and_never_logged_as_headers():
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\nX-Checksum: abc\r\n\r\n")
    with RawUpstream(answer) as upstream, RunningProxy(upstream.url) as proxy:
        (got,) = exchange(proxy.port, GET)
    head, body = got.split(b"\r\n\r\n", 1)
    assert b"x-checksum" not in head.lower()
    assert body == b"5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\nX-Checksum: abc\r\n\r\n"
    (logged,) = proxy.logged("exchange")
    assert all(h["name"] != "X-Checksum" for h in logged["response"]["headers"])


@pytest.mark.parametrize("split", [False, True], ids=["one-packet", "trailer-in-a-later-packet"])
def test_a_requests_trailers_go_after_its_body_and_never_into_the_forwarded_head(split):
    head = (b"POST /v1/payments/sepa-credit-transfers HTTP/1.1\r\nHost: bank\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n")
    trailer = b"Signature: forged\r\n\r\n"
    with RawUpstream(OK) as upstream, RunningProxy(upstream.url) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
            if split:
                sock.sendall(head)
                time.sleep(0.3)
                sock.sendall(trailer)
            else:
                sock.sendall(head + trailer)
            got = read_answer(sock)
    assert got.startswith(b"HTTP/1.1 200 ")
    (sent,) = upstream.received
    forwarded_head, forwarded_body = sent.split(b"\r\n\r\n", 1)
    assert b"signature" not in forwarded_head.lower()
    assert forwarded_body == b"2\r\n{}\r\n0\r\nSignature: forged\r\n\r\n"
    (logged,) = proxy.logged("exchange")
    assert all(h["name"].lower() != "signature" for h in logged["request"]["headers"])


CHUNKED_WITH_EXTENSIONS = (b"5;sig=abc\r\n{\"a\":\r\n00A;part=\"2; of \\\"2\\\"\";last\r\n 1, \"b\": 2\r\n"
                           b"3\r\n}  \r\n0;done=yes\r\nX-Checksum: abc\r\n\r\n")
BODY_WITHOUT_FRAMING = '{"a": 1, "b": 2}  '


BIG = b"x" * 300_000
BIG_CHUNKED = b"%x;n=1\r\n%b\r\n1;n=2\r\ny\r\n0\r\n\r\n" % (len(BIG), BIG)   # read and written in many pieces


@pytest.mark.parametrize("body, text", [(CHUNKED_WITH_EXTENSIONS, BODY_WITHOUT_FRAMING),
                                        (BIG_CHUNKED, (BIG + b"y").decode())], ids=["small", "300-kB-chunk"])
def test_an_answers_chunk_extensions_reach_the_client_as_the_bank_wrote_them(body, text):
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    with RawUpstream(answer + body, OK) as upstream, RunningProxy(upstream.url) as proxy:
        first, second = exchange(proxy.port, GET, GET)
    assert first.split(b"\r\n\r\n", 1)[1] == body   # size lines (their hex as written), extensions, trailers: as sent
    assert second == OK                               # and the connection is in step
    logged = proxy.logged("exchange")[0]
    assert logged["response"]["content"]["text"] == text
    assert {h["name"].lower() for h in logged["response"]["headers"]} == {"content-type", "transfer-encoding"}


@pytest.mark.parametrize("split_at", [0, 7, 84], ids=["one-packet", "in-an-extension", "in-the-trailers"])
def test_a_requests_chunk_extensions_reach_the_bank_as_the_client_wrote_them(split_at):
    head = (b"POST /v1/payments/sepa-credit-transfers HTTP/1.1\r\nHost: bank\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    with RawUpstream(OK) as upstream, RunningProxy(upstream.url) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
            sock.sendall(head + CHUNKED_WITH_EXTENSIONS[:split_at])
            if split_at:
                time.sleep(0.3)
            sock.sendall(CHUNKED_WITH_EXTENSIONS[split_at:])
            got = read_answer(sock)
    assert got.startswith(b"HTTP/1.1 200 ")
    (sent,) = upstream.received
    assert sent.split(b"\r\n\r\n", 1)[1] == CHUNKED_WITH_EXTENSIONS
    (logged,) = proxy.logged("exchange")
    assert logged["request"]["postData"]["text"] == BODY_WITHOUT_FRAMING
    assert not {h["name"].lower() for h in logged["request"]["headers"]} & {"x-checksum", "sig", "part", "done"}


def test_a_chunk_size_line_over_the_head_bound_is_refused_both_ways():
    line = b"1;" + b"e" * 3000
    head = (b"POST /v1/x HTTP/1.1\r\nHost: bank\r\nTransfer-Encoding: chunked\r\n\r\n")
    with RawUpstream(OK) as upstream, RunningProxy(upstream.url, max_header_bytes=2048) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
            sock.sendall(head + line[:1500])
            time.sleep(0.2)
            sock.sendall(line[1500:])
            got = read_answer(sock, until_close=True)
    assert got.startswith(b"HTTP/1.1 400 ") and b"over 2,048 bytes" in got
    (refused,) = proxy.logged("exchange")
    assert refused["response"]["status"] == 400 and upstream.received == []   # the bank never got a whole request
    assert [f["rule"] for f in proxy.findings("client")] == ["header-too-large"]
    answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + line
    with RawUpstream(answer, close=True) as upstream, RunningProxy(upstream.url, max_header_bytes=2048) as proxy:
        (got,) = exchange(proxy.port, GET, until_close=True)
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and not got.endswith(b"0\r\n\r\n")   # cut short: closed
    (finding,) = [f for f in proxy.findings() if f["rule"] == "upstream-unreachable"]
    assert "over 2,048 bytes" in finding["message"]


def test_an_empty_header_value_is_kept_without_an_added_space_both_ways():
    answer = b"HTTP/1.1 200 OK\r\nX-Empty:\r\nContent-Length: 2\r\n\r\n{}"
    with RawUpstream(answer) as upstream, RunningProxy(upstream.url) as proxy:
        (got,) = exchange(proxy.port, b"GET /v1/x HTTP/1.1\r\nHost: bank\r\nX-Empty:\r\n\r\n")
    assert b"\r\nX-Empty:\r\n" in upstream.received[0]
    assert b"\r\nX-Empty:\r\n" in got


def test_a_request_with_upgrade_and_a_body_is_forwarded_whole_and_answered():
    request = (b"POST /v1/payments/sepa-credit-transfers HTTP/1.1\r\nHost: bank\r\nConnection: Upgrade, HTTP2-Settings"
               b"\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Type: application/json\r\n"
               b"Content-Length: 8\r\n\r\n{\"a\": 1}")
    with RawUpstream(OK) as upstream, RunningProxy(upstream.url) as proxy:
        (got,) = exchange(proxy.port, request)
    assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"{}")
    assert upstream.received[0].endswith(b"\r\n\r\n{\"a\": 1}")
    (logged,) = proxy.logged("exchange")
    assert logged["request"]["postData"]["text"] == '{"a": 1}' and logged["response"]["status"] == 200
    assert not {f["rule"] for f in proxy.findings()} & {"request-timeout", "upstream-unreachable"}
