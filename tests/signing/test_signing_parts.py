"""Unit tests of the parts: keyId/DN parsing, RFC 2047, Digest, certificate loading, signer API, keygen."""
from __future__ import annotations

import base64
import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from validator.signing import (PROFILE_SIGNED_HEADERS, SignableRequest, VerifyOptions, compute_digest,
                               decode_rfc2047, generate_test_identity, parse_signature, save_pem, sign_request,
                               verify_request)
from validator.signing.cavage import SignatureFormatError
from validator.signing.certificate import CertificateError, parse_certificate_header
from validator.signing.digest import check_digest
from validator.signing.keyid import KeyIdError, issuer_matches, parse_dn, parse_key_id

UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def identity():
    return generate_test_identity(organization_identifier="PSDNO-FSA-ABC123", common_name="Parts TPP",
                                  serial=0x1F, not_before=dt.datetime(2025, 1, 1, tzinfo=UTC),
                                  not_after=dt.datetime(2026, 1, 1, tzinfo=UTC))


def test_generated_identity_subject(identity):
    key, cert = identity
    oids = {a.oid.dotted_string: a.value for a in cert.subject}
    assert oids == {"2.5.4.6": "NO", "2.5.4.10": "obvalidate Test TPP AS", "2.5.4.97": "PSDNO-FSA-ABC123",
                    "2.5.4.3": "Parts TPP"}
    assert cert.issuer == cert.subject and cert.serial_number == 0x1F
    assert key.key_size == 2048
    assert cert.signature_hash_algorithm.name == "sha256"


@pytest.mark.parametrize("text,expected", [
    ("CN=A,O=B", ((("2.5.4.3", "a"),), (("2.5.4.10", "b"),))),
    ("cn=A; o=B", ((("2.5.4.3", "a"),), (("2.5.4.10", "b"),))),
    (r"O=Foo\, Bar AS", ((("2.5.4.10", "foo, bar as"),),)),
    (r"O=\46oo", ((("2.5.4.10", "foo"),),)),
    (r"O=B\C3\A6r", ((("2.5.4.10", "bær"),),)),
    ('O="Foo, Bar"', ((("2.5.4.10", "foo, bar"),),)),
    ("OU=x+CN=y,C=NO", ((("2.5.4.11", "x"), ("2.5.4.3", "y")), (("2.5.4.6", "no"),))),
    ("2.5.4.97=#0c03414243", ((("2.5.4.97", "abc"),),)),
    ("OID.2.5.4.97=ABC", ((("2.5.4.97", "abc"),),)),
    ("organizationIdentifier=ABC", ((("2.5.4.97", "abc"),),)),
    ("CN=Two%20Words,S=Oslo", ((("2.5.4.3", "two words"),), (("2.5.4.8", "oslo"),))),
])
def test_parse_dn(text, expected):
    assert parse_dn(text) == tuple(frozenset(r) for r in expected)


@pytest.mark.parametrize("text", ["", "CN", "CN=A,", "XYZ=1", "CN=#0c05414243", "CN=#zz", 'CN="open', "CN=A\\",
                                  "CN=#0203010001"])
def test_parse_dn_rejects(text):
    with pytest.raises(KeyIdError):
        parse_dn(text)


def test_key_id_matching(identity):
    _, cert = identity
    assert parse_key_id("SN=1f,CA=C=NO,O=obvalidate Test TPP AS,2.5.4.97=PSDNO-FSA-ABC123,CN=Parts TPP").serial == 31
    for text in ["SN=001F,CA=C=NO,O=obvalidate Test TPP AS,2.5.4.97=PSDNO-FSA-ABC123,CN=Parts TPP",
                 "SN=1F,CA=CN=Parts%20TPP,organizationidentifier=psdno-fsa-abc123,O=obvalidate  Test TPP AS,C=NO"]:
        assert issuer_matches(parse_key_id(text), cert)
    shuffled = parse_key_id("SN=1F,CA=O=obvalidate Test TPP AS,C=NO,2.5.4.97=PSDNO-FSA-ABC123,CN=Parts TPP")
    assert not issuer_matches(shuffled, cert)      # only RFC 2253 order or its reverse
    with pytest.raises(KeyIdError):
        parse_key_id("CA=CN=x,SN=1F")
    with pytest.raises(KeyIdError):
        parse_key_id("SN=0x1F,CA=CN=x")


def test_rfc2047_forms():
    plain = 'keyId="SN=1,CA=O=Bær",headers="date",signature="AA=="'
    b_utf8 = "=?utf-8?B?" + base64.b64encode(plain.encode()).decode() + "?="
    b_latin = "=?ISO-8859-1?b?" + base64.b64encode(plain.encode("latin-1")).decode() + "?="
    q_latin = "=?iso-8859-1?Q?keyId=3D=22SN=3D1,CA=3DO=3DB=E6r=22,headers=3D=22date=22,signature=3D=22AA=3D=3D=22?="
    for value in (b_utf8, b_latin, q_latin, plain):
        text, wrapped = decode_rfc2047(value)
        assert text == plain and wrapped == (value != plain)
        assert parse_signature(value).key_id == "SN=1,CA=O=Bær"
    for bad in ("=?utf-8?B?###?=", "=?utf-8?X?abc?=", "=?utf-8?B?QQ==?=x", "=?utf-8?Q?a b?=", "=?utf-8?B?/w==?="):
        with pytest.raises(SignatureFormatError):
            decode_rfc2047(bad)


def test_digest_checks():
    body = b'{"a":1}'
    assert check_digest(compute_digest(body), body) == []
    assert check_digest(compute_digest(body, "SHA-512"), body) == []
    assert [p.kind for p in check_digest(compute_digest(b""), b"")] == []
    assert [p.kind for p in check_digest(compute_digest(body), b"x")] == ["mismatch"]
    assert [p.kind for p in check_digest("SHA-256", body)] == ["malformed"]
    assert [p.kind for p in check_digest("", body)] == ["malformed"]
    both = compute_digest(body) + "," + compute_digest(b"other", "SHA-512")
    assert [p.kind for p in check_digest(both, body)] == ["mismatch"]
    assert [p.kind for p in check_digest("UNIXsum=123", body)] == ["algorithm"]
    with pytest.raises(ValueError):
        compute_digest(body, "MD5")


def test_certificate_header_forms(identity):
    _, cert = identity
    der = cert.public_bytes(serialization.Encoding.DER)
    b64 = base64.b64encode(der).decode()
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    wrapped = "\n".join(b64[i:i + 64] for i in range(0, len(b64), 64))
    for value in (b64, pem, wrapped, " " + b64 + "\t"):
        assert parse_certificate_header(value).serial_number == cert.serial_number
    for bad in ("", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----", "%%%", base64.b64encode(b"x").decode()):
        with pytest.raises(CertificateError):
            parse_certificate_header(bad)


def test_sign_request_accepts_pem_inputs_and_replaces_headers(identity, tmp_path):
    key, cert = identity
    key_path, cert_path = tmp_path / "tpp.key", tmp_path / "tpp.pem"
    save_pem(key, cert, key_path, cert_path)
    assert x509.load_pem_x509_certificate(cert_path.read_bytes()) == cert
    request = SignableRequest("POST", "/v1/signing-baskets", [
        ("x-request-id", "4d0f5e6b-5f0e-4a4b-9a7b-1f2e3d4c5b6a"), ("Digest", "SHA-256=stale"),
        ("Signature", "old"), ("Signature", "older"), ("TPP-Redirect-URI", "https://tpp.example/cb")],
        b'{"paymentIds":["p1"]}')
    when = dt.datetime(2025, 7, 1, 12, 0, 0, tzinfo=UTC)
    signed = sign_request(request, key_path.read_bytes(), cert_path.read_bytes(), date=when)
    names = [n for n, _ in signed.headers]
    assert names == ["x-request-id", "Digest", "Signature", "TPP-Redirect-URI", "Date", "TPP-Signature-Certificate"]
    values = dict(signed.headers)
    assert values["Date"] == "Tue, 01 Jul 2025 12:00:00 GMT"
    assert values["Digest"] == compute_digest(request.body)
    assert "\n" not in values["TPP-Signature-Certificate"]
    params = parse_signature(values["Signature"])
    assert params.headers == ("date", "digest", "x-request-id", "tpp-redirect-uri")
    assert params.key_id == "SN=1F,CA=CN=Parts TPP,2.5.4.97=PSDNO-FSA-ABC123,O=obvalidate Test TPP AS,C=NO"
    assert verify_request(signed, VerifyOptions(now=when)) == []


def test_sign_request_refuses_what_it_cannot_sign(identity):
    key, cert = identity
    with pytest.raises(ValueError):
        sign_request(SignableRequest("GET", "/", [("X-Request-ID", "a\r\nb")], None), key, cert)
    with pytest.raises(ValueError):
        sign_request(SignableRequest("GET", "/", [("X-Request-ID", "a")], None), key, cert, headers=["psu-id"])
    _, foreign_cert = generate_test_identity(key_size=2048)
    with pytest.raises(ValueError):
        sign_request(SignableRequest("GET", "/", [("X-Request-ID", "a")], None), key, foreign_cert)


def test_explicit_headers_and_digest_without_body(identity):
    key, cert = identity
    request = SignableRequest("GET", "/v1/sandbox/customers?withAccounts=true", [("X-Request-ID", "a")], None)
    signed = sign_request(request, key, cert, headers=["x-request-id", "digest"], sign_request_target=True)
    params = parse_signature(dict(signed.headers)["Signature"])
    assert params.headers == ("(request-target)", "x-request-id", "digest")
    assert dict(signed.headers)["Digest"] == compute_digest(b"")
    now = dt.datetime(2025, 7, 1, tzinfo=UTC)
    assert [f.rule for f in verify_request(signed, VerifyOptions(now=now))] == ["digest-unverifiable"]
    assert verify_request(signed.__class__(signed.method, signed.target, signed.headers, b""),
                          VerifyOptions(now=now)) == []


def test_profile_list():
    assert PROFILE_SIGNED_HEADERS == ("date", "digest", "x-request-id", "psu-id", "psu-corporate-id",
                                      "tpp-redirect-uri")
