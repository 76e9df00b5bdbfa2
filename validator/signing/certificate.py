"""``TPP-Signature-Certificate``: Base64 of the DER certificate (PEM armour and whitespace tolerated), the key
requirements of the profile (RSA, at least 2048 bits) and the validity period at a given time.
"""
from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
from dataclasses import dataclass
from functools import lru_cache

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .keyid import name_rdns

MIN_RSA_BITS = 2048
_ARMOUR_RE = re.compile(r"-----(BEGIN|END) [A-Z0-9 ]+-----")
_WHITESPACE_RE = re.compile(r"[ \t\r\n]+")


class CertificateError(ValueError):
    """The certificate cannot be decoded or parsed."""


def decode_certificate_text(value: str) -> bytes:
    """DER bytes from the header text: PEM armour lines and whitespace (incl. line breaks) are dropped first."""
    if not isinstance(value, str):
        raise CertificateError("the certificate value is not text")
    text = _ARMOUR_RE.sub("", value)
    text = _WHITESPACE_RE.sub("", text)
    if not text:
        raise CertificateError("the certificate value is empty")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise CertificateError("the certificate value is not valid Base64") from None


@dataclass(frozen=True, slots=True)
class CertificateFacts:
    """A parsed TPP-Signature-Certificate and what every verification reads of it, read once: cryptography
    builds new Python objects on each read of a certificate's key, dates and issuer name."""

    certificate: x509.Certificate
    key_problem: str | None                 # why the key is unacceptable (:func:`key_problem`)
    public_key: rsa.RSAPublicKey | None     # the key when it is acceptable
    not_before: _dt.datetime
    not_after: _dt.datetime
    issuer_rdns: tuple | None               # :func:`validator.signing.keyid.name_rdns` of the issuer (None: unreadable)
    serial_number: int


@lru_cache(maxsize=256)
def certificate_facts(value: str) -> CertificateFacts:
    """Parse a TPP-Signature-Certificate value; raises :class:`CertificateError`. Results are cached by the
    header's exact text (parsing is pure and a certificate immutable; a TPP sends the same one on every request):
    at most 256 values, the least recently used dropped first, and a value that fails is parsed again each time."""
    der = decode_certificate_text(value)
    try:
        cert = x509.load_der_x509_certificate(der)
        cert.public_key()          # parsed lazily: surface a broken key now
        cert.issuer                # likewise for the issuer name
    except Exception as exc:       # cryptography raises ValueError and a few others on garbage
        raise CertificateError(f"the decoded bytes are not a DER X.509 certificate ({exc})") from None
    problem = key_problem(cert)
    try:
        issuer = name_rdns(cert.issuer)
    except Exception:  # noqa: BLE001 - the verifier reads the issuer itself then, failing where it always did
        issuer = None
    return CertificateFacts(cert, problem, None if problem else cert.public_key(), cert.not_valid_before_utc,
                            cert.not_valid_after_utc, issuer, cert.serial_number)


def parse_certificate_header(value: str) -> x509.Certificate:
    """Parse a TPP-Signature-Certificate value. Results are cached by value (certificates are immutable)."""
    return certificate_facts(value).certificate


ORGANIZATION_IDENTIFIER_OID = "2.5.4.97"


@lru_cache(maxsize=256)
def tpp_identity(value: str | None) -> str | None:
    """Whose request it is (A28): the TPP-Signature-Certificate's organizationIdentifier, else its subject DN; None
    without a certificate or with one that cannot be read (the verifier reports that)."""
    if not value:
        return None
    try:
        cert = parse_certificate_header(value)
    except Exception:  # noqa: BLE001 - an unusable certificate is the verifier's finding, not an identity
        return None
    for attribute in cert.subject:
        if attribute.oid.dotted_string == ORGANIZATION_IDENTIFIER_OID:
            return str(attribute.value)
    return cert.subject.rfc4514_string()


def load_certificate(data) -> x509.Certificate:
    """An ``x509.Certificate`` from a Certificate object, PEM bytes/text, DER bytes or Base64 DER text."""
    if isinstance(data, x509.Certificate):
        return data
    if isinstance(data, str):
        if "-----BEGIN" in data:
            return x509.load_pem_x509_certificate(data.encode("ascii"))
        return parse_certificate_header(data)
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data)
        if data.lstrip().startswith(b"-----BEGIN"):
            return x509.load_pem_x509_certificate(data)
        return x509.load_der_x509_certificate(data)
    raise TypeError(f"cannot load a certificate from {type(data).__name__}")


def certificate_header_value(cert: x509.Certificate) -> str:
    """Base64 DER, one line, no armour: the wire form real clients send."""
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode("ascii")


def _key_kind(key) -> str:
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC ({key.curve.name})"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "Ed25519"
    if isinstance(key, ed448.Ed448PublicKey):
        return "Ed448"
    if isinstance(key, dsa.DSAPublicKey):
        return "DSA"
    return type(key).__name__


def key_problem(cert: x509.Certificate) -> str | None:
    """Why the certificate's key is unacceptable for the profile, or ``None``."""
    key = cert.public_key()
    if not isinstance(key, rsa.RSAPublicKey):
        return f"the certificate key is {_key_kind(key)}, the profile requires RSA"
    if key.key_size < MIN_RSA_BITS:
        return f"the certificate RSA key has {key.key_size} bits, the profile requires at least {MIN_RSA_BITS}"
    return None


def validity_problem(cert: x509.Certificate, at: _dt.datetime) -> tuple[str, str] | None:
    """``("expired"|"not-yet-valid", message)`` when ``at`` lies outside the validity period, else ``None``."""
    return validity_period_problem(cert.not_valid_before_utc, cert.not_valid_after_utc, at)


def validity_period_problem(not_before: _dt.datetime, not_after: _dt.datetime,
                            at: _dt.datetime) -> tuple[str, str] | None:
    """:func:`validity_problem` for a certificate's validity period (``not_before``, ``not_after``, UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=_dt.timezone.utc)
    if at > not_after:
        return "expired", (f"the certificate expired at {not_after.isoformat()} "
                           f"(checked at {at.astimezone(_dt.timezone.utc).isoformat()})")
    if at < not_before:
        return "not-yet-valid", (f"the certificate is not valid before {not_before.isoformat()} "
                                 f"(checked at {at.astimezone(_dt.timezone.utc).isoformat()})")
    return None
