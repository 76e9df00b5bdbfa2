"""pytest fixtures for a TPP's own tests against the bundled reference sandbox (README "Testing your TPP client").

Installed with obvalidate, this plugin is loaded by pytest in every project (the ``pytest11`` entry point
``obvalidate``); it changes nothing for a test that does not ask for its fixtures: loading it imports nothing but
pytest, and the sandbox starts when a test first asks for ``ob_sandbox`` or ``ob_client``.

``ob_sandbox``
    The reference sandbox (:mod:`conformance.sandbox`) served on a free loopback port for the session, with a fresh
    in-memory database holding the fixed test data (A32): ``url``, ``clock`` (the sandbox clock), ``now()``,
    ``today()`` (Europe/Oslo), ``set_clock(instant)``, ``faults`` and ``authorise(...)`` (the PSU's browser on the
    SCA page). Its clock runs from ``--ob-sandbox-now ISO-INSTANT`` (default: real time), or stands still there with
    ``--ob-sandbox-clock frozen`` (time passes only when a test moves it: ``set_clock``); a test marked
    ``@pytest.mark.ob_now("2031-03-15T10:00:00+01:00")`` sees it start at that instant (``frozen=True``: and stand
    there), and every test ends with the clock put back. The scheduled batch runs follow the clock as a test sets it:
    a test whose clock starts earlier than where the last test left it gets the runs of its own day. A test marked ``@pytest.mark.ob_faults("created-200", ...)`` gets a sandbox with those fault
    switches on (``obvalidate sandbox faults``; one server per set of switches, started when first needed).
``ob_identity``
    A throwaway TPP identity for the session (:class:`conformance.client.Identity`: RSA key, self-signed
    certificate with organizationIdentifier ``PSDNO-FSA-OBTEST``).
``ob_client``
    A :class:`conformance.client.SignedClient` of ``ob_identity`` bound to ``ob_sandbox``, signing with the sandbox
    clock (its Date headers and default execution dates are the sandbox's day).

The Hypothesis strategies to draw payloads and requests are in :mod:`conformance.strategies`.
"""
from __future__ import annotations

from typing import Any

import pytest

IDENTITY_ORGANIZATION = "PSDNO-FSA-OBTEST"
MARKERS = (
    "ob_now(instant, frozen=False): the obvalidate sandbox clock starts at this ISO 8601 instant for the test "
    "(ob_sandbox); frozen=True: it stands there unless the test moves it (set_clock)",
    "ob_faults(*names): the obvalidate sandbox of the test runs with these fault switches on (ob_sandbox)",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("obvalidate-sandbox", "obvalidate reference sandbox fixtures (ob_sandbox, ob_client)")
    group.addoption("--ob-sandbox-now", default=None, metavar="ISO-INSTANT",
                    help="Start the sandbox clock of ob_sandbox at this instant (it runs on from there).")
    group.addoption("--ob-sandbox-clock", default="running", choices=("running", "frozen"),
                    help="running (default): the sandbox clock runs with real time; frozen: it stands still and "
                         "moves only when a test sets it (ob_sandbox.set_clock).")


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    text = config.getoption("--ob-sandbox-now")
    if text:  # a wrong instant stops the run at once, as a wrong option does, not at the first test using it
        from conformance.sandbox.clock import parse_instant

        try:
            parse_instant(text)
        except ValueError as exc:
            raise pytest.UsageError(f"--ob-sandbox-now: not an ISO 8601 instant: {text!r} ({exc})") from None


class ScaOutcome:
    """What the PSU's browser got when it submitted the SCA form: the redirect's ``status`` and ``location`` (the
    TPP-Redirect-URI with ``psu-id`` and ``tpp-session-id`` on success, ``message`` otherwise: A24) and ``query``,
    the location's query parameters (name -> list of values)."""

    def __init__(self, status: int, location: str) -> None:
        from urllib.parse import parse_qs, urlsplit

        self.status, self.location = status, location
        self.query = parse_qs(urlsplit(location).query)

    @property
    def succeeded(self) -> bool:
        return "psu-id" in self.query and "message" not in self.query

    def __repr__(self) -> str:
        return f"ScaOutcome({self.status}, {self.location!r})"


class ObSandbox:
    """The running sandbox as a test sees it (see the module's documentation)."""

    def __init__(self, server, clock, faults: tuple[str, ...]) -> None:
        self.server, self.clock, self.faults = server, clock, faults

    @property
    def url(self) -> str:
        return self.server.url

    def now(self):
        return self.clock.now()

    def today(self):
        """The sandbox's day in Europe/Oslo (A13): execution dates are judged against it."""
        return self.clock.today()

    def set_clock(self, instant, *, frozen: bool | None = None) -> None:
        """Move the sandbox clock to ``instant`` (aware datetime or ISO 8601 text); it runs on from there, or stands
        there with ``frozen=True`` (``frozen=False`` lets a frozen clock run; None keeps it as it is)."""
        import datetime as _dt

        from conformance.sandbox.clock import parse_instant

        if isinstance(instant, str):
            instant = parse_instant(instant)
        if not isinstance(instant, _dt.datetime) or instant.tzinfo is None:
            raise TypeError(f"an aware datetime or ISO 8601 text, not {instant!r}")
        self.clock.set(instant, frozen=frozen)

    def authorise(self, started: Any, customer_number: str, *, timeout: float = 10.0) -> ScaOutcome:
        """The PSU's browser: open the SCA page of a started authorisation (its 201 answer, its JSON, or the
        scaRedirect href), fill in ``customer_number`` and submit the form as shown (every field of the form sent,
        as a browser sends it), not following the redirect."""
        from urllib.parse import urlencode, urljoin

        import httpx

        from conformance import bounded

        if isinstance(started, httpx.Response):
            started = started.json()
        href = started if isinstance(started, str) else started["_links"]["scaRedirect"]["href"]
        # read as every answer of a target is (bounded.py): a page answering forever is a timeout, not a hang
        with bounded.client(bounded.Limits(bounded.DEFAULT_MAX_BYTES, timeout), timeout=timeout,
                            follow_redirects=False) as browser:
            page = browser.get(href)
            if page.status_code != 200:
                raise AssertionError(f"the SCA page {href} answered {page.status_code}: {page.text[:200]}")
            action, inputs = _read_form(page.text)
            if action is None:
                raise AssertionError(f"the SCA page {href} has no form")
            fields = dict(inputs)
            fields[_customer_field()] = customer_number
            answer = browser.post(urljoin(href, action), content=urlencode(fields).encode("ascii"),
                                  headers={"Content-Type": "application/x-www-form-urlencoded"})
        return ScaOutcome(answer.status_code, answer.headers.get("location", ""))


def _customer_field() -> str:
    from validator.spec import load_spec

    return load_spec().document["x-sca-page"]["post"]["fields"][0]


def _read_form(page: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The first form of an HTML page: its action (None: no form) and its named inputs with their values (hidden
    ones included), as a browser submits them."""
    from html.parser import HTMLParser

    action: list[str] = []
    fields: list[tuple[str, str]] = []

    class FormReader(HTMLParser):
        inside = False

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "form" and not action:
                action.append(attrs.get("action") or "")
                self.inside = True
            elif tag == "input" and self.inside and attrs.get("name"):
                fields.append((attrs["name"], attrs.get("value") or ""))

        def handle_endtag(self, tag):
            if tag == "form":
                self.inside = False

    reader = FormReader(convert_charrefs=True)
    reader.feed(page)
    reader.close()
    return (action[0] if action else None), fields


class _Servers:
    """The session's sandbox servers, one per set of fault switches, started when first asked for."""

    def __init__(self, start, frozen: bool = False) -> None:
        from conformance.sandbox.clock import Clock

        self.start = start              # the --ob-sandbox-now instant, or None (real time)
        self.frozen = frozen            # --ob-sandbox-clock frozen
        # the session's time, never moved: each test's clock is put back to it
        self.reference = Clock(start, frozen=frozen)
        self.running: dict[tuple[str, ...], ObSandbox] = {}

    def _session_instant(self):
        """Where each test's clock starts: the session's time, or None for the real time."""
        return self.reference.now() if self.start or self.frozen else None

    def get(self, faults: tuple[str, ...]) -> ObSandbox:
        found = self.running.get(faults)
        if found is None:
            from conformance.gate.target import ReferenceServer
            from conformance.sandbox.clock import Clock
            from conformance.sandbox.faults import UnknownFault

            clock = Clock(self._session_instant(), frozen=self.frozen)
            try:
                server = ReferenceServer(faults=faults, clock=clock).start()
            except UnknownFault as exc:
                problem = str(exc)
            else:
                problem = None
            if problem:   # failed outside the except: pytest shows the message once, not a chained second time
                pytest.fail(f"ob_faults: {problem}", pytrace=False)
            found = self.running[faults] = ObSandbox(server, clock, faults)
        return found

    def rewind(self, sandbox: ObSandbox) -> None:
        sandbox.clock.set(self._session_instant(), frozen=self.frozen)

    def close(self) -> None:
        for sandbox in self.running.values():
            sandbox.server.stop()
        self.running.clear()


@pytest.fixture(scope="session")
def _ob_servers(pytestconfig: pytest.Config):
    from conformance.sandbox.clock import parse_instant

    text = pytestconfig.getoption("--ob-sandbox-now")
    servers = _Servers(parse_instant(text) if text else None,  # checked in pytest_configure
                       pytestconfig.getoption("--ob-sandbox-clock") == "frozen")
    yield servers
    servers.close()


@pytest.fixture
def ob_sandbox(request: pytest.FixtureRequest, _ob_servers: _Servers):
    """The obvalidate reference sandbox of the session (url, clock, today(), set_clock(), authorise()); markers
    ob_now(instant) and ob_faults(*names), option --ob-sandbox-now."""
    faults = tuple(sorted({name for marker in request.node.iter_markers("ob_faults") for name in marker.args}))
    sandbox = _ob_servers.get(faults)
    marker = request.node.get_closest_marker("ob_now")
    if marker is not None:
        if len(marker.args) != 1 or set(marker.kwargs) - {"frozen"}:
            pytest.fail("ob_now takes one ISO 8601 instant, e.g. ob_now('2031-03-15T10:00:00+01:00'), and "
                        "frozen=True or False", pytrace=False)
        try:
            sandbox.set_clock(marker.args[0], frozen=marker.kwargs.get("frozen"))
            problem = None
        except (TypeError, ValueError, AttributeError) as exc:
            problem = f"ob_now: not an ISO 8601 instant: {marker.args[0]!r} ({exc})"
        if problem:   # failed outside the except: the message once, not chained
            pytest.fail(problem, pytrace=False)
    yield sandbox
    _ob_servers.rewind(sandbox)


@pytest.fixture(scope="session")
def ob_identity():
    """A throwaway TPP identity for the session (RSA key, self-signed certificate): conformance.client.Identity."""
    from conformance.client import Identity

    return Identity.generate(IDENTITY_ORGANIZATION)


@pytest.fixture
def ob_client(ob_sandbox: ObSandbox, ob_identity):
    """A conformance.client.SignedClient of ob_identity bound to ob_sandbox, signing with the sandbox clock."""
    from conformance.client import SignedClient

    with SignedClient(ob_sandbox.url, ob_identity, clock=ob_sandbox.clock.now) as client:
        yield client
