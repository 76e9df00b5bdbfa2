"""The forwarding half of ``obvalidate proxy``: an ASGI application (served by uvicorn) that sends each request to
the upstream exactly as it came and streams the upstream's answer back exactly as it came, keeping a bounded copy of
both for the judge (:mod:`.judging`), which gets them once the answer is complete.

What goes upstream: the method, the request-target as sent (path and query, not re-encoded; the upstream URL's
path in front, when it has one), every header line in the order sent with its name as sent (uvicorn lowercases
header names; :class:`RawHeaders` keeps the names as sent), a header sent twice twice, and the body's bytes as they
arrive (``Content-Length``, or ``Transfer-Encoding: chunked`` with the client's own size lines, chunk extensions and
trailers: :class:`~.upstream.ChunkLines`). The one change is ``Host``:
the upstream's authority, in the place the client's ``Host`` had, since a bank's server is found by its own name
(``--preserve-host`` forwards the client's). Nothing is added: the request's head is written as it came
(:mod:`.upstream`), no header dropped, none of a client library's own added; a chunked request's trailers follow its
last chunk as they came, never merged into the head.

What comes back: the status, every header line as the upstream sent it (uvicorn writes no ``Server`` or ``Date`` of
its own here), the body's bytes undecoded (a gzip answer stays gzip) in the upstream's framing
(:class:`_AnswerAsWritten`). The reason phrase is the standard one of the status (ASGI carries none). Redirects are
not followed and absolute links are not rewritten.

Bounds: the request and the answer stream through in pieces (flow control both ways: a client that reads slowly slows
the reading of its upstream answer, nobody else's), and the judge's copy of each body stops at ``Limits.max_bytes``
(the answer's then judged as truncated, and over the cap an ``answer-too-large`` finding as the gate has). The
upstream gets ``Limits.seconds`` in all (connecting, the status line and headers, the body; time spent waiting for
the client to take the answer does not count): past it before the answer started, the client gets 504; during the
body, the connection to the client is closed (the answer cannot be changed any more) and it is a ``request-timeout``
finding. An upstream that cannot be reached or breaks off before answering gets 502. Both carry the documented error
body (A6, the profile's error-body: tppMessages with SYSTEM_ERROR, or the bulk operation's body). A request body
that does not arrive in that time is the client's 408. The copies every exchange keeps count against the judging's
backlog (:class:`_Copy`). Before a request reaches the application, :class:`RawHeaders` holds the connection limits
(:class:`ProxyOptions`, :mod:`.limits`): a head's time and size, connections at once and per client address, each
refusal answered with the documented body and logged. Exchanges go to the judge in the order their requests started
(:meth:`ProxyApp._drain`).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as _dt
import http
import itertools
import socket
import ssl
import time
import zlib

import httptools
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, HttpToolsProtocol, RequestResponseCycle

from conformance.bounded import DEFAULT_MAX_BYTES, DEFAULT_SECONDS, Limits, seconds_text
from conformance.exchange import ExchangeFinding, Judgement, RecordedAnswer, RecordedRequest
from .limits import HEADER_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS, MAX_HEADER_BYTES, client_share
from .upstream import (Answer, ChunkLines, FramingLost, UpstreamClosed, UpstreamConnection, UpstreamError,
                       UpstreamHeadTooLarge, header_lines, is_chunked, request_head, tls_refusal)
from validator.context import DEFAULT_PROFILE, Profile

RAW_HEADERS = "obvalidate.raw_headers"   # the scope extension holding the request's header names as sent
CONNECTION = "obvalidate.connection"     # the scope extension naming the client's connection (its protocol object)
GATEWAY_ERROR, GATEWAY_TIMEOUT, REQUEST_TIMEOUT, SERVICE_UNAVAILABLE, HEADERS_TOO_LARGE = 502, 504, 408, 503, 431
TOO_LARGE, TIMED_OUT, UNREACHABLE = "answer-too-large", "request-timeout", "upstream-unreachable"
HEAD_TOO_LARGE = "header-too-large"
LINGER_SECONDS = 1.0   # a refused connection's bytes are read and dropped this long before it is closed
_INFLATED = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _status_line(status: int, version: str = "1.1") -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"HTTP/{version} {status} {phrase}\r\n".encode("latin-1")


class _AnswerAsWritten(RequestResponseCycle):
    """uvicorn's request-response cycle, which writes the answer as the upstream framed it (uvicorn's own writes the
    header names lower-cased, frames every answer without a length chunked, writes a 304's announced body length as
    a promise it then breaks, and has no trailers or chunk extensions): the header lines as the upstream wrote them
    (an empty value as ``Name:``), the status line's HTTP version the upstream's (``http_version`` of the start
    message), and the body in the upstream's framing (:data:`FRAMING`):

    - ``none``: the answer has no body by definition (1xx, 204, 304, the answer to HEAD), whatever its headers say --
      nothing is written after the head, and the connection stays usable;
    - ``length``: the ``Content-Length`` body's bytes as they come;
    - ``chunked``: the bytes as they come, which are the upstream's chunked body as it came on the wire (its size
      lines with their extensions, its last chunk and trailers -- as trailers, never as headers: :class:`Answer`);
    - ``close``: an answer ended by the close of the upstream's connection (neither framing) or an HTTP/1.0 answer
      without a length: its bytes as they come, then the client's connection is closed (the close is its end, as
      the upstream's was).

    A chunked request's body comes with its framing as it came on the wire (``wire`` of the request message: size
    lines with their extensions, the trailers), which is what goes upstream. Flow control and keep-alive are
    uvicorn's."""

    framing = "close"
    wire: bytearray | None = None   # a chunked request's body as it came, since the last receive()

    async def receive(self):
        message = await super().receive()
        if self.wire is not None and message["type"] == "http.request":
            message["wire"] = bytes(self.wire)
            self.wire.clear()
        return message

    async def send(self, message) -> None:
        if message["type"] != "http.response.start" or self.response_started:
            await self.send_body(message)
            return
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        self.response_started = True
        self.waiting_for_100_continue = False
        status = message["status"]
        version = message.get("http_version", "1.1")
        content = [_status_line(status, version)]
        closing = False
        framing = None
        for name, value in message.get("headers", ()):
            if HEADER_RE.search(name) or HEADER_VALUE_RE.search(value):
                raise RuntimeError("Invalid HTTP header name or value.")
            lower = name.lower()
            if lower == b"content-length" and framing is None:
                framing = "length"
            elif lower == b"transfer-encoding" and value.lower() == b"chunked":
                framing = "chunked"
            elif lower == b"connection" and b"close" in [t.strip().lower() for t in value.split(b",")]:
                self.keep_alive = False
                closing = True
            content += header_lines(((name, value),))
        if self.scope["method"] == "HEAD" or status < 200 or status in (204, 304):
            framing = "none"
        elif framing is None:
            framing = "close"
        if framing == "close" or (version == "1.0" and framing != "none"):
            self.keep_alive = False
        self.framing = framing
        if not self.keep_alive and not closing and version != "1.0" and framing != "close":
            content.append(b"Connection: close\r\n")
        content.append(b"\r\n")
        corked = _HeadWithFirstPiece(self.transport)
        corked.head = b"".join(content)
        self.transport = corked

    async def send_body(self, message) -> None:
        if self.response_complete or not self.response_started or message["type"] != "http.response.body":
            await super().send(message)
            return
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        body = message.get("body", b"")
        more_body = message.get("more_body", False)
        if self.framing != "none" and body:
            self.transport.write(body)
        if not more_body:
            transport = self.transport
            if isinstance(transport, _HeadWithFirstPiece):   # no piece written (HEAD, an empty body): the head alone
                transport.flush()
            self.response_complete = True
            self.message_event.set()
            if not self.keep_alive:
                self.transport.close()
            self.on_response()


class _HeadWithFirstPiece:
    """The client's transport, which writes an answer's head together with its first piece: one write, one packet,
    instead of two (each a system call and, on loopback, a wake-up of the reader)."""

    def __init__(self, transport) -> None:
        self._transport = transport
        self.head = b""

    def write(self, data: bytes) -> None:
        if self.head:
            data, self.head = self.head + data, b""
        self._transport.write(data)

    def flush(self) -> None:
        if self.head:
            self.write(b"")

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


def _flush_head(holder) -> None:
    transport = getattr(getattr(holder, "cycle", None), "transport", None)
    if isinstance(transport, _HeadWithFirstPiece):
        transport.flush()


class RawHeaders(HttpToolsProtocol):
    """uvicorn's httptools protocol (llhttp parses the requests), which also puts each request's headers with their
    names as sent (uvicorn hands the application lower-cased ones) in ``scope["extensions"]["obvalidate.raw_headers"]``
    and writes the answer's header names as given (:class:`_AnswerAsWritten`). httptools rather than h11: h11 is
    pure Python, and serving a request cost 3-4 times the CPU (measured with a bare application: 0.14 against 0.04 ms
    a request)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw: list[tuple[bytes, bytes]] = []
        self._chunks: ChunkLines | None = None   # the raw bytes, for a chunked request's framing (made with the app)
        self._head_complete = False
        self._head_bytes = 0     # bytes of a request's head that has not ended yet (earlier packets)
        self._head_size = 0      # bytes of the request's line and header lines (as llhttp hands them over)
        self._head_timer: asyncio.TimerHandle | None = None
        self._peer: str | None = None
        self._refused = False
        # The upstream connection paired with this client connection: a client's requests come one at a time
        # (HTTP/1.1), so each client connection has one upstream connection of its own, kept alive as long as both
        # are -- no pool to search per request, and a slow exchange holds no one else's connection.
        self.upstream: UpstreamConnection | None = None
        self.busy = False
        self.gone = False
        self._upgrade_body = 0   # bytes still to come of the body of a request that asked for an upgrade
        self.refusal: tuple[RecordedAnswer, str, bool] | None = None   # the proxy's 400 to a body it cannot forward

    def connection_made(self, transport) -> None:
        # answers go out as uvicorn writes them (status and headers, then each piece): without TCP_NODELAY the second
        # write waits for the client's delayed ACK of the first, 40 ms a request on Linux
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        app = self.app
        if not isinstance(app, ProxyApp):
            return
        peer = (self.client or ("", 0))[0]
        refusal = app.connections.admit(peer)
        if refusal is not None:   # over the limit, or over this client's share of it: 503 at once, logged
            app.refuse(self, SERVICE_UNAVAILABLE, "connection-limit", refusal, peer=peer)
            return
        self._peer = peer
        self._arm_head_timer()

    # ---- the head's deadline and size (a connection that trickles holds a slot for header_timeout at most)
    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.app.options.header_timeout, self._head_late)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if not self._head_bytes and not self.url:   # nothing of a request came: closed quietly, as an idle one
            self.transport.close()
            return
        seconds = self.app.options.header_timeout
        self.app.refuse(self, REQUEST_TIMEOUT, "header-timeout",
                        f"the request's line and headers did not arrive within {seconds:g} s (--header-timeout)")

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # between requests the idle timeout is uvicorn's keep-alive timeout; a request's first byte arms this one
        self._disarm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._disarm_head_timer()
        if self._peer is not None and isinstance(self.app, ProxyApp):
            self.app.connections.release(self._peer)
            self._peer = None
        self.gone = True
        if self.upstream is not None and not self.busy:   # a busy one is closed when its exchange ends
            self.upstream.close()
            self.upstream = None

    def data_received(self, data: bytes) -> None:
        if self._refused:   # answered by the proxy, closing: what still comes is dropped
            return
        if self._upgrade_body:   # the rest of the body of a request that asked for an upgrade
            self._take_upgrade_body(data)
            return
        self._unset_keepalive_if_required()
        options = self.app.options if isinstance(self.app, ProxyApp) else None
        waiting = not self._head_complete or self.cycle is None or self.cycle.response_complete
        if options is not None and waiting:
            if self._head_timer is None and not self.transport.is_closing():
                self._arm_head_timer()   # the first bytes of a next request on a kept-alive connection
            if self._head_bytes > options.max_header_bytes:   # a head still going on past the bound: not read on
                self._head_too_large()
                return
        chunks = self._chunks
        if chunks is None:
            chunks = self._chunks = ChunkLines(options.max_header_bytes if options is not None else MAX_HEADER_BYTES)
        try:
            chunks.feed(data)
            self.parser.feed_data(data)
            chunks.read()
        except FramingLost as exc:
            self._body_refused(exc)
        except httptools.HttpParserCallbackError as exc:
            if isinstance(exc.__context__, FramingLost):
                self._body_refused(exc.__context__)
                return
            if self._head_size <= self.app.options.max_header_bytes:
                raise
            self._head_too_large()
            return
        except httptools.HttpParserError:
            self.send_400_response("Invalid HTTP request received.")
        except httptools.HttpParserUpgrade as exc:
            # The proxy upgrades to nothing (the interface is HTTP/1.1; curl --http2 asks for h2c): the request is an
            # ordinary one, forwarded with its Upgrade header as sent, and llhttp, which stops at an upgrade's head,
            # leaves its Content-Length body to be handed on here. A chunked one cannot be: refused.
            cycle = self.cycle
            if cycle is None or cycle.scope is not self.scope:
                return
            length = _header(self._raw, b"content-length")
            if _header(self._raw, b"transfer-encoding") is not None or (length or b"0").strip() and \
                    not (length or b"0").strip().isdigit():
                self.send_400_response("An Upgrade request's body must have a Content-Length here.")
                return
            cycle.keep_alive = False   # what follows the body on this connection is not read
            self._upgrade_body = int(length or b"0")
            self._take_upgrade_body(data[exc.args[0]:] if exc.args else b"")
        if self._head_complete:
            self._head_bytes = 0
        elif waiting:
            self._head_bytes += len(data)

    def answered_and_closing(self, answer: bytes) -> None:
        """Write the proxy's own ``answer`` and close: the sending side at once, the connection after
        :data:`LINGER_SECONDS` of reading and dropping what the client still sends (closed with unread bytes, the
        kernel would reset the connection, and the client could lose the answer)."""
        self._refused = True
        self._disarm_head_timer()
        transport = self.transport
        transport.write(answer)
        if transport.can_write_eof():
            transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, transport.close)

    def partial_request(self, app: "ProxyApp") -> RecordedRequest | None:
        """What arrived of a request refused before its head was complete: its line and the header lines so far
        (None when not even its line came)."""
        try:
            method = self.parser.get_method().decode("latin-1")
        except Exception:   # noqa: BLE001 - llhttp has not read a method
            return None
        if not self.url:
            return None
        return RecordedRequest(method, _text(self.url), tuple((_text(n), _text(v)) for n, v in self._raw), b"",
                               _dt.datetime.now(_dt.timezone.utc), app.upstream.origin)

    def _body_refused(self, problem: FramingLost) -> None:
        """A chunked request's framing that cannot go upstream as it came (a size line or trailers over the bound):
        400 with the documented body and the connection closed; the exchange in flight logs it (:attr:`refusal`)."""
        app, cycle = self.app, self.cycle
        if not isinstance(app, ProxyApp) or cycle is None or cycle.response_started:
            self.transport.close()   # an answer under way (the bank answered early) cannot be replaced: it is cut
            return
        headers, body, answer = _refusal(app.options.profile, 400, "FORMAT_ERROR", str(problem))
        self.refusal = (RecordedAnswer(400, tuple((_text(n), _text(v)) for n, v in headers), body), str(problem),
                        problem.over)
        cycle.disconnected = True   # the application's next receive() is the end: its request is over
        cycle.message_event.set()
        self.answered_and_closing(answer)

    def _head_too_large(self) -> None:
        limit = self.app.options.max_header_bytes
        self.app.refuse(self, HEADERS_TOO_LARGE, HEAD_TOO_LARGE,
                        f"the request's line and headers are over {limit:,} bytes (--max-header-bytes)")

    def _take_upgrade_body(self, data: bytes) -> None:
        cycle = self.cycle
        piece = data[:self._upgrade_body]
        self._upgrade_body -= len(piece)
        cycle.body += piece
        if not self._upgrade_body:
            cycle.more_body = False
        cycle.message_event.set()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._raw = []
        self._head_complete = False
        self._head_size = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._head_complete:   # a trailer of a chunked body: forwarded in its framing as it came, never in the head
            return
        self._raw.append((name, value))
        self._head_size += len(name) + len(value) + 4
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        chunked = is_chunked(self._raw)
        self._chunks.head_end(chunked)
        self._head_complete = True
        self._disarm_head_timer()
        if isinstance(self.app, ProxyApp) and self._head_size + len(self.url) > self.app.options.max_header_bytes:
            self._head_size += len(self.url)
            raise _HeadTooLarge()   # stops llhttp: the request is refused, not dispatched
        super().on_headers_complete()
        cycle = self.cycle
        # The request's task is created in super().on_headers_complete() but runs only once this returns to the loop
        # (an upgrade request gets no cycle of its own).
        if cycle is not None and cycle.scope is self.scope:
            cycle.__class__ = _AnswerAsWritten
            extensions = self.scope.setdefault("extensions", {})
            extensions[RAW_HEADERS] = self._raw
            extensions[CONNECTION] = self
            if chunked:
                cycle.wire = bytearray()

    # ---- a chunked request's framing as it came, beside the data uvicorn hands the application
    def on_chunk_header(self) -> None:
        self._pass_framing(self._chunks.size_line())

    def on_chunk_complete(self) -> None:
        self._pass_framing(self._chunks.chunk_end())

    def on_body(self, body: bytes) -> None:
        self._chunks.body(body)
        self._pass_framing(body)
        super().on_body(body)

    def _pass_framing(self, wire: bytes) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.wire is not None and not cycle.response_complete:
            cycle.wire += wire
            cycle.message_event.set()


class _Unpaired:
    """The upstream connection of a request that came without its client connection (served by another server than
    :class:`RawHeaders`): one connection for the one exchange, closed at its end."""

    def __init__(self) -> None:
        self.upstream: UpstreamConnection | None = None
        self.busy = False
        self.gone = True


@dataclass(frozen=True)
class ProxyOptions:
    upstream: str                                   # scheme://host[:port][/base-path]
    limits: Limits = Limits(DEFAULT_MAX_BYTES, DEFAULT_SECONDS)
    enforce: bool = False
    preserve_host: bool = False
    profile: Profile = DEFAULT_PROFILE
    max_connections: int = MAX_CONNECTIONS          # the proxy's limits (.limits: what each bounds)
    max_client_connections: int | None = None       # None: client_share(max_connections)
    header_timeout: float = HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    max_header_bytes: int = MAX_HEADER_BYTES

    @property
    def client_share(self) -> int:
        return self.max_client_connections or client_share(self.max_connections)


@dataclass
class Exchange:
    """One exchange as the proxy saw it, for the judge: ``own`` the proxy's findings (the upstream's failures),
    ``judgement`` set when the proxy judged it already (``--enforce``), ``answered_by`` "proxy" when the answer is
    the proxy's own (502, 504, an enforced refusal)."""
    index: int
    request: RecordedRequest
    answer: RecordedAnswer | None
    time_ms: float
    own: tuple[ExchangeFinding, ...] = ()
    judgement: Judgement | None = None
    answered_by: str = "upstream"
    note: str | None = None
    request_size: int | None = None   # set when the request's body was not kept: its size (bodySize in the HAR)


class Upstream:
    """scheme, host, port, base path and authority of the upstream URL."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--upstream must be an http:// or https:// URL, not {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"--upstream takes no query or fragment: {url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        default = (parts.scheme, self.port) in (("http", 80), ("https", 443))
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = host if default else f"{host}:{self.port}"
        self.origin = f"{self.scheme}://{self.authority}"


@dataclass(frozen=True)
class Refusal:
    """A connection the proxy refused before any request (over ``--max-connections`` or a client's share)."""
    at: _dt.datetime
    client: str
    status: int
    rule: str
    message: str


class Admission:
    """Client connections open at once: at most ``total``, and at most ``share`` from one client address -- so a
    client holding many slow connections takes its share, never everyone's."""

    def __init__(self, total: int, share: int) -> None:
        self.total = total
        self.share = share
        self.open = 0
        self.by_client: dict[str, int] = {}

    def admit(self, client: str) -> str | None:
        """None when admitted (counted until :meth:`release`), else why not."""
        held = self.by_client.get(client, 0)
        if self.open >= self.total:
            return f"{self.open} connections are open, the proxy's limit (--max-connections {self.total})"
        if held >= self.share:
            return (f"{client} has {held} connections open, its share of the limit "
                    f"(--max-client-connections {self.share})")
        self.open += 1
        self.by_client[client] = held + 1
        return None

    def release(self, client: str) -> None:
        self.open -= 1
        held = self.by_client.get(client, 1) - 1
        if held:
            self.by_client[client] = held
        else:
            self.by_client.pop(client, None)


class Unbounded:
    """A backlog without a bound (a :class:`ProxyApp` whose exchanges go nowhere that needs one)."""
    limit = 0

    def reserve(self, size: int) -> bool:
        return True

    def release(self, size: int) -> None:
        pass


class _Copy:
    """The bodies of one exchange kept for the judge: ``request`` and ``answer``, each at most ``cap`` bytes (past
    it, ``request_over`` / ``answer_over``), and both within the proxy's ``backlog`` (its ``reserve`` and
    ``release``): when the backlog has no room, neither is kept (``dropped``) -- the exchange is forwarded all the
    same and logged as not judged, and what it held is given back. ``handover()`` gives the bytes held to the one
    who takes them over (the judging's queue), once."""

    def __init__(self, backlog, cap: int) -> None:
        self.backlog = backlog
        self.cap = cap
        self.request = bytearray()
        self.answer = bytearray()
        self.request_size = 0
        self.request_complete = False
        self.request_over = self.answer_over = self.dropped = False
        self.settled = False   # handed over to the judge (in order)
        self.reserved = 0

    def keep(self, part: bytearray, piece: bytes) -> None:
        if self.dropped:
            return
        if len(part) + len(piece) > self.cap:
            if part is self.request:
                self.request_over = True
            else:
                self.answer_over = True
            return
        if not self.backlog.reserve(len(piece)):
            self.dropped = True
            self.request.clear()
            self.answer.clear()
            self.backlog.release(self.reserved)
            self.reserved = 0
            return
        self.reserved += len(piece)
        part.extend(piece)

    def handover(self) -> int:
        reserved, self.reserved = self.reserved, 0
        return reserved


class _HeadTooLarge(Exception):
    """A request's head over ``max_header_bytes``, raised from llhttp's callback to stop the parse."""


class _ClientGone(Exception):
    """The client closed its connection before its request's body was complete."""


def _text(value: bytes) -> str:
    return value.decode("latin-1")


def _header(headers, name: bytes) -> bytes | None:
    return next((v for k, v in headers if k.lower() == name), None)


def error_body(profile: Profile, status: int, code: str, text: str, path: str | None = None,
               messages: list[tuple[str, str | None, str]] | None = None, operation=None) -> bytes:
    """A documented error body (A6): the sandbox's (:func:`conformance.sandbox.app.error_reply`), chosen by the
    profile's error-body and the operation's declared body, as a conforming bank writes it."""
    from conformance.sandbox.app import error_reply

    return error_reply(operation, status, messages or [(code, path, text)], profile.error_body).encoded()


class ProxyApp:
    """The ASGI application: forwards every request to ``options.upstream``; ``submit`` gets each completed
    :class:`Exchange` (awaited before the answer's last piece goes out, so a judge that falls behind slows the
    proxy rather than piling up exchanges); ``ask`` (``--enforce``) judges a request alone before it is forwarded."""

    def __init__(self, options: ProxyOptions, submit: Callable[[Exchange, int], Awaitable[None]],
                 ask: Callable[[RecordedRequest], Awaitable[Judgement]] | None = None,
                 ssl_context: ssl.SSLContext | None = None, backlog=None) -> None:
        self.options = options
        self.upstream = Upstream(options.upstream)
        self.submit = submit
        self.backlog = backlog or Unbounded()   # reserve()/release() of the bytes kept for the judge; its limit
        self.connections = Admission(options.max_connections, options.client_share)
        self._tasks: set[asyncio.Task] = set()   # hand-overs started from callbacks, held until done
        self._ready: dict[int, tuple[Any, int] | None] = {}   # completed exchanges by index (None: nothing to judge)
        self._next = 0
        self._draining = False
        self.ask = ask
        self._ssl = ssl_context
        self._numbers = itertools.count()
        self.spec = None

    # ---- what the proxy refuses itself, before a request reaches the application
    def refuse(self, protocol: "RawHeaders", status: int, rule: str, message: str, *, peer: str | None = None) -> None:
        """Answer ``status`` with the documented error body on ``protocol``'s connection and close it; log it: as an
        exchange with a client finding (``rule``) when a request's line arrived (a head too large or too slow), else
        as a :class:`Refusal` (a connection over the limit)."""
        code = "SYSTEM_ERROR" if status == SERVICE_UNAVAILABLE else "FORMAT_ERROR"
        headers, body, answer = _refusal(self.options.profile, status, code, message)
        protocol.answered_and_closing(answer)
        request = protocol.partial_request(self) if status != SERVICE_UNAVAILABLE else None
        if request is None:
            item: Any = Refusal(_dt.datetime.now(_dt.timezone.utc), peer or (protocol.client or ("",))[0], status,
                                rule, message)
        else:
            answer = RecordedAnswer(status, tuple((_text(n), _text(v)) for n, v in headers), body)
            finding = ExchangeFinding("client", rule, "error", "Limits", "", f"{request.method} {request.target}: "
                                      f"{message}", "a request within the proxy's limits", f"{status} from the proxy")
            item = Exchange(next(self._numbers), request, answer, 0.0, (finding,), answered_by="proxy",
                            note=f"answered by the proxy: {message}")
        if isinstance(item, Exchange):
            self._ready[item.index] = (item, 0)
            self._spawn(self._drain())
        else:
            self._spawn(self.submit(item, 0))

    # ---- the upstream connection, made in the serving loop
    @property
    def ssl_context(self) -> ssl.SSLContext | None:
        if self._ssl is None and self.upstream.scheme == "https":
            import httpx

            self._ssl = httpx.create_ssl_context()
        return self._ssl

    async def _open(self, holder) -> UpstreamConnection:
        connection = holder.upstream = await UpstreamConnection.open(self.upstream.host, self.upstream.port,
                                                                     self.ssl_context, self.options.max_header_bytes)
        return connection

    async def _send(self, holder, head: bytes, body, method: bytes) -> Answer:
        """The upstream's answer (its head) to the request, on the client connection's own upstream connection."""
        connection = holder.upstream
        reused = connection is not None
        if connection is not None and not connection.is_available():
            connection.close()
            connection, reused = None, False
        if connection is None:
            connection = await self._open(holder)
        try:
            return await connection.request(head, body, method)
        except UpstreamClosed:
            # a kept-alive connection the upstream closed meanwhile: once more on a new one, when nothing of the
            # request was consumed (no body)
            holder.upstream = None
            if not (reused and body is None):
                raise
            connection = await self._open(holder)
            return await connection.request(head, body, method)

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":   # websockets: not part of this interface
            return
        await self._exchange(scope, receive, send)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._flush_ready()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ---- one exchange
    def _request_line(self, scope: dict) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        if raw_path.startswith((b"http://", b"https://")):   # absolute form (RFC 9112 3.2.2): its path and query
            rest = raw_path.split(b"://", 1)[1]
            raw_path = b"/" + rest.split(b"/", 1)[1] if b"/" in rest else b"/"
        query = scope.get("query_string") or b""
        target = self.upstream.base_path.encode("ascii") + raw_path + (b"?" + query if query else b"")
        headers = list(scope.get("extensions", {}).get(RAW_HEADERS) or scope["headers"])
        if not self.options.preserve_host:
            authority = self.upstream.authority.encode("ascii")
            headers = [(name, authority) if name.lower() == b"host" else (name, value) for name, value in headers]
        return target, headers

    async def _exchange(self, scope: dict, receive, send) -> None:
        index = next(self._numbers)
        copy = _Copy(self.backlog, self.options.limits.max_bytes)
        try:
            await self._one(index, copy, scope, receive, send)
        finally:
            copy.handover()   # whatever was not handed over is kept no more
            if not copy.settled:   # nothing to judge (a client gone while --enforce read its body): not waited for
                self._ready[index] = None
                self._spawn(self._drain())

    async def _one(self, index: int, copy: "_Copy", scope: dict, receive, send) -> None:
        at = _dt.datetime.now(_dt.timezone.utc)
        started = time.perf_counter()
        limits = self.options.limits
        method = scope["method"]
        target, headers = self._request_line(scope)
        framed = _header(headers, b"transfer-encoding") is not None \
            or _header(headers, b"content-length") not in (None, b"0")
        copy.request_complete = not framed
        kept = copy.request

        def recorded() -> RecordedRequest:
            return RecordedRequest(method, _text(target), tuple((_text(n), _text(v)) for n, v in headers),
                                   bytes(kept), at, self.upstream.origin)

        async def pieces() -> AsyncIterator[bytes]:
            """The body as it goes upstream (a chunked one in its framing as it came); its data kept for the judge."""
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _ClientGone()
                piece = message.get("body", b"")
                if piece:
                    copy.request_size += len(piece)
                    copy.keep(kept, piece)
                wire = message.get("wire", piece)
                if wire:
                    yield wire
                if not message.get("more_body", False):
                    copy.request_complete = True
                    return

        body: AsyncIterator[bytes] | None = pieces() if framed else None
        if self.options.enforce and self.ask is not None:
            if body is not None:   # the whole body first: the judge reads it (a body over the cap is not enforced)
                held = []
                try:
                    async for piece in body:
                        held.append(piece)
                        if copy.request_over or copy.dropped:
                            break
                except _ClientGone:
                    holder = scope.get("extensions", {}).get(CONNECTION)
                    if getattr(holder, "refusal", None) is not None:
                        await self._client_gone(index, holder, recorded, started, copy)
                    return
                body = _replay(held, body if copy.request_over or copy.dropped else None)
            if not (copy.request_over or copy.dropped):
                judgement = await self.ask(recorded())
                refusal = self._enforced(judgement, recorded())
                if refusal is not None:
                    status, answer_headers, answer_body = refusal
                    await self._answer_own(send, status, answer_headers, answer_body)
                    answer = RecordedAnswer(status, tuple((_text(n), _text(v)) for n, v in answer_headers),
                                            answer_body)
                    await self._hand_over(Exchange(index, recorded(), answer, _ms(started), judgement=judgement,
                                                   answered_by="proxy", note="answered by the proxy (--enforce)"),
                                          copy)
                    return
        await self._forward(index, scope, send, method, target, headers, body, recorded, copy, started)

    # ---- to the judge, in the order the requests started
    def _spawn(self, awaitable) -> None:
        task = asyncio.get_running_loop().create_task(awaitable)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self) -> None:
        """Hand the exchanges over in the order their requests started (their index), each as soon as every one
        before it is there: the judge learns the session in the order things happened -- two status reads that
        overlap are judged in the order they were asked, as ``obvalidate traffic`` judges the recording (by
        startedDateTime) -- whatever order their answers end in. One coroutine drains at a time."""
        if self._draining:
            return
        self._draining = True
        try:
            while self._next in self._ready:
                item = self._ready.pop(self._next)
                self._next += 1
                if item is not None:
                    await self.submit(*item)
        finally:
            self._draining = False

    async def _flush_ready(self) -> None:
        """At the end of serving: whatever still waits for an earlier exchange, in order."""
        for index in sorted(self._ready):
            item = self._ready.pop(index)
            if item is not None:
                await self.submit(*item)

    async def _hand_over(self, exchange: Exchange, copy: "_Copy") -> None:
        """The exchange to the judge, with the bytes its copy holds in the backlog; an exchange whose copy the full
        backlog stopped is logged as not judged (its head and status; its bodies not kept)."""
        if copy.dropped:
            exchange.note = (f"not judged: the backlog was full ({self.backlog.limit:,} bytes, --backlog-bytes): its "
                             "bodies were not kept")
            exchange.request_size = copy.request_size
            exchange.request = dataclasses.replace(exchange.request, body=b"")
            if exchange.answer is not None:
                exchange.answer = dataclasses.replace(exchange.answer, body=b"", truncated=True)
        copy.settled = True
        self._ready[exchange.index] = (exchange, copy.handover())
        await self._drain()

    async def _forward(self, index, scope, send, method, target, headers, body, recorded, copy, started) -> None:
        limits = self.options.limits
        loop = asyncio.get_running_loop()
        spent = 0.0   # seconds the upstream took so far (waiting on the client is not counted)

        async def upstream(awaitable):
            nonlocal spent
            began = loop.time()
            try:
                async with asyncio.timeout(max(limits.seconds - spent, 0.001)):
                    return await awaitable
            finally:
                spent += loop.time() - began

        head = request_head(method.encode("ascii"), target, headers)
        holder = scope.get("extensions", {}).get(CONNECTION) or _Unpaired()
        holder.busy = True
        try:
            await self._exchange_upstream(index, holder, send, method, target, head, body, recorded, copy, started,
                                          upstream, spent_of=lambda: spent)
        finally:
            holder.busy = False
            if holder.gone and holder.upstream is not None:
                holder.upstream.close()
                holder.upstream = None

    async def _exchange_upstream(self, index, holder, send, method, target, head, body, recorded, copy, started,
                                 upstream, spent_of) -> None:
        limits = self.options.limits
        try:
            response = await upstream(self._send(holder, head, body, method.encode("ascii")))
        except BaseException as exc:
            if holder.upstream is not None:   # an exchange cut short leaves its connection in no state to be reused
                holder.upstream.close()
                holder.upstream = None
            if isinstance(exc, _ClientGone):
                await self._client_gone(index, holder, recorded, started, copy)
            elif isinstance(exc, TimeoutError) and not copy.request_complete:
                await self._slow_upload(index, send, recorded, started, copy)
            elif isinstance(exc, TimeoutError):
                what = f"got no answer within {limits.seconds:g} s (--request-timeout)"
                await self._failed(index, send, GATEWAY_TIMEOUT, what, recorded, started, TIMED_OUT, copy)
            elif isinstance(exc, UpstreamHeadTooLarge):
                await self._failed(index, send, GATEWAY_ERROR, f"answered a head too large: {exc}", recorded, started,
                                   HEAD_TOO_LARGE, copy)
            elif isinstance(exc, (UpstreamError, OSError)):
                what = f"could not be reached or broke off before answering: {type(exc).__name__}: {exc or 'closed'}"
                if isinstance(exc, UpstreamClosed) and self.upstream.scheme == "https":
                    refused = await asyncio.get_running_loop().run_in_executor(
                        None, tls_refusal, self.upstream.host, self.upstream.port, self.ssl_context)
                    what += f" -- {refused}" if refused else ""
                await self._failed(index, send, GATEWAY_ERROR, what, recorded, started, UNREACHABLE, copy)
            else:
                raise
            return
        own: list[ExchangeFinding] = []
        answer_kept = copy.answer
        complete = False
        try:
            await send({"type": "http.response.start", "status": response.status, "headers": response.headers,
                        "http_version": response.version})
            stream = response.pieces().__aiter__()
            while True:
                if not response.ready():   # the next piece is not there yet: the client gets the head meanwhile
                    _flush_head(holder)
                try:
                    piece, wire = await upstream(stream.__anext__())
                except StopAsyncIteration:
                    break
                if piece:
                    copy.keep(answer_kept, piece)
                await send({"type": "http.response.body", "body": wire, "more_body": True})
            complete = True
        except TimeoutError:
            own.append(ExchangeFinding(
                "server", TIMED_OUT, "error", "Limits", "",
                f"{method} {_text(target)} answered {response.status} but its body was not complete within "
                f"{limits.seconds:g} s (--request-timeout): cut after {len(answer_kept):,}+ bytes in "
                f"{seconds_text(spent_of())}", "a whole answer", "an answer without end"))
        except (UpstreamError, OSError) as exc:
            own.append(ExchangeFinding("server", UNREACHABLE, "error", "Limits", "",
                                       f"{method} {_text(target)}: the upstream broke off its answer "
                                       f"({type(exc).__name__}: {exc or 'closed'})", "a whole answer",
                                       "an answer broken off"))
        finally:
            if not complete and holder.upstream is not None:   # the rest of the answer is not to be read
                holder.upstream.close()
                holder.upstream = None
        over = copy.answer_over
        if over:
            own.append(ExchangeFinding(
                "server", TOO_LARGE, "error", "Limits", "",
                f"{method} {_text(target)} answered {response.status} with a body longer than the "
                f"{limits.max_bytes:,}-byte cap (--max-response-bytes): forwarded whole, judged on its first "
                f"{limits.max_bytes:,} bytes", f"at most {limits.max_bytes:,} bytes", "more"))
        answer_headers = tuple((_text(n), _text(v)) for n, v in response.headers)
        judged_body, truncated = _decoded(bytes(answer_kept), answer_headers, limits.max_bytes)
        answer = RecordedAnswer(response.status, answer_headers, judged_body, truncated or over or not complete)
        exchange = Exchange(index, recorded(), answer, _ms(started), tuple(own))
        if copy.request_over:
            exchange.note = f"the request's body is over the {limits.max_bytes:,}-byte cap: not judged"
        await self._hand_over(exchange, copy)
        if complete:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        # else: returning with the answer unfinished, uvicorn closes the client's connection (the status and headers
        # are gone already: the client learns of the failure as a body cut short, which it is)

    async def _client_gone(self, index, holder, recorded, started, copy) -> None:
        """The request's body ended before it was complete: the client went away, or the proxy refused the rest
        (``holder.refusal``: its 400 logged as the answer, and past a bound, a client ``header-too-large`` finding)."""
        refusal = getattr(holder, "refusal", None)
        if refusal is None:
            await self._hand_over(Exchange(index, recorded(), None, _ms(started), note="the client went away before "
                                           "its request's body was complete"), copy)
            return
        answer, message, over = refusal
        request = recorded()
        own = (ExchangeFinding("client", HEAD_TOO_LARGE, "error", "Limits", "", f"{request.method} {request.target}: "
                               f"{message}", "a request within the proxy's limits", "400 from the proxy"),) if over else ()
        await self._hand_over(Exchange(index, request, answer, _ms(started), own, answered_by="proxy",
                                       note=f"answered by the proxy: {message}"), copy)

    def _enforced(self, judgement: Judgement, request: RecordedRequest):
        """The refusal a conforming bank gives a request with client errors, or None: each error's status and code
        as the validator gives them by the profile, and of several, the one a bank checks first -- the reference
        sandbox's order (a missing signature is 401 SIGNATURE_MISSING before a missing Digest's 400, A8) -- with
        every error of that status in its messages, as the sandbox words them."""
        from conformance.sandbox.app import STATUS_PRIORITY

        errors = [f for f in judgement.findings if f.party == "client" and f.severity == "error" and f.status]
        if not errors or judgement.predicted is None or judgement.predicted[0] < 400:
            return None
        rank = {s: i for i, s in enumerate(STATUS_PRIORITY)}
        errors.sort(key=lambda f: rank.get(f.status, len(rank)))
        status = errors[0].status
        errors = [f for f in errors if f.status == status]
        code = errors[0].code
        operation = None
        if judgement.operation:
            from validator.spec import load_spec

            self.spec = self.spec or load_spec()
            operation = self.spec.operation(judgement.operation)
        messages = [(f.code or "FORMAT_ERROR", _message_path(f.pointer), f.message) for f in errors]
        body = error_body(self.options.profile, status, code or "FORMAT_ERROR", "", messages=messages,
                          operation=operation)
        return status, _json_headers(body, request), body

    async def _slow_upload(self, index, send, recorded, started, copy) -> None:
        """The request's body did not arrive within ``--request-timeout``: the client's doing (the upstream never
        had the whole request to answer) -- 408 with the documented body and a client finding."""
        request = recorded()
        seconds = self.options.limits.seconds
        message = (f"the request's body was not complete within {seconds:g} s (--request-timeout): "
                   f"{copy.request_size:,} bytes arrived; the upstream never got the whole request")
        body = error_body(self.options.profile, REQUEST_TIMEOUT, "FORMAT_ERROR", message)
        headers = _json_headers(body, request, close=True)
        await self._answer_own(send, REQUEST_TIMEOUT, headers, body)
        answer = RecordedAnswer(REQUEST_TIMEOUT, tuple((_text(n), _text(v)) for n, v in headers), body)
        finding = ExchangeFinding("client", TIMED_OUT, "error", "Limits", "", f"{request.method} {request.target}: "
                                  f"{message}", "a whole request", "a request body without end")
        await self._hand_over(Exchange(index, request, answer, _ms(started), (finding,), answered_by="proxy",
                                       note=f"answered by the proxy: {message}"), copy)

    async def _failed(self, index, send, status: int, what: str, recorded, started, rule: str, copy) -> None:
        request = recorded()
        message = f"the upstream {self.upstream.origin} {what}"
        body = error_body(self.options.profile, status, "SYSTEM_ERROR", message)
        headers = _json_headers(body, request)
        await self._answer_own(send, status, headers, body)
        answer = RecordedAnswer(status, tuple((_text(n), _text(v)) for n, v in headers), body)
        section = "Limits" if rule in (TIMED_OUT, HEAD_TOO_LARGE) else "Errors"
        finding = ExchangeFinding("server", rule, "error", section, "", f"{request.method} {request.target}: {message}",
                                  "an answer", f"{status} from the proxy")
        await self._hand_over(Exchange(index, request, answer, _ms(started), (finding,), answered_by="proxy",
                                       note=f"answered by the proxy: {message}"), copy)

    @staticmethod
    async def _answer_own(send, status: int, headers, body: bytes) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _json_headers(body: bytes, request: RecordedRequest, *, close: bool = False) -> list[tuple[bytes, bytes]]:
    headers = [(b"Content-Type", b"application/json"), (b"Content-Length", str(len(body)).encode("ascii"))]
    if close:   # the connection's state is unknown (a request cut short): the client is told it ends here
        headers.append((b"Connection", b"close"))
    request_id = request.header("x-request-id")
    if request_id and request_id.isascii() and request_id.isprintable():
        headers.append((b"X-Request-ID", request_id.encode("ascii")))
    return headers


def _refusal(profile: Profile, status: int, code: str, message: str) -> tuple[list[tuple[bytes, bytes]], bytes, bytes]:
    """The proxy's own refusal, ending the connection: its header lines, its documented body, and its bytes."""
    body = error_body(profile, status, code, message)
    headers = [(b"Content-Type", b"application/json"), (b"Content-Length", str(len(body)).encode("ascii")),
               (b"Connection", b"close")]
    return headers, body, b"".join((_status_line(status), *header_lines(headers), b"\r\n", body))


def _message_path(pointer: str) -> str | None:
    """A finding's pointer as a tppMessage path (as the sandbox writes it): body pointers relative to the body."""
    if pointer.startswith("/body"):
        return pointer[len("/body"):] or None
    return pointer or None


async def _replay(held: list[bytes], rest: AsyncIterator[bytes] | None) -> AsyncIterator[bytes]:
    for piece in held:
        yield piece
    if rest is not None:
        async for piece in rest:
            yield piece


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _decoded(body: bytes, headers, cap: int) -> tuple[bytes, bool]:
    """The body the judge reads: a gzip or deflate answer inflated (at most ``cap`` bytes; more is truncated)."""
    coding = (next((v for n, v in headers if n.lower() == "content-encoding"), "") or "").strip().lower()
    if coding not in _INFLATED or not body:
        return body, False
    try:
        inflate = zlib.decompressobj(_INFLATED[coding])
        out = inflate.decompress(body, cap + 1)
    except zlib.error:
        return body, False   # not what it says it is: the judge reads the bytes as they are
    return (out[:cap], True) if len(out) > cap or inflate.unconsumed_tail else (out, False)
