"""What the conformance gate's tests share: a gate run against a server of the test, the findings as readable text
for an assertion's message, the reference sandbox behind an ASGI layer answering some requests itself (another web
stack, a gateway), and an asyncio loopback server in a thread (a proxy or a hostile target)."""
from __future__ import annotations

import asyncio
import threading

import uvicorn

from conformance.gate.model import SUITES
from conformance.gate.runner import RunOptions, run
from conformance.gate.target import ReferenceServer


def gate_run(server, *, suites=SUITES, checks=(), seed=0, identities=None, max_examples=1):
    """The gate against a started server of the test (stopped afterwards), in this process."""
    try:
        return run(RunOptions(server.url, suites, identities=identities, seed=seed, max_examples=max_examples,
                              checks=checks))
    finally:
        server.stop()


def describe(result) -> str:
    return "\n".join(f"{f.check} [{f.operation}] {f.rule}: {f.message} (expected {f.expected}, actual {f.actual})"
                     for f in result.findings) or "(no findings)"


class Layer:
    """An ASGI layer in front of the sandbox: ``answer(method, path, headers)`` returns (status, content type, body,
    extra headers) to answer itself, or None to pass the request on."""

    def __init__(self, app, answer) -> None:
        self.app, self.answer = app, answer

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            answered = self.answer(scope["method"], scope["path"], headers)
            if answered is not None:
                status, media, body, extra = answered
                await send({"type": "http.response.start", "status": status, "headers": [
                    (b"content-type", media.encode()), (b"content-length", str(len(body)).encode()),
                    *((k.encode(), v.encode()) for k, v in extra.items())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve(answer=None, faults=(), **options) -> ReferenceServer:
    """The reference sandbox (``options`` as :class:`ReferenceServer`'s), behind a :class:`Layer` with ``answer``,
    started."""
    server = ReferenceServer(faults=faults, **options)
    if answer is not None:
        server.server = uvicorn.Server(uvicorn.Config(Layer(server.app, answer), host="127.0.0.1", port=server.port,
                                                      log_level="error", access_log=False, lifespan="off"))
        server.thread = threading.Thread(target=server.server.run, daemon=True)
    return server.start()


class LoopbackServer:
    """An asyncio server on a free loopback port, run in a thread; subclasses answer in ``_connection``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=type(self).__name__, daemon=True)
        self.port = 0

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def start(self):
        self._thread.start()
        assert self._ready.wait(10), f"{type(self).__name__} did not start"
        return self

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy one direction of a proxied connection until it closes."""
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (ConnectionError, OSError):
        pass
