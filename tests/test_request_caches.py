"""The caches of the whole-request check (certificates, Date values, header values, tokens and printable values,
the Digest shortcut, Signature parameters without regular expressions): each is bounded, and a different or tampered
value still gets its own finding after a good one was remembered."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Validator
from validator.request import headers as request_headers
from validator.request import parse as request_parse
from validator.request.build import build_request
from validator.request.sign import sign_envelope
from validator.signing import generate_test_identity
from validator.signing import verifier
from validator.signing.cavage import SIGNATURE_PARAMS, SignatureFormatError, _params, _plain_params
from validator.signing.certificate import certificate_facts, certificate_header_value
from validator.signing.digest import check_digest, compute_digest
from validator.spec import load_spec

SPEC = load_spec()
UTC = dt.timezone.utc
NOW = dt.datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
OPERATION = "createSepaCreditTransfer"


@pytest.fixture(scope="module")
def identities():
    """Two identities valid around NOW, and one that expired before it (key generation is slow: once a module)."""
    valid = generate_test_identity(not_before=NOW - dt.timedelta(days=30), not_after=NOW + dt.timedelta(days=30))
    other = generate_test_identity(not_before=NOW - dt.timedelta(days=30), not_after=NOW + dt.timedelta(days=30),
                                   organization="Another TPP AS")
    expired = generate_test_identity(key=valid[0], not_before=NOW - dt.timedelta(days=60),
                                     not_after=NOW - dt.timedelta(days=1))
    return valid, other, expired


def signed(identity, *, headers=None, when=NOW) -> dict:
    env = build_request(SPEC, OPERATION, headers=headers)
    return sign_envelope(env, *identity, now=when, spec=SPEC)


def rules(report) -> list[str]:
    return sorted(f.rule for f in report.findings)


def validator(now=NOW) -> Validator:
    return Validator(spec=SPEC, now=now)


# ---- certificates ----
def test_certificate_cache_is_bounded():
    assert certificate_facts.cache_info().maxsize == 256


def test_another_certificate_after_a_remembered_one_gets_its_findings(identities):
    valid, other, expired = identities
    v = validator()
    good = signed(valid)
    assert v.validate(good, "request").valid
    # the certificate of another TPP in place of the remembered one: its key does not verify, its keyId differs
    swapped = json.loads(json.dumps(good))
    swapped["headers"]["TPP-Signature-Certificate"] = certificate_header_value(other[1])
    assert {"signature-invalid", "signature-keyid-mismatch"} <= set(rules(v.validate(swapped, "request")))
    # the same key in an expired certificate: expired, though the key and issuer are the remembered ones
    assert "certificate-expired" in rules(v.validate(signed(expired), "request"))
    assert v.validate(signed(other), "request").valid  # and the other TPP's own request is valid
    assert v.validate(good, "request").valid


def test_a_remembered_certificate_is_judged_against_each_requests_clock(identities):
    valid, _other, _expired = identities
    request = signed(valid)
    assert validator().validate(request, "request").valid
    later = validator(NOW + dt.timedelta(days=40))
    assert "certificate-expired" in rules(later.validate(request, "request"))
    earlier = validator(NOW - dt.timedelta(days=40))
    assert "certificate-not-yet-valid" in rules(earlier.validate(request, "request"))


def test_a_broken_certificate_is_refused_every_time(identities):
    valid, _other, _expired = identities
    request = signed(valid)
    request["headers"]["TPP-Signature-Certificate"] = "AAAA"
    v = validator()
    for _ in range(2):
        assert "certificate-invalid" in rules(v.validate(request, "request"))


# ---- Date ----
def test_date_cache_is_bounded_and_keeps_no_failure():
    info = verifier._parse_imf_fixdate_cached.cache_info()
    assert info.maxsize == 64
    for _ in range(2):
        with pytest.raises(ValueError):
            verifier.parse_imf_fixdate("Tue, 01 Jul 2026 10:00:00 GMT")  # 1 July 2026 is a Wednesday
    assert verifier.parse_imf_fixdate("Wed, 01 Jul 2026 10:00:00 GMT") == NOW


def test_another_date_after_a_remembered_one_gets_its_findings(identities):
    valid, _other, _expired = identities
    v = validator()
    assert v.validate(signed(valid), "request").valid
    late = signed(valid, when=NOW + dt.timedelta(minutes=10))
    assert rules(v.validate(late, "request")) == ["signature-date-window"]
    assert v.validate(signed(valid), "request").valid


# ---- Digest ----
@pytest.mark.parametrize("body", [b"", b"{}", '{"a": "ø"}'.encode(), bytes(range(256))])
def test_digest_shortcut_agrees_with_the_full_check(body):
    exact = compute_digest(body)
    assert check_digest(exact, body) == []
    assert check_digest(exact.replace("SHA-256", "sha-256"), body) == []  # the long way, same verdict
    tampered = check_digest(exact, body + b" ")
    assert [p.kind for p in tampered] == ["mismatch"]
    assert [p.kind for p in check_digest(exact, None)] == []  # syntax only without the body


# ---- header values ----
def _header_check(key: str):
    op = SPEC.operation(OPERATION)
    plan = request_headers._plan(SPEC, op)
    return next(c for c in plan.checks if c.key == key)


def test_header_value_memory_is_bounded(identities):
    valid, _other, _expired = identities
    v = validator()
    template = signed(valid)
    check = _header_check("psu-id")
    for n in range(request_headers._REMEMBERED_VALUES + 10):
        request = json.loads(json.dumps(template))
        request["headers"]["PSU-ID"] = f"psu-{n}"
        v.validate(request, "request")
        assert len(check.found) <= request_headers._REMEMBERED_VALUES
    request["headers"]["PSU-ID"] = "x" * (request_headers._REMEMBERED_VALUE_LENGTH + 1)
    v.validate(request, "request")
    assert "x" * (request_headers._REMEMBERED_VALUE_LENGTH + 1) not in check.found


def test_a_bad_header_value_after_a_remembered_good_one_gets_its_finding(identities):
    valid, _other, _expired = identities
    v = validator()
    good = signed(valid, headers={"PSU-IP-Address": "192.0.2.10"})
    bad = signed(valid, headers={"PSU-IP-Address": "192.0.2.300"})
    for _ in range(2):  # the second time both verdicts come from memory
        assert v.validate(good, "request").valid
        assert rules(v.validate(bad, "request")) == ["header-format"]
    assert "192.0.2.300" in _header_check("psu-ip-address").found


# ---- tokens and printable values ----
def test_token_and_printable_memories_are_bounded():
    for n in range(request_parse._KNOWN_BOUND + 10):
        assert request_parse._is_token(f"X-Header-{n}")
        assert request_parse._is_printable_ascii(f"{n:0>300}")
        assert len(request_parse._KNOWN_TOKENS) <= request_parse._KNOWN_BOUND
        assert len(request_parse._KNOWN_PRINTABLE) <= request_parse._KNOWN_BOUND
    assert request_parse._is_token("X" * 200)
    assert "X" * 200 not in request_parse._KNOWN_TOKENS


def test_path_memory_is_bounded_and_keeps_only_usable_paths_without_query():
    for n in range(request_parse._KNOWN_BOUND + 10):
        assert request_parse._split_target(f"/v1/payments/{n}", []) == (f"/v1/payments/{n}", f"/v1/payments/{n}", [])
        assert len(request_parse._KNOWN_PATHS) <= request_parse._KNOWN_BOUND
    for unusable in ("/v1/a b", "/v1/a\x01", "/v1/a#b", "v1/a"):
        problems = []
        assert request_parse._split_target(unusable, problems) is None and problems
        assert unusable not in request_parse._KNOWN_PATHS
    assert request_parse._split_target("/v1/a?x=1", []) == ("/v1/a?x=1", "/v1/a", [("x", "1")])
    assert "/v1/a?x=1" not in request_parse._KNOWN_PATHS
    # a remembered path gives what the checks give, a fresh list each time
    first = request_parse._split_target("/v1/payments/sepa-credit-transfers", [])
    again = request_parse._split_target("/v1/payments/sepa-credit-transfers", [])
    assert first == again and first[2] is not again[2]


def test_signing_plans_are_bounded():
    for n in range(verifier._SIGNING_PLANS_BOUND + 10):
        plan = verifier._signing_plan(("date", "digest", "x-request-id"), ("(request-target)", "date", f"x-h{n}"))
        assert plan.unsigned == ("digest", "x-request-id")
        assert plan.prefixed == (("date: ", "date"), (f"x-h{n}: ", f"x-h{n}"))
        assert plan.target_at == (0,)
        assert len(verifier._SIGNING_PLANS) <= verifier._SIGNING_PLANS_BOUND


def test_a_control_character_after_a_remembered_value_gets_its_finding(identities):
    valid, _other, _expired = identities
    v = validator()
    good = signed(valid)
    assert v.validate(good, "request").valid  # the certificate is now a remembered printable value
    bad = json.loads(json.dumps(good))
    certificate = bad["headers"]["TPP-Signature-Certificate"]
    bad["headers"]["TPP-Signature-Certificate"] = certificate[:100] + "\x01" + certificate[100:]
    assert "header-malformed" in rules(v.validate(bad, "request"))
    bad = json.loads(json.dumps(good))
    bad["headers"]["Bad Name"] = "x"  # not a token, though many names are remembered
    assert "header-malformed" in rules(v.validate(bad, "request"))


# ---- Signature parameters ----
_pieces = st.sampled_from([*SIGNATURE_PARAMS, "created", "keyid", " ", "\t", "=", '"', ",", "a", "SN=1,CA=CN=x",
                           "rsa-sha256", "date digest", "QUJD", "=="])


@settings(max_examples=400, deadline=None)
@given(st.lists(_pieces, max_size=24).map("".join))
def test_signature_parameters_without_regular_expressions_agree_with_the_strict_parser(text):
    plain = _plain_params(text)
    if plain is None:
        return  # the strict parser decides (and words the problem)
    try:
        strict = _params(text)
    except SignatureFormatError as exc:  # the shortcut accepted what the grammar refuses
        pytest.fail(f"{text!r}: accepted without regular expressions, refused by the grammar: {exc}")
    assert plain == strict


def test_signature_parameters_shortcut_takes_the_usual_form():
    text = 'keyId="SN=1,CA=CN=x", algorithm="rsa-sha256" ,headers="date digest",signature="QUJD=="'
    assert _plain_params(text) == _params(text) == {
        "keyId": "SN=1,CA=CN=x", "algorithm": "rsa-sha256", "headers": "date digest", "signature": "QUJD=="}
