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
import json
from typing import Any, Protocol

from ..context import OSLO, Profile
from ..findings import ERROR, WARNING, Finding, Report
from ..jsonload import Loaded, load_json_bytes
from ..spec import Operation, Spec
from .headers import MAX_HEADER_LENGTH, check_headers
from .message import HttpRequest, Parsed, Problems, RequestProblem
from .parse import parse_envelope, parse_http
from .query import check_query
from .resolve import PRODUCT_NOT_OFFERED, PRODUCT_UNKNOWN, product_not_offered, resolve_operation
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


def _body_plan(spec: Spec, op: Operation) -> tuple[Any, str | None]:
    """The operation's request body (dereferenced) and the kind its body is checked as; worked out once per spec
    and operation (cached on the spec, which holds both)."""
    global _LAST_BODY_PLAN
    found = _LAST_BODY_PLAN  # the operation asked for last (a server's usual one), without a look-up
    if found[0] is op:
        return found[1], found[2]
    plans = spec._cache.get("request-body-plans")  # no new empty dict per call (setdefault's default)
    if plans is None:
        plans = spec._cache.setdefault("request-body-plans", {})
    found = plans.get(id(op))
    if found is not None and found[0] is op:
        _LAST_BODY_PLAN = found
        return found[1], found[2]
    raw_body = spec.deref(op.raw.get("requestBody")) if op.raw.get("requestBody") else None
    kind = _body_kind(spec, op) if raw_body else None
    plans[id(op)] = _LAST_BODY_PLAN = (op, raw_body, kind)
    return raw_body, kind


_LAST_BODY_PLAN: tuple = (None, None, None)  # (operation, request body, kind) last asked for


def _check_body(v: PayloadEngine, op: Operation, req: HttpRequest, out: Problems, source: str) -> list[Finding]:
    """Body findings (already Findings, from the validator of the body's kind), pointers under /body."""
    raw_body, kind = _body_plan(v.spec, op)
    if not raw_body:
        if req.has_body:
            out.add(BODY_NOT_ACCEPTED, "/body", f"{op.operation_id} takes no body; the body is ignored", WARNING)
        return []
    if not req.has_body:
        if raw_body.get("required"):
            out.add(BODY_REQUIRED, "/body", f"{op.operation_id} requires a JSON body ({op.request_schema_ref.rsplit('/', 1)[1] if op.request_schema_ref else 'application/json'})")
        return []
    if kind is None:
        return []
    if req.body_is_exact:
        report = v._from_loaded(load_json_bytes(req.body or b"", max_bytes=v.max_bytes, text=req.body_text), kind, source)
    else:
        report = v.validate(req.body_value, kind, source=source)
    return [dataclasses.replace(f, pointer="/body" + f.pointer) for f in report.findings] if report.findings else []


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
            signed_day = signed_at.astimezone(OSLO).date()  # 31 Dec 9999 23:59 GMT is a day past datetime's range
        except (ValueError, TypeError, OverflowError):
            signed_at = signed_day = None
        if signed_day == v.today:
            return signed_at
    return _dt.datetime.combine(v.today, _dt.time(12), tzinfo=OSLO)


def _signing():
    """The verifier's names, imported on first use (cryptography is slow to import and no payload check needs it)
    and kept: an import statement in a function costs a lookup through the import system on every call."""
    global _SIGNING
    if _SIGNING is None:
        from ..signing.cavage import SignableRequest
        from ..signing.rules import PROFILE_SIGNED_HEADERS
        from ..signing.verifier import VerifyOptions, verify_request

        _SIGNING = (SignableRequest, verify_request, VerifyOptions, PROFILE_SIGNED_HEADERS)
    return _SIGNING


_SIGNING = None


def _verify_options(v: PayloadEngine, op: Operation, now: _dt.datetime) -> Any:
    """The verifier's options for an operation at a time; the last one is reused while nothing changed (a
    validator with a fixed clock, or many requests within one second of a server's)."""
    global _LAST_OPTIONS
    profile = v.profile
    found = _LAST_OPTIONS
    # The profile is immutable (a record): the same object, the same options.
    if found[0] is op and found[1] is profile and found[2] == now:
        return found[3]
    _request, _verify_request, VerifyOptions, PROFILE_SIGNED_HEADERS = _signing()
    headers = {p.key: p for p in op.header_parameters}
    digest = headers.get("digest")
    signature = headers.get("signature")
    options = VerifyOptions(
        now=now,
        date_window=profile.signature_date_window,
        allowed_algorithms=tuple(profile.signature_algorithms),
        digest_required=bool(digest and digest.required),
        signature_required=bool(signature and signature.required),
        max_header_length=MAX_HEADER_LENGTH,
        mandatory_signed=PROFILE_SIGNED_HEADERS + tuple(h for h in profile.signature_extra_headers
                                                        if h not in PROFILE_SIGNED_HEADERS),
    )
    _LAST_OPTIONS = (op, profile, now, options)
    return options


_LAST_OPTIONS: tuple = (None, None, None, None)  # (operation, profile, clock, options) last built


def _verify(v: PayloadEngine, op: Operation, req: HttpRequest) -> list[Finding]:
    SignableRequest, verify_request, _options, _signed = _SIGNING or _signing()
    # The request itself has what the verifier reads (method, target, headers, exact body bytes) when its body is
    # exact; otherwise the verifier is told the body is unknown.
    signable = req if req.body_is_exact else SignableRequest(req.method, req.target, req.headers, None)
    return verify_request(signable, _verify_options(v, op, _clock(v, req)), header_index=req.header_index,
                          header_values_within=req.header_values_within)


def _known_not_offered(problems, path: str, not_offered) -> list:
    """A31: an unknown payment product the profile lists under products-not-offered (a product the interface does not
    have, such as instant credit transfers) is known to the implementation but not offered: 403 PRODUCT_INVALID,
    not 404 PRODUCT_UNKNOWN."""
    if not not_offered:
        return problems
    segments = path.split("?", 1)[0].split("/")
    product = "/".join(segments[2:4]) if len(segments) > 3 else None
    return [RequestProblem(PRODUCT_NOT_OFFERED, p.pointer, f"payment product {product} is not offered by this "
                           "implementation (its profile's products-not-offered)")
            if p.rule == PRODUCT_UNKNOWN and product in not_offered else p for p in problems]


def request_findings(v: PayloadEngine, parsed: Parsed, *, source: str = "<request>") -> list[Finding]:
    """Every finding for a parsed request, through the validator (profile severities, codes and statuses)."""
    out = Problems()
    out.problems.extend(parsed.problems)
    extra: list[Finding] = []
    req = parsed.request
    if req is not None:
        resolution = resolve_operation(v.spec, req.method, req.path, paths=v.profile.paths,
                                       absent=v.profile.absent_operations)
        out.problems.extend(_known_not_offered(resolution.problems, req.path, v.profile.products_not_offered))
        op = resolution.operation
        if op is not None:
            not_offered = product_not_offered(resolution, v.profile.products_not_offered)
            if not_offered is not None:
                out.problems.append(not_offered)
            check_headers(v.spec, op, req, out, v.profile)
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


def check_text_envelope(v: PayloadEngine, payload: dict, *, source: str = "<request>") -> Report | None:
    """:func:`check_request` for an envelope of text only -- method, path and body (or no body) text, headers an
    object of text values -- and None for any other input. Such an envelope holds nothing the limits of decoded
    values (:func:`validator.jsonload.check_value`: nesting depth, integers too long to print) could find, so the
    caller checks it without that walk; it learns the headers are all text from parsing them."""
    try:
        # The usual envelope (exactly method, path, headers and body; the body text) told by four look-ups
        if not (len(payload) == 4 and type(payload.get("headers")) is dict and type(payload.get("body")) is str
                and type(payload.get("method")) is str and type(payload.get("path")) is str):
            for key, value in payload.items():
                if type(value) is not str and not (key == "headers" and type(value) is dict) and not (
                        key == "body" and value is None):
                    return None  # another member, a value of another type: the caller checks the limits first
        parsed = parse_envelope(payload)
        if parsed.request is None or not parsed.request.headers_clean:
            return None  # headers not all text (or not parsed): the caller checks the limits, then this again
        return Report(source, REQUEST_KIND, request_findings(v, parsed, source=source))
    except Exception as exc:  # as check_request: a defect here must still be a finding, never a traceback
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
            report.findings[:] = decoding + place_body_findings(report.findings, data)
            return report
        parsed = parse_http(data, max_bytes=v.max_bytes)
        findings = request_findings(v, parsed, source=source)
        if parsed.request is not None:
            findings = place_body_findings(findings, data, http=parsed.request)
        return Report(source, REQUEST_KIND, findings)
    except Exception as exc:
        return Report(source, REQUEST_KIND, [Finding("internal-error", ERROR, "", f"request check failed: {type(exc).__name__}: {exc}")])


def place_body_findings(findings: list[Finding], data: bytes, *, http: HttpRequest | None = None) -> list[Finding]:
    """Line and column in the file for the findings under ``/body``: the body was checked as a text of its own,
    so its positions (and its findings' pointers) are first found in the body, then carried into the file, through
    the escapes of a JSON envelope's ``body`` string (``data`` is the envelope's text) or past the head of an
    ``.http`` request (``http``, parsed from ``data``)."""
    from ..positions import PositionIndex, string_offsets

    inside = [f for f in findings if f.pointer == "/body" or f.pointer.startswith("/body/")]
    if not inside:
        return findings
    if http is not None:
        body_text = _utf8_or_none(http.body or b"")
        body_index = PositionIndex(body_text) if body_text is not None else None
        shift = data.count(b"\n", 0, http.body_start or 0)
        placed: dict[int, tuple[int, int]] = {}
        for f in inside:
            where = (f.line, f.column) if f.line is not None else (
                body_index.position(f.pointer[5:]) if body_index is not None and body_text else None)
            if where is not None and where[0] is not None:
                placed[id(f)] = (shift + where[0], where[1])
        return [dataclasses.replace(f, line=placed[id(f)][0], column=placed[id(f)][1]) if id(f) in placed else f for f in findings]
    text = _utf8_or_none(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)
    if text is None:
        return findings
    file_index = PositionIndex(text)
    quote = file_index.offset("/body")
    if quote is None or file_index.offset("") == quote:  # no body member (an absent member points at its parent)
        return findings
    try:
        body = _DECODER.raw_decode(text, quote)[0]
    except (ValueError, RecursionError):
        return findings
    if not isinstance(body, str):  # a JSON value as body: its pointers walk the file itself
        offsets = {id(f): file_index.offset(f.pointer) for f in inside if f.line is None}
    else:
        if text[quote] != '"':
            return findings
        body_index = PositionIndex(body)
        wanted = {id(f): body_index.offset_at(f.line, f.column) if f.line is not None else body_index.offset(f.pointer[5:])
                  for f in inside}
        in_file = string_offsets(text, quote, [o for o in wanted.values() if o is not None])
        offsets = {k: in_file[o] for k, o in wanted.items() if o is not None}
    return [dataclasses.replace(f, line=pos[0], column=pos[1])
            if offsets.get(id(f)) is not None and (pos := file_index.line_column(offsets[id(f)])) else f for f in findings]


_DECODER = json.JSONDecoder()


def _utf8_or_none(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
