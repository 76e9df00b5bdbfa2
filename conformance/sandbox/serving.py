"""How the sandbox is served as a bank serves its API: over HTTPS, optionally requiring a TLS client certificate
from a given CA (the TPP's QWAC, as a PSD2 host requires one), and behind a TLS-terminating proxy whose forwarded
scheme and host its absolute links (the scaRedirect href) use.

uvicorn serves the TLS (:meth:`ServerTls.uvicorn_options`); :class:`ForwardedHeaders` rewrites a request's scheme and
Host from the proxy's headers, for connections from the proxies named only (as uvicorn's ``forwarded_allow_ips``,
whose own middleware reads neither ``X-Forwarded-Host`` nor ``Forwarded``).

A stalled client is bounded (:class:`ConnectionLimits`: header and body deadlines in uvicorn's h11 protocol, a
connection limit), and :class:`AccessLog` writes a line per request for the TPP debugging its own refusals.
"""
from __future__ import annotations

import ipaddress
import re
import ssl
import sys
import time
from dataclasses import dataclass
from typing import Any

HOST = re.compile(r"^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$")
SCHEMES = ("http", "https")


@dataclass(frozen=True)
class ServerTls:
    cert: str                    # the server's certificate (PEM, its chain after it)
    key: str                     # its private key (PEM, unencrypted)
    client_ca: str | None = None  # when given: a client certificate issued by these CAs is required

    def check(self) -> None:
        """ValueError naming the file when the certificate, key or CA file cannot be used (before serving)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot use the certificate {self.cert} with the key {self.key}: "
                             f"{getattr(exc, 'strerror', None) or getattr(exc, 'reason', None) or exc}") from None
        if self.client_ca:
            try:
                context.load_verify_locations(self.client_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(f"cannot use the client CA file {self.client_ca}: "
                                 f"{getattr(exc, 'strerror', None) or getattr(exc, 'reason', None) or exc}") from None

    def uvicorn_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"ssl_certfile": self.cert, "ssl_keyfile": self.key}
        if self.client_ca:
            options.update(ssl_ca_certs=self.client_ca, ssl_cert_reqs=ssl.CERT_REQUIRED)
        return options


class ForwardedHeaders:
    """ASGI middleware: a request arriving from one of ``trusted`` (comma-separated addresses or networks, ``*`` for
    any) gets the scheme and host its proxy forwarded: ``Forwarded`` (RFC 7239: ``proto=``, ``host=``) or else
    ``X-Forwarded-Proto`` and ``X-Forwarded-Host``. Of a list the last value counts (the one the trusted proxy
    added); a value that is no scheme or host is ignored. A request from anywhere else is left as it came."""

    def __init__(self, app, trusted: str) -> None:
        self.app = app
        names = [n.strip() for n in trusted.split(",") if n.strip()]
        self.anyone = "*" in names
        try:
            self.networks = [ipaddress.ip_network(n, strict=False) for n in names if n != "*"]
        except ValueError as exc:
            raise ValueError(f"--forwarded-allow-ips: {exc}") from None

    def trusts(self, client) -> bool:
        if self.anyone:
            return True
        try:
            address = ipaddress.ip_address(client[0]) if client else None
        except ValueError:
            return False
        return address is not None and any(address in network for network in self.networks)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.trusts(scope.get("client")):
            scope = forwarded(scope)
        await self.app(scope, receive, send)


def forwarded(scope: dict) -> dict:
    """``scope`` with the forwarded scheme and host (see :class:`ForwardedHeaders`)."""
    headers = [(name.lower(), value.decode("latin-1")) for name, value in scope["headers"]]
    proto = host = None
    elements = [e for name, value in headers if name == b"forwarded" for e in value.split(",") if e.strip()]
    if elements:
        pairs = dict(_pair(p) for p in elements[-1].split(";") if "=" in p)
        proto, host = pairs.get("proto"), pairs.get("host")
    else:
        proto = _last(headers, b"x-forwarded-proto")
        host = _last(headers, b"x-forwarded-host")
    scope = dict(scope)
    if proto and proto.lower() in SCHEMES:
        scope["scheme"] = proto.lower()
    if host and HOST.match(host):
        scope["headers"] = [(n, v) for n, v in scope["headers"] if n.lower() != b"host"] + \
                           [(b"host", host.encode("latin-1"))]
    return scope


def _pair(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    return name.strip().lower(), value.strip().strip('"')


def _last(headers, name: bytes) -> str | None:
    values = [v.strip() for n, value in headers if n == name for v in value.split(",") if v.strip()]
    return values[-1] if values else None


# ---------------------------------------------------------------- bounds on connections (issue: stalled clients)
@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take and how many connections are served at once.

    ``header_timeout``: a request line and headers must arrive within this many seconds of the connection opening
    (or of the previous answer on a kept-alive connection); ``body_timeout``: a request's body within this many
    seconds of its headers; ``max_connections``: open connections beyond which a request is answered 503 (uvicorn's
    ``limit_concurrency``). Without them a client that sends a byte a minute holds its connection for ever, and the
    descriptor limit is the only bound."""

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 256

    def uvicorn_options(self) -> dict[str, Any]:
        return {"http": bounded_protocol(self), "limit_concurrency": self.max_connections}


def bounded_protocol(limits: ConnectionLimits) -> type:
    """uvicorn's h11 protocol with the header and body deadlines of ``limits`` (uvicorn itself bounds only the idle
    time between requests, ``timeout_keep_alive``: a request that trickles in is never timed out)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    late_headers = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: %d\r\n\r\n%s")

    class BoundedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline = None      # the running deadline's timer
            self._waiting = "headers"  # what the connection waits for: headers, body or the application
            self._partial = False      # bytes of a next request arrived (then a late one is told 408)

        def _arm(self, seconds: float, handler) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(seconds, handler)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm(limits.header_timeout, self._headers_late)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._waiting == "headers" and data:
                self._partial = True
            super().data_received(data)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            cycle = self.cycle
            if cycle is not None and cycle is not before:  # a request line and headers arrived
                self._partial = False
                self._waiting = "body" if cycle.more_body else "application"
                if cycle.more_body:
                    self._arm(limits.body_timeout, self._body_late)
                else:
                    self._disarm()
            elif self._waiting == "body" and cycle is not None and not cycle.more_body:
                self._waiting = "application"
                self._disarm()

        def on_response_complete(self) -> None:
            self._waiting = "headers"
            if not self.transport.is_closing():
                self._arm(limits.header_timeout, self._headers_late)
            super().on_response_complete()

        def _headers_late(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self._partial:  # a request that began and did not finish: say why it is closed
                text = f"the request headers did not arrive within {limits.header_timeout:g} s".encode()
                self.transport.write(late_headers % (len(text), text))
            self.transport.close()  # an idle kept-alive connection is closed silently, as uvicorn's keep-alive

        def _body_late(self) -> None:
            self._deadline = None
            cycle = self.cycle
            if self.transport.is_closing() or cycle is None or not cycle.more_body:
                return
            if not cycle.response_started:
                text = f"the request body did not arrive within {limits.body_timeout:g} s".encode()
                try:
                    for event in (h11.Response(status_code=408, reason=b"Request Timeout", headers=[
                            (b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
                            (b"content-length", str(len(text)).encode())]), h11.Data(data=text), h11.EndOfMessage()):
                        self.transport.write(self.conn.send(event))
                except h11.LocalProtocolError:
                    pass  # the connection's state allows no answer: it is closed all the same
            cycle.disconnected = True  # the application reading the body is told the client is gone
            cycle.message_event.set()
            self.transport.close()

    return BoundedH11Protocol


class Disconnected:
    """ASGI middleware: a request whose client went away (or whose body timed out, :func:`bounded_protocol`) ends
    quietly instead of as uvicorn's "Exception in ASGI application" traceback."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        from starlette.requests import ClientDisconnect

        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            pass


# ---------------------------------------------------------------- access log
def _printable(text: str) -> str:
    """Target text is data: control characters (ESC, CR, ...) are written as escapes, never sent to the terminal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


ERROR_BODY_BYTES = 64 * 1024  # an error answer's body read for its code, at most


class AccessLog:
    """ASGI middleware: one line per request, when its answer is complete — method, path, status, the interface's
    message code of an error answer (its first tppMessage's, or the bulk error body's ``code``), X-Request-ID and
    the milliseconds taken. For the TPP debugging its own 400 on the server side."""

    def __init__(self, app, write=None) -> None:
        self.app = app
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answer = {"status": None, "json": False, "gone": False}
        body = bytearray()

        async def receiving():
            message = await receive()
            if message["type"] == "http.disconnect" and answer["status"] is None:
                answer["gone"] = True  # whatever the application answers now reaches nobody
            return message

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                content_type = dict(message.get("headers") or ()).get(b"content-type", b"")
                answer["json"] = b"json" in content_type.lower()
            elif message["type"] == "http.response.body" and answer["json"] and (answer["status"] or 0) >= 400 \
                    and len(body) < ERROR_BODY_BYTES:
                body.extend(message.get("body", b"")[:ERROR_BODY_BYTES - len(body)])
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            status = None if answer["gone"] else answer["status"]
            self.write(self.line(scope, status, bytes(body), time.perf_counter() - started))

    @staticmethod
    def line(scope, status: int | None, body: bytes, seconds: float) -> str:
        headers = {name.lower(): value for name, value in scope.get("headers") or ()}
        request_id = headers.get(b"x-request-id", b"-").decode("latin-1") or "-"
        path = (scope.get("raw_path") or scope.get("path", "").encode("utf-8")).decode("latin-1")
        return (f"{_printable(scope.get('method', ''))} {_printable(path)} {status or 'disconnected'} "
                f"{_printable(error_code(body)) or '-'} X-Request-ID={_printable(request_id[:128])} "
                f"{seconds * 1000:.0f} ms")


def error_code(body: bytes) -> str:
    """The message code of an error body (tppMessages[0].code, else the bulk error body's code), else ''."""
    import json

    try:
        value = json.loads(body) if body else None
    except ValueError:
        return ""
    if not isinstance(value, dict):
        return ""
    messages = value.get("tppMessages")
    first = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else value
    code = first.get("code")
    return code if isinstance(code, str) else ""
