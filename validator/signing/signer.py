"""Signing a request the way the profile requires (the reference client for tests, tools and examples)."""
from __future__ import annotations

import base64
import datetime as _dt
from email.utils import format_datetime
from typing import Sequence

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from .cavage import (REQUEST_TARGET, SignableRequest, SigningStringError, build_signing_string,
                     format_signature, header_index)
from .certificate import certificate_header_value, load_certificate
from .digest import compute_digest
from .keyid import format_key_id
from .rules import PROFILE_SIGNED_HEADERS

SIGNATURE_ALGORITHM = "rsa-sha256"


def _load_key(key) -> rsa.RSAPrivateKey:
    if isinstance(key, str):
        key = key.encode("ascii")
    if isinstance(key, (bytes, bytearray)):
        key = serialization.load_pem_private_key(bytes(key), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise TypeError("the signing key must be an RSA private key (the profile signs with rsa-sha256)")
    return key


def _set_header(headers: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    """Replace every occurrence of ``name`` (case-insensitive) by one header at the first one's place."""
    lname = name.lower()
    out: list[tuple[str, str]] = []
    placed = False
    for n, v in headers:
        if n.lower() == lname:
            if not placed:
                out.append((n, value))
                placed = True
            continue
        out.append((n, v))
    if not placed:
        out.append((name, value))
    return out


def imf_fixdate(when: _dt.datetime) -> str:
    """``Tue, 01 Jul 2025 12:00:00 GMT`` (naive datetimes are taken as UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return format_datetime(when.astimezone(_dt.timezone.utc).replace(microsecond=0), usegmt=True)


def sign_request(request: SignableRequest, key, certificate, *, headers: Sequence[str] | None = None,
                 digest_algorithm: str = "SHA-256", date: _dt.datetime | None = None,
                 encode_rfc2047: bool = False, sign_request_target: bool = False,
                 also: Sequence[str] = ()) -> SignableRequest:
    """Return a copy of ``request`` with Digest, TPP-Signature-Certificate and Signature set.

    ``headers=None`` signs the profile list (date digest x-request-id psu-id psu-corporate-id tpp-redirect-uri)
    and ``also`` (an implementer's extra headers, such as a gateway's), each only when present. Digest is (re)computed over the body when a body is present, or over the empty input
    when ``headers`` names ``digest`` and the request has neither body nor Digest. ``date`` sets the Date header.
    The signing string is signed as UTF-8 bytes, so non-ASCII header values work; the Signature value is wrapped as
    ``=?utf-8?B?...?=`` when ``encode_rfc2047`` is true or any parameter is non-ASCII.
    Raises ``ValueError`` when a signed value contains CR/LF/NUL or a listed header is absent.
    """
    private_key = _load_key(key)
    cert = load_certificate(certificate)
    if private_key.public_key().public_numbers() != cert.public_key().public_numbers():
        raise ValueError("the private key does not belong to the certificate")
    wanted = None if headers is None else [h.lower() for h in headers]
    new_headers = list(request.headers)
    if date is not None:
        new_headers = _set_header(new_headers, "Date", imf_fixdate(date))
    has_digest = any(n.lower() == "digest" for n, _ in new_headers)
    if request.body is not None or (wanted is not None and "digest" in wanted and not has_digest):
        new_headers = _set_header(new_headers, "Digest", compute_digest(request.body, digest_algorithm))
    new_headers = _set_header(new_headers, "TPP-Signature-Certificate", certificate_header_value(cert))
    index = header_index(new_headers)
    if wanted is None:
        signed = [h for h in dict.fromkeys((*PROFILE_SIGNED_HEADERS, *(a.lower() for a in also))) if h in index]
    else:
        signed = list(dict.fromkeys(wanted))
    if sign_request_target and REQUEST_TARGET not in signed:
        signed.insert(0, REQUEST_TARGET)
    if not signed:
        raise ValueError("nothing to sign: the request has none of the profile headers")
    try:
        signing_string = build_signing_string(request.method, request.target, signed, index)
    except SigningStringError as exc:
        raise ValueError(str(exc)) from None
    raw = private_key.sign(signing_string.encode("utf-8"), padding.PKCS1v15(), hashes.SHA256())
    value = format_signature(format_key_id(cert), SIGNATURE_ALGORITHM, signed,
                             base64.b64encode(raw).decode("ascii"), encode=encode_rfc2047)
    new_headers = _set_header(new_headers, "Signature", value)
    return SignableRequest(request.method, request.target, new_headers, request.body)
