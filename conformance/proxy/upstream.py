"""The proxy's side towards the upstream: one HTTP/1.1 connection per client connection, on an asyncio transport,
its answers parsed by httptools (llhttp, the parser uvicorn serves with). It writes a request's head and body as
given -- names as sent, lines in order, nothing added -- and hands the answer back as its status, its header lines
as the upstream wrote them, and its body's pieces as they arrive, each both as data (the framing undone, for the
judge; a gzip answer stays gzip) and as it came on the wire (a chunked answer's size lines with their extensions,
and its trailers, as the upstream wrote them: :class:`ChunkLines`), which is what the client gets.

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


class FramingLost(UpstreamError):
    """The raw bytes and llhttp's reading of them part ways (a chunk's size line or its trailers over the bound, or
    bytes that are not where llhttp's callbacks put them): the body cannot be forwarded as it came. ``over``: the
    bound is why (the sender's doing)."""

    def __init__(self, message: str, *, over: bool = False) -> None:
        super().__init__(message)
        self.over = over


class Answer:
    """The final answer to one request: ``status``, ``headers`` (name and value bytes as sent), ``version`` (the
    status line's HTTP version, "1.1" or "1.0") and its body's pieces through :meth:`pieces`: each a pair, the data
    and the bytes as they came (the same but for a chunked body, whose size lines, extensions and trailers -- never
    among ``headers`` -- come with its data)."""

    def __init__(self, connection: "UpstreamConnection", status: int, headers: list[tuple[bytes, bytes]],
                 version: str = "1.1") -> None:
        self.status = status
        self.headers = headers
        self.version = version
        self._connection = connection

    def ready(self) -> bool:
        """The next piece (or the end, or the failure) is there: :meth:`pieces` gives it without waiting."""
        return self._connection.ready()

    async def pieces(self) -> AsyncIterator[tuple[bytes, bytes]]:
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
        self._chunks = ChunkLines(max_header_bytes)   # the connection's raw bytes, for a chunked answer's framing
        self._framing = b""   # a chunked answer's size line or chunk end, sent with the data that follows it
        self._head_method = b""
        self._head_done = False
        self._delimited_by_close = False
        self._pieces: collections.deque[tuple[bytes, bytes]] = collections.deque()
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
            self._chunks.feed(data)
            self._parser.feed_data(data)
            self._chunks.read()
        except FramingLost as exc:
            self._fail(exc)
        except httptools.HttpParserUpgrade:   # 101 Switching Protocols: what follows is not HTTP, not ours
            self._reusable = False
            self._finish()
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__ if isinstance(exc.__context__, UpstreamError) else None
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
        if not self._head_done:   # (after the head: a trailer of the chunked body, forwarded in its framing)
            self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        self._chunks.head_end(is_chunked(self._headers) and status >= 200 and status not in (204, 304)
                              and self._head_method != b"HEAD")   # (no body follows those)
        if not self._active:
            return
        size = sum(len(name) + len(value) + 4 for name, value in self._headers)
        if size > self._max_header_bytes:   # a head over the bound in one piece
            raise UpstreamHeadTooLarge(f"the upstream's headers are {size:,} bytes, over {self._max_header_bytes:,} "
                                       "(--max-header-bytes)")
        if 100 <= status < 200 and status != 101:   # an interim answer: the final one follows
            return
        self._head_done = True
        self._reusable = self._parser.should_keep_alive() and self._head_method != b"HEAD"
        framed = is_chunked(self._headers) or any(name.lower() == b"content-length" for name, _ in self._headers)
        self._delimited_by_close = not framed and status not in (204, 304)
        waiter, self._head_waiter = self._head_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Answer(self, status, self._headers, self._parser.get_http_version()))
        if self._head_method == b"HEAD" or status in (204, 304):
            self._finish()

    def on_chunk_header(self) -> None:
        self._framing += self._chunks.size_line()

    def on_chunk_complete(self) -> None:
        self._framing += self._chunks.chunk_end()

    def on_body(self, body: bytes) -> None:
        self._chunks.body(body)
        if self._complete or not self._active:
            return
        wire = self._framing + body if self._framing else body
        self._framing = b""
        self._pieces.append((body, wire))
        self._buffered += len(wire)
        if self._buffered > BUFFERED and not self._reading_paused and self._transport is not None:
            self._reading_paused = True
            self._transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._active and self._head_done and not self._complete:
            if self._framing:   # the last chunk and the trailers
                self._pieces.append((b"", self._framing))
                self._buffered += len(self._framing)
            self._finish()
        self._framing = b""

    # ---- one exchange
    async def request(self, head: bytes, body: AsyncIterator[bytes] | None, method: bytes) -> Answer:
        """Send a request (its head as given, then its body's bytes as they come, in their framing as they came: a
        chunked body with its size lines, extensions and trailers); the answer once its head has arrived. The body is
        sent whole before the answer is awaited (as httpcore does): an answer the upstream gives early is kept
        meanwhile."""
        if self.closed or not self._reusable:
            raise UpstreamClosed("the connection is closed")
        self._reset(method)
        waiter = self._head_waiter = self._loop.create_future()
        if body is None:
            self._transport.write(head)
        else:
            try:
                await self._send_body(head, body)
            except BaseException:
                if not waiter.done():
                    waiter.cancel()
                self._head_waiter = None
                self.close()   # a request cut short: the connection is in no state to be reused
                raise
        return await waiter

    async def _send_body(self, head: bytes, body: AsyncIterator[bytes]) -> None:
        """The head with the body's first piece (one write), then each piece as it comes."""
        async for piece in body:
            if not piece:
                continue
            if not self._can_write.is_set():
                await self._can_write.wait()
            if self.closed:
                return
            if head:
                piece, head = head + piece, b""
            self._transport.write(piece)
        if head and not self.closed:   # no piece came
            self._transport.write(head)

    def ready(self) -> bool:
        return bool(self._pieces) or self._complete or self._error is not None

    async def next_piece(self) -> tuple[bytes, bytes] | None:
        """The answer body's next piece (its data, its bytes as they came), or None at its end; raises
        :class:`UpstreamError` if it broke off."""
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
        self._buffered -= len(piece[1])
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
        self._framing = b""
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


def is_chunked(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """The message's body is chunked (its ``Transfer-Encoding`` names chunked)."""
    return any(name.lower() == b"transfer-encoding" and b"chunked" in value.lower() for name, value in headers)


def header_lines(headers: Iterable[tuple[bytes, bytes]]) -> list[bytes]:
    """Header (or trailer) lines as given, each ``Name: value\\r\\n`` (``Name:\\r\\n`` for an empty value)."""
    lines: list[bytes] = []
    for name, value in headers:
        lines += (name, b": ", value, b"\r\n") if value else (name, b":\r\n")
    return lines


class ChunkLines:
    """A chunked body's framing as it came on the wire -- each chunk's size line with its extensions (``3;ext=1``,
    which httptools does not hand on: llhttp reports them to callbacks httptools does not expose) and the last
    chunk's trailers -- read from the connection's raw bytes at the points llhttp's callbacks mark, so the proxy
    forwards the body's framing byte for byte. llhttp stays the parser: it decides what is valid and where a message
    ends (strictly: CRLF line ends, no spaces around ``;``, extensions as tokens or quoted strings without CR or LF);
    this only finds, in the bytes llhttp accepted, what it read: a head ends at its first empty line, a size line at
    its first CRLF, a chunk's data is the body llhttp handed over (checked byte for byte), the trailers end at the
    first empty line. Held between packets: only what llhttp has read but not yet reported (a line or a head in
    progress), at most ``bound`` bytes of a size line or trailers."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self._data: bytes | bytearray = b""
        self._pos = 0
        self._size = 0        # the data bytes of the chunk in progress still to come
        self._last = False    # the chunk in progress is the last one (size 0): its trailers follow
        self._in_chunks = False   # between a chunked body's first size line and its end

    def feed(self, data: bytes) -> None:
        """The connection's next bytes, before llhttp reads them."""
        if self._pos >= len(self._data):
            self._data, self._pos = data, 0
            return
        if self._pos or not isinstance(self._data, bytearray):
            self._data = bytearray(memoryview(self._data)[self._pos:])
            self._pos = 0
        self._data += data

    def read(self) -> None:
        """llhttp read the bytes fed: within a chunked body, what it has not reported yet (a size line or trailers
        in progress) is within the bound; what it reported is let go (an idle connection holds nothing)."""
        held = len(self._data) - self._pos
        if not held:
            self._data, self._pos = b"", 0
        elif self._in_chunks and held > self.bound:
            raise FramingLost(f"a chunk's size line or the trailers are over {self.bound:,} bytes (--max-header-bytes)",
                              over=True)

    def head_end(self, chunked: bool) -> None:
        """llhttp read a head (its on_headers_complete) of a message whose body is ``chunked`` or not: past it, and
        past the empty lines llhttp skips before it."""
        data, at = self._data, self._pos
        while at < len(data) and data[at] in b"\r\n":
            at += 1
        end = data.find(b"\r\n\r\n", at)
        if end < 0:
            raise FramingLost("the head llhttp read is not in the bytes that came")
        self._pos = end + 4
        self._in_chunks = chunked

    def size_line(self) -> bytes:
        """llhttp read a chunk's size line (its on_chunk_header): the line as it came, CRLF included."""
        data, at = self._data, self._pos
        end = data.find(b"\r\n", at)
        digits = data[at:end].split(b";", 1)[0]
        if end < 0 or not digits or digits.strip(b"0123456789abcdefABCDEF"):
            raise FramingLost("a chunk's size line llhttp read is not in the bytes that came")
        self._size = int(digits, 16)
        self._last = self._size == 0
        self._pos = end + 2
        return bytes(data[at:end + 2])

    def body(self, piece: bytes) -> None:
        """llhttp handed over a piece of the body (its on_body): the bytes that came at this point."""
        if not self._data.startswith(piece, self._pos):
            raise FramingLost("a piece of the body llhttp read is not the bytes that came")
        self._pos += len(piece)
        self._size -= len(piece)

    def chunk_end(self) -> bytes:
        """llhttp read a chunk's end (its on_chunk_complete): the CRLF after its data as it came, or after the last
        chunk its trailers and the empty line that ends them."""
        data, at = self._data, self._pos
        if data.startswith(b"\r\n", at) and self._size == 0:
            end = at + 2
        elif self._last and data.find(b"\r\n\r\n", at) >= 0:
            end = data.find(b"\r\n\r\n", at) + 4
        else:
            raise FramingLost("a chunk's end llhttp read is not in the bytes that came")
        self._in_chunks = not self._last
        self._pos = end
        return bytes(data[at:end])
