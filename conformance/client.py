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
removes one), takes the operation's first spec example as body unless given (its dates moved to the client's day,
:meth:`SignedClient.default_body`), sends ``Content-Type: application/json``
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
from validator.context import today_in_oslo
from validator.request import build_request
from validator.request.build import first_body_example
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
    """A TPP's signing identity: ``key``, its RSA private key, and ``certificate``, its X.509 certificate
    (cryptography objects); :attr:`key_id` the Signature's keyId, :meth:`pem` both as PEM."""

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

    @property
    def key_id(self) -> str:
        """The Signature's keyId for this certificate: ``SN=<serial, hex>,CA=<issuer>`` (the signer sets it)."""
        from validator.signing.keyid import format_key_id

        return format_key_id(self.certificate)

    def pem(self) -> tuple[bytes, bytes]:
        """The key (PKCS#8, unencrypted) and the certificate as PEM, for a client that reads files."""
        from cryptography.hazmat.primitives import serialization

        key = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption())
        return key, self.certificate.public_bytes(serialization.Encoding.PEM)


@dataclass
class PreparedRequest:
    method: str
    target: str                       # path + query, exactly as signed and sent
    headers: list[tuple[str, str]]
    body: bytes


class SignedClient:
    """A client of one implementation of the interface, signing every request as the TPP of ``identity``.

    Arguments:

    ``base_url``
        The implementation's base address (``http://127.0.0.1:8080``; a trailing ``/`` is dropped).
    ``identity``
        The TPP's :class:`Identity` (key and certificate) the requests are signed with; None sends them unsigned.
    ``spec``
        The interface (:func:`validator.spec.load_spec`, the default), from which operations and defaults come.
    ``clock``
        A function returning the current aware datetime: each request's Date header and the day default bodies
        are valid on (:meth:`default_body`). Default: the machine's clock. Give the target's clock where it has
        its own (a sandbox started with ``--now``; the ``ob_client`` fixture passes the sandbox clock).
    ``http``
        An ``httpx.Client`` to send with (its transport, TLS, proxies); default one of its own, never following
        redirects, closed by :meth:`close`.
    ``timeout``
        Seconds an answer may take in all, connecting to the last byte of its body (the default client's).
    ``max_response_bytes``
        The largest answer body the default client reads (:mod:`conformance.bounded`; over it: AnswerTooLarge).
    ``event_hooks``
        httpx event hooks of the default client (``{"response": [check]}``: every answer passes through).
    ``extra_headers``
        ``(name, value)`` pairs sent with every request that lacks the header, never signed (a gateway's API key).
    ``also_signed``
        Header names signed besides the signing profile's (``x-signed-headers``), each when present.
    ``paths``
        Path templates by operation id where the implementation serves operations elsewhere (a profile's ``paths``).

    :meth:`call` and :meth:`prepare` take the operation id (an ``operationId`` of
    spec/openapi.yaml) and, each optional: ``path`` (path parameter values by name: ``{"payment-service":
    "payments", "payment-product": "sepa-credit-transfers", "paymentId": pid}``), ``query`` (query parameters;
    None adds the required ones), ``headers`` (override or add; ``None`` removes one), ``body`` (a JSON value, JSON
    text, or exact bytes; default :meth:`default_body`) and ``sign`` (False: unsigned).
    """

    def __init__(self, base_url: str, identity: Identity | None, *, spec: Spec | None = None,
                 clock: Callable[[], _dt.datetime] | None = None, http: httpx.Client | None = None,
                 timeout: float = 30.0, event_hooks: Mapping[str, list] | None = None,
                 extra_headers: tuple[tuple[str, str], ...] = (), also_signed: tuple[str, ...] = (),
                 max_response_bytes: int = bounded.DEFAULT_MAX_BYTES, paths: Mapping[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        # Where the implementation serves an operation, when not at the spec's path (a profile's paths, A1, A15).
        self.paths = dict(paths or {})
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
        if body is _DEFAULT and op.request_schema_ref:
            body = self.default_body(operation_id)
        options = {} if body is _DEFAULT else {"body": None if raw is not None else body}
        envelope = build_request(self.spec, operation_id, path_values=path, query=query, headers=given,
                                 paths=self.paths, **options)
        data = bytes(raw) if raw is not None else envelope.get("body", "").encode("utf-8")
        pairs = list(envelope["headers"].items())
        if data and op.request_schema_ref and not any(n.lower() == "content-type" for n in given):
            pairs.append(("Content-Type", JSON_MEDIA_TYPE))  # A33: HTTP metadata of the JSON body, as TPPs send it
        digest = any(p.key == "digest" for p in op.header_parameters)
        return self._signed(op.method, envelope["path"], pairs, data, sign=sign, digest=digest)

    def default_body(self, operation_id: str) -> Any:
        """The body :meth:`call` sends when given none: the operation's first spec example, its dates (every value
        the schema types ``format: date``) moved by as many days as the client's day (Europe/Oslo, by ``clock``)
        is after the day the spec's examples are written for (``x-example-today``). An execution date a month
        ahead in the example is a month ahead of the client's day, a card transaction's date in the past stays
        in the past: valid on whatever day the client and its target run (A13, A14)."""
        op = self.spec.operation(operation_id)
        example = first_body_example(self.spec, op)
        if example is None or not op.request_schema_ref:
            return example
        days = (today_in_oslo(self.clock()) - _dt.date.fromisoformat(self.spec.example_today)).days
        if days == 0:
            return example
        paths: set[tuple] = set()
        _date_paths(self.spec, {"$ref": op.request_schema_ref}, example, (), paths)
        for path in paths:
            _shift_date(example, path, days)
        return example

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


# How deep the schema walk of :func:`_date_paths` follows nested values (the spec's examples are a few levels deep).
_MAX_DEPTH = 32


def _date_paths(spec: Spec, schema: Any, value: Any, path: tuple, out: set[tuple], depth: int = 0) -> None:
    """The places in ``value`` where the schema (through ``$ref``, ``allOf``, ``anyOf``/``oneOf``) says
    ``format: date``, added to ``out`` as key paths."""
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return
    if "$ref" in schema:
        _date_paths(spec, spec.resolve(schema["$ref"]), value, path, out, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key, ()):
            _date_paths(spec, part, value, path, out, depth + 1)
    if isinstance(value, str) and schema.get("format") == "date":
        out.add(path)
    elif isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                _date_paths(spec, sub, value[name], path + (name,), out, depth + 1)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _date_paths(spec, schema["items"], item, path + (index,), out, depth + 1)


def _shift_date(payload: Any, path: tuple, days: int) -> None:
    if not path:
        return  # no request body of the interface is a bare date
    *parents, last = path
    for key in parents:
        payload = payload[key]
    try:
        payload[last] = (_dt.date.fromisoformat(payload[last]) + _dt.timedelta(days=days)).isoformat()
    except (ValueError, OverflowError):
        pass  # not a date the example could move (an example that is not one is the spec's own finding)
