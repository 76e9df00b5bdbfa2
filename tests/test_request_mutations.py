"""Request mutations (conformance.mutations.REQUEST_MUTATIONS): each breaks exactly its rule of the request kind in
an otherwise valid, signed HTTP request, at every site an operation offers; and every rule of the request kind has
a mutation or a reason why no HTTP request can break it alone."""
from __future__ import annotations

import datetime as _dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.client import Identity, SignedClient
from conformance.mutations import (REQUEST_LEFT_OUT, REQUEST_MUTATION_CASES, REQUEST_MUTATIONS, REQUEST_OPERATIONS,
                                   _KIND, draft_of, mutate_request, payloads, signed_draft, synthetic_identity_number,
                                   valid_optional_headers)
from validator import Validator
from validator.checks.identity import check_norwegian_identity_number
from validator.request import Parsed, parse_envelope, request_findings
from validator.rules import catalogue
from validator.spec import load_spec

SPEC = load_spec()
TODAY = _dt.date.fromisoformat(SPEC.example_today)
NOW = _dt.datetime.combine(TODAY, _dt.time(10), tzinfo=_dt.timezone.utc)
IDENTITY = Identity.generate("PSDNO-FSA-MUTATIONS")
CLIENT = SignedClient("http://127.0.0.1:9", IDENTITY, spec=SPEC)
# Signature rules the security suite's targeted checks break (conformance/gate/suites/security.py).
SECURITY_SUITE = {"signature-missing", "signature-invalid", "digest-mismatch", "digest-missing", "certificate-missing",
                  "signature-headers-incomplete", "signature-algorithm", "signature-keyid-mismatch",
                  "certificate-expired", "signature-date-window"}
HEALTH = list(HealthCheck)
PATHS = {"mockCardAccountId": "card-1", "mockAccountId": "account-1"}


def _validator() -> Validator:
    v = Validator(spec=SPEC, today=TODAY)
    v.now = NOW
    return v


VALIDATOR = _validator()


def findings(method: str, target: str, headers, body: bytes):
    import dataclasses

    parsed = parse_envelope({"method": method, "path": target, "headers": headers})
    parsed = Parsed(dataclasses.replace(parsed.request, body=body, body_is_exact=True), parsed.problems)
    return request_findings(VALIDATOR, parsed)


def base_draft(operation: str, data):
    kind = REQUEST_OPERATIONS[operation]
    _KIND.today = TODAY
    body = data.draw(payloads(kind), label="body") if kind else None
    op = SPEC.operation(operation)
    path = {k: v for k, v in PATHS.items() if "{" + k + "}" in op.path}
    query = {"allowLogicalDuplicate": "true"} if any(p.name == "allowLogicalDuplicate" for p in op.query_parameters) else None
    prepared = CLIENT.prepare(operation, body=body, path=path, query=query, sign=False)
    return draft_of(operation, prepared.method, prepared.target, prepared.headers, prepared.body)


def describe(found) -> str:
    return "\n".join(f"  {f.severity} {f.rule} {f.pointer}: {f.message}" for f in found) or "  (none)"


@pytest.mark.parametrize("operation", list(REQUEST_OPERATIONS))
@settings(max_examples=6, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data())
def test_controls_with_valid_optional_headers_have_no_finding(operation, data):
    draft = base_draft(operation, data)
    if data.draw(st.booleans(), label="with optional headers"):
        valid_optional_headers(draft, data)
    found = findings(*signed_draft(draft, IDENTITY.key, IDENTITY.certificate, date=NOW))
    assert not found, describe(found)


@pytest.mark.parametrize("rule_id", list(REQUEST_MUTATIONS))
@settings(max_examples=1, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data())
def test_request_mutation_breaks_only_its_rule(rule_id, data):
    """At every site of every operation (one draw each: the sites are the variety)."""
    for rule, operation, site in REQUEST_MUTATION_CASES:
        if rule != rule_id:
            continue
        draft = mutate_request(rule_id, base_draft(operation, data), site, data)
        found = findings(*signed_draft(draft, IDENTITY.key, IDENTITY.certificate, date=NOW))
        where = f"{rule_id} on {operation} at {site}"
        assert found, f"{where}: no finding"
        assert {f.rule for f in found} == {rule_id}, f"{where}:\n{describe(found)}"
        assert {f.severity for f in found} == {catalogue()[rule_id].severity}, where


def test_every_request_rule_has_a_mutation_or_a_reason():
    request_rules = {r.id for r in catalogue().values() if r.group in ("request", "signature", "input")}
    covered = set(REQUEST_MUTATIONS) | set(REQUEST_LEFT_OUT)
    assert set(REQUEST_MUTATIONS) <= request_rules and set(REQUEST_LEFT_OUT) <= request_rules
    for rule_id in REQUEST_MUTATIONS:
        assert any(r == rule_id for r, _o, _s in REQUEST_MUTATION_CASES), f"{rule_id}: no operation offers a site"
    assert sorted(request_rules - covered - SECURITY_SUITE) == []


@settings(max_examples=50, deadline=None, suppress_health_check=HEALTH)
@given(data=st.data())
def test_synthetic_identity_numbers_are_valid_test_numbers(data):
    number = synthetic_identity_number(data)
    assert not check_norwegian_identity_number(number) and int(number[2:4]) > 80
