"""The sandbox's HTTP layer: a Starlette routing table over small endpoint functions.

Every API request goes the same way (:func:`_serve`): the request as received (method, target, headers, exact body
bytes) is checked by the validator's whole-request check with the sandbox clock, so one code path decides what is
valid; error findings become the answer (:func:`refusal`: status, code and error body per A6/A7/A8). A passed request
is attributed to its TPP (A28, A39: the certificate's organizationIdentifier, else its subject DN, with its key).
A write is handled inside one storage transaction, committed before the answer is sent; POST and DELETE answers are logged for
X-Request-ID replay (A29) in that same transaction. A read reads a snapshot without the write lock
(:func:`_serve_read`). Endpoint functions hold HTTP only; the lifecycle and the sandbox data are plain code
(lifecycle.py, domain.py), SQL is in storage.py.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from conformance.edges.derive import Walker
from validator.context import DEFAULT_PROFILE, Context, PaymentFacts, Profile
from validator.api import Validator
from validator.findings import ERROR, Finding
from validator.schema import KEYWORD_RULES
from validator.request import Parsed, parse_envelope, request_findings, resolve_operation
from validator.request.parameters import inline_refs
from validator.spec import Operation, Spec, load_spec

from . import domain as D
from . import faults as F
from . import sca
from . import testdata
from .clock import Clock
from .domain import Refused, SandboxData
from .lifecycle import DUPLICATE_WINDOW, Lifecycle
from .storage import MEMORY, Store, Tx
from .wire import read_body

JSON = "application/json"
log = logging.getLogger("obvalidate.sandbox")
# Which finding answers when a request has several errors: the most fundamental first.
STATUS_PRIORITY = (404, 405, 401, 403, 400)
# Refusals of the lifecycle and the sandbox data (domain.py reasons) as HTTP: (status, code) (A5, A7, A27, A28).
REFUSALS = {
    D.NOT_FOUND: (404, "RESOURCE_UNKNOWN"),
    D.UNKNOWN_REFERENCE: (400, "RESOURCE_UNKNOWN"),
    D.CONFLICT: (409, "CONFLICT"),
    D.PAYMENT_FAILED: (400, "PAYMENT_FAILED"),
    D.INVALID: (400, "FORMAT_ERROR"),
}
MAX_BODY_BYTES = 5 * 1024 * 1024
WRITE_METHODS = frozenset({"POST", "DELETE", "PUT", "PATCH"})


@dataclass
class Sandbox:
    """Everything the endpoints share: spec, validator, clock, fault switches, database and domain."""

    store: Store
    clock: Clock
    faults: F.ActiveFaults
    spec: Spec
    profile: Profile
    validator: Validator
    data: SandboxData
    lifecycle: Lifecycle
    refusals: dict[str, tuple[int, str]]
    default_validator: Validator | None = None  # the default profile's, made when first needed (_unprocessable)
    trusted_cas: tuple = ()  # A39: with CAs, only certificates they issued, and the TPP is the identifier alone

    @classmethod
    def create(cls, db: str = MEMORY, *, profile: Profile | None = None, faults=(), clock: Clock | None = None,
               spec: Spec | None = None, test_data: testdata.DataSet | None = None,
               trusted_cas: tuple = ()) -> "Sandbox":
        spec = spec or load_spec()
        profile = profile or DEFAULT_PROFILE
        active = faults if isinstance(faults, F.ActiveFaults) else F.ActiveFaults.of(faults)
        clock = clock or Clock()
        data = SandboxData(active, test_data or testdata.DEFAULT)
        sandbox = cls(Store(db), clock, active, spec, profile, Validator(spec=spec, profile=profile), data,
                      Lifecycle(spec, profile, clock, active, data), refusals(spec, profile),
                      trusted_cas=tuple(trusted_cas))
        with sandbox.store.transaction() as tx:
            if tx.is_empty():
                data.initialize(tx)  # A32: a new database starts with the fixed test data
        return sandbox


# ================================================================ replies
@dataclass
class Reply:
    status: int
    body: Any = None                      # JSON value; None: no body
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        return b"" if self.body is None else json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def created(body: Any, faults: F.ActiveFaults) -> Reply:
    """The answer to a creation (201)."""
    return Reply(200 if F.CREATED_200 in faults else 201, body)


def _error_schema(op: Operation | None, status: int) -> str | None:
    response = op.responses.get(str(status)) if op else None
    media = (response or {}).get("content", {}).get(JSON, {})
    schema = media.get("schema", {})
    refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", ())]
    return "ErrorBody" if "#/components/schemas/ErrorBody" in refs else None


def error_reply(op: Operation | None, status: int, messages: list[tuple[str, str | None, str]],
                body: str = "per-operation") -> Reply:
    """An error answer: ``messages`` are (code, path, text), the first deciding. The bulk operation answers the
    document's ``{id, system, status, code, message}``; every other operation tppMessages (A6). ``body`` is the
    profile's error-body: ``bulk`` or ``tpp-messages`` answers that one everywhere."""
    code = messages[0][0]
    if body == "bulk" or (body != "tpp-messages" and _error_schema(op, status) == "ErrorBody"):
        text = "; ".join(f"{t} ({p})" if p else t for _c, p, t in messages)
        return Reply(status, {"id": str(uuid.uuid4()), "system": op.path.split("/")[2] if op else "sandbox",
                              "status": status, "code": code, "message": text})
    tpp = []
    for c, p, t in messages:
        message = {"category": "ERROR", "code": c}
        if p:
            message["path"] = p
        message["text"] = t[:512]
        tpp.append(message)
    return Reply(status, {"tppMessages": tpp})


def _message_path(pointer: str) -> str | None:
    """A finding's pointer as a tppMessage path: body pointers relative to the body, as the spec's examples."""
    if pointer.startswith("/body"):
        return pointer[len("/body"):] or None
    return pointer or None


def refusal(findings: list[Finding], faults: F.ActiveFaults, op: Operation | None,
            body: str = "per-operation", passed: frozenset[tuple[str, str]] = frozenset()) -> Reply | None:
    """The answer to a request with error findings, or None when it passes. Fault switches that hide rules are
    consulted here: the only path by which an error finding goes unanswered (``passed``: the (pointer, rule) of
    the findings a moved limit lets pass, :func:`moved_limits`)."""
    hidden = faults.hidden_rules
    errors = [f for f in findings if f.severity == ERROR and f.rule not in hidden and (f.pointer, f.rule) not in passed]
    if F.SIGNED_HEADERS_PARTIAL in faults:  # the verifier's message names the unsigned header first
        errors = [f for f in errors if f.rule != "signature-headers-incomplete"
                  or f.message.startswith(("X-Request-ID ", "Date ", "Digest "))]
    if F.KEYID_SERIAL_NOT_CHECKED in faults:  # the verifier says which part of the keyId does not match
        errors = [f for f in errors if f.rule != "signature-keyid-mismatch" or not f.message.startswith("keyId serial ")]
    if not errors:
        return None
    rank = {s: i for i, s in enumerate(STATUS_PRIORITY)}
    errors.sort(key=lambda f: rank.get(f.status or 400, len(rank)))
    status = errors[0].status or 400
    first = [f for f in errors if (f.status or 400) == status]
    where = (lambda _pointer: "/creditorName") if F.REFUSAL_PATH_ELSEWHERE in faults else _message_path
    return error_reply(op, status, [(f.code or "FORMAT_ERROR", where(f.pointer), f.message) for f in first], body)


def moved_limits(s: Sandbox, op: Operation | None, body: bytes,
                 query: list[tuple[str, str]]) -> tuple[frozenset[tuple[str, str]], tuple[str, str] | None]:
    """The limit-off-by-one switches on ``op``: the (pointer, rule) of the findings a limit moved outwards lets pass,
    and the (path, message) of the refusal a limit moved inwards adds to a value the spec's limit allows. A body
    field's limit is read where the edge derivation reads it (the schema walked along the body), a query
    parameter's from its schema."""
    passed, refused = set(), None
    for m, limit, value, rule in _moved_here(s, op, body, query):
        judged = m.judged(limit, value)
        if judged == (False, True):
            passed.add((m.pointer if m.pointer.startswith("/query/") else "/body" + m.pointer, rule))
        elif judged == (True, False):
            refused = (m.pointer, f"{m.pointer}: {m.keyword} is {limit + m.by}")
    return frozenset(passed), refused


def _moved_here(s: Sandbox, op: Operation | None, body: bytes, query: list[tuple[str, str]]):
    """(switch, the spec's limit, the request's value there, the rule of its finding) per switch on ``op``."""
    moved = [m for m in s.faults.moved_limits if op is not None and m.operation == op.operation_id]
    parameters = {f"/query/{p.name}": p for p in op.query_parameters} if moved else {}
    given = _query_values(s.spec, op, query) if parameters else {}
    for m in [m for m in moved if m.pointer in parameters]:
        limit = inline_refs(s.spec, parameters[m.pointer].schema).get(m.keyword)
        if limit is not None and m.pointer[len("/query/"):] in given:
            yield m, limit, given[m.pointer[len("/query/"):]], "query-format"
    kind = next((k for k, kk in s.spec.kinds.items() if kk.is_request and op.request_schema_ref
                 and op.request_schema_ref.rsplit("/", 1)[1] == kk.schema_name), None) if moved else None
    try:
        value = json.loads(body) if kind and body else None
    except ValueError:
        value = None
    if value is None:
        return
    places = {place.pointer: place for place in Walker(s.spec).places(kind, value)}
    for m in [m for m in moved if m.pointer in places]:
        limit = places[m.pointer].keywords.get(m.keyword)
        if limit is not None:
            yield m, limit, _at(value, m.pointer), KEYWORD_RULES[m.keyword]


def _at(value: Any, pointer: str) -> Any:
    """The value at a JSON pointer (no escapes: the body's member names have none), None when absent."""
    for token in pointer.split("/")[1:]:
        if isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            return None
    return value


def refusals(spec: Spec, profile: Profile) -> dict[str, tuple[int, str]]:
    """REFUSALS with the refused cancellation of the profile (A5, A27), else of the spec's x-cancellation."""
    decided = spec.operation("deletePayment").raw["x-cancellation"]["refused"]
    chosen = profile.cancellation_refused
    status = (chosen.status if chosen and chosen.status else None) or decided["status"]
    code = (chosen.code if chosen and chosen.code else None) or decided["code"]
    return {**REFUSALS, D.CANCELLATION_REFUSED: (status, code)}


def refused_reply(s: "Sandbox", op: Operation | None, refused: Refused) -> Reply:
    status, code = s.refusals[refused.reason]
    if refused.reason == D.PAYMENT_FAILED and F.LACK_OF_FUNDS_500 in s.faults:
        status, code = 500, "SYSTEM_ERROR"
    return error_reply(op, status, [(code, refused.path, refused.text)], s.profile.error_body)


def respond(reply: Reply) -> Response:
    if reply.body is None:
        return Response(status_code=reply.status, headers=reply.headers)
    return Response(reply.encoded(), status_code=reply.status, media_type=JSON, headers=reply.headers)


# ================================================================ the checked request
@dataclass
class Checked:
    """A request the validator passed, with what the endpoint functions read."""

    tpp: str
    op: Operation
    path: dict[str, str]
    query: dict[str, Any]
    headers: dict[str, str]
    body: Any
    body_bytes: bytes
    method: str
    target: str
    base_url: str


def _certificate(certificate_value: str | None):
    if not certificate_value:
        return None
    from validator.signing.certificate import parse_certificate_header

    try:
        return parse_certificate_header(certificate_value)
    except Exception:  # noqa: BLE001 - the validator reports an unusable certificate
        return None


def tpp_identity(certificate_value: str | None, *, trusted: bool = False) -> str | None:
    """Who the TPP is (A28, A39): the certificate's organizationIdentifier, else its subject DN, together with the
    SHA-256 of its public key — the name a certificate asserts is bound to the key every request's signature
    proves. ``trusted``: the certificate comes from a CA the sandbox trusts (--trusted-ca), which vouches for the
    name; then the name alone, so a renewed certificate with a new key keeps the TPP's resources."""
    cert = _certificate(certificate_value)
    if cert is None:
        return None
    from validator.signing.certificate import tpp_identity as named  # the name, as the exchange judge reads it

    name = named(certificate_value)
    if trusted:
        return name
    from cryptography.hazmat.primitives import serialization

    key = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return f"{name} key:{hashlib.sha256(key).hexdigest()}"


def load_trusted_cas(path: str) -> tuple:
    """The CA certificates of a PEM file (--trusted-ca); ValueError naming the file when there are none."""
    from cryptography import x509

    try:
        with open(path, "rb") as handle:
            cas = tuple(x509.load_pem_x509_certificates(handle.read()))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--trusted-ca {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not cas:
        raise ValueError(f"--trusted-ca {path}: no certificate in the file")
    return cas


def issued_by(certificate_value: str | None, cas: tuple) -> bool:
    """Whether the certificate is signed by one of ``cas`` (A39: a trusted CA's word on the TPP's identifier)."""
    cert = _certificate(certificate_value)
    for ca in cas if cert is not None else ():
        try:
            cert.verify_directly_issued_by(ca)
            return True
        except Exception:  # noqa: BLE001 - another issuer, another key type, a bad signature: not this CA
            continue
    return False


def _target(request: Request) -> str:
    raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    query = request.scope.get("query_string") or b""
    return (raw + (b"?" + query if query else b"")).decode("latin-1")


def _query_values(spec: Spec, op: Operation, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    kinds = {p.name: spec.deref(p.schema).get("type") for p in op.query_parameters}
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out or name not in kinds:
            continue
        if kinds[name] == "integer":
            try:
                out[name] = int(value)
            except ValueError:
                continue  # reached only when a profile turned query-format off: the value is ignored, never a 500
        else:
            out[name] = (value == "true") if kinds[name] == "boolean" else value
    return out


def _unknown_id(s: Sandbox, op: Operation, tpp: str, path: dict[str, str]) -> Reply | None:
    """UNKNOWN_IDS_FIRST: the 404 RESOURCE_UNKNOWN of a payment or basket id in the path that is not the TPP's, or
    None (another order of checks than the validator's first)."""
    with s.store.snapshot() as tx:
        try:
            if "paymentId" in path:
                s.lifecycle.find_payment(tx, tpp, path["paymentId"], path.get("payment-service"),
                                         path.get("payment-product"))
            if "basketId" in path:
                s.lifecycle.find_basket(tx, tpp, path["basketId"])
        except Refused as refused:
            return refused_reply(s, op, refused)
    return None


def _basket_context(s: Sandbox, tpp: str | None, body: bytes) -> Context | None:
    """The payments a basket request names, for the validator's basket rules (REFERENCE_MIX_INVALID)."""
    try:
        ids = json.loads(body).get("paymentIds")
    except (ValueError, AttributeError):
        return None
    if not tpp or not isinstance(ids, list):
        return None
    facts = {}
    with s.store.snapshot() as tx:
        for pid in ids:
            if isinstance(pid, str):
                try:
                    row = s.lifecycle.find_payment(tx, tpp, pid)
                except Refused:
                    continue
                facts[pid] = PaymentFacts(row["service"], row["product"], row["status"])
    return Context(payments=facts)


def check(s: Sandbox, request: Request, body: bytes, validator: Validator | None = None) -> Checked | Reply:
    """The validator's whole-request check of the request as received, with the sandbox clock (``validator``: another
    profile's, see :func:`_unprocessable`)."""
    target = _target(request)
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.scope["headers"]]
    parsed = parse_envelope({"method": request.method, "path": target, "headers": headers})
    if parsed.request is None:
        return error_reply(None, 400, [("FORMAT_ERROR", p.pointer, p.message) for p in parsed.problems],
                           s.profile.error_body)
    req = dataclasses.replace(parsed.request, body=body, body_is_exact=True)
    header_map = {k.lower(): v for k, v in req.headers}
    certificate = header_map.get("tpp-signature-certificate")
    tpp = tpp_identity(certificate, trusted=bool(s.trusted_cas))
    resolution = resolve_operation(s.spec, req.method, req.path, paths=s.profile.paths, absent=s.profile.absent_operations)
    op = resolution.operation
    v = copy.copy(validator or s.validator)
    v.now, v.today = s.clock.now(), s.clock.today()
    if op is not None and op.request_schema_ref and op.request_schema_ref.endswith("/SigningBasketRequest"):
        v.context = _basket_context(s, tpp, body) or v.context
    findings = F.other_readings(request_findings(v, Parsed(req, parsed.problems)), op, header_map,
                                empty_absent=F.EMPTY_HEADER_ABSENT in s.faults,
                                unlisted_ignored=F.UNLISTED_HEADERS_IGNORED in s.faults)
    if F.EXTRA_COLLECTION_READ in s.faults and req.method == "GET" and resolution.template is not None \
            and any(f.rule == "method-not-allowed" for f in findings) \
            and resolution.template == s.spec.operation("createSepaCreditTransfer").path:
        return Reply(200, {"payments": []})   # an extension: GET on the SEPA creation path lists (nothing here)
    passed, too_far = moved_limits(s, op, body, req.query) if s.faults.moved_limits else (frozenset(), None)
    answer = refusal(findings, s.faults, op, s.profile.error_body, passed)
    if answer is not None and F.UNKNOWN_IDS_FIRST in s.faults and tpp is not None and op is not None:
        answer = _unknown_id(s, op, tpp, resolution.path_values) or answer
    if answer is not None:
        return answer
    if too_far:
        return error_reply(op, 400, [("FORMAT_ERROR", *too_far)], s.profile.error_body)
    if s.trusted_cas and tpp is not None and not issued_by(certificate, s.trusted_cas):  # A39: only its CAs
        return error_reply(op, 401, [("CERTIFICATE_INVALID", "/headers/TPP-Signature-Certificate",
                                      "the certificate is not issued by a CA this sandbox trusts (--trusted-ca)")],
                           s.profile.error_body)
    boundary = F.refused_boundary(s.faults, header_map, body) \
        if F.EMPTY_NAME_REFUSED in s.faults or F.REQUEST_ID_NOT_UUID_REFUSED in s.faults else None
    if boundary:
        return error_reply(op, 400, [("FORMAT_ERROR", None, boundary)])
    if op is None or tpp is None:  # only with fault switches that hide what makes these errors
        return error_reply(op, 404 if op is None else 401, [("RESOURCE_UNKNOWN" if op is None else "CERTIFICATE_INVALID", None, "not served")],
                           s.profile.error_body)
    value = None
    if body:
        try:
            value = json.loads(body)
        except ValueError:
            value = None
    return Checked(tpp, op, resolution.path_values, _query_values(s.spec, op, req.query), header_map, value, body,
                   req.method, target, str(request.base_url).rstrip("/"))


Handler = Callable[[Sandbox, Tx, Checked], Reply]


def _serve(s: Sandbox, request: Request, body: bytes, handler: Handler | None) -> Reply:
    checked = check(s, request, body)
    if isinstance(checked, Reply):
        return checked
    if handler is None:  # at a path the profile's paths give the operation (A1, A15): the operation's handler
        handler = OPERATION_HANDLERS.get(checked.op.operation_id) if s.profile.paths else None
    if handler is None:
        return error_reply(checked.op, 404, [("RESOURCE_UNKNOWN", None, "not served by the sandbox")],
                           s.profile.error_body)
    if checked.method not in WRITE_METHODS:
        return _serve_read(s, checked, handler)
    request_id = checked.headers.get("x-request-id", "")
    body_sha = hashlib.sha256(body).hexdigest()
    with s.store.transaction() as tx:
        s.lifecycle.catch_up(tx)
        now = s.clock.now()
        replay = s.profile.request_id_replay  # A29: first-response (ours), new-request or conflict
        if F.REQUEST_ID_REPLAY_DUPLICATES not in s.faults and replay != "new-request":
            logged = tx.logged_request(checked.tpp, request_id, (now - DUPLICATE_WINDOW).isoformat())
            if logged:  # A29: the same request answers the first response; another one is a conflict
                same = (logged["method"], logged["target"], logged["body_sha256"]) == (checked.method, checked.target, body_sha)
                if same and replay == "first-response":
                    return Reply(logged["status"], json.loads(logged["response"]) if logged["response"] else None)
                return refused_reply(s, checked.op, Refused(D.CONFLICT, f"X-Request-ID {request_id} was already "
                                                            f"used{'' if same else ' for a different request'}"))
        reply = _handle(s, tx, checked, handler)
        if replay == "new-request":  # the id is not remembered: the log keeps one entry per id
            return reply
        tx.log_request({"tpp": checked.tpp, "request_id": request_id, "method": checked.method,
                        "target": checked.target, "body_sha256": body_sha, "status": reply.status,
                        "response": reply.encoded().decode("utf-8") or None, "created_at": now.isoformat()})
    return reply


def _serve_read(s: Sandbox, checked: Checked, handler: Handler) -> Reply:
    """A read-only request reads a snapshot of the committed state without the write lock, unless a scheduled batch
    run is due: then the run is performed first (it writes) and the request read in that same transaction, so no
    read observes the state from before a run the sandbox clock has passed."""
    with s.store.snapshot() as tx:
        if not s.lifecycle.catch_up_needed(tx):
            return _handle(s, tx, checked, handler)
    with s.store.transaction() as tx:
        s.lifecycle.catch_up(tx)
        return _handle(s, tx, checked, handler)


def _handle(s: Sandbox, tx: Tx, checked: Checked, handler: Handler) -> Reply:
    try:
        return handler(s, tx, checked)
    except Refused as refused:
        return refused_reply(s, checked.op, refused)


def _unprocessable(s: Sandbox, request: Request, body: bytes) -> Reply | None:
    """The default profile's refusal of a request the sandbox's own profile let through but its handlers cannot
    process (a body without the members the books need, with the schema rules off: `severity: off`), else None.

    The handlers rely on what the default request check guarantees; a profile that switches those rules off states
    what the implementation does not check, not that it can book a payment without an amount. Such a request is
    refused as the default profile refuses it (400 and the code and path of its first error) rather than with a 500."""
    if s.profile is DEFAULT_PROFILE:
        return None
    if s.default_validator is None:
        s.default_validator = Validator(spec=s.spec, profile=DEFAULT_PROFILE)
    checked = check(s, request, body, s.default_validator)
    return checked if isinstance(checked, Reply) and 400 <= checked.status < 500 else None


def _guarded(s: Sandbox, request: Request, body: bytes, handler: Handler | None) -> Reply:
    try:
        return _serve(s, request, body, handler)
    except Exception:  # a defect answers 500 SYSTEM_ERROR in the interface's error body, never a traceback
        refused = _unprocessable(s, request, body)
        if refused is not None:
            log.warning("sandbox: %s %s cannot be processed with the profile's rules off; refused as the default "
                        "profile refuses it", request.method, request.url.path)
            return refused
        log.exception("sandbox defect on %s %s", request.method, request.url.path)
        op = resolve_operation(s.spec, request.method, request.url.path, paths=s.profile.paths, absent=s.profile.absent_operations).operation
        return error_reply(op, 500, [("SYSTEM_ERROR", None, "internal error of the sandbox")], s.profile.error_body)


async def serve(request: Request, handler: Handler | None) -> Response:
    """Read the body (bounded), then check and handle the request on a worker thread."""
    s: Sandbox = request.app.state.sandbox
    body = await read_body(request, MAX_BODY_BYTES)
    if body is None:
        op = resolve_operation(s.spec, request.method, request.url.path, paths=s.profile.paths, absent=s.profile.absent_operations).operation
        return respond(error_reply(op, 400, [("FORMAT_ERROR", "/body", f"the body exceeds {MAX_BODY_BYTES:,} bytes")],
                                   s.profile.error_body))
    reply = await run_in_threadpool(_guarded, s, request, body, handler)
    if F.ERROR_BODY_UNDOCUMENTED in s.faults and 400 <= reply.status < 500 and reply.body is not None:
        body = reply.body if isinstance(reply.body, dict) else {}
        first = (body.get("tppMessages") or [body])[0]
        reply = Reply(reply.status, {"error": {"message": str(first.get("text") or first.get("message") or "")}},
                      reply.headers)
    return respond(reply)


def api(path: str, methods: dict[str, Handler]) -> Route:
    """A route of the interface: each method's endpoint function, run after the request check."""
    async def endpoint(request: Request) -> Response:
        return await serve(request, methods.get(request.method))

    return Route(path, endpoint, methods=list(methods))


# ================================================================ payments (A3, A4, A23, A27-A31)
def create_payment(s: Sandbox, tx: Tx, c: Checked, seq: int | None = None) -> Reply:
    service, product = c.op.path.split("/")[2:4]
    row = s.lifecycle.create_payment(tx, c.tpp, service, product, c.body_bytes.decode("utf-8"), c.body,
                                     bool(c.query.get("allowLogicalDuplicate")), seq)
    return created(s.lifecycle.creation_response(row), s.faults)


async def create_payment_endpoint(request: Request) -> Response:
    s: Sandbox = request.app.state.sandbox
    seq = None
    if F.WRITE_LOST in s.faults:  # the id is taken before the request is checked, outside the write
        with s.store.transaction() as tx:
            seq = tx.next_seq("payments")
    return await serve(request, functools.partial(create_payment, seq=seq))


def _payment(s: Sandbox, tx: Tx, c: Checked) -> dict:
    return s.lifecycle.find_payment(tx, c.tpp, c.path["paymentId"], c.path["payment-service"], c.path["payment-product"])


def get_payment(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    row = _payment(s, tx, c)
    if F.DETAIL_OTHER_PAYMENT in s.faults:  # the latest other payment of the same product and status
        others = [p for p in tx.payments_in_status(row["status"])
                  if p["id"] != row["id"] and (p["service"], p["product"]) == (row["service"], row["product"])]
        row = others[-1] if others else row
    return Reply(200, s.lifecycle.payment_detail(row))


def get_payment_status(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return Reply(200, s.lifecycle.payment_status(_payment(s, tx, c)))


def delete_payment(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    row = _payment(s, tx, c)
    if F.CANCELLATION_202_UNKNOWN_LINK in s.faults:  # the payment stays as it is
        return Reply(202, {"transactionStatus": row["status"], "_links": {"startAuthorisation": D.link(
            c.target.split("?")[0] + "/cancellation-authorisations", "POST")}})
    s.lifecycle.cancel_payment(tx, row)
    return Reply(204)


# ================================================================ signing baskets (A1, A2, A27)
def create_basket(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    basket = s.lifecycle.create_basket(tx, c.tpp, c.body["paymentIds"])
    return created({"basketId": basket["id"], "transactionStatus": s.lifecycle.basket_status(tx, basket),
                    "_links": s.lifecycle.basket_links(basket)}, s.faults)


def _basket(s: Sandbox, tx: Tx, c: Checked) -> dict:
    return s.lifecycle.find_basket(tx, c.tpp, c.path["basketId"])


def get_basket(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    basket = _basket(s, tx, c)
    links = s.lifecycle.basket_links(basket)
    return Reply(200, {"payments": basket["payment_ids"], "transactionStatus": s.lifecycle.basket_status(tx, basket),
                       "_links": {"status": links["status"]}})


def get_basket_status(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return Reply(200, {"transactionStatus": s.lifecycle.basket_status(tx, _basket(s, tx, c))})


def delete_basket(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    s.lifecycle.delete_basket(tx, _basket(s, tx, c))
    return Reply(204)


# ================================================================ authorisation (A23, A24)
def _authorisation_subject(s: Sandbox, tx: Tx, c: Checked) -> tuple[str, dict]:
    return ("basket", _basket(s, tx, c)) if "basketId" in c.path else ("payment", _payment(s, tx, c))


def start_authorisation(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    kind, subject = _authorisation_subject(s, tx, c)
    authorisation = s.lifecycle.start_authorisation(tx, c.tpp, kind, subject, c.headers["tpp-redirect-uri"],
                                                    c.headers["tpp-session-id"])
    path = c.target.split("?")[0] + "/" + authorisation["id"]
    return created({"scaStatus": authorisation["sca_status"], "authorisationId": authorisation["id"],
                    "_links": {"scaRedirect": D.link(f"{c.base_url}{sca.PAGE_PREFIX}/{authorisation['token']}", "GET"),
                               "scaStatus": D.link(path, "GET")}}, s.faults)


def get_authorisation(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    _kind, subject = _authorisation_subject(s, tx, c)
    found = s.lifecycle.find_authorisation(tx, c.tpp, subject["id"], c.path["authorisationId"])
    return Reply(200, {"scaStatus": found["sca_status"]})


# ================================================================ sandbox data (A15, A22, A25, A32)
def initialize(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    s.data.initialize(tx, c.tpp)  # A38: the caller's own state; the test data where nobody else depends on it
    return Reply(204)


def list_customers(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    defaults = s.data.data.listing_defaults  # the data set's: a bank may list accounts only on request
    return Reply(200, [s.data.customer_view(tx, customer,
                                            with_accounts=c.query.get("withAccounts", defaults["withAccounts"]),
                                            with_agreements=c.query.get("withAgreements", defaults["withAgreements"]))
                       for customer in tx.customers()])


def create_customer(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return created(s.data.create_customer(tx, c.body, owner=c.tpp), s.faults)


def delete_customer(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    s.data.delete_customer(tx, c.path["customerId"])
    return Reply(204)


def create_account(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return created(s.data.create_account(tx, c.body, owner=c.tpp), s.faults)


def create_card_account(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return created(s.data.create_card_account(tx, c.body, owner=c.tpp), s.faults)


def list_account_transactions(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return Reply(200, s.data.list_account_transactions(tx, c.path["mockAccountId"], c.query))


def create_account_transactions(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return created(s.data.create_account_transactions(tx, c.path["mockAccountId"], c.body), s.faults)


def create_card_transactions(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return created(s.data.create_card_transactions(tx, c.path["mockCardAccountId"], c.body), s.faults)


def list_card_transactions(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    return Reply(200, s.data.list_card_transactions(tx, c.path["mockCardAccountId"], c.query))


def batch_run(s: Sandbox, tx: Tx, c: Checked) -> Reply:
    at = s.clock.now()
    if isinstance(c.body, dict) and c.body.get("at"):
        from .clock import parse_instant

        at = parse_instant(c.body["at"])
    return Reply(200, s.lifecycle.batch_run(tx, at))


# ================================================================ everything else
async def unknown(request: Request) -> Response:
    """Paths and methods the interface does not have: the validator says which (404, 405)."""
    return await serve(request, None)


class AnyMethod:
    """The catch-all route's endpoint. Starlette routes an endpoint function for the methods listed only and answers
    any other (QUERY, TRACE, ...) with its own plain-text 405; an ASGI app takes every method, so the validator's
    answer (404, 405 with the error body) is the one given."""

    async def __call__(self, scope, receive, send) -> None:
        response = await unknown(Request(scope, receive))
        await response(scope, receive, send)


PAYMENT = "/v1/{service}/{product}/{payment_id}"
BASKET = "/v1/signing-baskets/{basket_id}"

ROUTES = [
    Route("/v1/payments/{product}", create_payment_endpoint, methods=["POST"]),
    Route("/v1/bulk-payments/{product}", create_payment_endpoint, methods=["POST"]),
    Route("/v1/periodic-payments/{product}", create_payment_endpoint, methods=["POST"]),
    api("/v1/signing-baskets", {"POST": create_basket}),
    api(BASKET, {"GET": get_basket, "DELETE": delete_basket}),
    api(BASKET + "/status", {"GET": get_basket_status}),
    api(BASKET + "/authorisations", {"POST": start_authorisation}),
    api(BASKET + "/authorisations/{authorisation_id}", {"GET": get_authorisation}),
    api("/v1/sandbox/initialize", {"POST": initialize}),
    api("/v1/sandbox/batch-runs", {"POST": batch_run}),
    api("/v1/sandbox/customers", {"GET": list_customers, "POST": create_customer}),
    api("/v1/sandbox/customers/{customer_id}", {"DELETE": delete_customer}),
    api("/v1/sandbox/accounts", {"POST": create_account}),
    api("/v1/sandbox/card-accounts", {"POST": create_card_account}),
    api("/v1/sandbox/accounts/{account_id}/transactions", {"GET": list_account_transactions, "POST": create_account_transactions}),
    api("/v1/sandbox/card-accounts/{card_account_id}/transactions", {"GET": list_card_transactions, "POST": create_card_transactions}),
    api(PAYMENT, {"GET": get_payment, "DELETE": delete_payment}),
    api(PAYMENT + "/status", {"GET": get_payment_status}),
    api(PAYMENT + "/authorisations", {"POST": start_authorisation}),
    api(PAYMENT + "/authorisations/{authorisation_id}", {"GET": get_authorisation}),
    *sca.ROUTES,
    Route("/{path:path}", AnyMethod()),
]


# Each operation's handler, for a profile that serves operations at other paths (``paths``, A1, A15): the catch-all
# route reaches them there (the routes above keep the spec's paths, which such a profile makes unknown).
OPERATION_HANDLERS: dict[str, Handler] = {
    "createSepaCreditTransfer": create_payment, "createBulkPayment": create_payment,
    "createPeriodicPayment": create_payment, "createSigningBasket": create_basket, "getSigningBasket": get_basket,
    "deleteSigningBasket": delete_basket, "getSigningBasketStatus": get_basket_status,
    "startSigningBasketAuthorisation": start_authorisation, "getSigningBasketAuthorisationStatus": get_authorisation,
    "initializeSandbox": initialize, "runSandboxBatch": batch_run, "listSandboxCustomers": list_customers,
    "createSandboxCustomer": create_customer, "deleteSandboxCustomer": delete_customer,
    "createSandboxAccount": create_account, "createSandboxCardAccount": create_card_account,
    "listSandboxAccountTransactions": list_account_transactions,
    "createSandboxAccountTransactions": create_account_transactions,
    "listSandboxCardTransactions": list_card_transactions, "createSandboxCardTransactions": create_card_transactions,
    "getPayment": get_payment, "deletePayment": delete_payment, "getPaymentStatus": get_payment_status,
    "startPaymentAuthorisation": start_authorisation, "getPaymentAuthorisationStatus": get_authorisation,
}


def create_app(sandbox: Sandbox | None = None, **options: Any) -> Starlette:
    """The ASGI application; ``options`` go to :meth:`Sandbox.create` when no sandbox is given."""
    app = Starlette(routes=ROUTES)
    app.state.sandbox = sandbox or Sandbox.create(**options)
    return app

