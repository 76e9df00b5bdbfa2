"""Test certificates for the TLS tests, made with ``cryptography``: a test CA, a server certificate for the loopback
names (or any others), client certificates, and a second CA nobody trusts."""
from __future__ import annotations

import datetime as _dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK = ("127.0.0.1", "localhost")


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(names) -> x509.SubjectAlternativeName:
    entries = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


@dataclass
class Authority:
    """A certificate authority of the test: its key and self-signed certificate, ``cert`` its PEM file."""
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    cert: Path

    @classmethod
    def create(cls, directory: Path, name: str) -> "Authority":
        key = ec.generate_private_key(ec.SECP256R1())
        now = _dt.datetime.now(_dt.timezone.utc)
        certificate = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                       .public_key(key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now - _dt.timedelta(days=1)).not_valid_after(now + _dt.timedelta(days=30))
                       .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                       .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                                    key_encipherment=False, data_encipherment=False,
                                                    key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                    encipher_only=False, decipher_only=False), critical=True)
                       .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                       .sign(key, hashes.SHA256()))
        path = Path(directory) / f"{name}.pem"
        path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        return cls(key, certificate, path)

    def issue(self, directory: Path, name: str, *, names=(), client: bool = False) -> tuple[Path, Path]:
        """A leaf certificate signed by this authority: a server's for ``names`` (DNS names or IP addresses), or a
        client's; its (certificate file, key file)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = _dt.datetime.now(_dt.timezone.utc)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(self.certificate.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - _dt.timedelta(days=1)).not_valid_after(now + _dt.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False))
        if names:
            builder = builder.add_extension(_san(names), critical=False)
        certificate = builder.sign(self.key, hashes.SHA256())
        cert, key_file = Path(directory) / f"{name}.crt", Path(directory) / f"{name}.key"
        cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return cert, key_file


@dataclass
class Material:
    """Everything a TLS test needs, in one directory."""
    ca: Authority              # the test CA: the server's and the client's certificates
    server_cert: Path          # for 127.0.0.1 and localhost
    server_key: Path
    client_cert: Path          # a TPP's TLS client certificate (the QWAC's stand-in)
    client_key: Path
    other_ca: Authority        # a CA nobody trusts
    stranger_cert: Path        # a client certificate of the other CA
    stranger_key: Path
    elsewhere_cert: Path       # a server certificate of the test CA for another host name
    elsewhere_key: Path


def material(directory: Path) -> Material:
    directory = Path(directory)
    ca = Authority.create(directory, "test-ca")
    other = Authority.create(directory, "other-ca")
    server = ca.issue(directory, "server", names=LOOPBACK)
    client = ca.issue(directory, "client", client=True)
    stranger = other.issue(directory, "stranger", client=True)
    elsewhere = ca.issue(directory, "elsewhere", names=("bank.example",))
    return Material(ca, *server, *client, other, *stranger, *elsewhere)
