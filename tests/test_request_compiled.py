"""The fast paths of the whole-request check give the general checks' verdicts: the compiled header check of each
operation (generated from the spec) accepts only what the general header check finds nothing in, on the spec's
examples and with each header broken in turn; the verifier's at-once path and the Signature parameters remembered
per text agree with the full verification; the certificate cache is bounded and tells certificates apart."""
from __future__ import annotations

import datetime as dt

import pytest

from validator import Validator
from validator.context import DEFAULT_PROFILE, Profile
from validator.request import parse_envelope
from validator.request import headers as request_headers
from validator.request.build import build_request
from validator.request.message import Problems
from validator.request.sign import sign_envelope
from validator.signing import generate_test_identity
from validator.signing.cavage import SignatureFormatError, parse_signature, signature_at_once
from validator.signing.certificate import certificate_facts, certificate_header_value
from validator.spec import load_spec

SPEC = load_spec()
UTC = dt.timezone.utc
NOW = dt.datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
BROKEN = ["", " ", "x", "not-a-uuid", "999.1.1.1", "ftp://tpp.example.no/cb", "http://tpp.example.no/cb", "bogus",
          "amount-as-string, bogus", "13839319955", "12345678901", "CORPORATE", "maybe", "a" * 300]
STRICT = Profile.from_mapping({"synthetic-identity-numbers": "refused", "repeated-headers": {"X-Request-ID": "accepted",
                               "x-accept-fix": "refused"}, "gateway-headers": ["X-Forwarded-For"]})


def general_problems(op, request, profile) -> list:
    """What check_headers words with the compiled check switched off."""
    out = Problems()
    original = request_headers.compiled_header_check
    request_headers.compiled_header_check = lambda *_a: (lambda index, has_body: False)
    try:
        request_headers.check_headers(SPEC, op, request, out, profile)
    finally:
        request_headers.compiled_header_check = original
    return out.problems


def example_headers(op) -> list[tuple[str, str]]:
    env = build_request(SPEC, op.operation_id)
    return list(env["headers"].items())


def variants(op):
    """The operation's example headers, then each declared header dropped, set to each broken value, repeated."""
    base = example_headers(op)
    yield base
    names = [p.name for p in op.header_parameters] + ["Content-Type", "X-Forwarded-For", "X-Unknown", "PSU-Context"]
    for name in names:
        kept = [(n, v) for n, v in base if n.lower() != name.lower()]
        yield kept
        for bad in BROKEN:
            yield kept + [(name, bad)]
        yield base + [(name, next((v for n, v in base if n.lower() == name.lower()), "x"))]


@pytest.mark.parametrize("profile", [DEFAULT_PROFILE, STRICT], ids=["default", "strict"])
@pytest.mark.parametrize("operation", sorted(SPEC.operations))
def test_compiled_header_check_accepts_only_what_the_general_check_finds_nothing_in(operation, profile):
    op = SPEC.operation(operation)
    check = request_headers.compiled_header_check(SPEC, op, profile)
    accepted = refused = 0
    for headers in variants(op):
        for body in (b"", b"{}"):
            parsed = parse_envelope({"method": op.method.upper(), "path": op.path, "headers": headers})
            request = parsed.request
            if request is None or not request.headers_clean:
                continue
            import dataclasses

            request = dataclasses.replace(request, body=body, body_is_exact=True)
            general = general_problems(op, request, profile)
            fast = check(request.header_index, request.has_body)
            if fast:
                accepted += 1
                assert general == [], (operation, headers, general)
            else:
                refused += 1
            # and check_headers, with the compiled check, words exactly what the general check words
            out = Problems()
            request_headers.check_headers(SPEC, op, request, out, profile)
            assert out.problems == general
    assert accepted and refused  # both answers were exercised


def test_the_compiled_check_is_generated_from_the_spec():
    """The spec's values, not a copy: the enumeration of PSU-Context and the header set come from the document."""
    op = SPEC.operation("createSepaCreditTransfer")
    source, constants = request_headers._generate(SPEC, op, DEFAULT_PROFILE)
    context = next(p for p in op.header_parameters if p.key == "psu-context")
    enum = frozenset(SPEC.deref(context.schema)["enum"]) if "enum" in SPEC.deref(context.schema) else None
    assert enum and enum in constants.values()
    assert "'x-request-id'" in source and "'psu-context'" in source


@pytest.fixture(scope="module")
def identities():
    valid = generate_test_identity(not_before=NOW - dt.timedelta(days=30), not_after=NOW + dt.timedelta(days=30))
    other = generate_test_identity(not_before=NOW - dt.timedelta(days=30), not_after=NOW + dt.timedelta(days=30),
                                   organization="Another TPP AS")
    return valid, other


def test_signature_parameters_remembered_per_text_equal_the_parser(identities):
    env = sign_envelope(build_request(SPEC, "createSepaCreditTransfer"), *identities[0], now=NOW, spec=SPEC)
    value = env["headers"]["Signature"]
    for text in (value, value + " ", value.replace('",signature="', '", signature="'), value[:-3] + '=="',
                 value[:-2] + '\\""', value.replace("rsa-sha256", ""), "=?utf-8?B?" + value + "?="):
        try:
            expected = parse_signature(text)
        except SignatureFormatError:
            expected = None
        found = signature_at_once(text)
        if found is not None:
            assert expected is not None and found[0] == expected, text
    assert signature_at_once(value)[0] == parse_signature(value)  # twice: the remembered head
    assert signature_at_once(value)[0] == parse_signature(value)


def test_a_different_certificate_is_not_taken_for_a_cached_one(identities):
    (key, cert), (other_key, other_cert) = identities
    v = Validator(spec=SPEC, now=NOW)
    good = sign_envelope(build_request(SPEC, "createSepaCreditTransfer"), key, cert, now=NOW, spec=SPEC)
    assert v.validate(good, "request").valid
    swapped = {**good, "headers": {**good["headers"], "TPP-Signature-Certificate": certificate_header_value(other_cert)}}
    rules = {f.rule for f in v.validate(swapped, "request").findings}
    assert "signature-keyid-mismatch" in rules or "signature-invalid" in rules
    assert certificate_facts(certificate_header_value(cert)).serial_number == cert.serial_number
    assert certificate_facts(certificate_header_value(other_cert)).serial_number == other_cert.serial_number
    assert certificate_facts.cache_info().maxsize == 256


def test_a_tampered_request_after_good_ones_gets_its_findings(identities):
    key, cert = identities[0]
    v = Validator(spec=SPEC, now=NOW)
    good = sign_envelope(build_request(SPEC, "createSepaCreditTransfer"), key, cert, now=NOW, spec=SPEC)
    for _ in range(3):
        assert v.validate(good, "request").valid
    tampered = {**good, "body": good["body"].replace("}", ' }', 1)}
    assert {f.rule for f in v.validate(tampered, "request").findings} == {"digest-mismatch"}
    value = good["headers"]["Signature"]
    at = value.rindex('signature="') + len('signature="')
    flipped = value[:at] + ("B" if value[at] == "A" else "A") + value[at + 1:]  # still Base64, another signature
    other_sig = {**good, "headers": {**good["headers"], "Signature": flipped}}
    assert {f.rule for f in v.validate(other_sig, "request").findings} == {"signature-invalid"}
