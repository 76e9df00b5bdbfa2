"""The whole-request check of the ``request`` kind: parse (:mod:`.parse`), resolve the operation (:mod:`.resolve`),
check headers (:mod:`.headers`), query (:mod:`.query`) and body, and verify Digest / Signature /
TPP-Signature-Certificate with :func:`validator.signing.verify_request`.

The body is checked by the payload engine the caller hands in (the public :class:`validator.Validator`, a
:class:`validator.engine.PayloadValidator`), which also gives every finding the profile's severity, code and
status; this module never imports the engine nor the caller, so imports run one way: :mod:`validator.api` routes
kind ``request`` here and passes itself along.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Protocol

from ..context import OSLO, Profile
from ..findings import ERROR, WARNING, Finding, Report
from ..jsonload import Loaded, load_json_bytes
from ..spec import Operation, Spec
from .headers import MAX_HEADER_LENGTH, check_headers
from .message import HttpRequest, Parsed, Problems
from .parse import parse_envelope, parse_http
from .query import check_query
from .resolve import resolve_operation
from .shape import REQUEST_KIND, looks_like_http


class PayloadEngine(Protocol):
    """What the whole-request check uses of the payload engine it is handed (:class:`validator.engine.PayloadValidator`)."""

    spec: Spec
    profile: Profile
    now: _dt.datetime | None  # the request clock when given
    today: _dt.date
    today_given: bool  # a day was given (--today, context, profile): it is the verification day
    max_bytes: int

    def validate(self, payload: Any, kind: str | None = None, *, source: str = "<payload>") -> Report: ...

    def _from_loaded(self, loaded: Loaded, kind: str | None, source: str) -> Report: ...

    def _finding(self, rule_id: str, pointer: str, message: str, request: bool, *, ref: str | None = None,
                 severity: str | None = None) -> Finding | None: ...

    def _engine_finding(self, detection: tuple[str, str], pointer: str, line: int | None = None,
                        column: int | None = None) -> Finding: ...


REQUEST_KIND_DESCRIPTION = (
    "A whole HTTP request: method, path with query, headers and exact body bytes, as a JSON envelope "
    '{"method", "path", "headers", "body"} or a raw HTTP/1.1 .http file. The operation is resolved from method '
    "and path; headers, query parameters, body and request signature are checked."
)
BODY_REQUIRED = "body-required"
BODY_NOT_ACCEPTED = "body-not-accepted"


def _body_kind(spec: Spec, op: Operation) -> str | None:
    if not op.request_schema_ref:
        return None
    schema_name = op.request_schema_ref.rsplit("/", 1)[1]
    for kind in spec.kinds.values():
        if kind.schema_name == schema_name and kind.is_request:
            return kind.name
    return None


def _check_body(v: PayloadEngine, op: Operation, req: HttpRequest, out: Problems, source: str) -> list[Finding]:
    """Body findings (already Findings, from the validator of the body's kind), pointers under /body."""
    raw_body = v.spec.deref(op.raw.get("requestBody")) if op.raw.get("requestBody") else None
    if not raw_body:
        if req.has_body:
            out.add(BODY_NOT_ACCEPTED, "/body", f"{op.operation_id} takes no body; the body is ignored", WARNING)
        return []
    if not req.has_body:
        if raw_body.get("required"):
            out.add(BODY_REQUIRED, "/body", f"{op.operation_id} requires a JSON body ({op.request_schema_ref.rsplit('/', 1)[1] if op.request_schema_ref else 'application/json'})")
        return []
    kind = _body_kind(v.spec, op)
    if kind is None:
        return []
    if req.body_is_exact:
        report = v._from_loaded(load_json_bytes(req.body or b"", max_bytes=v.max_bytes), kind, source)
    else:
        report = v.validate(req.body_value, kind, source=source)
    return [dataclasses.replace(f, pointer="/body" + f.pointer) for f in report.findings]


def _clock(v: PayloadEngine, req: HttpRequest) -> _dt.datetime:
    """The time signature checks compare against (Date window, certificate validity).

    The validator's ``now`` when given. When only a day was given (``--today``, context, profile), that
    day is the verification day: a Date header on that day stands in for the time of day, any other
    Date is judged from noon of that day (so a request signed on another day is outside the window and
    the certificate is checked on the given day). Otherwise the real time.
    """
    if v.now is not None:
        return v.now
    if not v.today_given:
        return _dt.datetime.now(_dt.timezone.utc)
    from ..signing.verifier import parse_imf_fixdate

    dates = req.header_values("date")
    if len(dates) == 1:
        try:
            signed_at = parse_imf_fixdate(dates[0])
        except (ValueError, TypeError, OverflowError):
            signed_at = None
        if signed_at is not None and signed_at.astimezone(OSLO).date() == v.today:
            return signed_at
    return _dt.datetime.combine(v.today, _dt.time(12), tzinfo=OSLO)


def _verify(v: PayloadEngine, op: Operation, req: HttpRequest) -> list[Finding]:
    from ..signing import SignableRequest, VerifyOptions, verify_request

    headers = {p.key: p for p in op.header_parameters}
    digest = headers.get("digest")
    signature = headers.get("signature")
    options = VerifyOptions(
        now=_clock(v, req),
        date_window=v.profile.signature_date_window,
        allowed_algorithms=tuple(v.profile.signature_algorithms),
        digest_required=bool(digest and digest.required),
        signature_required=bool(signature and signature.required),
        max_header_length=MAX_HEADER_LENGTH,
    )
    body = req.body if req.body_is_exact else None
    return verify_request(SignableRequest(req.method, req.target, list(req.headers), body), options)


def request_findings(v: PayloadEngine, parsed: Parsed, *, source: str = "<request>") -> list[Finding]:
    """Every finding for a parsed request, through the validator (profile severities, codes and statuses)."""
    out = Problems()
    out.problems.extend(parsed.problems)
    extra: list[Finding] = []
    req = parsed.request
    if req is not None:
        resolution = resolve_operation(v.spec, req.method, req.path, paths=v.profile.paths)
        out.problems.extend(resolution.problems)
        op = resolution.operation
        if op is not None:
            check_headers(v.spec, op, req, out, MAX_HEADER_LENGTH)
            check_query(v.spec, op, req, out)
            extra.extend(_check_body(v, op, req, out, source))
            extra.extend(_verify(v, op, req))
    findings: list[Finding] = []
    for p in out.problems:
        f = v._finding(p.rule, p.pointer, p.message, True, severity=p.severity)
        if f is not None:
            findings.append(f)
    for f in extra:  # body and signature findings come with the rule's defaults: apply the profile again
        g = v._finding(f.rule, f.pointer, f.message, True, severity=f.severity, ref=f.ref)
        if g is not None:
            findings.append(dataclasses.replace(g, line=f.line, column=f.column) if f.line is not None else g)
    return findings


def check_request(v: PayloadEngine, payload: Any, *, source: str = "<request>") -> Report:
    """The report for a request given as an envelope (decoded JSON) or as raw ``.http`` bytes."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return check_request_bytes(v, bytes(payload), source=source)
    try:
        parsed = parse_envelope(payload)
        return Report(source, REQUEST_KIND, request_findings(v, parsed, source=source))
    except Exception as exc:  # a defect here must still be a finding, never a traceback
        return Report(source, REQUEST_KIND, [Finding("internal-error", ERROR, "", f"request check failed: {type(exc).__name__}: {exc}")])


def check_request_bytes(v: PayloadEngine, data: bytes, *, source: str = "<request>") -> Report:
    """Bytes of a JSON envelope or of a raw HTTP/1.1 request."""
    try:
        if data.lstrip()[:1] == b"{" and not looks_like_http(data):
            loaded = load_json_bytes(data, max_bytes=v.max_bytes)
            decoding = [v._engine_finding((p.rule, p.message), p.pointer or "", p.line, p.column) for p in loaded.problems]
            if loaded.value is None:
                return Report(source, REQUEST_KIND, decoding)
            report = check_request(v, loaded.value, source=source)
            report.findings[:0] = decoding
            return report
        parsed = parse_http(data, max_bytes=v.max_bytes)
        return Report(source, REQUEST_KIND, request_findings(v, parsed, source=source))
    except Exception as exc:
        return Report(source, REQUEST_KIND, [Finding("internal-error", ERROR, "", f"request check failed: {type(exc).__name__}: {exc}")])
