"""Key and certificate generation for tests and tools.

``generate_test_identity`` makes a fresh self-signed QSealC-like identity (C=NO, O, organizationIdentifier, CN).
``test_vector_key`` / ``test_vector_certificate`` rebuild the deterministic identity of the signing reference's test
vector: both primes are derived from SHAKE256 exactly as the reference describes, so the key is reproducible without
being stored anywhere.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
from functools import lru_cache
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

E = 65537
TEST_VECTOR_LABEL = b"psd2-sig-tv-2025/"
TEST_VECTOR_MODULUS_PREFIX = "c917babf122db54e"
TEST_VECTOR_SERIAL = 0x0A1B2C3D4E5F60718293
TEST_VECTOR_NOT_BEFORE = _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc)
TEST_VECTOR_NOT_AFTER = _dt.datetime(2030, 1, 1, tzinfo=_dt.timezone.utc)

_SMALL_PRIMES: tuple[int, ...] = tuple(
    p for p in range(3, 2000) if all(p % d for d in range(2, int(p ** 0.5) + 1))
)
# Fixed Miller-Rabin bases: deterministic output, and for random-looking 1024-bit candidates 16 rounds leave an
# error probability far below 2**-64 (the chance a composite passes is at most 4**-16 and in practice much less).
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53)


def is_probable_prime(n: int) -> bool:
    """Trial division by small primes, then Miller-Rabin with fixed bases."""
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n == p:
            return True
        if n % p == 0:
            return False
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def derive_prime(label: bytes) -> int:
    """Smallest prime >= c with prime mod 65537 != 1, c = SHAKE256(TEST_VECTOR_LABEL + label) as in signing.md."""
    c = int.from_bytes(hashlib.shake_256(TEST_VECTOR_LABEL + label).digest(128), "big") | (3 << 1022) | 1
    # Residues of c modulo the small primes, advanced by 2 per step: a cheap sieve before Miller-Rabin.
    residues = [c % p for p in _SMALL_PRIMES]
    candidate = c
    while True:
        if all(r for r in residues) and candidate % E != 1 and is_probable_prime(candidate):
            return candidate
        candidate += 2
        residues = [(r + 2) % p for r, p in zip(residues, _SMALL_PRIMES)]


@lru_cache(maxsize=1)
def test_vector_key() -> rsa.RSAPrivateKey:
    """The deterministic RSA-2048 key of the signing reference's test vector (derived, not stored)."""
    p = derive_prime(b"p")
    q = derive_prime(b"q")
    n = p * q
    if n.bit_length() != 2048 or not format(n, "x").startswith(TEST_VECTOR_MODULUS_PREFIX):
        raise RuntimeError("test-vector key derivation does not reproduce the published modulus prefix")
    phi = (p - 1) * (q - 1)
    d = pow(E, -1, phi)
    iqmp = pow(q, -1, p)
    numbers = rsa.RSAPrivateNumbers(
        p=p, q=q, d=d, dmp1=d % (p - 1), dmq1=d % (q - 1), iqmp=iqmp,
        public_numbers=rsa.RSAPublicNumbers(E, n),
    )
    return numbers.private_key()


def _name(country: str, organization: str, organization_identifier: str, common_name: str) -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.COUNTRY_NAME, country),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
        x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, organization_identifier),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ])


def build_self_signed(key, name: x509.Name, serial: int, not_before: _dt.datetime,
                      not_after: _dt.datetime) -> x509.Certificate:
    """A self-signed SHA-256 certificate; works for RSA and EC keys."""
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
    )
    return builder.sign(key, hashes.SHA256())


@lru_cache(maxsize=1)
def test_vector_certificate() -> x509.Certificate:
    """Self-signed certificate of the test vector (serial 0x0A1B2C3D4E5F60718293, valid 2025-01-01 .. 2030-01-01).

    RSA PKCS#1 v1.5 signing is deterministic, so the certificate bytes are reproducible too.
    """
    name = _name("NO", "Example TPP AS", "PSDNO-FSA-987654", "Example TPP QSealC Test")
    return build_self_signed(test_vector_key(), name, TEST_VECTOR_SERIAL, TEST_VECTOR_NOT_BEFORE,
                             TEST_VECTOR_NOT_AFTER)


def generate_test_identity(*, organization_identifier: str = "PSDNO-FSA-TEST01",
                           common_name: str = "obvalidate test TPP QSealC",
                           organization: str = "obvalidate Test TPP AS",
                           serial: int | None = None,
                           not_before: _dt.datetime | None = None,
                           not_after: _dt.datetime | None = None,
                           key_size: int = 2048,
                           key=None):
    """Return ``(private_key, certificate)``: a self-signed SHA-256 certificate with subject
    C=NO, O=<organization>, organizationIdentifier=<organization_identifier>, CN=<common_name>.

    ``key`` may be any private key cryptography can sign a certificate with (RSA or EC); without it a new RSA key of
    ``key_size`` bits is generated.
    """
    if key is None:
        key = rsa.generate_private_key(public_exponent=E, key_size=key_size)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    if not_before is None:
        not_before = now - _dt.timedelta(days=1)
    if not_after is None:
        not_after = not_before + _dt.timedelta(days=365)
    if serial is None:
        serial = x509.random_serial_number()
    name = _name("NO", organization, organization_identifier, common_name)
    return key, build_self_signed(key, name, serial, not_before, not_after)


def save_pem(key, cert: x509.Certificate, key_path, cert_path) -> None:
    """Write the private key (PKCS#8, unencrypted) and the certificate as PEM files."""
    Path(key_path).write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    Path(cert_path).write_bytes(cert.public_bytes(serialization.Encoding.PEM))


# The names begin with "test_": keep pytest from collecting them when a test module imports them.
test_vector_key.__test__ = False  # type: ignore[attr-defined]
test_vector_certificate.__test__ = False  # type: ignore[attr-defined]
