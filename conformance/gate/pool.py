"""One bounded pool of keep-alive connections per run, shared by every client of the run.

A target has a connection limit (100 on a common WSGI server, fewer behind a gateway). A run whose clients each keep
their own connections open holds dozens at once and exhausts it: the target refuses the next connection and the run
ends "the target stopped answering". Every client of a run therefore sends through one httpx connection pool of at
most ``max_connections`` connections (kept alive between requests; a request waits for a free connection rather than
opening another): the signed clients of the checks (:meth:`ConnectionPool.client`, whose ``close`` leaves the pool
open), the SCA page's browser, and Schemathesis' ``requests`` calls (:meth:`ConnectionPool.requests_session`, a
``requests`` adapter sending through the same pool). The run closes the pool at its end.

A real environment sits behind a gateway, and the pool is where the gate meets it (:class:`Gateway`): the run's
gateway headers (``-H``) go on every request to the target's origin, the run's rate limit spaces every request of
every client, a 429 is waited for (its Retry-After) and sent again, and an answer that does not come within the
request timeout is :class:`RequestTimeout` -- unless the target does not answer a cheap probe either, when it is the
transport error it was (the target stopped answering).

Every answer is read there too, bounded (:mod:`conformance.bounded`): within the request timeout in all (connecting,
interim 1xx answers, headers and the whole body) and within ``--max-response-bytes``. An answer over time is
:class:`RequestTimeout`, one over the size :class:`AnswerTooLarge`, each measured (bytes read, seconds): a finding of
its own, and the run goes on.

Every connection of the pool has the run's TLS (:mod:`.tls`: the client certificate, the CAs trusted) and goes
through the proxy the environment names for its URL (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, bypassed for the
hosts of ``NO_PROXY``; read as ``requests`` and curl read them), a CONNECT tunnel for https.
"""
from __future__ import annotations

import email.utils
import http.cookiejar
import io
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import requests
import requests.adapters
import requests.exceptions
import requests.utils
from urllib3 import HTTPResponse
from urllib3._collections import HTTPHeaderDict

from conformance.bounded import DEFAULT_MAX_BYTES, AnswerTimeout, Limits, Unbounded, read_bounded, seconds_text
from conformance.bounded import AnswerTooLarge as _Oversized
from conformance.bounded import transport as bounded_transport

from conformance.exchange.origins import Origins
from .tls import TlsOptions

DEFAULT_MAX_CONNECTIONS = 8
TIMEOUT = 30.0
# A 429 is sent again at most this many times, each after its Retry-After (at most MAX_RETRY_AFTER seconds; 1 s when
# it gives none or one that cannot be read).
RETRIES_429 = 3
MAX_RETRY_AFTER = 60.0
DEFAULT_RETRY_AFTER = 1.0
PROBE_TIMEOUT = 5.0
# RFC 9110 section 5.1: a field name is a token.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


def parse_header(text: str) -> tuple[str, str]:
    """A ``Name: value`` header as given to ``-H``; ValueError saying what is wrong with it."""
    if any(c in text for c in "\r\n\0"):
        raise ValueError(f"header {text!r} contains a line break or NUL")
    name, colon, value = text.partition(":")
    if not colon:
        raise ValueError(f"header {text!r} is not 'Name: value' (no colon)")
    if not _TOKEN.match(name):
        raise ValueError(f"header name {name!r} is not an HTTP field name (a token: letters, digits, !#$%&'*+-.^_`|~)")
    value = value.strip(" \t")
    if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in value):
        raise ValueError(f"header {name} has a control character in its value")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"header {name}'s value is not Latin-1 text, which HTTP/1.1 cannot send") from None
    return name, value


class Unanswered(Exception):
    """A request of the run got no answer to judge (it timed out, or the target kept refusing it with 429): the
    check ends, and the run reports it once per operation, as what it is, not as a rule's disagreement."""

    rule = ""

    def __init__(self, method: str, url: str, message: str, actual: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.method, self.url, self.message = method, url, message
        self.actual = actual   # what the target did, measured, when the pool measured it
        self.reason = reason or message   # the same words each time (measurements vary): a not-exercised reason


class RequestTimeout(Unanswered):
    rule = "request-timeout"


class RateLimited(Unanswered):
    rule = "rate-limited"


class AnswerTooLarge(Unanswered):
    rule = "answer-too-large"


def _measured(problem: Unbounded) -> str:
    """What the target did, in a finding's "actual": the status it gave, the bytes read before the cut, the time."""
    if problem.status is None and not problem.received:
        return f"no answer within {problem.limits.seconds:g} s"
    status = f"{problem.status}, " if problem.status is not None else "no final answer, "
    return f"{status}{problem.received:,} bytes read in {seconds_text(problem.seconds)}, then cut"


class RateLimiter:
    """At most ``per_second`` requests a second: each request starts at least 1/``per_second`` after the previous one
    (thread-safe: the run's threads queue for their turn)."""

    def __init__(self, per_second: float) -> None:
        if per_second <= 0:
            raise ValueError("a rate limit is a positive number of requests per second")
        self.per_second = per_second
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            at = max(now, self._next)
            self._next = at + self.interval
        if at > now:
            time.sleep(at - now)


def retry_after(value: str | None, now: float | None = None) -> float:
    """The seconds a 429's Retry-After asks for (delay-seconds or an HTTP-date, RFC 9110 section 10.2.3), within
    0..MAX_RETRY_AFTER; DEFAULT_RETRY_AFTER when absent or unreadable."""
    if not value:
        return DEFAULT_RETRY_AFTER
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return DEFAULT_RETRY_AFTER
    if when is None or when.tzinfo is None:
        return DEFAULT_RETRY_AFTER
    seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


@dataclass(frozen=True)
class GatewayOptions:
    """How the run meets the target's gateway: headers for the target's origin, requests per second (None: no
    limit), the request timeout in seconds (in all, per request), the most bytes an answer's body may have."""

    headers: tuple[tuple[str, str], ...] = ()
    rate_limit: float | None = None
    timeout: float = TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_BYTES
    # Origins besides the target's a request may go to (--allow-origin, origins.py): the pool sends nowhere else.
    allowed_origins: tuple[str, ...] = ()


def _origin(url: httpx.URL | str) -> tuple[str, str, int | None]:
    parts = urlsplit(str(url))
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


class Gateway(httpx.BaseTransport):
    """The pool's transport as the run's clients see it (see the module's documentation)."""

    def __init__(self, inner: httpx.BaseTransport, options: GatewayOptions, origin: str | None) -> None:
        self.inner = inner
        self.options = options
        self.origin = _origin(origin) if origin else None
        self.origins = Origins(origin, options.allowed_origins) if origin else None
        self.limiter = RateLimiter(options.rate_limit) if options.rate_limit else None
        self.waited_429 = 0   # seconds spent waiting for Retry-After (the run's report may say it)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.origins is not None:   # the guard behind every follower of a link (origins.py): nothing goes elsewhere
            self.origins.check(request.url, f"a request of the run ({request.method})")
        if self.options.headers and (self.origin is None or _origin(request.url) == self.origin):
            for name, value in self.options.headers:   # the client's own value wins (a check may set one)
                if name not in request.headers:
                    request.headers[name] = value
        for attempt in range(RETRIES_429 + 1):
            if self.limiter is not None:
                self.limiter.wait()
            response = self._send(request)
            if response.status_code != 429:
                return response
            if attempt == RETRIES_429:
                response.read()
                response.close()
                raise RateLimited(request.method, str(request.url), (
                    f"{request.method} {request.url.raw_path.decode('ascii', 'replace')} was answered 429 Too Many "
                    f"Requests {RETRIES_429 + 1} times (each Retry-After waited for){self._limit_hint()}"))
            wait = retry_after(response.headers.get("retry-after"))
            response.read()
            response.close()
            self.waited_429 += wait
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _limit_hint(self) -> str:
        if self.options.rate_limit:
            return f": the target's rate limit is below the run's --rate-limit {self.options.rate_limit:g}/s"
        return ": the target limits the request rate; give the run a --rate-limit under it"

    def _limits(self, request: httpx.Request) -> Limits:
        """The request's own timeout (a probe's is shorter) as its deadline in all; the run's size cap."""
        seconds = (request.extensions.get("timeout") or {}).get("read") or self.options.timeout
        return Limits(self.options.max_response_bytes, seconds)

    def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            return read_bounded(self.inner, request, self._limits(request))
        except _Oversized as exc:
            raise AnswerTooLarge(request.method, str(request.url), exc.message, _measured(exc), exc.what) from None
        except AnswerTimeout as exc:
            if exc.received:   # it is answering, too slowly or never completely: no probe needed to tell
                raise RequestTimeout(request.method, str(request.url), exc.message, _measured(exc), exc.what) from None
            if not self._answers(request):
                raise   # the target stopped answering altogether: the transport error it is
            raise RequestTimeout(request.method, str(request.url), f"{exc.message}; the target answers other requests",
                                 _measured(exc), f"{exc.what}; the target answers other requests") from None
        except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:
            if not self._answers(request):
                raise   # the target stopped answering altogether: the transport error it is
            raise RequestTimeout(request.method, str(request.url), (
                f"{request.method} {request.url.raw_path.decode('ascii', 'replace')} got no answer within "
                f"{self.options.timeout:g} s (--request-timeout); the target answers other requests")) from exc

    def _answers(self, request: httpx.Request) -> bool:
        """Whether the target answers a cheap request (GET of its origin's root) within a few seconds."""
        probe = httpx.Request("GET", request.url.copy_with(raw_path=b"/"), headers=list(self.options.headers),
                              extensions={"timeout": httpx.Timeout(min(PROBE_TIMEOUT, self.options.timeout)).as_dict()})
        try:
            read_bounded(self.inner, probe, Limits(self.options.max_response_bytes, min(PROBE_TIMEOUT,
                                                                                         self.options.timeout)))
        except Unbounded as exc:   # too large, or bytes that never made a whole answer: something is answering
            return isinstance(exc, _Oversized) or exc.received > 0
        except httpx.HTTPError:
            return False
        return True

    def close(self) -> None:
        self.inner.close()


class _Borrowed(httpx.BaseTransport):
    """The pool as one client's transport: closing the client leaves the pool (the other clients') open."""

    def __init__(self, pool: httpx.BaseTransport) -> None:
        self.pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.pool.handle_request(request)

    def close(self) -> None:
        pass


class _Routes(httpx.BaseTransport):
    """Keep-alive connections of one TLS context: direct, or through the proxy the environment names for a URL (a
    pool per proxy). httpx reads the environment only for a client that builds its own transport, so the pool reads
    it here, per origin."""

    def __init__(self, context, limits: httpx.Limits) -> None:
        self.context, self.limits = context, limits
        self.direct = bounded_transport(verify=context, limits=limits)
        self._proxied: dict[str, httpx.HTTPTransport] = {}
        self._routes: dict[tuple[str, str, int | None], str | None] = {}
        self._lock = threading.Lock()

    def route(self, url: httpx.URL) -> httpx.BaseTransport:
        origin = (url.scheme, url.host, url.port)
        with self._lock:
            if origin not in self._routes:
                plain = str(url.copy_with(path="/", query=None, fragment=None))
                self._routes[origin] = requests.utils.select_proxy(plain, requests.utils.get_environ_proxies(plain))
            proxy = self._routes[origin]
            if proxy is None:
                return self.direct
            if proxy not in self._proxied:
                self._proxied[proxy] = bounded_transport(verify=self.context, limits=self.limits,
                                                         proxy=httpx.Proxy(proxy))
            return self._proxied[proxy]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.route(request.url).handle_request(request)

    def close(self) -> None:
        self.direct.close()
        for transport in self._proxied.values():
            transport.close()


class PooledAdapter(requests.adapters.HTTPAdapter):
    """A ``requests`` adapter that sends through the run's httpx pool, the request's bytes as ``requests`` prepared
    them (no header added but Host and Content-Length, which ``requests`` sends too)."""

    def __init__(self, pool: httpx.BaseTransport, timeout: float = TIMEOUT) -> None:
        super().__init__(pool_connections=1, pool_maxsize=1)  # its own urllib3 pool is never used
        self.pool = pool
        self.timeout = timeout

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        body = request.body
        content = body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")
        # Header values as http.client sends them (Latin-1); a value it cannot encode cannot be sent either.
        headers = [(name.encode("latin-1"), value.encode("latin-1") if isinstance(value, str) else bytes(value))
                   for name, value in request.headers.items() if name.lower() != "host"]
        outgoing = httpx.Request(request.method or "GET", request.url or "", headers=headers, content=content,
                                 extensions={"timeout": _timeout(timeout, self.timeout).as_dict()})
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


def _timeout(value: Any, default: float = TIMEOUT) -> httpx.Timeout:
    if isinstance(value, (int, float)):
        return httpx.Timeout(float(value))
    if isinstance(value, tuple) and len(value) == 2:
        return httpx.Timeout(value[1], connect=value[0])
    return httpx.Timeout(default)


class ConnectionPool:
    """At most ``max_connections`` connections to the target open at once, kept alive, for every client of a run."""

    def __init__(self, max_connections: int = DEFAULT_MAX_CONNECTIONS, gateway: GatewayOptions = GatewayOptions(),
                 origin: str | None = None, tls: TlsOptions | None = None) -> None:
        if max_connections < 1:
            raise ValueError("a pool needs at least one connection")
        self.max_connections = max_connections
        self.gateway = gateway
        self.timeout = gateway.timeout
        self.tls = tls or TlsOptions()
        self.transport = Gateway(_Routes(self.tls.context(), httpx.Limits(max_connections=max_connections,
                                                                          max_keepalive_connections=max_connections)),
                                 gateway, origin)
        self._lock = threading.Lock()
        self._requests: requests.Session | None = None

    def client(self, *, timeout: float | None = None) -> httpx.Client:
        """An httpx client over the pool (its own cookies; no redirects followed; the run's request timeout)."""
        return httpx.Client(transport=_Borrowed(self.transport), timeout=timeout or self.timeout,
                            follow_redirects=False)

    def requests_session(self) -> requests.Session:
        """The ``requests`` session over the pool, for Schemathesis' calls: no cookies kept (each generated request
        stands alone, as with Schemathesis' own session per call); the proxies of the environment are the pool's to
        choose (``requests`` would choose them for its own adapters only)."""
        with self._lock:
            if self._requests is None:
                session = requests.Session()
                session.trust_env = False
                session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
                # The gateway headers as the session's: Schemathesis puts them in each case's request before the
                # signer sees it, so the sent request (the oracle's, the curl's) carries them.
                session.headers.update(dict(self.gateway.headers))
                adapter = PooledAdapter(self.transport, self.timeout)
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
