"""The proxy's side towards the upstream: one HTTP/1.1 connection per client connection, on an asyncio transport,
its answers parsed by httptools (llhttp, the parser uvicorn serves with). It writes a request's head and body as
given -- names as sent, lines in order, nothing added -- and hands the answer back as its status, its header lines
as the upstream wrote them, and its body's pieces as they arrive (the framing undone: a chunked answer's pieces
without their chunk lines, as uvicorn writes them chunked again; a gzip answer stays gzip).

Why not httpcore (httpx's transport, used here before): its pure-Python HTTP state machine (h11), its anyio stream
layer and its pool cost about 520 Python function calls an exchange of the proxy's 1,300 (cProfile, 4,000
exchanges), most of the forwarding's CPU; the parsing here is llhttp's, the connection handling asyncio's.

Flow control both ways: a request body waits while the upstream's socket is full (``pause_writing``); an answer
whose pieces the client takes slowly stops the reading of the upstream's socket past ``BUFFERED`` bytes, so a slow
client holds only its own connection and memory stays bounded.

What the upstream may do, and what it becomes:
- interim ``1xx`` answers (``100 Continue``...) are passed over; the final answer is the one returned;
- an answer to ``HEAD`` has no body whatever its ``Content-Length`` says; its connection is not reused (llhttp
  cannot be told the request was HEAD);
- an answer without ``Content-Length`` or chunked framing lasts until the upstream closes (RFC 9112 6.3);
- a connection the upstream closes before the answer's head, or an answer llhttp cannot parse, is
  :class:`UpstreamClosed` / :class:`UpstreamProtocolError` (the proxy's 502); one closed during the body ends the
  pieces with that error.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import ssl
from typing import AsyncIterator, Iterable

import httptools

from .limits import MAX_HEADER_BYTES

BUFFERED = 256 * 1024    # bytes of an answer read ahead of the client before the upstream's socket is not read


class UpstreamError(Exception):
    """The upstream failed the exchange (a base for the kinds below)."""


class UpstreamClosed(UpstreamError):
    """The upstream closed the connection before the answer was complete."""


class UpstreamProtocolError(UpstreamError):
    """The upstream's answer is not HTTP/1.1 llhttp can parse."""


class UpstreamHeadTooLarge(UpstreamError):
    """The upstream's status line and headers are over the proxy's bound (``max_header_bytes``): not read on."""


class Answer:
    """The final answer to one request: ``status``, ``headers`` (name and value bytes as sent), ``version`` (the
    status line's HTTP version, "1.1" or "1.0"), its body's pieces through :meth:`pieces`, and once they are all
    read, ``trailers`` (the header lines after a chunked body's last chunk; never among ``headers``)."""

    def __init__(self, connection: "UpstreamConnection", status: int, headers: list[tuple[bytes, bytes]],
                 version: str = "1.1") -> None:
        self.status = status
        self.headers = headers
        self.version = version
        self.trailers: list[tuple[bytes, bytes]] = connection.trailers
        self._connection = connection

    def ready(self) -> bool:
        """The next piece (or the end, or the failure) is there: :meth:`pieces` gives it without waiting."""
        return self._connection.ready()

    async def pieces(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            piece = await connection.next_piece()
            if piece is None:
                return
            yield piece


class UpstreamConnection(asyncio.Protocol):
    """One connection to the upstream, one exchange at a time (HTTP/1.1 without pipelining)."""

    def __init__(self, max_header_bytes: int = MAX_HEADER_BYTES) -> None:
        self._loop = asyncio.get_running_loop()
        self._max_header_bytes = max_header_bytes
        self._head_bytes = 0   # bytes of the answer's head so far (a head that never ends is cut at the bound)
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self.closed = False
        self._reusable = False
        self._can_write = asyncio.Event()
        self._can_write.set()
        # the exchange in progress
        self._active = False
        self._head_waiter: asyncio.Future | None = None
        self._headers: list[tuple[bytes, bytes]] = []
        self.trailers: list[tuple[bytes, bytes]] = []
        self._head_method = b""
        self._head_done = False
        self._delimited_by_close = False
        self._pieces: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._complete = False
        self._error: Exception | None = None
        self._piece_waiter: asyncio.Future | None = None
        self._reading_paused = False

    # ---- opening
    @classmethod
    async def open(cls, host: str, port: int, ssl_context: ssl.SSLContext | None,
                   max_header_bytes: int = MAX_HEADER_BYTES) -> "UpstreamConnection":
        loop = asyncio.get_running_loop()
        _transport, connection = await loop.create_connection(
            lambda: cls(max_header_bytes), host, port, ssl=ssl_context,
            server_hostname=host if ssl_context is not None else None)
        return connection

    def is_available(self) -> bool:
        """Free for the next exchange: open and its last answer complete with keep-alive."""
        return not self.closed and self._reusable

    # ---- asyncio.Protocol
    def connection_made(self, transport) -> None:
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):   # each write goes out at once (no Nagle wait)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reusable = True

    def data_received(self, data: bytes) -> None:
        if not self._active:   # bytes no request asked for: this connection is not to be trusted again
            self.close()
            return
        if not self._head_done:
            self._head_bytes += len(data)
            if self._head_bytes > self._max_header_bytes + len(data):   # earlier pieces alone are over the bound
                self._fail(UpstreamHeadTooLarge(f"the upstream's status line and headers are over "
                                                f"{self._max_header_bytes:,} bytes (--max-header-bytes)"))
                return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:   # 101 Switching Protocols: what follows is not HTTP, not ours
            self._reusable = False
            self._finish()
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__ if isinstance(exc.__context__, UpstreamHeadTooLarge) else None
            self._fail(cause or UpstreamProtocolError(f"the upstream's answer is not HTTP/1.1: {exc}"))
        except httptools.HttpParserError as exc:
            self._fail(UpstreamProtocolError(f"the upstream's answer is not HTTP/1.1: {exc}"))

    def eof_received(self) -> bool:
        if self._head_done and not self._complete and self._delimited_by_close:
            self._reusable = False
            self._finish()   # the close delimits the body (RFC 9112 6.3, item 8)
        return False         # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._reusable = False
        self._can_write.set()
        if self._active:
            self._fail(UpstreamClosed(f"the upstream closed the connection{f' ({exc})' if exc else ''}"))

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    # ---- httptools callbacks
    def on_message_begin(self) -> None:
        if not self._active:   # an answer after the answer, in the same bytes: nobody asked for it
            self.close()
        self._headers = []

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._head_done:   # after the head: a trailer of the chunked body
            self.trailers.append((name, value))
        else:
            self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        if not self._active:
            return
        size = sum(len(name) + len(value) + 4 for name, value in self._headers)
        if size > self._max_header_bytes:   # a head over the bound in one piece
            raise UpstreamHeadTooLarge(f"the upstream's headers are {size:,} bytes, over {self._max_header_bytes:,} "
                                       "(--max-header-bytes)")
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:   # an interim answer: the final one follows
            return
        self._head_done = True
        self._reusable = self._parser.should_keep_alive() and self._head_method != b"HEAD"
        framed = False
        for name, value in self._headers:
            lower = name.lower()
            if lower == b"content-length" or (lower == b"transfer-encoding" and b"chunked" in value.lower()):
                framed = True
        self._delimited_by_close = not framed and status not in (204, 304)
        waiter, self._head_waiter = self._head_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Answer(self, status, self._headers, self._parser.get_http_version()))
        if self._head_method == b"HEAD" or status in (204, 304):
            self._finish()

    def on_body(self, body: bytes) -> None:
        if self._complete or not self._active:
            return
        self._pieces.append(bytes(body))
        self._buffered += len(body)
        if self._buffered > BUFFERED and not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._active and self._head_done and not self._complete:
            self._finish()

    # ---- one exchange
    async def request(self, head: bytes, body: AsyncIterator[bytes] | None,
                      trailers: list[tuple[bytes, bytes]] | None, method: bytes) -> Answer:
        """Send a request (its head as given, then its body's pieces as they come; chunked again when it came
        chunked, ``trailers`` not None, which are written after the last chunk -- the list is read once the body has
        ended, as a request's trailers arrive after it); the answer once its head has arrived. The body is sent whole
        before the answer is awaited (as httpcore does): an answer the upstream gives early is kept meanwhile."""
        if self.closed or not self._reusable:
            raise UpstreamClosed("the connection is closed")
        self._reset(method)
        waiter = self._head_waiter = self._loop.create_future()
        if body is None:
            self._transport.write(head)
        else:
            try:
                await self._send_body(head, body, trailers)
            except BaseException:
                if not waiter.done():
                    waiter.cancel()
                self._head_waiter = None
                self.close()   # a request cut short: the connection is in no state to be reused
                raise
        return await waiter

    async def _send_body(self, head: bytes, body: AsyncIterator[bytes],
                         trailers: list[tuple[bytes, bytes]] | None) -> None:
        """The head with the body's first piece (one write), then each piece as it comes."""
        async for piece in body:
            if not piece:
                continue
            if not self._can_write.is_set():
                await self._can_write.wait()
            if self.closed:
                return
            piece = b"%x\r\n%b\r\n" % (len(piece), piece) if trailers is not None else piece
            if head:
                piece, head = head + piece, b""
            self._transport.write(piece)
        if not self.closed:
            end = b"".join((b"0\r\n", *header_lines(trailers), b"\r\n")) if trailers is not None else b""
            self._transport.write(head + end)

    def ready(self) -> bool:
        return bool(self._pieces) or self._complete or self._error is not None

    async def next_piece(self) -> bytes | None:
        """The answer body's next piece, or None at its end; raises :class:`UpstreamError` if it broke off."""
        while not self._pieces:
            if self._error is not None:
                raise self._error
            if self._complete:
                return None
            self._piece_waiter = self._loop.create_future()
            try:
                await self._piece_waiter
            finally:
                self._piece_waiter = None
        piece = self._pieces.popleft()
        self._buffered -= len(piece)
        if self._reading_paused and self._buffered <= BUFFERED // 2 and not self.closed:
            self._reading_paused = False
            self._transport.resume_reading()
        return piece

    def close(self) -> None:
        self._reusable = False
        if self._transport is not None and not self.closed:
            self._transport.close()

    # ---- internals
    def _reset(self, method: bytes) -> None:
        self._active = True
        self._head_method = method
        self._head_done = False
        self._delimited_by_close = False
        self._headers = []
        self.trailers = []
        self._head_bytes = 0
        self._pieces.clear()
        self._buffered = 0
        self._complete = False
        self._error = None
        self._reusable = False   # until this answer says keep-alive

    def _finish(self) -> None:
        self._complete = True
        self._active = False
        self._wake()

    def _fail(self, error: Exception) -> None:
        self._reusable = False
        self._active = False
        waiter, self._head_waiter = self._head_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        elif self._head_done and not self._complete:
            self._error = error
            self._wake()
        if self._transport is not None and not self.closed:
            self._transport.close()

    def _wake(self) -> None:
        waiter = self._piece_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def tls_refusal(host: str, port: int, context: ssl.SSLContext, seconds: float = 5.0) -> str | None:
    """Why an https upstream closed a connection before answering, when TLS is why: a handshake and one request on
    a connection of its own, and the TLS error they end in. A bank refusing the client certificate in TLS 1.2 fails
    the handshake with an alert; in TLS 1.3 it ends the session after the handshake, on the first read (uvloop's
    transport reports both as a plain close, so the proxy's own connection cannot say). None when that connection
    gets an answer or fails for another reason. Blocking: run it in a thread."""
    try:
        with socket.create_connection((host, port), timeout=seconds) as raw, \
                context.wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"HEAD / HTTP/1.1\r\nHost: " + host.encode("idna") + b"\r\nConnection: close\r\n\r\n")
            if tls.recv(1):
                return None
            version = tls.version()
    except ssl.SSLError as exc:
        return f"TLS error: {exc.reason or exc}"
    except (OSError, UnicodeError):
        return None
    return (f"TLS: the upstream ended the {version} session right after the handshake, before any answer -- as a "
            "bank does that requires a client certificate the proxy did not send (--tls-cert/--tls-key) or that "
            "it does not accept")


def request_head(method: bytes, target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The request line and header lines as given (names as sent, in order, duplicates kept; an empty value as
    ``Name:``, without a space the client did not send)."""
    lines = [method, b" ", target, b" HTTP/1.1\r\n"]
    lines += header_lines(headers)
    lines.append(b"\r\n")
    return b"".join(lines)


def header_lines(headers: Iterable[tuple[bytes, bytes]]) -> list[bytes]:
    """Header (or trailer) lines as given, each ``Name: value\\r\\n`` (``Name:\\r\\n`` for an empty value)."""
    lines: list[bytes] = []
    for name, value in headers:
        lines += (name, b": ", value, b"\r\n") if value else (name, b":\r\n")
    return lines
