"""A misbehaving HTTP/1.1 target for the tests: what a buggy or hostile implementation under test can answer.

:class:`MisbehavingTarget` is a :class:`gate_helpers.LoopbackServer` (asyncio, loopback, a thread). It parses every
request it gets (request line, headers, a body by ``Content-Length`` or ``Transfer-Encoding: chunked``), records it
in ``target.requests`` -- so a test can assert what was sent and what was not (the ``Host`` included) -- and answers
through a *behaviour*: a plain ``async def behaviour(request, writer)`` given the parsed :class:`Request` and the
connection's :class:`asyncio.StreamWriter`, writing raw bytes (anything: a malformed status line, a body that never
ends). A behaviour is passed in, so a test module writes its own without touching this one::

    from misbehaving_target import MisbehavingTarget, huge_body, rewrite, send

    async def teapot(request, writer):
        await send(writer, b"HTTP/1.1 418 I'm a teapot\\r\\nContent-Length: 0\\r\\n\\r\\n")

    with MisbehavingTarget(teapot) as target:          # started; stopped (every connection cancelled) on exit
        ... run the gate at target.url ...
    assert [r.path for r in target.requests] == [...]

With ``upstream`` (a base URL: ``conformance.gate.target.ReferenceServer().start().url`` in-process, or
``conformance.server_process.SandboxProcess(db).url`` as a process) a behaviour may ``await request.forward()`` to
get the upstream's :class:`Answer` for the same request (the ``Host`` kept, so the sandbox's absolute links such as
``_links.scaRedirect`` point back at this target), edit it, and send it with :meth:`Answer.to_bytes`. Without a
behaviour, a target with an upstream forwards everything unchanged (a transparent proxy that records).

Ready behaviours (each a factory returning the behaviour):

- :func:`huge_body` -- a valid JSON body of ``size`` bytes (default 500 MB; also the "50 MB JSON string"), its
  ``Content-Length`` announced (or, ``announced=False``, sent chunked), streamed in 64 KiB pieces: never held in
  memory by this server.
- :func:`endless_chunked` -- ``Transfer-Encoding: chunked`` pieces until the client goes away.
- :func:`slow_body` -- a ``Content-Length`` body sent one byte per ``interval`` seconds (default 1 byte/s).
- :func:`endless_continue` -- ``100 Continue`` interim answers, one after another, never a final answer.
- :func:`fixed` -- one fixed answer (status, headers, body).
- :func:`rewrite` -- forward to the upstream, let ``edit(request, answer)`` change the :class:`Answer` (its body
  replaced, headers changed, ``_links`` edited through :meth:`Answer.json` / :meth:`Answer.set_json`), send it.
- :func:`when` -- ``when(predicate, then, otherwise)``: misbehave on some requests only (e.g. not on the
  reachability probe, ``GET /``), forward the rest.

Each behaviour writing through :func:`send` counts what it wrote in ``target.sent_bytes`` (streamed behaviours: the
bytes the client took before it went away). Every wait of the server is bounded by the client: a behaviour that
never ends stops when the client closes the connection, or when the target is stopped.
"""
from __future__ import annotations

import asyncio
import json as jsonlib
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from gate_helpers import LoopbackServer

Behaviour = Callable[["Request", asyncio.StreamWriter], Awaitable[None]]
PIECE = 64 * 1024
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
              "proxy-connection"}


@dataclass
class Answer:
    """One HTTP answer: what :meth:`Request.forward` got from the upstream (body decoded of any content encoding),
    or one a test builds; :meth:`to_bytes` is it on the wire with a correct ``Content-Length``."""
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    reason: str = ""

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def set_header(self, name: str, value: str | None) -> None:
        """Replace every ``name`` header by one with ``value`` (none when ``value`` is None)."""
        self.headers = [(k, v) for k, v in self.headers if k.lower() != name.lower()]
        if value is not None:
            self.headers.append((name, value))

    def json(self) -> Any:
        return jsonlib.loads(self.body)

    def set_json(self, value: Any) -> None:
        self.body = jsonlib.dumps(value).encode()
        self.set_header("Content-Type", "application/json")

    def to_bytes(self) -> bytes:
        head = [f"HTTP/1.1 {self.status} {self.reason or 'Answer'}"]
        head += [f"{k}: {v}" for k, v in self.headers if k.lower() not in HOP_BY_HOP]
        head.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + self.body


@dataclass
class Request:
    """One request as the target received it: ``target`` the request-target as sent (path and query)."""
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    server: "MisbehavingTarget" = field(repr=False)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @property
    def host(self) -> str | None:
        return self.header("Host")

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    async def forward(self) -> Answer:
        """The upstream's answer to this same request (its method, target, headers -- ``Host`` included -- and body)."""
        return await self.server.forward(self)


class MisbehavingTarget(LoopbackServer):
    """A loopback HTTP/1.1 server answering each request through ``behaviour`` (see the module's docstring); with no
    behaviour, forwarding to ``upstream``. Keep-alive: after a behaviour returns, the next request on the connection
    is read, unless the behaviour closed it."""

    def __init__(self, behaviour: Behaviour | None = None, *, upstream: str | None = None) -> None:
        super().__init__()
        if behaviour is None and upstream is None:
            raise ValueError("a behaviour, an upstream, or both")
        self.behaviour = behaviour or forward
        self.upstream = upstream.rstrip("/") if upstream else None
        self.requests: list[Request] = []
        self.connections = 0
        self.sent_bytes = 0
        self._tasks: set[asyncio.Task] = set()
        self._client = None

    def __enter__(self) -> "MisbehavingTarget":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Cancel every open connection's behaviour (an endless one included), close the upstream client, stop."""
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(10)
        super().stop()

    async def _shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        self.connections += 1
        writer.misbehaving_target = self  # what send() counts the bytes written for
        try:
            while not writer.is_closing():
                request = await self._read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                await self.behaviour(request, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError, ValueError):
            pass  # the client went away, or sent what this server does not parse: the connection ends
        except asyncio.CancelledError:
            pass  # stopped (an endless behaviour): ends quietly, as asyncio's stream callback reads the task's end
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None  # closed between requests
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = [(name.strip(), value.strip()) for name, value in
                   (line.split(":", 1) for line in lines[1:] if line)]
        request = Request(method, target, version, headers, b"", self)
        if (request.header("Transfer-Encoding") or "").lower() == "chunked":
            body = bytearray()
            while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                body += await reader.readexactly(size)
                await reader.readexactly(2)
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # trailers
            request.body = bytes(body)
        else:
            request.body = await reader.readexactly(int(request.header("Content-Length") or 0))
        return request

    async def forward(self, request: Request) -> Answer:
        if self.upstream is None:
            raise RuntimeError("this target has no upstream to forward to")
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=30, follow_redirects=False, trust_env=False)
        headers = [(k, v) for k, v in request.headers if k.lower() not in HOP_BY_HOP]
        answer = await self._client.request(request.method, self.upstream + request.target, headers=headers,
                                            content=request.body)
        headers = [(k, v) for k, v in answer.headers.multi_items() if k.lower() != "content-encoding"]  # decoded
        return Answer(answer.status_code, headers, answer.content, answer.reason_phrase)


async def send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` and wait until the client took it (backpressure: a client that stops reading stops us)."""
    writer.write(data)
    await writer.drain()
    server = getattr(writer, "misbehaving_target", None)
    if server is not None:
        server.sent_bytes += len(data)


async def forward(request: Request, writer: asyncio.StreamWriter) -> None:
    """The upstream's answer, unchanged (the default behaviour of a target with an upstream)."""
    await send(writer, (await request.forward()).to_bytes())


def _head(status: str, headers: list[tuple[str, str]]) -> bytes:
    return (f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode("latin-1")


def fixed(status: int = 200, body: bytes = b"", headers: list[tuple[str, str]] | None = None,
          reason: str = "OK") -> Behaviour:
    """The same answer to every request."""
    data = Answer(status, headers if headers is not None else [("Content-Type", "application/json")], body,
                  reason).to_bytes()

    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        await send(writer, data)
    return behaviour


def huge_body(size: int = 500 * 1000 * 1000, status: int = 200, *, announced: bool = True) -> Behaviour:
    """A 200 with a valid JSON body of exactly ``size`` bytes, ``{"padding":"aaaa…"}``, streamed: the 500 MB answer,
    or (smaller) the 50 MB JSON string. ``announced``: its size in ``Content-Length``; else sent chunked (a client
    learns the size only by reading)."""
    prefix, suffix = b'{"padding":"', b'"}'
    if size < len(prefix) + len(suffix):
        raise ValueError(f"a JSON body of this shape has at least {len(prefix) + len(suffix)} bytes")
    piece = b"a" * PIECE

    def framed(data: bytes) -> bytes:
        return data if announced else f"{len(data):x}\r\n".encode() + data + b"\r\n"

    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        framing = ("Content-Length", str(size)) if announced else ("Transfer-Encoding", "chunked")
        await send(writer, _head(f"{status} Huge", [("Content-Type", "application/json"), framing]) + framed(prefix))
        left = size - len(prefix) - len(suffix)
        while left > 0:
            await send(writer, framed(piece[:left]))
            left -= min(left, PIECE)
        await send(writer, framed(suffix) + (b"" if announced else b"0\r\n\r\n"))
    return behaviour


def endless_chunked(status: int = 200) -> Behaviour:
    """A 200 with ``Transfer-Encoding: chunked`` pieces of 64 KiB that never end (until the client goes away)."""
    chunk = f"{PIECE:x}\r\n".encode() + b"a" * PIECE + b"\r\n"

    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        await send(writer, _head(f"{status} Endless", [("Content-Type", "application/json"),
                                                                         ("Transfer-Encoding", "chunked")]))
        while True:
            await send(writer, chunk)
    return behaviour


def slow_body(length: int = 1000, interval: float = 1.0, status: int = 200) -> Behaviour:
    """A 200 announcing a ``length``-byte body by ``Content-Length`` and sending it one byte each ``interval``
    seconds (1 byte/s by default): every socket read gets a byte well within any per-read timeout."""
    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        await send(writer, _head(f"{status} Slow", [("Content-Type", "application/json"),
                                                                      ("Content-Length", str(length))]))
        for _ in range(length):
            await send(writer, b" ")
            await asyncio.sleep(interval)
    return behaviour


def endless_continue(interval: float = 0.05) -> Behaviour:
    """``HTTP/1.1 100 Continue`` interim answers one each ``interval`` seconds, never a final answer."""
    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        while True:
            await send(writer, b"HTTP/1.1 100 Continue\r\n\r\n")
            await asyncio.sleep(interval)
    return behaviour


def rewrite(edit: Callable[[Request, Answer], Answer | None]) -> Behaviour:
    """Forward to the upstream, let ``edit(request, answer)`` change the answer in place (or return another), send
    it with a recomputed ``Content-Length``. E.g. every ``_links.scaRedirect`` sent elsewhere::

        def elsewhere(request, answer):
            if b"scaRedirect" in answer.body:
                data = answer.json()
                data["_links"]["scaRedirect"]["href"] = "http://169.254.169.254/latest/meta-data/"
                answer.set_json(data)

        MisbehavingTarget(rewrite(elsewhere), upstream=reference.url)
    """
    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        answer = await request.forward()
        answer = edit(request, answer) or answer
        await send(writer, answer.to_bytes())
    return behaviour


def when(predicate: Callable[[Request], bool], then: Behaviour, otherwise: Behaviour = forward) -> Behaviour:
    """``then`` for the requests ``predicate`` accepts, ``otherwise`` (default: forward to the upstream) for others."""
    async def behaviour(request: Request, writer: asyncio.StreamWriter) -> None:
        await (then if predicate(request) else otherwise)(request, writer)
    return behaviour
