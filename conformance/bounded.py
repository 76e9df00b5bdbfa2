"""Bounded answers: every answer of a target read with a size cap and a total deadline.

An implementation under test may answer a body that never ends, hundreds of megabytes, one byte a second, or
``100 Continue`` interim answers forever. httpx's timeouts are per socket operation (each read may take up to the
timeout, and a trickle of bytes never trips it), and its clients hold a whole body in memory. So every answer the
toolkit reads from a target -- the gate's pool (:mod:`conformance.gate.pool`, and through it Schemathesis' calls, the
SCA page's browser, the reachability probe, the edge-case runs) and :class:`conformance.client.SignedClient`'s own
client (:func:`client`) -- is read by :func:`read_bounded`:

- a **total deadline** per request (``Limits.seconds``): connecting, sending, the status line and headers (interim
  1xx answers included) and the whole body, together. The connections are made through :class:`DeadlineBackend`, an
  httpcore network backend whose every connect, read and write waits at most what is left of the running request's
  deadline (kept per thread: httpx's sync transports do a request's I/O in the thread that sends it);
- a **size cap** on the body (``Limits.max_bytes``): a ``Content-Length`` over it is refused before the body is read;
  otherwise the body is read in pieces and cut when it passes the cap. A gzip or deflate body is also inflated in
  bounded steps: what it would decode to counts against the cap too (a small compressed answer may inflate to
  gigabytes). The connection of a cut answer is closed, never reused.

Over the cap is :class:`AnswerTooLarge`, over time :class:`AnswerTimeout` (an ``httpx.ReadTimeout``, so code that
already takes a timeout takes this one); each says what the target did, measured: the bytes read before the cut and
the seconds.
"""
from __future__ import annotations

import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

# The default cap. The answers of this interface are small: a payment, a status, an authorisation, a page of sandbox
# transactions (a few KB each; the SCA page a few KB of HTML). 4 MiB is hundreds of times a legitimate answer and
# still bounds what one answer costs to decode (its bytes, its text and parsed JSON: about ten times its size) to
# tens of megabytes with every connection of a run reading one at once.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_SECONDS = 30.0
PIECE = 64 * 1024
_INFLATED = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


@dataclass(frozen=True)
class Limits:
    """What one answer may cost: ``max_bytes`` of body (after content decoding), ``seconds`` from sending the request
    to the body's last byte."""
    max_bytes: int = DEFAULT_MAX_BYTES
    seconds: float = DEFAULT_SECONDS

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or not self.seconds > 0:
            raise ValueError("an answer's limits are a positive number of bytes and of seconds")


class Unbounded(httpx.TransportError):
    """An answer that went past its limits: ``what`` the target did (the same words each time it does it) and
    ``message``, that measured (bytes read before the cut, seconds)."""

    def __init__(self, what: str, *, request: httpx.Request, status: int | None, received: int, seconds: float,
                 limits: Limits) -> None:
        self.what = what
        measured = (f"cut after {received:,} bytes read" if received or isinstance(self, AnswerTooLarge)
                    else "nothing received")
        self.message = f"{what}: {measured} in {seconds_text(seconds)}"
        super().__init__(self.message, request=request)
        self.status, self.received, self.seconds, self.limits = status, received, seconds, limits


class AnswerTooLarge(Unbounded):
    pass


class AnswerTimeout(Unbounded, httpx.ReadTimeout):
    pass


class _Reading(threading.local):
    """The request this thread is sending: its deadline, the bytes received for it, its first bytes."""
    deadline: float | None = None
    received: int = 0
    first: bytes = b""

    def left(self, timeout: float | None) -> float | None:
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the request's deadline has passed")
        return left if timeout is None else min(timeout, left)


_reading = _Reading()


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self.inner.read(max_bytes, _reading.left(timeout))
        if _reading.deadline is not None:
            if len(_reading.first) < 32:
                _reading.first += data[:32 - len(_reading.first)]
            _reading.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _reading.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, _reading.left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync network backend, each operation waiting at most what is left of the thread's deadline."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None) -> None:
        self.inner = inner or httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.inner.connect_tcp(host, port, _reading.left(timeout), local_address,
                                                      socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options=None) -> httpcore.NetworkStream:  # pragma: no cover - not used
        return _DeadlineStream(self.inner.connect_unix_socket(path, _reading.left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def transport(**options: Any) -> httpx.HTTPTransport:
    """An ``httpx.HTTPTransport`` (``options`` as it takes them) whose connections keep the deadline of
    :func:`read_bounded`. httpx builds its httpcore pool itself and takes no network backend, so the pool's is set
    here (tests/test_bounded_answers.py shows it in force)."""
    return _deadlined(httpx.HTTPTransport(**options))


def seconds_text(seconds: float) -> str:
    """Seconds as a person reads them: 1.0 s, 120 ms."""
    return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"


def _target(request: httpx.Request) -> str:
    return f"{request.method} {request.url.raw_path.decode('ascii', 'replace')}"


def read_bounded(inner: httpx.BaseTransport, request: httpx.Request, limits: Limits) -> httpx.Response:
    """``inner``'s answer to ``request``, its body read whole within ``limits`` (``inner`` a :func:`transport`, or
    one sending through one); :class:`AnswerTooLarge` or :class:`AnswerTimeout` otherwise."""
    started = time.monotonic()
    outer = (_reading.deadline, _reading.received, _reading.first)
    _reading.deadline, _reading.received, _reading.first = started + limits.seconds, 0, b""
    status: int | None = None
    try:
        try:
            response = inner.handle_request(request)
            status = response.status_code
            try:
                body = _body(response, request, limits, started)
            finally:
                response.close()
        except httpx.TimeoutException as exc:
            seconds = time.monotonic() - started
            if seconds < limits.seconds and not _reading.received:
                raise   # a timeout of its own (a pool wait, a connect) before the deadline: as it was
            raise AnswerTimeout(_too_slow(request, status, seconds, limits), request=request, status=status,
                                received=_reading.received, seconds=seconds, limits=limits) from exc
    finally:
        _reading.deadline, _reading.received, _reading.first = outer
    return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(body),
                          extensions={k: v for k, v in response.extensions.items() if k != "network_stream"},
                          request=request)


def _too_slow(request: httpx.Request, status: int | None, seconds: float, limits: Limits) -> str:
    received = _reading.received
    if status is not None:
        what = f"answered {status} but its body was not complete within {limits.seconds:g} s"
    elif _reading.first.startswith(b"HTTP/1.1 1") or _reading.first.startswith(b"HTTP/1.0 1"):
        interim = _reading.first.split(b"\r\n")[0].decode("latin-1")
        what = f"got only interim 1xx answers ({interim}), no final answer, within {limits.seconds:g} s"
    elif received:
        what = f"got no complete status line and headers within {limits.seconds:g} s"
    else:
        what = f"got no answer within {limits.seconds:g} s"
    return f"{_target(request)} {what} (--request-timeout)"


def _body(response: httpx.Response, request: httpx.Request, limits: Limits, started: float) -> bytes:
    def too_large(read: int, why: str) -> AnswerTooLarge:
        seconds = time.monotonic() - started
        return AnswerTooLarge(
            f"{_target(request)} answered {response.status_code} with a body {why} (--max-response-bytes)",
            request=request, status=response.status_code, received=read, seconds=seconds, limits=limits)

    announced = response.headers.get("content-length", "")
    bodiless = request.method == "HEAD" or response.status_code in (204, 304)  # its Content-Length is not its body's
    if not bodiless and announced.strip().isdigit() and int(announced) > limits.max_bytes:
        raise too_large(0, f"of {int(announced):,} bytes (its Content-Length), over the {limits.max_bytes:,}-byte "
                           "cap")
    coding = response.headers.get("content-encoding", "").strip().lower()
    inflate = zlib.decompressobj(_INFLATED[coding]) if coding in _INFLATED else None
    inflated = 0
    pieces: list[bytes] = []
    read = 0
    for piece in response.stream:
        read += len(piece)
        if read > limits.max_bytes:
            raise too_large(read, f"longer than the {limits.max_bytes:,}-byte cap")
        pieces.append(piece)
        if inflate is not None:
            try:
                inflated += _inflated_size(inflate, piece, limits.max_bytes - inflated)
            except zlib.error:
                inflate = None   # not what it says it is: httpx's decoding says so when the client reads it
            if inflated > limits.max_bytes:
                raise too_large(read, f"that inflates ({coding}) past the {limits.max_bytes:,}-byte cap")
    return b"".join(pieces)


def _inflated_size(inflate, data: bytes, room: int) -> int:
    """Bytes ``data`` inflates to, counting no further than ``room`` + 1 (never more than a piece held at once)."""
    size = 0
    while data and size <= room:
        size += len(inflate.decompress(data, PIECE))
        data = inflate.unconsumed_tail
    return size


class _Bounding(httpx.BaseTransport):
    """One transport of a client, every answer read with :func:`read_bounded`."""

    def __init__(self, inner: httpx.BaseTransport, limits: Limits) -> None:
        self.inner, self.limits = inner, limits

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return read_bounded(self.inner, request, self.limits)

    def close(self) -> None:
        self.inner.close()


def _deadlined(made: httpx.BaseTransport) -> httpx.BaseTransport:
    pool = getattr(made, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):  # pragma: no cover - an httpx that moved them
        raise RuntimeError("this httpx's transport has no httpcore pool with a _network_backend: bounded answers "
                           "need one")
    pool._network_backend = DeadlineBackend(pool._network_backend)
    return made


def client(limits: Limits = Limits(), **options: Any) -> httpx.Client:
    """An ``httpx.Client`` (``options`` as it takes them, the environment's proxies included) whose every answer is
    read within ``limits``: each of its transports -- direct, and one per proxy the environment names -- bounded
    (a client outside the gate's pool: :class:`conformance.client.SignedClient`'s own). httpx picks the transports
    itself from the environment, so they are wrapped once it has."""
    made = httpx.Client(**options)
    made._transport = _Bounding(_deadlined(made._transport), limits)
    made._mounts = {pattern: None if inner is None else _Bounding(_deadlined(inner), limits)
                    for pattern, inner in made._mounts.items()}
    return made
