"""Property tests: sign -> verify round trips, single-byte body changes, and verifier robustness."""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.findings import ERROR, Finding
from validator.signing import (SignableRequest, VerifyOptions, generate_test_identity, sign_request,
                               verify_request)

UTC = dt.timezone.utc
NOW = dt.datetime(2025, 7, 1, 12, 0, 0, tzinfo=UTC)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def identity():
    return generate_test_identity(not_before=dt.datetime(2025, 1, 1, tzinfo=UTC),
                                  not_after=dt.datetime(2026, 1, 1, tzinfo=UTC))


# Header values as clients may send them: any Unicode except the characters that cannot be in one header line.
header_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=60)
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
bodies = st.one_of(
    st.binary(max_size=2048),
    json_value.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8")),
)
optional_headers = st.fixed_dictionaries({}, optional={
    "PSU-ID": header_text, "PSU-Corporate-ID": header_text, "TPP-Redirect-URI": header_text,
    "PSU-User-Agent": header_text, "X-Custom-Ünicode": header_text,
})


def request_for(body: bytes, extra: dict[str, str], x_request_id: str) -> SignableRequest:
    headers = [("Date", "Tue, 01 Jul 2025 12:00:00 GMT"), ("X-Request-ID", x_request_id)]
    headers += [(k, v) for k, v in extra.items() if k.isascii()]
    headers += [("X-Custom", v) for k, v in extra.items() if not k.isascii()]
    return SignableRequest("POST", "/v1/bulk-payments/norwegian-domestic-credit-transfers", headers, body)


@SETTINGS
@given(body=bodies, extra=optional_headers, x_request_id=st.uuids().map(str), target=st.booleans(),
       wrap=st.booleans(), digest=st.sampled_from(["SHA-256", "SHA-512"]))
def test_round_trip_always_verifies(identity, body, extra, x_request_id, target, wrap, digest):
    key, cert = identity
    signed = sign_request(request_for(body, extra, x_request_id), key, cert, sign_request_target=target,
                          encode_rfc2047=wrap, digest_algorithm=digest)
    findings = verify_request(signed, VerifyOptions(now=NOW))
    assert findings == [], [(f.rule, f.message) for f in findings]


@SETTINGS
@given(body=bodies.filter(bool), extra=optional_headers, data=st.data())
def test_single_byte_change_of_body_fails_digest(identity, body, extra, data):
    key, cert = identity
    signed = sign_request(request_for(body, extra, "0f6a7e55-6b8e-4a59-9d1e-0c4a3e7f9b21"), key, cert)
    position = data.draw(st.integers(0, len(body) - 1), label="position")
    flip = data.draw(st.integers(1, 255), label="xor")
    changed = bytearray(body)
    changed[position] ^= flip
    findings = verify_request(replace(signed, body=bytes(changed)), VerifyOptions(now=NOW))
    assert [f.rule for f in findings if f.severity == ERROR] == ["digest-mismatch"]


# ---- robustness --------------------------------------------------------------------------------------------------

RELEVANT = ["Signature", "signature", "Digest", "TPP-Signature-Certificate", "Date", "X-Request-ID", "PSU-ID",
            "PSU-Corporate-ID", "TPP-Redirect-URI"]
any_text = st.text(max_size=80)
huge = st.builds(lambda ch, n: ch * n, st.characters(), st.integers(8000, 40000))
tricky_signature = st.builds(
    lambda parts: ",".join(parts),
    st.lists(st.sampled_from(['keyId="SN=1,CA=CN=x"', 'algorithm="rsa-sha256"', 'headers="date digest"',
                              'headers=""', 'signature="AAAA"', 'signature="!!"', 'created=1', 'keyId=""',
                              '=?utf-8?B?', '?=', '"', '\\"', "\r\n", "\x00", "=?iso-8859-1?Q?=E6?="]),
             max_size=6))
header_names = st.one_of(st.sampled_from(RELEVANT), any_text)
header_values = st.one_of(any_text, huge, tricky_signature, st.binary(max_size=40).map(lambda b: b.decode("latin-1")))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers=st.lists(st.tuples(header_names, header_values), max_size=12),
       body=st.one_of(st.none(), st.binary(max_size=200)),
       method=any_text, target=any_text,
       now=st.one_of(st.none(), st.datetimes(timezones=st.just(UTC))))
def test_verify_never_raises_on_garbage(headers, body, method, target, now):
    findings = verify_request(SignableRequest(method, target, headers, body), VerifyOptions(now=now))
    assert isinstance(findings, list)
    assert all(isinstance(f, Finding) for f in findings)
    assert not any("internal verifier error" in f.message for f in findings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_verify_never_raises_on_mutated_signed_request(identity, data):
    key, cert = identity
    signed = sign_request(request_for(b'{"a":1}', {"PSU-ID": "x"}, "0f6a7e55-6b8e-4a59-9d1e-0c4a3e7f9b21"),
                          key, cert)
    headers = list(signed.headers)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        i = data.draw(st.integers(0, len(headers) - 1), label="index")
        name, value = headers[i]
        how = data.draw(st.sampled_from(["dup", "cut", "insert", "drop", "replace"]), label="how")
        if how == "dup":
            headers.append((name, value))
        elif how == "cut":
            headers[i] = (name, value[:data.draw(st.integers(0, len(value)), label="cut")])
        elif how == "insert":
            at = data.draw(st.integers(0, len(value)), label="at")
            headers[i] = (name, value[:at] + data.draw(header_values, label="text") + value[at:])
        elif how == "drop" and len(headers) > 1:
            headers.pop(i)
        else:
            headers[i] = (name, data.draw(header_values, label="value"))
    findings = verify_request(replace(signed, headers=headers), VerifyOptions(now=NOW))
    assert isinstance(findings, list)
    assert not any("internal verifier error" in f.message for f in findings)


def test_verify_never_raises_on_wrong_types():
    odd = [
        SignableRequest(None, None, None, None),                                   # type: ignore[arg-type]
        SignableRequest("POST", "/", [("Signature",)], b""),                       # type: ignore[list-item]
        SignableRequest("POST", "/", [(b"Signature", b'keyId="x"'), (1, 2)], "text body"),  # type: ignore[list-item]
        SignableRequest("POST", "/", 42, b""),                                     # type: ignore[arg-type]
    ]
    for request in odd:
        findings = verify_request(request, VerifyOptions(now=NOW))
        assert isinstance(findings, list) and findings
        assert not any("internal verifier error" in f.message for f in findings)
