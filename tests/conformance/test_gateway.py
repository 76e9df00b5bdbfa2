"""Issue 18, the gateway in front of a real environment: -H headers arrive on every request (never signed, never
judged), the rate limit holds as the target's server measures it, a 429 is waited for (Retry-After) and sent again, a
request that hangs is a request-timeout finding while the run goes on, and --wait-for-target waits for a server that
starts late (exit 2 for one that never does). The target is the reference sandbox behind an ASGI layer that records
what arrives and plays the gateway."""
from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import re
import socket
import threading
import time

import pytest
import uvicorn
from click.testing import CliRunner

from conformance.gate.cli import conform
from conformance.gate import report
from conformance.gate.pool import MAX_RETRY_AFTER, GatewayOptions, parse_header, retry_after
from conformance.gate.runner import RunOptions, run, worker_rate
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer

from gate_helpers import describe

CLIENT_ID = ("X-IBM-Client-Id", "6f1c2b0e-obvalidate")
STATUS_PATH = re.compile(r"^/v1/payments/[^/]+/[^/]+/status$")


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


class Gateway:
    """An ASGI layer in front of the sandbox: records each request (arrival time, method, path, headers) and answers
    itself where ``answer(method, path, seen)`` says (status, headers) or hangs (``"hang"``), else passes it on."""

    def __init__(self, app, answer=None) -> None:
        self.app, self.answer = app, answer
        self.seen: list[tuple[float, str, str, dict[str, str]]] = []
        self.lock = threading.Lock()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            with self.lock:
                self.seen.append((time.monotonic(), scope["method"], scope["path"], headers))
                seen = list(self.seen)
            answered = self.answer(scope["method"], scope["path"], seen) if self.answer else None
            if answered == "hang":
                await asyncio.sleep(8)  # longer than the run's timeout; uvicorn ends it with the server
                return
            if answered is not None:
                status, extra = answered
                await send({"type": "http.response.start", "status": status, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", b"2"),
                    *((k.encode(), v.encode()) for k, v in extra.items())]})
                await send({"type": "http.response.body", "body": b"{}"})
                return
        await self.app(scope, receive, send)


def serve(answer=None, port: int | None = None, profile=None) -> tuple[ReferenceServer, Gateway]:
    server = ReferenceServer(profile=profile)
    layer = Gateway(server.app, answer)
    server.port = port or server.port
    server.server = uvicorn.Server(uvicorn.Config(layer, host="127.0.0.1", port=server.port, log_level="error",
                                                  access_log=False, lifespan="off", timeout_graceful_shutdown=1))
    server.thread = threading.Thread(target=server.server.run, daemon=True)
    return server, layer


def gate(server, identities, **options):
    try:
        return run(RunOptions(server.url, identities=identities, max_examples=1, **options))
    finally:
        server.stop()


# ---------------------------------------------------------------- -H
def test_gateway_headers_arrive_on_every_request_unsigned_and_unjudged(identities):
    """Every suite's requests (the signed clients, Schemathesis' cases, the SCA page's browser) carry the -H header;
    the Signature does not cover it; the oracle does not judge it (a clean run against the faithful sandbox)."""
    server, layer = serve()
    result = gate(server.start(), identities, headers=(CLIENT_ID,),
                  checks=("schema:*", "negative:unsupported-methods", "security:unsigned", "semantic:valid-control",
                          "semantic:header-not-accepted", "stateful:lifecycle"))
    assert not result.findings, describe(result)
    assert len(layer.seen) > 50
    missing = [(m, p) for _t, m, p, h in layer.seen if h.get(CLIENT_ID[0].lower()) != CLIENT_ID[1]]
    assert not missing, f"requests without the gateway header: {missing[:5]}"
    assert any(p.startswith("/sca/") or "sca" in p for _t, _m, p, _h in layer.seen), "the SCA page was not walked"
    signatures = [h["signature"] for _t, _m, _p, h in layer.seen if "signature" in h]
    assert signatures and not any("x-ibm-client-id" in s.lower() for s in signatures)


def test_the_oracle_knows_a_gateway_header_and_judges_another_unknown_one(identities):
    """The same run without -H but with the header put in by a hand-made request would be 'not accepted': the
    validator with the header among the profile's gateway headers says nothing of it."""
    from validator.context import DEFAULT_PROFILE
    from validator.request import parse_envelope, request_findings
    from validator import Validator

    envelope = {"method": "GET", "path": "/v1/sandbox/customers", "headers": {CLIENT_ID[0]: CLIENT_ID[1]}}
    plain = Validator(profile=DEFAULT_PROFILE)
    gatewayed = Validator(profile=DEFAULT_PROFILE._replace(gateway_headers=frozenset({"x-ibm-client-id"})))
    assert "header-not-accepted" in {f.rule for f in request_findings(plain, parse_envelope(envelope))}
    assert "header-not-accepted" not in {f.rule for f in request_findings(gatewayed, parse_envelope(envelope))}


def test_the_pytest_plugin_sends_the_header_and_times_out_as_a_finding(tmp_path):
    """--ob-header arrives on the plugin's requests; with --ob-request-timeout 1 a hung status read fails its check
    with the request-timeout finding, the others pass."""
    import subprocess
    import sys

    def answer(method, path, seen):
        return "hang" if method == "GET" and STATUS_PATH.match(path) else None

    server, layer = serve(answer)
    server.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "conformance.gate.pytest_plugin", "--ob-target", server.url,
             "--ob-check", "security:unsigned,stateful:lifecycle", "--ob-header", ": ".join(CLIENT_ID),
             "--ob-request-timeout", "1", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    finally:
        server.stop()
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "rule request-timeout" in done.stdout
    assert layer.seen and all(h.get("x-ibm-client-id") == CLIENT_ID[1] for _t, _m, _p, h in layer.seen)


SIGNED_GATEWAY_PROFILE = "gateway-headers: [X-IBM-Client-Id]\nsignature: {extra-headers: [X-IBM-Client-Id]}\n"


def test_a_profile_has_the_gateway_header_signed_and_required_so(identities, tmp_path):
    """A profile whose implementation wants the gateway header signed (signature: extra-headers): every signed
    request of the run covers it, the sandbox serving that profile refuses a Signature that leaves it out (the
    security suite leaves it out once and sees the refusal the validator predicts), and the run is clean."""
    from validator.context import Profile

    path = tmp_path / "gateway.yaml"
    path.write_text(SIGNED_GATEWAY_PROFILE, encoding="utf-8")
    server, layer = serve(profile=Profile.load(path))
    result = gate(server.start(), identities, headers=(CLIENT_ID,), profile_path=str(path),
                  checks=("schema:*", "security:*", "semantic:valid-control", "stateful:lifecycle"))
    assert not result.findings, describe(result)
    signatures = [h["signature"] for _t, _m, _p, h in layer.seen if "signature" in h]
    covering = [s for s in signatures if "x-ibm-client-id" in s.lower()]
    assert len(signatures) > 30 and len(signatures) - len(covering) == 1, "one Signature (header-unsigned's) leaves " \
        f"it out: {len(signatures) - len(covering)} of {len(signatures)} do"


def test_the_oracle_wants_an_extra_signed_header_covered_when_present(identities):
    from conformance.client import SignedClient
    from validator import Validator
    from validator.context import DEFAULT_PROFILE, Profile
    from validator.request import parse_envelope, request_findings

    client = SignedClient("http://127.0.0.1:9", identities.tpp, extra_headers=(CLIENT_ID,))
    request = client.prepare("getPaymentStatus", path={"payment-service": "payments",
                                                       "payment-product": "sepa-credit-transfers", "paymentId": "p1"})
    envelope = {"method": request.method, "path": request.target, "headers": request.headers}
    signed_too = Profile.from_mapping({"gateway-headers": ["X-IBM-Client-Id"],
                                       "signature": {"extra-headers": ["X-IBM-Client-Id"]}})
    unsigned = Profile.from_mapping({"gateway-headers": ["X-IBM-Client-Id"]})
    rules = lambda profile: {f.rule for f in request_findings(Validator(profile=profile), parse_envelope(envelope))}
    assert "signature-headers-incomplete" in rules(signed_too)
    assert not rules(unsigned) and "header-not-accepted" in rules(DEFAULT_PROFILE)
    client.also_signed = ("x-ibm-client-id",)
    request = client.prepare("getPaymentStatus", path={"payment-service": "payments",
                                                       "payment-product": "sepa-credit-transfers", "paymentId": "p1"})
    envelope = {"method": request.method, "path": request.target, "headers": request.headers}
    assert not rules(signed_too)


def test_a_finding_s_curl_sends_the_gateway_header_from_the_environment(identities):
    """A finding's curl carries the -H header, once, as an environment variable (no API key in a shared report)."""
    def answer(method, path, seen):  # every unsigned request accepted: security:unsigned disagrees
        return (201, {}) if "signature" not in seen[-1][3] else None

    server, _layer = serve(answer)
    result = gate(server.start(), identities, headers=(CLIENT_ID,), checks=("security:unsigned",))
    assert result.findings, describe(result)
    for finding in result.findings:
        assert '-H \'X-IBM-Client-Id: \'"${X_IBM_CLIENT_ID:?' in finding.curl, finding.curl
        assert CLIENT_ID[1] not in finding.curl and finding.curl.lower().count("-h 'x-ibm-client-id:") == 1
    assert CLIENT_ID[1] not in json.dumps(report.as_json(result))  # nor in the request a replay re-sends


def test_a_replay_goes_through_the_gateway_with_its_headers(identities, tmp_path):
    """conform --replay with -H: the re-sent requests carry the header (the report does not), and still fail."""
    from conformance.gate.replay import replay

    def answer(method, path, seen):
        return (201, {}) if "signature" not in seen[-1][3] else None

    server, layer = serve(answer)
    server.start()
    try:
        result = run(RunOptions(server.url, identities=identities, max_examples=1, headers=(CLIENT_ID,),
                                checks=("security:unsigned",)))
        recorded = json.loads(json.dumps(report.as_json(result)))
        before = len(layer.seen)
        verdicts = replay(recorded, recorded["findings"], server.url, identities,
                          gateway=GatewayOptions(headers=(CLIENT_ID,)))
    finally:
        server.stop()
    assert verdicts and {v.status for v in verdicts} == {"still failing"}, verdicts
    resent = layer.seen[before:]
    assert resent and all(h.get("x-ibm-client-id") == CLIENT_ID[1] for _t, _m, _p, h in resent)


@pytest.mark.parametrize("text, words", [
    ("X-IBM-Client-Id", "no colon"),
    ("X IBM: 1", "not an HTTP field name"),
    (": 1", "not an HTTP field name"),
    ("X-A: 1\r\nX-B: 2", "line break"),
    ("X-A: \x01", "control character"),
])
def test_a_malformed_header_is_a_usage_error(text, words):
    with pytest.raises(ValueError, match=words):
        parse_header(text)
    outcome = CliRunner().invoke(conform, ["--target", "http://127.0.0.1:9", "-H", text])
    assert outcome.exit_code == 2 and words in outcome.output, outcome.output


def test_a_header_given_twice_is_a_usage_error():
    outcome = CliRunner().invoke(conform, ["--target", "http://127.0.0.1:9", "-H", "X-A: 1", "-H", "x-a: 2"])
    assert outcome.exit_code == 2 and "x-a given more than once" in outcome.output, outcome.output
    assert parse_header("X-IBM-Client-Id:  abc ") == ("X-IBM-Client-Id", "abc")


# ---------------------------------------------------------------- --rate-limit
def test_the_rate_limit_holds_as_the_target_measures_it(identities):
    """At 20 requests a second, no second of the run (as the server saw the arrivals) holds more than 20 and a
    little jitter; without the limit the same checks go several times faster than that."""
    server, layer = serve()
    result = gate(server.start(), identities, rate_limit=20.0,
                  checks=("security:*", "stateful:lifecycle", "stateful:cancellation"))
    assert not result.findings, describe(result)
    arrivals = sorted(t for t, *_rest in layer.seen)
    assert len(arrivals) >= 40  # more than a second's worth at the limit, many at the sandbox's own pace
    busiest = max(sum(1 for u in arrivals[i:] if u - t < 1.0) for i, t in enumerate(arrivals))
    assert busiest <= 25, f"{busiest} requests within one second at --rate-limit 20"
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) / 20 * 0.8


def test_workers_share_the_rate_limit():
    assert worker_rate(None, 4, 5) is None
    assert worker_rate(20.0, 1, 5) == 20.0
    assert worker_rate(20.0, 4, 5) == 5.0
    assert worker_rate(20.0, 8, 2) == 10.0


# ---------------------------------------------------------------- 429 and Retry-After
def test_a_429_is_waited_for_and_sent_again(identities):
    """The gateway answers the first status read 429 with Retry-After: 1, then lets requests pass: the gate sends it
    again after a second, and the run is clean."""
    refused: list[float] = []

    def answer(method, path, seen):
        if method == "GET" and STATUS_PATH.match(path) and not refused:
            refused.append(seen[-1][0])
            return 429, {"retry-after": "1"}
        return None

    server, layer = serve(answer)
    result = gate(server.start(), identities, checks=("stateful:lifecycle",))
    assert not result.findings, describe(result)
    assert refused, "no status read reached the gateway"
    later = [t for t, m, p, _h in layer.seen if t > refused[0] and m == "GET" and STATUS_PATH.match(p)]
    assert later and later[0] - refused[0] >= 0.9, "the 429 was not waited for"


def test_a_429_that_does_not_pass_is_a_rate_limited_finding(identities):
    """A gateway that keeps answering 429 (Retry-After: 0) on one operation: after 3 retries it is one rate-limited
    finding for that operation, naming the rate limit, and the other checks run on."""
    def answer(method, path, seen):
        return (429, {"retry-after": "0"}) if method == "GET" and STATUS_PATH.match(path) else None

    server, layer = serve(answer)
    result = gate(server.start(), identities, checks=("stateful:lifecycle", "stateful:cancellation",
                                                      "security:unsigned"))
    limited = [f for f in result.findings if f.rule == "rate-limited"]
    assert [f.operation for f in limited] == ["getPaymentStatus"], describe(result)
    assert "429" in limited[0].message and "--rate-limit" in limited[0].message
    assert all(f.rule == "rate-limited" for f in result.findings), describe(result)
    statuses = [p for _t, m, p, _h in layer.seen if m == "GET" and STATUS_PATH.match(p)]
    assert len(statuses) % 4 == 0 and statuses  # each read sent once and retried three times
    assert any(o.check == "security:unsigned" and o.status == "passed" for o in result.outcomes)


def test_retry_after_as_seconds_or_date_within_bounds():
    now = time.time()
    date = email.utils.format_datetime(dt.datetime.fromtimestamp(now + 5, dt.timezone.utc), usegmt=True)
    assert retry_after("2") == 2.0
    assert 3.5 <= retry_after(date, now) <= 5.0
    assert retry_after("86400") == MAX_RETRY_AFTER
    assert retry_after(email.utils.format_datetime(dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc), usegmt=True)) == 0
    assert retry_after(None) == retry_after("soon") == 1.0


# ---------------------------------------------------------------- --request-timeout
def test_a_hung_operation_is_a_request_timeout_finding_and_the_run_goes_on(identities):
    """The gateway never answers status reads: with a 1 s timeout, getPaymentStatus is one request-timeout finding
    (not 'the target stopped answering', not a crash), the other checks pass."""
    def answer(method, path, seen):
        return "hang" if method == "GET" and STATUS_PATH.match(path) else None

    server, _layer = serve(answer)
    started = time.monotonic()
    result = gate(server.start(), identities, request_timeout=1.0,
                  checks=("stateful:lifecycle", "stateful:cancellation", "security:unsigned"))
    timeouts = [f for f in result.findings if f.rule == "request-timeout"]
    assert [f.operation for f in timeouts] == ["getPaymentStatus"], describe(result)
    assert "1 s" in timeouts[0].message and timeouts[0].actual == "no answer within 1 s"
    assert not [o for o in result.outcomes if o.status == "error"]
    assert any(o.check == "security:unsigned" and o.status == "passed" for o in result.outcomes)
    assert time.monotonic() - started < 30


def test_a_target_that_stops_answering_altogether_ends_the_run(identities):
    """When the cheap probe after a timeout gets no answer either, it is not a finding: the target stopped answering
    (the command line exits 2 on it)."""
    from conformance.gate.session import TargetUnreachable

    server, layer = serve(lambda method, path, seen: "hang")
    started = time.monotonic()
    with pytest.raises(TargetUnreachable, match="Timeout"):
        gate(server.start(), identities, request_timeout=1.0, checks=("security:unsigned",))
    assert time.monotonic() - started < 20
    assert [p for _t, _m, p, _h in layer.seen][-1] == "/"  # the probe


# ---------------------------------------------------------------- --wait-for-target
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wait_for_target_waits_for_a_server_that_starts_late():
    port = _free_port()
    server, layer = serve(port=port)
    starter = threading.Timer(1.5, server.start)
    starter.start()
    try:
        outcome = CliRunner().invoke(conform, ["--target", f"http://127.0.0.1:{port}", "--wait-for-target", "30",
                                               "--check", "security:unsigned", "--max-examples", "1"])
    finally:
        starter.join()
        server.stop()
    assert outcome.exit_code == 0, outcome.output
    assert layer.seen


def test_wait_for_target_exits_2_for_a_server_that_never_starts():
    port = _free_port()
    started = time.monotonic()
    outcome = CliRunner().invoke(conform, ["--target", f"http://127.0.0.1:{port}", "--wait-for-target", "1.5",
                                           "--check", "security:unsigned"])
    assert outcome.exit_code == 2
    assert "not reachable" in outcome.output and "--wait-for-target" in outcome.output, outcome.output
    assert time.monotonic() - started >= 1.5
