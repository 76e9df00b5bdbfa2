"""The deterministic test vector of the signing reference, reproduced byte for byte."""
import datetime as dt
import hashlib

from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives import hashes

from validator.signing import (SignableRequest, VerifyOptions, build_signing_string, compute_digest,
                               parse_signature, sign_request, test_vector_certificate, test_vector_key,
                               verify_request)
from validator.signing.keygen import TEST_VECTOR_SERIAL, derive_prime

BODY = (b'{"debtorAccount":{"bban":"12345678903"},"instructedAmount":{"currency":"NOK","amount":"150.00"},'
        b'"creditorAccount":{"bban":"98765432106"},"creditorName":"Kari Nordmann"}')
DIGEST = "SHA-256=RVTfuRqs0yHS0O1wYMsfQA9XxXfDihVrQzQ8stTLjxw="
HEADERS = [
    ("Date", "Tue, 01 Jul 2025 12:00:00 GMT"),
    ("X-Request-ID", "8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11"),
    ("PSU-ID", "31125461118"),
    ("TPP-Redirect-URI", "https://tpp.example.com/callback?state=abc"),
    ("Digest", DIGEST),
]
REQUEST = SignableRequest("POST", "/v1/payments/norwegian-domestic-credit-transfers", HEADERS, BODY)
NOW = dt.datetime(2025, 7, 1, 12, 2, 0, tzinfo=dt.timezone.utc)
PREFIX = "xXUhmjXbn/qcSL5cPAL1OnihjwOTiIRcHDfC8q6J00iYRfe6"
SUFFIX = "A7sdTgVeifA1HCQ=="


def test_key_derivation_reproduces_published_modulus():
    n = test_vector_key().public_key().public_numbers().n
    assert n.bit_length() == 2048
    assert format(n, "x").startswith("c917babf122db54e")
    p = derive_prime(b"p")
    assert p % 65537 != 1 and p.bit_length() == 1024
    assert n % p == 0


def test_certificate_matches_reference():
    cert = test_vector_certificate()
    assert cert.serial_number == TEST_VECTOR_SERIAL
    assert cert.subject == cert.issuer
    assert cert.issuer.rfc4514_string() == (
        "CN=Example TPP QSealC Test,2.5.4.97=PSDNO-FSA-987654,O=Example TPP AS,C=NO")


def test_digest_matches_published():
    assert compute_digest(BODY) == DIGEST
    assert compute_digest(b"") == "SHA-256=" + "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    assert hashlib.sha256(b"").hexdigest().startswith("e3b0c442")


def test_signature_reproduces_published_value_and_verifies():
    signed = sign_request(REQUEST, test_vector_key(), test_vector_certificate())
    values = dict(signed.headers)
    assert values["Digest"] == DIGEST
    params = parse_signature(values["Signature"])
    assert params.headers == ("date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri")
    assert params.algorithm == "rsa-sha256"
    assert params.key_id.startswith("SN=A1B2C3D4E5F60718293,CA=CN=Example TPP QSealC Test,")
    assert params.signature.startswith(PREFIX)
    assert params.signature.endswith(SUFFIX)
    assert verify_request(signed, VerifyOptions(now=NOW)) == []


def test_signing_string_is_the_documented_lines():
    index = {n.lower(): [v] for n, v in HEADERS}
    text = build_signing_string("POST", REQUEST.target,
                                ("date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"), index)
    assert text == ("date: Tue, 01 Jul 2025 12:00:00 GMT\n"
                    f"digest: {DIGEST}\n"
                    "x-request-id: 8f6f1a2e-1c4b-4f7e-9d53-0c8f2d6b9a11\n"
                    "psu-id: 31125461118\n"
                    "tpp-redirect-uri: https://tpp.example.com/callback?state=abc")
    # The published signature is exactly RSA PKCS#1 v1.5 SHA-256 over those bytes.
    signed = sign_request(REQUEST, test_vector_key(), test_vector_certificate())
    import base64
    raw = base64.b64decode(parse_signature(dict(signed.headers)["Signature"]).signature)
    test_vector_key().public_key().verify(raw, text.encode(), padding.PKCS1v15(), hashes.SHA256())


def test_vector_rejected_outside_certificate_validity_and_window():
    signed = sign_request(REQUEST, test_vector_key(), test_vector_certificate())
    late = verify_request(signed, VerifyOptions(now=dt.datetime(2031, 1, 1, tzinfo=dt.timezone.utc)))
    assert {f.rule for f in late} == {"signature-date-window", "certificate-expired"}
