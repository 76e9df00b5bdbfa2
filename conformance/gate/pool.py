"""One bounded pool of keep-alive connections per run, shared by every client of the run.

A target has a connection limit (100 on a common WSGI server, fewer behind a gateway). A run whose clients each keep
their own connections open holds dozens at once and exhausts it: the target refuses the next connection and the run
ends "the target stopped answering". Every client of a run therefore sends through one httpx connection pool of at
most ``max_connections`` connections (kept alive between requests; a request waits for a free connection rather than
opening another): the signed clients of the checks (:meth:`ConnectionPool.client`, whose ``close`` leaves the pool
open), the SCA page's browser, and Schemathesis' ``requests`` calls (:meth:`ConnectionPool.requests_session`, a
``requests`` adapter sending through the same pool). The run closes the pool at its end.
"""
from __future__ import annotations

import http.cookiejar
import io
import threading
from typing import Any

import httpx
import requests
import requests.adapters
import requests.exceptions
from urllib3 import HTTPResponse
from urllib3._collections import HTTPHeaderDict

DEFAULT_MAX_CONNECTIONS = 8
TIMEOUT = 30.0


class _Borrowed(httpx.BaseTransport):
    """The pool as one client's transport: closing the client leaves the pool (the other clients') open."""

    def __init__(self, pool: httpx.HTTPTransport) -> None:
        self.pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.pool.handle_request(request)

    def close(self) -> None:
        pass


class PooledAdapter(requests.adapters.HTTPAdapter):
    """A ``requests`` adapter that sends through the run's httpx pool, the request's bytes as ``requests`` prepared
    them (no header added but Host and Content-Length, which ``requests`` sends too)."""

    def __init__(self, pool: httpx.HTTPTransport) -> None:
        super().__init__(pool_connections=1, pool_maxsize=1)  # its own urllib3 pool is never used
        self.pool = pool

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        body = request.body
        content = body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")
        # Header values as http.client sends them (Latin-1); a value it cannot encode cannot be sent either.
        headers = [(name.encode("latin-1"), value.encode("latin-1") if isinstance(value, str) else bytes(value))
                   for name, value in request.headers.items() if name.lower() != "host"]
        outgoing = httpx.Request(request.method or "GET", request.url or "", headers=headers, content=content,
                                 extensions={"timeout": _timeout(timeout).as_dict()})
        try:
            answer = self.pool.handle_request(outgoing)
            try:
                raw = b"".join(answer.iter_raw())
            finally:
                answer.close()
        except httpx.ConnectTimeout as exc:
            raise requests.exceptions.ConnectTimeout(exc, request=request) from exc
        except httpx.TimeoutException as exc:
            raise requests.exceptions.ReadTimeout(exc, request=request) from exc
        except httpx.LocalProtocolError as exc:  # h11 refuses to write the request as given (a control character)
            raise requests.exceptions.InvalidHeader(exc, request=request) from exc
        except httpx.HTTPError as exc:
            raise requests.exceptions.ConnectionError(exc, request=request) from exc
        fields = HTTPHeaderDict()
        for name, value in answer.headers.raw:
            fields.add(name.decode("latin-1"), value.decode("latin-1"))
        version = 10 if answer.http_version == "HTTP/1.0" else 11
        response = HTTPResponse(io.BytesIO(raw), headers=fields, status=answer.status_code, version=version,
                                version_string=answer.http_version, reason=answer.reason_phrase,
                                preload_content=False, decode_content=True, request_method=request.method,
                                request_url=request.url)
        return self.build_response(request, response)


def _timeout(value: Any) -> httpx.Timeout:
    if isinstance(value, (int, float)):
        return httpx.Timeout(float(value))
    if isinstance(value, tuple) and len(value) == 2:
        return httpx.Timeout(value[1], connect=value[0])
    return httpx.Timeout(TIMEOUT)


class ConnectionPool:
    """At most ``max_connections`` connections to the target open at once, kept alive, for every client of a run."""

    def __init__(self, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
        if max_connections < 1:
            raise ValueError("a pool needs at least one connection")
        self.max_connections = max_connections
        self.transport = httpx.HTTPTransport(limits=httpx.Limits(max_connections=max_connections,
                                                                 max_keepalive_connections=max_connections))
        self._lock = threading.Lock()
        self._requests: requests.Session | None = None

    def client(self, *, timeout: float = TIMEOUT) -> httpx.Client:
        """An httpx client over the pool (its own cookies; no redirects followed)."""
        return httpx.Client(transport=_Borrowed(self.transport), timeout=timeout, follow_redirects=False)

    def requests_session(self) -> requests.Session:
        """The ``requests`` session over the pool, for Schemathesis' calls: no cookies kept (each generated request
        stands alone, as with Schemathesis' own session per call), no proxy settings from the environment."""
        with self._lock:
            if self._requests is None:
                session = requests.Session()
                session.trust_env = False
                session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
                adapter = PooledAdapter(self.transport)
                session.mount("http://", adapter)
                session.mount("https://", adapter)
                self._requests = session
            return self._requests

    def close(self) -> None:
        with self._lock:
            if self._requests is not None:
                self._requests.close()
                self._requests = None
        self.transport.close()
