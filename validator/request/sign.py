"""Signing requests the way a TPP must (Date, Digest over the exact body, TPP-Signature-Certificate, cavage-10
Signature), keeping the input's form (envelope dict, JSON envelope bytes or ``.http`` bytes), and the TPP's test
signing identity (``obvalidate sign``, ``obvalidate keygen``)."""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..findings import WARNING
from ..spec import Spec, load_spec
from .build import body_text
from .message import HttpRequest
from .parse import REQUEST_MALFORMED, parse_envelope, parse_http
from .resolve import resolve_operation
from .shape import looks_like_http

class RequestError(ValueError):
    """A request cannot be signed because it cannot be parsed."""


def _headers_like(original: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(original, list):
        return [[n, v] for n, v in pairs]
    out: dict[str, Any] = {}
    for n, v in pairs:
        if n in out:
            out[n] = (out[n] if isinstance(out[n], list) else [out[n]]) + [v]
        else:
            out[n] = v
    return out


def serialize_http(req: HttpRequest, headers: list[tuple[str, str]], body: bytes) -> bytes:
    nl = req.newline
    line = f"{req.method} {req.target}" + (f" {req.version}" if req.version else "")
    fixed = [(n, str(len(body)) if n.lower() == "content-length" else v) for n, v in headers]
    head = nl.join([line, *(f"{n}: {v}" for n, v in fixed)]) + nl + nl
    return head.encode("utf-8") + body


def load_signing_identity(key_data: bytes, cert_data: bytes) -> tuple[Any, Any]:
    """The RSA private key (PEM) and certificate (PEM or DER) a TPP signs with, checked to belong
    together; :class:`RequestError` says what is wrong with them."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = serialization.load_pem_private_key(key_data, password=None)
    except (ValueError, TypeError) as exc:
        raise RequestError(f"the key is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise RequestError(f"the key is {type(key).__name__.lstrip('_')}; the interface signs with RSA (rsa-sha256)")
    try:
        cert = x509.load_pem_x509_certificate(cert_data) if b"-----BEGIN" in cert_data else x509.load_der_x509_certificate(cert_data)
    except ValueError as exc:
        raise RequestError(f"the certificate is neither a PEM nor a DER X.509 certificate ({exc})") from None
    if cert.public_key().public_numbers() != key.public_key().public_numbers():
        raise RequestError("the key does not belong to the certificate (their public keys differ)")
    return key, cert


def sign_envelope(request: dict | bytes, key_pem: Any, cert_pem: Any, *, now: _dt.datetime | None = None,
                  spec: Spec | None = None, headers: Iterable[str] | None = None,
                  paths: Mapping[str, str] | None = None) -> dict | bytes:
    """Sign a request the way a TPP must, keeping its form.

    ``request`` is an envelope dict (returned as a new dict), the bytes of a JSON envelope (returned as JSON bytes)
    or raw ``.http`` bytes (returned as ``.http`` bytes). Date is set to ``now`` (default: the current time);
    Digest is computed over the exact body when the operation takes a Digest (or, for an unknown operation, when
    there is a body); TPP-Signature-Certificate and Signature are set. ``headers`` chooses the signed headers
    (default: the profile list, each when present); ``paths`` are a profile's path overrides, used to resolve the
    operation. A JSON value as body is first written as compact JSON text so
    that the Digest covers the bytes sent. Raises :class:`RequestError` when the request cannot be parsed and
    ``ValueError`` when the key does not belong to the certificate.
    """
    from ..signing import SignableRequest, sign_request

    spec = spec or load_spec()
    as_json_bytes = False
    envelope: dict | None = None
    if isinstance(request, (bytes, bytearray)):
        data = bytes(request)
        if data.lstrip()[:1] == b"{" and not looks_like_http(data):
            try:
                envelope = json.loads(data)
            except ValueError as exc:
                raise RequestError(f"the request envelope is not valid JSON: {exc}") from None
            as_json_bytes = True
            parsed = parse_envelope(envelope)
        else:
            parsed = parse_http(data)
    else:
        envelope = request
        parsed = parse_envelope(request)
    errors = [p for p in parsed.problems if p.severity != WARNING and p.rule == REQUEST_MALFORMED]
    if parsed.request is None or errors:
        raise RequestError("; ".join(f"{p.pointer or '/'}: {p.message}" for p in (errors or parsed.problems)) or "unparseable request")
    req = parsed.request
    body = req.body if req.body_is_exact else body_text(req.body_value).encode("utf-8")
    op = resolve_operation(spec, req.method, req.path, paths=paths).operation
    with_digest = (op is not None and any(p.key == "digest" for p in op.header_parameters)) or (op is None and bool(body))
    signable = SignableRequest(req.method, req.target, list(req.headers), body if with_digest else None)
    signed = sign_request(signable, key_pem, cert_pem, headers=list(headers) if headers is not None else None,
                          date=now or _dt.datetime.now(_dt.timezone.utc))
    if envelope is None:
        return serialize_http(req, signed.headers, body or b"")
    result = dict(envelope)
    result["headers"] = _headers_like(envelope.get("headers"), signed.headers)
    if body:
        result["body"] = body.decode("utf-8")
    if as_json_bytes:
        return (json.dumps(result, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    return result


def keygen(out_dir: str | os.PathLike, organization_identifier: str = "PSDNO-FSA-TEST01", *,
           common_name: str = "obvalidate test TPP QSealC", days: int = 365, overwrite: bool = False) -> tuple[Path, Path]:
    """Write a fresh test signing identity, ``key.pem`` (PKCS#8, unencrypted, mode 0600) and ``cert.pem``
    (self-signed, C=NO, organizationIdentifier=...), into ``out_dir``. For tests and sandboxes only: a production
    TPP signs with its eIDAS QSealC. Refuses to overwrite existing files unless ``overwrite``."""
    from ..signing import generate_test_identity, save_pem

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    key_path, cert_path = out / "key.pem", out / "cert.pem"
    if not overwrite:
        for p in (key_path, cert_path):
            if p.exists():
                raise FileExistsError(f"{p} exists; choose another directory or replace it (--force)")
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    key, cert = generate_test_identity(organization_identifier=organization_identifier, common_name=common_name,
                                       not_before=now - _dt.timedelta(days=1), not_after=now + _dt.timedelta(days=days))
    save_pem(key, cert, key_path, cert_path)
    os.chmod(key_path, 0o600)
    return key_path, cert_path

