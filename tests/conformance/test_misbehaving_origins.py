"""Issue 19, origins: the gate sends requests to the target's origin (scheme, host, port) and to those given with
``--allow-origin``, nowhere else. A link of the target's leading elsewhere -- the SCA page its scaRedirect names,
that page's form action, any ``_links`` href -- is a ``link-off-target`` finding saying what the link was and where
it appeared, never a request: a second server on another port counts zero requests, and the cloud metadata address
is never connected to. The same origin spelled otherwise (case, default port) is the target's.

The target is the reference sandbox behind the misbehaving test target (tests/misbehaving_target.py), which rewrites
its answers; the behaviours are this module's."""
from __future__ import annotations

import re
import socket

import pytest
from click.testing import CliRunner

from conformance.gate.cli import conform
from conformance.gate.model import SUITES
from conformance.exchange.origins import RULE, OffTarget, Origins, origin_of, parse_allowed
from conformance.gate.pool import ConnectionPool, GatewayOptions
from conformance.exchange.responses import ResponseKinds
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from gate_helpers import describe
from misbehaving_target import MisbehavingTarget, fixed, rewrite
from validator import Validator
from validator.spec import load_spec

METADATA = "http://169.254.169.254/latest/meta-data/"
SCA_PAGE = re.compile(r"/sca/[^\"'?#]+")


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


@pytest.fixture
def reference():
    """A fresh reference sandbox per test: a scenario walked twice on one would meet its own earlier payments."""
    server = ReferenceServer().start()
    yield server
    server.stop()


@pytest.fixture
def connections(monkeypatch) -> list[tuple]:
    """Every address the process opens a TCP connection to (httpx's sync transport connects through
    socket.create_connection)."""
    opened: list[tuple] = []
    original = socket.create_connection

    def recording(address, *args, **kwargs):
        opened.append(address)
        return original(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recording)
    return opened


def _gate(url: str, identities: Identities, checks: tuple[str, ...], allowed: tuple[str, ...] = ()):
    return run(RunOptions(url, SUITES, identities=identities, seed=0, max_examples=1, checks=checks,
                          allowed_origins=allowed))


# ---------------------------------------------------------------- behaviours (plain functions, passed in)
def sca_redirect_to(href_of):
    """Every answer's ``_links.scaRedirect.href`` replaced by ``href_of(original href)``."""
    def edit(request, answer):
        if b'"scaRedirect"' in answer.body:
            data = answer.json()
            link = data["_links"]["scaRedirect"]
            link["href"] = href_of(link["href"])
            answer.set_json(data)
    return rewrite(edit)


def form_action_to(action: str):
    """The SCA page served with its form posting to ``action``."""
    def edit(request, answer):
        if request.method == "GET" and request.path.startswith("/sca/"):
            answer.body = re.sub(rb'action="[^"]*"', f'action="{action}"'.encode(), answer.body)
    return rewrite(edit)


def _page(href: str) -> str:
    return SCA_PAGE.search(href).group(0)


def _off_target(result) -> list:
    return [f for f in result.findings if f.rule == RULE]


def _no_errors(result) -> None:
    errors = [(o.check, o.reason) for o in result.outcomes if o.status == "error"]
    assert not errors, errors


# ---------------------------------------------------------------- what counts as the target's origin
@pytest.mark.parametrize("href, on_origin", [
    ("/sca/abc", True),                                      # relative: the answer's origin
    ("sca/abc", True),
    ("http://127.0.0.1:8080/sca/abc", True),
    ("HTTP://127.0.0.1:8080/sca/abc", True),                 # scheme case
    ("http://127.1:8080/x", True),                           # an IPv4 shorthand the resolver takes
    ("http://127.0.0.1:8081/sca/abc", False),                # another port
    ("https://127.0.0.1:8080/sca/abc", False),               # another scheme
    ("http://localhost:8080/sca/abc", False),                # another name (resolving alike is not the same origin)
    ("//169.254.169.254/latest/meta-data/", False),          # scheme-relative: another host
    (METADATA, False),
    ("http://127.0.0.1:8080@169.254.169.254/", False),       # userinfo: the host is after the @
    ("http://127.0.0.1:8080.example/", False),
    ("javascript:alert(1)", False),                          # no HTTP URL at all
    ("file:///etc/passwd", False),
    ("http://127.0.0.1:99999/", False),                      # no port a client connects to
])
def test_a_link_is_on_the_target_when_a_client_would_connect_there(href, on_origin):
    origins = Origins("http://127.0.0.1:8080/api")
    if on_origin:
        assert origins.follow(href, "http://127.0.0.1:8080/api/v1/payments/x", "here")
    else:
        with pytest.raises(OffTarget) as raised:
            origins.follow(href, "http://127.0.0.1:8080/api/v1/payments/x", "the answer's /_links/status")
        assert "the answer's /_links/status leads to" in str(raised.value)


@pytest.mark.parametrize("one, other", [
    ("https://PSD2.Bank.example/v1", "https://psd2.bank.example:443/x"),    # host case, the default port
    ("http://psd2.bank.example", "http://psd2.bank.example:80"),
    ("https://psd2.bank.example./", "https://psd2.bank.example/"),          # a trailing dot
    ("http://[::1]:8080/", "http://[0:0::1]:8080/v1"),                      # IPv6 spelled otherwise
    ("https://bücher.example/", "https://xn--bcher-kva.example/"),          # an international name, IDNA
])
def test_the_same_origin_spelled_otherwise_is_the_same(one, other):
    assert origin_of(one) == origin_of(other) is not None
    assert Origins(one).allows(other)


def test_allow_origin_takes_an_origin_and_nothing_else():
    assert parse_allowed("https://sca.bank.example") == ("https", "sca.bank.example", 443)
    assert parse_allowed("http://127.0.0.1:9000/") == ("http", "127.0.0.1", 9000)
    for wrong in ("sca.bank.example", "ftp://sca.bank.example", "https://sca.bank.example/authorize",
                  "https://user@sca.bank.example", "https://sca.bank.example?x=1"):
        with pytest.raises(ValueError):
            parse_allowed(wrong)
    assert Origins("http://127.0.0.1:1", ["https://sca.bank.example"]).allows("https://SCA.bank.example:443/a")


def test_a_wrong_allow_origin_is_a_usage_error():
    result = CliRunner().invoke(conform, ["--allow-origin", "sca.bank.example"])
    assert result.exit_code == 2, result.output
    assert "--allow-origin: 'sca.bank.example' is not an http(s) origin" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_pool_sends_nothing_off_the_allowed_origins():
    """The guard behind every follower: a request of the run to another origin is refused before any connection."""
    with MisbehavingTarget(fixed(200, b"{}")) as elsewhere:
        pool = ConnectionPool(1, GatewayOptions(), origin="http://127.0.0.1:9")
        try:
            with pytest.raises(OffTarget):
                pool.client().get(elsewhere.url + "/anything")
            allowed = ConnectionPool(1, GatewayOptions(allowed_origins=(elsewhere.url,)), origin="http://127.0.0.1:9")
            assert allowed.client().get(elsewhere.url + "/anything").status_code == 200
            allowed.close()
        finally:
            pool.close()
    assert [r.path for r in elsewhere.requests] == ["/anything"]


def test_every_answer_s_links_are_judged_for_their_origin():
    spec = load_spec()
    kinds = ResponseKinds(spec, Validator(spec=spec), origins=Origins("http://127.0.0.1:8080"))
    path = "/v1/payments/sepa-credit-transfers"
    body = (b'{"paymentId": "P1", "transactionStatus": "RCVD", "_links": {'
            b'"self": {"href": "/v1/payments/sepa-credit-transfers/P1", "verbs": ["GET"]},'
            b'"status": {"href": "http://169.254.169.254/v1/payments/sepa-credit-transfers/P1/status", "verbs": ["GET"]}}}')
    problems = kinds.link_problems(path, {}, body)
    assert [p.rule for p in problems] == [RULE], problems
    assert "/_links/status leads to 'http://169.254.169.254/v1/payments/sepa-credit-transfers/P1/status'" \
        in problems[0].message
    same = body.replace(b"http://169.254.169.254", b"HTTP://127.0.0.1:8080")
    assert kinds.link_problems(path, {}, same) == []


# ---------------------------------------------------------------- the SCA walk against a misbehaving target
def test_an_sca_page_on_another_port_is_a_finding_and_gets_no_request(reference, identities):
    with MisbehavingTarget(fixed(200, b"<form action='/steal'><input name=customerNumber></form>",
                                 [("Content-Type", "text/html")])) as elsewhere:
        with MisbehavingTarget(sca_redirect_to(lambda href: elsewhere.url + _page(href)),
                               upstream=reference.url) as target:
            result = _gate(target.url, identities, ("stateful:lifecycle",))
    assert elsewhere.requests == []
    _no_errors(result)
    found = _off_target(result)
    assert found, describe(result)
    assert found[0].operation == "startPaymentAuthorisation"
    assert f"leads to '{elsewhere.url}/sca/" in found[0].message
    assert "_links/scaRedirect" in found[0].message or "scaRedirect.href" in found[0].message


@pytest.mark.parametrize("href", [METADATA, "//169.254.169.254/latest/meta-data/"])
def test_the_metadata_address_is_never_connected_to(reference, identities, connections, href):
    with MisbehavingTarget(sca_redirect_to(lambda _href: href), upstream=reference.url) as target:
        result = _gate(target.url, identities, ("stateful:lifecycle", "stateful:cancellation"))
    assert not [a for a in connections if a[0] == "169.254.169.254"], connections
    _no_errors(result)
    found = _off_target(result)
    assert {f.check for f in found} == {"stateful:lifecycle", "stateful:cancellation"}, describe(result)
    assert all("169.254.169.254" in f.message for f in found)


def test_allow_origin_lets_the_walk_through(reference, identities):
    """The SCA page on another origin, given with --allow-origin: the walk goes there (the page and its form), and
    the scenario passes."""
    with MisbehavingTarget(upstream=reference.url) as pages:       # serves the sandbox's SCA page on its own port
        with MisbehavingTarget(sca_redirect_to(lambda href: pages.url + _page(href)),
                               upstream=reference.url) as target:
            refused = _gate(target.url, identities, ("stateful:lifecycle",))
            assert pages.requests == [] and _off_target(refused)
            result = _gate(target.url, identities, ("stateful:lifecycle",), allowed=(pages.url,))
    assert [r.method for r in pages.requests] == ["GET", "POST"], pages.paths()
    assert not _off_target(result), describe(result)
    assert {o.status for o in result.outcomes if o.check == "stateful:lifecycle"} == {"passed"}, describe(result)


def test_an_sca_form_posting_elsewhere_is_a_finding(reference, identities):
    with MisbehavingTarget(fixed(200, b"{}")) as elsewhere:
        with MisbehavingTarget(form_action_to(elsewhere.url + "/collect"), upstream=reference.url) as target:
            result = _gate(target.url, identities, ("stateful:lifecycle",))
    assert elsewhere.requests == []
    _no_errors(result)
    found = _off_target(result)
    assert [f.operation for f in found] == ["sca-page"], describe(result)
    assert "the form action of the SCA page" in found[0].message and elsewhere.url + "/collect" in found[0].message


def test_the_target_s_own_origin_spelled_otherwise_is_followed(reference, identities):
    """An absolute link to the target's origin in another spelling (scheme and host in capitals) is the target's:
    the walk follows it, no finding."""
    with MisbehavingTarget(sca_redirect_to(lambda href: f"HTTP://LOCALHOST:{target.port}" + _page(href)),
                           upstream=reference.url) as target:
        result = _gate(f"http://localhost:{target.port}", identities, ("stateful:lifecycle",))
        walked = [r.method for r in target.requests if r.path.startswith("/sca/")]
    assert walked == ["GET", "POST"], target.paths()
    assert not _off_target(result), describe(result)
    assert {o.status for o in result.outcomes if o.check == "stateful:lifecycle"} == {"passed"}, describe(result)
