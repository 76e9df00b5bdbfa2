"""A signed HTTP client of the interface, for tests, conformance suites, load tests and benchmarks.

Usage::

    from conformance.client import Identity, SignedClient

    tpp = Identity.generate("PSDNO-FSA-TPPA")            # throwaway test key + self-signed certificate
    with SignedClient("http://127.0.0.1:8080", tpp) as client:
        r = client.call("createSepaCreditTransfer", body={...})          # body: JSON value, str or bytes
        pid = r.json()["paymentId"]
        client.call("getPaymentStatus", path={"payment-service": "payments",
                                              "payment-product": "sepa-credit-transfers", "paymentId": pid})
        client.send("POST", "/v1/anything?x=1", body=b"{}")              # any request, signed as given

:meth:`SignedClient.call` fills every required header and query parameter of the operation with a valid default
from spec/openapi.yaml (X-Request-ID: a fresh UUID per call) unless given (``headers`` entries override, ``None``
removes one), takes the operation's first spec example as body unless given, sends ``Content-Type: application/json``
with a body (A33; ``headers={"Content-Type": None}`` leaves it out), and signs the exact body bytes it sends
with the validator's signer (Digest where the operation takes one, Date from ``clock``, TPP-Signature-Certificate,
Signature). :meth:`SignedClient.prepare` returns the signed request without sending it, for tests that tamper with
it; :meth:`SignedClient.send_prepared` sends one. ``sign=False`` sends unsigned. The client is thread-safe (one
httpx.Client; use one SignedClient per thread for the best throughput).
"""
from __future__ import annotations

import datetime as _dt
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import httpx

from conformance import bounded
from validator.request import build_request
from validator.signing import SignableRequest, generate_test_identity, sign_request
from validator.spec import Spec, load_spec

_DEFAULT: Any = object()
# The media type of every body of the interface, sent as Content-Type with each one (A33; RFC 9110 section 8.3).
JSON_MEDIA_TYPE = "application/json"
# Throwaway identities are valid for years around any sandbox clock a test picks.
VALID_FROM = _dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc)
VALID_UNTIL = _dt.datetime(2040, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class Identity:
    """A TPP's signing identity: RSA private key and certificate (cryptography objects)."""

    key: Any
    certificate: Any

    @classmethod
    def generate(cls, organization_identifier: str = "PSDNO-FSA-TEST01", *, common_name: str | None = None,
                 not_before: _dt.datetime = VALID_FROM, not_after: _dt.datetime = VALID_UNTIL) -> "Identity":
        """A fresh throwaway test identity (RSA-2048, self-signed, organizationIdentifier as given)."""
        key, cert = generate_test_identity(organization_identifier=organization_identifier,
                                           common_name=common_name or f"{organization_identifier} QSealC test",
                                           not_before=not_before, not_after=not_after)
        return cls(key, cert)

    @classmethod
    def from_files(cls, key_path: str | Path, cert_path: str | Path) -> "Identity":
        from validator.request import load_signing_identity

        return cls(*load_signing_identity(Path(key_path).read_bytes(), Path(cert_path).read_bytes()))


@dataclass
class PreparedRequest:
    method: str
    target: str                       # path + query, exactly as signed and sent
    headers: list[tuple[str, str]]
    body: bytes


class SignedClient:
    def __init__(self, base_url: str, identity: Identity | None, *, spec: Spec | None = None,
                 clock: Callable[[], _dt.datetime] | None = None, http: httpx.Client | None = None,
                 timeout: float = 30.0, event_hooks: Mapping[str, list] | None = None,
                 extra_headers: tuple[tuple[str, str], ...] = (), also_signed: tuple[str, ...] = (),
                 max_response_bytes: int = bounded.DEFAULT_MAX_BYTES) -> None:
        self.base_url = base_url.rstrip("/")
        # Sent with every request unless it has the header already, never signed (a gateway's, such as an API key).
        self.extra_headers = tuple(extra_headers)
        self.also_signed = tuple(also_signed)   # signed besides the profile list, each when present
        self.identity = identity
        self.spec = spec or load_spec()
        self.clock = clock or (lambda: _dt.datetime.now(_dt.timezone.utc))
        # Its own client reads each answer within ``timeout`` in all and ``max_response_bytes`` (bounded.py): a target
        # answering forever or without end is bounded.AnswerTimeout / AnswerTooLarge, never a hang.
        self.http = http or bounded.client(bounded.Limits(max_response_bytes, timeout), timeout=timeout,
                                           event_hooks=dict(event_hooks or {}), follow_redirects=False)

    # ---- building ----
    def prepare(self, operation_id: str, *, path: Mapping[str, str] | None = None,
                query: Mapping[str, str] | None = None, headers: Mapping[str, str | None] | None = None,
                body: Any = _DEFAULT, sign: bool = True) -> PreparedRequest:
        """The signed request :meth:`call` would send."""
        op = self.spec.operation(operation_id)
        given = dict(headers or {})
        given.setdefault("X-Request-ID", str(uuid.uuid4()))
        raw = body if isinstance(body, (bytes, bytearray)) else None
        options = {} if body is _DEFAULT else {"body": None if raw is not None else body}
        envelope = build_request(self.spec, operation_id, path_values=path, query=query, headers=given, **options)
        data = bytes(raw) if raw is not None else envelope.get("body", "").encode("utf-8")
        pairs = list(envelope["headers"].items())
        if data and op.request_schema_ref and not any(n.lower() == "content-type" for n in given):
            pairs.append(("Content-Type", JSON_MEDIA_TYPE))  # A33: HTTP metadata of the JSON body, as TPPs send it
        digest = any(p.key == "digest" for p in op.header_parameters)
        return self._signed(op.method, envelope["path"], pairs, data, sign=sign, digest=digest)

    def _signed(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes, *, sign: bool,
                digest: bool) -> PreparedRequest:
        if self.extra_headers:
            present = {n.lower() for n, _v in headers}
            headers = list(headers) + [(n, v) for n, v in self.extra_headers if n.lower() not in present]
        if sign and self.identity is not None:
            signable = SignableRequest(method, target, headers, body if digest else None)
            signed = sign_request(signable, self.identity.key, self.identity.certificate, date=self.clock(),
                                  also=self.also_signed)
            headers = list(signed.headers)
        return PreparedRequest(method, target, headers, body)

    # ---- sending ----
    def send_prepared(self, request: PreparedRequest) -> httpx.Response:
        return self.http.request(request.method, self.base_url + request.target, headers=request.headers,
                                 content=request.body or None)

    def call(self, operation_id: str, **options: Any) -> httpx.Response:
        """Build, sign and send one operation (options as :meth:`prepare`)."""
        return self.send_prepared(self.prepare(operation_id, **options))

    def send(self, method: str, target: str, *, headers: Mapping[str, str] | None = None, body: bytes | str = b"",
             sign: bool = True, digest: bool | None = None) -> httpx.Response:
        """Any request, signed as given (Digest when there is a body, unless ``digest`` says otherwise)."""
        data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        pairs = list((headers or {}).items())
        if not any(n.lower() == "x-request-id" for n, _v in pairs):
            pairs.append(("X-Request-ID", str(uuid.uuid4())))
        with_digest = bool(data) if digest is None else digest
        return self.send_prepared(self._signed(method, target, pairs, data, sign=sign, digest=with_digest))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "SignedClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
