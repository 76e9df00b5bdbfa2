"""The implementation under test: a base URL, or the bundled reference sandbox started on a free loopback port with
a fresh in-memory database (the fixed test data of A32), over HTTP or, for the TLS tests, HTTPS."""
from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Callable, Iterable, Iterator

import httpx

from .pool import DEFAULT_MAX_BYTES, ConnectionPool, GatewayOptions, Unanswered
from .tls import TlsOptions, explain as explain_tls, explain_answer

REFERENCE = "reference"
START_TIMEOUT = 20.0


class ReferenceServer:
    """The reference sandbox served by uvicorn on a thread (loopback, a free port); with ``tls`` (a
    :class:`conformance.sandbox.serving.ServerTls`) over HTTPS, requiring a client certificate when it names a client
    CA; with ``forwarded_allow_ips``, behind a proxy (:class:`conformance.sandbox.serving.ForwardedHeaders`);
    ``clock`` a :class:`conformance.sandbox.clock.Clock` the caller moves (default: real time)."""

    def __init__(self, *, faults: Iterable[str] = (), profile=None, test_data=None, tls=None,
                 forwarded_allow_ips: str | None = None, clock=None) -> None:
        import uvicorn

        from conformance.sandbox import Sandbox, create_app
        from conformance.sandbox.serving import ForwardedHeaders

        self.sandbox = Sandbox.create(faults=tuple(faults), profile=profile, test_data=test_data, clock=clock)
        self.app = create_app(self.sandbox)
        self.tls = tls
        if tls is not None:
            tls.check()
        served = ForwardedHeaders(self.app, forwarded_allow_ips) if forwarded_allow_ips else self.app
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(served, host="127.0.0.1", port=self.port, log_level="error",
                                                    access_log=False, lifespan="off", proxy_headers=False,
                                                    **(tls.uvicorn_options() if tls is not None else {})))
        self.thread = threading.Thread(target=self.server.run, name="obvalidate-reference", daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls is not None else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> "ReferenceServer":
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the reference sandbox did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sandbox.store.close()


@contextlib.contextmanager
def serving(target: str, *, faults: Iterable[str] = (), profile=None, test_data=None) -> Iterator[str]:
    """The base URL of ``target``: the reference sandbox started for the run (with ``test_data``, a
    :class:`conformance.sandbox.testdata.DataSet`, instead of the fixed set), or the URL given."""
    if target != REFERENCE:
        yield target.rstrip("/")
        return
    server = ReferenceServer(faults=faults, profile=profile, test_data=test_data).start()
    try:
        yield server.url
    finally:
        server.stop()


def reachable(base_url: str, timeout: float = 10.0, tls: TlsOptions | None = None,
              headers: tuple[tuple[str, str], ...] = (), max_response_bytes: int = DEFAULT_MAX_BYTES) -> str | None:
    """None when something answers HTTP at ``base_url`` (with the run's TLS and gateway ``headers``, through the
    environment's proxy as the run's requests go), else why not: a TLS failure in one sentence starting "TLS:".
    The probe's answer is read as every answer is (pool.py): ``timeout`` in all, at most ``max_response_bytes``;
    an answer over them is still an answer (the checks report it)."""
    pool = ConnectionPool(1, GatewayOptions(headers, max_response_bytes=max_response_bytes), origin=base_url, tls=tls)
    try:
        with pool.client(timeout=timeout) as client:
            answer = client.get(base_url + "/")
    except httpx.HTTPError as exc:
        return explain_tls(exc, base_url + "/", tls) or f"{base_url} is not reachable: {type(exc).__name__}: {exc}"
    except Unanswered:  # 429 each time, too slow or too large while answering a probe: it answers
        return None
    finally:
        pool.close()
    return explain_answer(answer.status_code, answer.text, tls)


def wait_for(base_url: str, seconds: float, *, interval: float = 0.5,
             problem_of: Callable[[str, float], str | None] | None = None) -> str | None:
    """Poll ``base_url`` until something answers HTTP there: None once it does, else (after ``seconds``) why not.
    ``problem_of`` is how one poll is made (default :func:`reachable`, with what is left of the time as timeout)."""
    problem_of = problem_of or (lambda url, timeout: reachable(url, timeout=timeout))
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        problem = problem_of(base_url, max(0.1, min(left, 5.0)))
        if problem is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            return f"{problem} (waited {seconds:g} s: --wait-for-target)"
        time.sleep(min(interval, left))
