"""The semantic suite's request mutations against deliberately wrong targets: the reference sandbox with the
header rules' findings dropped (what a target that never checks PSU-ID, X-PSU-IDENTITY or x-accept-fix answers),
and one that refuses an x-accept-fix name it does not know (A18 makes that a warning: the request is accepted).
Each must fail the run with a finding of the broken rule, its reproducer signed over the bytes sent."""
from __future__ import annotations

import json
import shlex

import pytest

from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F

HEADER_RULES = ("header-format", "psu-identity-invalid", "accept-fix-required", "corporate-id-required")


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(server: ReferenceServer, checks: tuple[str, ...], identities: Identities):
    server.start()
    try:
        return run(RunOptions(server.url, ("semantic",), identities=identities, seed=3, max_examples=1, checks=checks))
    finally:
        server.stop()


def test_a_target_not_checking_header_rules_fails_with_one_finding_per_rule(monkeypatch, identities):
    monkeypatch.setitem(F.FAULTS, "headers-unchecked", F.Fault(
        "headers-unchecked", "header values are checked (A7, A16, A18)", "every header value is accepted",
        "app.refusal (finding filter)", hides=HEADER_RULES))
    result = gate(ReferenceServer(faults=("headers-unchecked",)), tuple(f"semantic:{r}" for r in HEADER_RULES),
                  identities)
    found = {f.rule for f in result.findings}
    assert found == set(HEADER_RULES), [(f.rule, f.message) for f in result.findings]
    psu_id = [f for f in result.findings if f.rule == "header-format" and "at PSU-ID" in f.message]
    assert psu_id and psu_id[0].expected == "400 FORMAT_ERROR" and psu_id[0].actual == "201"
    # the reproducer carries the signed request as sent: the non-UUID PSU-ID among the signed headers
    words = shlex.split(psu_id[0].curl)
    headers = dict(words[i + 1].split(": ", 1) for i, w in enumerate(words) if w == "-H")
    assert "psu-id" in headers["Signature"].split('headers="', 1)[1].split('"', 1)[0].split()
    assert headers["PSU-ID"] == "not-a-uuid"
    # one finding per rule, operation and site (the header broken): each search stops at its first disagreement
    sites = [(f.rule, f.operation, f.message.split(":", 1)[0]) for f in result.findings]
    assert len(sites) == len(set(sites))


async def answer(send, status: int, content_type: bytes, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type)]})
    await send({"type": "http.response.body", "body": body})


def refusing_unknown_fix_names(app):
    """An ASGI wrapper answering 400 FORMAT_ERROR to an x-accept-fix naming anything but a published change."""
    from validator.spec import load_spec

    spec = load_spec()
    code_set = spec.schema("AcceptFixName")
    known = set(code_set["enum"]) | set(code_set.get("x-aliases", {}))

    async def wrapped(scope, receive, send):
        headers = dict(scope.get("headers", ())) if scope["type"] == "http" else {}
        names = [n.strip() for n in headers.get(b"x-accept-fix", b"").decode().split(",") if n.strip()]
        if any(n not in known for n in names):
            body = json.dumps({"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR",
                                                "text": "unknown x-accept-fix name"}]}).encode()
            return await answer(send, 400, b"application/json", body)
        await app(scope, receive, send)

    return wrapped


def test_a_target_refusing_unknown_accept_fix_names_fails_the_warning_check(identities):
    server = ReferenceServer()
    server.server.config.app = refusing_unknown_fix_names(server.app)
    result = gate(server, ("semantic:accept-fix-unknown", "semantic:valid-control"), identities)
    assert {f.check for f in result.findings} == {"semantic:accept-fix-unknown"}, \
        [(f.check, f.message) for f in result.findings]
    finding = result.findings[0]
    assert finding.rule == "accept-fix-unknown" and finding.actual == "400 FORMAT_ERROR"
    assert finding.expected.startswith("201")


def answering_patch_wrongly(app):
    """An ASGI wrapper answering PATCH: accepted (200) on the sandbox paths, as a careless target does; a bare
    framework's 405 text/plain elsewhere, as HTTP allows."""
    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "PATCH":
            if scope["path"].startswith("/v1/sandbox/"):
                return await answer(send, 200, b"application/json", b"{}")
            return await answer(send, 405, b"text/plain", b"Method Not Allowed")
        await app(scope, receive, send)

    return wrapped


def test_unsupported_methods_answered_wrongly_are_findings(identities):
    server = ReferenceServer()
    server.server.config.app = answering_patch_wrongly(server.app)
    server.start()
    try:
        # twice: Schemathesis probes each (path, method) once per schema object, which lives as long as the process;
        # each run must probe them all again (same seed, same cases)
        result, again = (run(RunOptions(server.url, ("negative",), identities=identities, seed=3, max_examples=1,
                                        checks=("negative:unsupported-methods",))) for _ in range(2))
    finally:
        server.stop()
    assert len(result.cases) > 50 and sorted(result.cases) == sorted(again.cases)
    assert [f.message for f in result.findings] == [f.message for f in again.findings]
    assert result.findings and {f.rule for f in result.findings} == {"method-not-allowed"}
    assert all(f.message.startswith("PATCH ") for f in result.findings), [f.message for f in result.findings]
    accepted = [f for f in result.findings if "/v1/sandbox/" in f.message]
    assert accepted and all(f.actual == "200" and f.expected.startswith("405/404") for f in accepted)
    # a bare framework's 405 text/plain is HTTP's answer: no operation takes the method, so no error body is due
    assert not [f for f in result.findings if "/v1/sandbox/" not in f.message]
