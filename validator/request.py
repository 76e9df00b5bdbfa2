"""The ``request`` kind: a whole HTTP request checked against the operation it addresses.

Input forms (both give the same findings):

* a JSON *envelope* ``{"method": "POST", "path": "/v1/...?a=b", "headers": {...}, "body": "<exact text>"}``;
  ``headers`` is an object (a value may be a list for a repeated header) or a list of ``[name, value]`` pairs in
  wire order; ``body`` is the body text exactly as sent (absent or null: no body). A JSON value as ``body`` is
  accepted too; the Digest can then only be checked for syntax (the verifier's ``digest-unverifiable`` warning).
* raw HTTP/1.1 request bytes (``.http`` files): request line, header lines, blank line, body.

Parsing never raises: every problem is a finding (``request-malformed``, ``header-malformed``). The operation is
resolved from method + path against the spec's path templates (the profile's ``paths`` overrides applied), then
headers, query parameters and body are checked from the operation's parameters and request schema, and Digest /
Signature / TPP-Signature-Certificate by :func:`validator.signing.verify_request`. Finding pointers: ``/method``,
``/path``, ``/query/<name>``, ``/headers/<Header-Name>`` (the spec's spelling for interface headers), ``/body/...``.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import functools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from .findings import ERROR, WARNING, Finding, Report, escape_pointer_token
from .schema import FORMAT_CHECKS, describe_error, detail_validator_class, format_checker
from .schema import short_value as _short
from .spec import Kind, Operation, Parameter, Spec, as_tuple

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Validator

from .request_shape import REQUEST_KIND, looks_like_envelope, looks_like_http  # noqa: F401  (re-exported)
REQUEST_KIND_DESCRIPTION = (
    "A whole HTTP request: method, path with query, headers and exact body bytes, as a JSON envelope "
    '{"method", "path", "headers", "body"} or a raw HTTP/1.1 .http file. The operation is resolved from method '
    "and path; headers, query parameters, body and request signature are checked."
)
ENVELOPE_KEYS = ("method", "path", "headers", "body")
EXAMPLE_KEY = "x-example"  # catalogue examples only: a recipe materialize_example turns into a signed envelope

# ---- rule ids (their metadata and examples: validator/rules/request_rules.py) ----
REQUEST_MALFORMED = "request-malformed"
HEADER_MALFORMED = "header-malformed"
PATH_UNKNOWN = "path-unknown"
PRODUCT_UNKNOWN = "product-unknown"
METHOD_NOT_ALLOWED = "method-not-allowed"
HEADER_REQUIRED = "header-required"
HEADER_FORMAT = "header-format"
HEADER_RECOMMENDED_FORMAT = "header-recommended-format"
PSU_IDENTITY_INVALID = "psu-identity-invalid"
ACCEPT_FIX_UNKNOWN = "accept-fix-unknown"
ACCEPT_FIX_REQUIRED = "accept-fix-required"
CORPORATE_ID_REQUIRED = "corporate-id-required"
HEADER_NOT_ACCEPTED = "header-not-accepted"
HEADER_DUPLICATE = "header-duplicate"
QUERY_UNKNOWN = "query-unknown"
QUERY_DUPLICATE = "query-duplicate"
QUERY_FORMAT = "query-format"
QUERY_REQUIRED = "query-required"
QUERY_DATE_ORDER = "query-date-order"
BODY_REQUIRED = "body-required"
BODY_NOT_ACCEPTED = "body-not-accepted"

# The path parameter whose unknown value is 404 PRODUCT_UNKNOWN (A7); every other path mismatch is RESOURCE_UNKNOWN.
PRODUCT_PARAMETER = "payment-product"
# Decision whose parameters the signature verifier owns (presence, format, duplicates): Digest, Signature,
# TPP-Signature-Certificate carry ``x-assumption: A8`` in the spec.
SIGNATURE_DECISION = "A8"
SIGNATURE_CONTEXT_HEADER = "psu-context"
CORPORATE_CONTEXT = "CORPORATE"
CORPORATE_ID_HEADER = "psu-corporate-id"
PSU_IDENTITY_HEADER = "x-psu-identity"
DATE_RANGE = ("fromDate", "toDate")  # A22: fromDate <= toDate
# HTTP/1.1 message framing (RFC 9112), not interface parameters: never "not accepted".
FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
# Headers defined as comma-separated lists (RFC 9110 content negotiation, forwarded PSU values, RFC 3230 Digest):
# repeating them is legitimate. x-accept-fix is a list too (A18): parameters with x-code-set.
LIST_HEADERS = frozenset({
    "accept", "accept-charset", "accept-encoding", "accept-language",
    "psu-accept", "psu-accept-charset", "psu-accept-encoding", "psu-accept-language", "digest",
})
MAX_HEADER_LENGTH = 8192  # the verifier's default; longer values are reported by it (header-oversized)

_TOKEN_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_CTL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_VERSION_RE = re.compile(r"HTTP/1\.[01]\Z")
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_ABSOLUTE_RE = re.compile(r"https?://", re.I)


# ================================================================ the parsed request
@dataclass(frozen=True, slots=True)
class RequestProblem:
    """A finding before the validator turns it into one (profile overrides applied there)."""

    rule: str
    pointer: str
    message: str
    severity: str | None = None


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str                              # path + query exactly as sent (the signing string's request-target)
    path: str                                # the path part, still percent-encoded
    query: list[tuple[str, str]]             # percent-decoded, in order, repeats kept
    headers: list[tuple[str, str]]           # wire order, original case, repeats kept
    body: bytes | None                       # exact bytes (b"" = no body); None when only a JSON value is known
    body_is_exact: bool
    body_value: Any = None                   # the JSON value when the envelope gave one instead of text
    form: str = "envelope"                   # "envelope" | "http"
    version: str | None = None               # HTTP version of a .http request line
    newline: str = "\r\n"                    # line ending of a .http input

    @property
    def has_body(self) -> bool:
        return bool(self.body) if self.body_is_exact else self.body_value is not None

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [v for n, v in self.headers if n.lower() == wanted]


@dataclass(frozen=True)
class Parsed:
    request: HttpRequest | None
    problems: list[RequestProblem] = field(default_factory=list)


def header_pointer(name: str) -> str:
    return "/headers/" + escape_pointer_token(name)


def query_pointer(name: str) -> str:
    return "/query/" + escape_pointer_token(name)


# ================================================================ parsing
def _split_target(target: str, problems: list[RequestProblem]) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(target as signed, path, decoded query) or None when the target is unusable."""
    if not target:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", "the path is empty"))
        return None
    if _CTL_RE.search(target) or " " in target or "\t" in target:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the path {_short(target)} contains white space or control characters"))
        return None
    if _ABSOLUTE_RE.match(target):
        try:
            parts = urlsplit(target)
        except ValueError as exc:
            problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the absolute URL {_short(target)} is malformed: {exc}"))
            return None
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    if not target.startswith("/"):
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the path {_short(target)} must start with '/' (origin form, e.g. /v1/payments/sepa-credit-transfers)"))
        return None
    if "#" in target:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", "a request target carries no fragment ('#...')"))
        return None
    path, _, query_text = target.partition("?")
    query: list[tuple[str, str]] = []
    if query_text:
        try:
            query = parse_qsl(query_text, keep_blank_values=True, encoding="utf-8", errors="strict")
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append(RequestProblem(REQUEST_MALFORMED, "/query", f"the query string cannot be decoded as UTF-8: {exc}"))
    return target, path, query


def _check_header(name: str, value: str, problems: list[RequestProblem]) -> bool:
    """Report a malformed header name or value; False when the header must be dropped (unusable name)."""
    if not _TOKEN_RE.match(name):
        problems.append(RequestProblem(HEADER_MALFORMED, header_pointer(name), f"header name {_short(name)} is not an HTTP token (RFC 9110 §5.1)"))
        return False
    if _CTL_RE.search(value):
        problems.append(RequestProblem(HEADER_MALFORMED, header_pointer(name), f"{name} contains control characters (CR, LF, NUL or another CTL): {_short(value)}"))
    return True


def parse_envelope(envelope: Any) -> Parsed:
    """An envelope (decoded JSON) as an :class:`HttpRequest`; problems instead of exceptions."""
    problems: list[RequestProblem] = []
    if not isinstance(envelope, dict):
        problems.append(RequestProblem(REQUEST_MALFORMED, "", f"a request envelope is a JSON object with method, path, headers and body, got {type(envelope).__name__}"))
        return Parsed(None, problems)
    for key in envelope:
        if key not in ENVELOPE_KEYS:
            problems.append(RequestProblem(REQUEST_MALFORMED, "/" + escape_pointer_token(str(key)), f"unknown envelope member {_short(key)} ignored (known: {', '.join(ENVELOPE_KEYS)})", WARNING))
    method = envelope.get("method")
    if not isinstance(method, str) or not _TOKEN_RE.match(method):
        problems.append(RequestProblem(REQUEST_MALFORMED, "/method", f"method must be an HTTP method token such as POST, got {_short(method)}"))
        method = None
    path = envelope.get("path")
    split = None
    if not isinstance(path, str):
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"path must be a string (path and query as sent), got {_short(path)}"))
    else:
        split = _split_target(path, problems)
    headers: list[tuple[str, str]] = []
    raw_headers = envelope.get("headers")
    items: list[tuple[Any, Any, str]] = []
    if raw_headers is None:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/headers", "headers is missing: an object of header names to values, or a list of [name, value] pairs"))
    elif isinstance(raw_headers, dict):
        for name, value in raw_headers.items():
            if isinstance(value, list):
                items.extend((name, v, header_pointer(str(name))) for v in value)
            else:
                items.append((name, value, header_pointer(str(name))))
    elif isinstance(raw_headers, list):
        for i, pair in enumerate(raw_headers):
            if isinstance(pair, (list, tuple)) and len(pair) == 2:
                items.append((pair[0], pair[1], f"/headers/{i}"))
            else:
                problems.append(RequestProblem(REQUEST_MALFORMED, f"/headers/{i}", f"a header in list form is a [name, value] pair, got {_short(pair)}"))
    else:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/headers", f"headers must be an object or a list of [name, value] pairs, got {type(raw_headers).__name__}"))
    for name, value, where in items:
        if not isinstance(name, str) or not isinstance(value, str):
            problems.append(RequestProblem(REQUEST_MALFORMED, where, f"a header name and value are strings, got {_short(name)}: {_short(value)}"))
            continue
        if _check_header(name, value, problems):
            headers.append((name, value.strip(" \t")))
    body: bytes | None = b""
    exact = True
    value = None
    if "body" in envelope and envelope["body"] is not None:
        raw_body = envelope["body"]
        if isinstance(raw_body, str):
            try:
                body = raw_body.encode("utf-8")
            except UnicodeEncodeError:
                problems.append(RequestProblem(REQUEST_MALFORMED, "/body", "the body text contains unpaired surrogates and has no UTF-8 form"))
                body = None
                exact = False
        else:
            body, exact, value = None, False, raw_body
    if method is None or split is None:
        return Parsed(None, problems)
    target, path_part, query = split
    return Parsed(HttpRequest(method, target, path_part, query, headers, body, exact, value, "envelope"), problems)


def _decode_line(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")  # obsolete but legal header text (RFC 9110 §5.5)


def parse_http(data: bytes, *, max_bytes: int | None = None) -> Parsed:
    """Raw HTTP/1.1 request bytes (request line, headers, blank line, body) as an :class:`HttpRequest`."""
    problems: list[RequestProblem] = []
    if not isinstance(data, (bytes, bytearray, memoryview)):
        problems.append(RequestProblem(REQUEST_MALFORMED, "", f"an HTTP request is bytes, got {type(data).__name__}"))
        return Parsed(None, problems)
    data = bytes(data)
    if max_bytes is not None and len(data) > max_bytes:
        problems.append(RequestProblem(REQUEST_MALFORMED, "", f"the request is {len(data):,} bytes; the limit is {max_bytes:,} bytes"))
        return Parsed(None, problems)
    start = 0
    while data.startswith(b"\r\n", start) or data.startswith(b"\n", start):
        start += 2 if data.startswith(b"\r\n", start) else 1
    end = re.search(rb"\r?\n\r?\n", data[start:])
    if end is None:
        head, body = data[start:].rstrip(b"\r\n"), b""
    else:
        head, body = data[start:start + end.start()], data[start + end.end():]
    newline = "\r\n" if b"\r\n" in head or not head else "\n"
    lines = re.split(rb"\r?\n", head)
    if not lines or not lines[0]:
        problems.append(RequestProblem(REQUEST_MALFORMED, "", "the input is empty: an HTTP request starts with a request line such as 'POST /v1/... HTTP/1.1'"))
        return Parsed(None, problems)
    request_line = _decode_line(lines[0])
    parts = request_line.split(" ")
    method = target = version = None
    if len(parts) not in (2, 3) or not all(parts):
        problems.append(RequestProblem(REQUEST_MALFORMED, "", f"the request line {_short(request_line)} is not 'METHOD target HTTP/1.1'"))
    else:
        method, target = parts[0], parts[1]
        version = parts[2] if len(parts) == 3 else None
        if not _TOKEN_RE.match(method):
            problems.append(RequestProblem(REQUEST_MALFORMED, "/method", f"method {_short(method)} is not an HTTP token"))
            method = None
        if version is not None and not _VERSION_RE.match(version):
            problems.append(RequestProblem(REQUEST_MALFORMED, "", f"HTTP version {_short(version)} is not HTTP/1.1 or HTTP/1.0"))
    headers: list[tuple[str, str]] = []
    for raw in lines[1:]:
        line = _decode_line(raw)
        if line[:1] in (" ", "\t"):
            problems.append(RequestProblem(HEADER_MALFORMED, "/headers", f"obsolete line folding (a header line starting with white space) is not allowed: {_short(line)}"))
            continue
        name, sep, value = line.partition(":")
        if not sep:
            problems.append(RequestProblem(HEADER_MALFORMED, "/headers", f"header line {_short(line)} is not 'Name: value'"))
            continue
        if _check_header(name, value, problems):
            headers.append((name, value.strip(" \t")))
    lengths = [v for n, v in headers if n.lower() == "content-length"]
    if lengths:
        declared = lengths[0]
        if not declared.isdigit() or len(set(lengths)) > 1:
            problems.append(RequestProblem(HEADER_MALFORMED, header_pointer("Content-Length"), f"Content-Length {_short(', '.join(lengths))} is not one decimal number"))
        elif int(declared) != len(body):
            extra = body[int(declared):]
            if int(declared) < len(body) and extra in (b"\n", b"\r\n"):
                body = body[: int(declared)]  # the final newline an editor adds to a .http file
            else:
                problems.append(RequestProblem(REQUEST_MALFORMED, "/body", f"Content-Length says {declared} bytes but the body has {len(body)}"))
    split = _split_target(target, problems) if target is not None else None
    if method is None or split is None:
        return Parsed(None, problems)
    target_text, path_part, query = split
    return Parsed(HttpRequest(method, target_text, path_part, query, headers, body, True, None, "http", version, newline), problems)


# ================================================================ operation resolution
@dataclass(frozen=True)
class Resolution:
    operation: Operation | None
    template: str | None
    path_values: dict[str, str]
    problems: list[RequestProblem]


@dataclass(frozen=True)
class _Segment:
    literal: str | None          # None: a template parameter
    param: str | None            # parameter name of a template segment, or of the enum slot a literal fills
    enum: tuple[str, ...] | None


def _param_enum(spec: Spec, param: Parameter) -> tuple[str, ...] | None:
    schema = spec.deref(param.schema) if isinstance(param.schema, dict) else {}
    enum = schema.get("enum") if isinstance(schema, dict) else None
    return tuple(str(e) for e in enum) if enum else None


@functools.lru_cache(maxsize=16)
def _routes(spec_id: int, overrides: tuple[tuple[str, str], ...]) -> tuple[tuple[Operation, str, tuple[_Segment, ...]], ...]:
    spec = _SPECS[spec_id]
    slots: dict[str, tuple[str, tuple[str, ...]]] = {}  # literal value -> (parameter, enum) it is a member of
    for op in spec.operations.values():
        for p in op.path_parameters:
            enum = _param_enum(spec, p)
            for member in enum or ():
                slots.setdefault(member, (p.name, enum))
    paths = dict(overrides)
    routes = []
    for op in spec.operations.values():
        template = paths.get(op.operation_id, op.path)
        params = {p.name: p for p in op.path_parameters}
        segments = []
        for token in template[1:].split("/"):
            if token.startswith("{") and token.endswith("}"):
                name = token[1:-1]
                segments.append(_Segment(None, name, _param_enum(spec, params[name]) if name in params else None))
            elif token in slots:
                segments.append(_Segment(token, *slots[token]))
            else:
                segments.append(_Segment(token, None, None))
        routes.append((op, template, tuple(segments)))
    return tuple(routes)


_SPECS: dict[int, Spec] = {}


def resolve_operation(spec: Spec, method: str, path: str, *, paths: Mapping[str, str] | None = None) -> Resolution:
    """The operation ``method path`` addresses; literal segments win over templated ones (OpenAPI path matching)."""
    _SPECS[id(spec)] = spec
    problems: list[RequestProblem] = []
    try:
        segments = [unquote(s, errors="strict") for s in path[1:].split("/")]
    except UnicodeDecodeError:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the path {_short(path)} has percent-encoded bytes that are not UTF-8"))
        return Resolution(None, None, {}, problems)
    routes = _routes(id(spec), tuple(sorted((paths or {}).items())))
    exact: list[tuple[tuple[int, ...], Operation, str, dict[str, str]]] = []
    near: list[tuple[Operation, list[tuple[str, str]]]] = []  # (operation, [(parameter, value) of mismatched slots])
    for op, template, segs in routes:
        if len(segs) != len(segments):
            continue
        values: dict[str, str] = {}
        mismatched: list[tuple[str, str]] = []
        ok = True
        for seg, value in zip(segs, segments):
            if seg.literal is not None:
                if value == seg.literal:
                    continue
                if seg.param is not None and value:
                    mismatched.append((seg.param, value))
                    continue
                ok = False
                break
            if not value:
                ok = False
                break
            if seg.enum is not None and value not in seg.enum:
                mismatched.append((seg.param or "", value))
                continue
            values[seg.param or ""] = value
        if not ok:
            continue
        if mismatched:
            near.append((op, mismatched))
        else:
            exact.append((tuple(1 if s.literal is not None else 0 for s in segs), op, template, values))
    if exact:
        exact.sort(key=lambda e: e[0], reverse=True)
        for _rank, op, template, values in exact:
            if op.method == method:
                return Resolution(op, template, values, problems)
        best = exact[0][2]
        allowed = sorted({op.method for _r, op, t, _v in exact if t == best})
        problems.append(RequestProblem(METHOD_NOT_ALLOWED, "/method", f"{method} is not allowed on {best}; allowed: {', '.join(allowed)} (methods are case-sensitive)"))
        return Resolution(None, best, {}, problems)
    for op, mismatched in near:
        if op.method == method and all(name == PRODUCT_PARAMETER for name, _v in mismatched):
            value = mismatched[0][1]
            problems.append(RequestProblem(PRODUCT_UNKNOWN, "/path", f"payment product {value!r} is not offered at {path}; this interface offers {_product_list(spec)}"))
            return Resolution(None, None, {}, problems)
    problems.append(RequestProblem(PATH_UNKNOWN, "/path", f"no operation of the interface has the path {_short(path, 120)}"))
    return Resolution(None, None, {}, problems)


def _product_list(spec: Spec) -> str:
    for op in spec.operations.values():
        for p in op.path_parameters:
            if p.name == PRODUCT_PARAMETER:
                return ", ".join(_param_enum(spec, p) or ())
    return "no payment products"


# ================================================================ parameter schemas
def _inline(spec: Spec, node: Any, depth: int = 0) -> Any:
    if depth > 32:
        return node
    if isinstance(node, dict):
        if "$ref" in node and isinstance(node["$ref"], str):
            resolved = _inline(spec, spec.resolve(node["$ref"]), depth + 1)
            rest = {k: _inline(spec, v, depth + 1) for k, v in node.items() if k != "$ref"}
            return {**resolved, **rest} if rest else resolved
        return {k: _inline(spec, v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(spec, v, depth + 1) for v in node]
    return node


_VALIDATORS: dict[tuple, Any] = {}  # python-jsonschema validators (imported lazily: cold start)


def _schema_validator(spec: Spec, param: Parameter, *, drop: tuple[str, ...] = ()) -> Any:
    key = (id(spec), param.location, param.name, json.dumps(param.schema, sort_keys=True, default=str), drop)
    found = _VALIDATORS.get(key)
    if found is None:
        schema = {k: v for k, v in _inline(spec, param.schema).items() if k not in drop and not k.startswith("x-")}
        found = detail_validator_class()(schema, format_checker=format_checker())
        _VALIDATORS[key] = found
    return found


def _schema_problem(validator: Any, value: Any) -> str | None:
    from jsonschema.exceptions import best_match

    errors = list(validator.iter_errors(value))
    if not errors:
        return None
    error = best_match(errors)
    if error.validator in ("anyOf", "oneOf"):
        formats = [b.get("format") for b in error.validator_value if isinstance(b, dict) and b.get("format")]
        if formats:
            return f"{_short(value)} is not a valid {' or '.join(formats)}"
    return describe_error(error)  # the same wording as body findings


def _owned_by_verifier(param: Parameter) -> bool:
    return SIGNATURE_DECISION in as_tuple(param.raw.get("x-assumption"))


def _is_list_header(param: Parameter | None, lname: str) -> bool:
    return lname in LIST_HEADERS or (param is not None and bool(param.raw.get("x-code-set")))


# ================================================================ the checks
class _Out:
    def __init__(self) -> None:
        self.problems: list[RequestProblem] = []

    def add(self, rule: str, pointer: str, message: str, severity: str | None = None) -> None:
        self.problems.append(RequestProblem(rule, pointer, message, severity))


def _check_headers(spec: Spec, op: Operation, req: HttpRequest, out: _Out, max_length: int) -> None:
    index: dict[str, list[tuple[str, str]]] = {}
    for name, value in req.headers:
        index.setdefault(name.lower(), []).append((name, value))
    params = {p.key: p for p in op.header_parameters}
    for key, p in params.items():
        present = index.get(key)
        pointer = header_pointer(p.name)
        if not present:
            if p.required and not _owned_by_verifier(p):
                out.add(HEADER_REQUIRED, pointer, f"{p.name} is required for {op.operation_id} but absent")
            continue
        if _owned_by_verifier(p):
            continue  # presence, format and repeats: the signature verifier (A8)
        values = [v for _n, v in present]
        listed = _is_list_header(p, key)
        if len(values) > 1 and not listed:
            out.add(HEADER_DUPLICATE, pointer, f"{p.name} occurs {len(values)} times; it takes one value")
        if any(len(v) > max_length for v in values):
            continue  # header-oversized (verifier); not parsed further
        for value in ([", ".join(values)] if listed else values):
            _check_header_value(spec, op, p, value, out)
    # A7: a corporate PSU needs PSU-Corporate-ID
    contexts = [v for _n, v in index.get(SIGNATURE_CONTEXT_HEADER, ())]
    if CORPORATE_ID_HEADER in params and CORPORATE_CONTEXT in contexts and CORPORATE_ID_HEADER not in index:
        out.add(CORPORATE_ID_REQUIRED, header_pointer(params[CORPORATE_ID_HEADER].name),
                f"PSU-Context is {CORPORATE_CONTEXT}: a corporate PSU must send {params[CORPORATE_ID_HEADER].name}")
    # headers the operation does not accept
    content = {name.lower(): (name, meta or {}) for name, meta in op.content_headers.items()}
    for lname, occurrences in index.items():
        if lname in params or lname in FRAMING_HEADERS or lname in _signing_only_headers(spec):
            continue
        wire = occurrences[0][0]
        if lname in content:
            name, meta = content[lname]
            if meta.get("accepted", True) is not False:
                continue
            why = meta.get("description") or "not accepted"
            out.add(HEADER_NOT_ACCEPTED, header_pointer(name), f"{name} is not accepted by {op.operation_id}: {why}")
        else:
            out.add(HEADER_NOT_ACCEPTED, header_pointer(wire), f"{wire} is not a header of {op.operation_id} (header table, column {op.header_table_column or 'none'}); it is ignored")


@functools.lru_cache(maxsize=8)
def _signing_only_headers_cached(spec_id: int) -> frozenset[str]:
    from .signing import PROFILE_SIGNED_HEADERS

    spec = _SPECS[spec_id]
    parameters = {p.key for op in spec.operations.values() for p in op.header_parameters}
    return frozenset(h for h in PROFILE_SIGNED_HEADERS if h not in parameters)  # "date": signed, never a parameter


def _signing_only_headers(spec: Spec) -> frozenset[str]:
    _SPECS[id(spec)] = spec
    return _signing_only_headers_cached(id(spec))


def _check_header_value(spec: Spec, op: Operation, p: Parameter, value: str, out: _Out) -> None:
    pointer = header_pointer(p.name)
    code_set = p.raw.get("x-code-set")
    # A list of code-set names: its content is worded by the accept-fix rules, not by a pattern.
    problem = _schema_problem(_schema_validator(spec, p, drop=("pattern",) if code_set else ()), value)
    if problem:
        out.add(HEADER_FORMAT, pointer, f"{p.name}: {problem}")
        return
    recommended = p.schema.get("x-recommended-format") if isinstance(p.schema, dict) else None
    if recommended and not _conforms(recommended, value):
        out.add(HEADER_RECOMMENDED_FORMAT, pointer, f"{p.name} {_short(value)} is not a {recommended}; a {recommended} is recommended", WARNING)
    if p.key == PSU_IDENTITY_HEADER:
        from .checks.identity import check_norwegian_identity_number

        for issue in check_norwegian_identity_number(value):
            out.add(PSU_IDENTITY_INVALID, pointer, f"X-PSU-IDENTITY: {issue.message}")
    if code_set:
        _check_code_list(spec, op, p, code_set, value, out)


def _conforms(fmt: str, value: str) -> bool:
    check = FORMAT_CHECKS.get(fmt)
    try:
        return check is None or bool(check(value))
    except ValueError:
        return False


def _check_code_list(spec: Spec, op: Operation, p: Parameter, code_set: str, value: str, out: _Out) -> None:
    pointer = header_pointer(p.name)
    schema = spec.schema(code_set)
    known = tuple(schema.get("enum", ()))
    aliases = dict(schema.get("x-aliases") or {})
    names = [n.strip(" \t") for n in value.split(",")]
    if any(not n for n in names):
        out.add(HEADER_FORMAT, pointer, f"{p.name} {_short(value)} has an empty name in its comma-separated list")
    given = set()
    for n in names:
        if not n:
            continue
        canonical = aliases.get(n, n)
        given.add(canonical)
        if canonical not in known:
            out.add(ACCEPT_FIX_UNKNOWN, pointer, f"{p.name}: {n!r} is not a published change name ({', '.join(known)}); it has no effect", WARNING)
    required = (schema.get("x-required-on") or {}).get(op.operation_id)
    for needed in as_tuple(required):
        if needed not in given:
            out.add(ACCEPT_FIX_REQUIRED, pointer, f"{p.name} on {op.operation_id} must contain {needed!r}, got {_short(value)}")


def _coerce_query(value: str, schema: dict) -> tuple[Any, str | None]:
    kind = schema.get("type")
    if kind == "boolean":
        if value in ("true", "false"):
            return value == "true", None
        return None, f"{_short(value)} is not a boolean (true or false)"
    if kind == "integer":
        if _INT_RE.match(value):
            return int(value), None
        return None, f"{_short(value)} is not an integer"
    if kind == "number":
        try:
            return float(value), None
        except ValueError:
            return None, f"{_short(value)} is not a number"
    return value, None


def _check_query(spec: Spec, op: Operation, req: HttpRequest, out: _Out) -> None:
    params = {p.name: p for p in op.query_parameters}
    seen: dict[str, list[str]] = {}
    for name, value in req.query:
        seen.setdefault(name, []).append(value)
    for name in seen:
        if name not in params:
            known = ", ".join(params) or "none"
            out.add(QUERY_UNKNOWN, query_pointer(name), f"{op.operation_id} has no query parameter {name!r} (known: {known}); it is ignored", WARNING)
    valid: dict[str, Any] = {}
    for name, p in params.items():
        values = seen.get(name)
        if not values:
            if p.required:
                out.add(QUERY_REQUIRED, query_pointer(name), f"query parameter {name} is required for {op.operation_id} but absent")
            continue
        if len(values) > 1:
            out.add(QUERY_DUPLICATE, query_pointer(name), f"query parameter {name} occurs {len(values)} times; it takes one value")
        schema = _inline(spec, p.schema)
        coerced, problem = _coerce_query(values[0], schema)
        if problem is None:
            problem = _schema_problem(_schema_validator(spec, p), coerced)
        if problem:
            out.add(QUERY_FORMAT, query_pointer(name), f"{name}: {problem}")
        else:
            valid[name] = coerced
    low, high = DATE_RANGE
    if low in valid and high in valid and str(valid[low]) > str(valid[high]):
        out.add(QUERY_DATE_ORDER, query_pointer(low), f"{low} {valid[low]} lies after {high} {valid[high]}")


def _body_kind(spec: Spec, op: Operation) -> str | None:
    if not op.request_schema_ref:
        return None
    schema_name = op.request_schema_ref.rsplit("/", 1)[1]
    for kind in spec.kinds.values():
        if kind.schema_name == schema_name and kind.is_request:
            return kind.name
    return None


def _check_body(v: "Validator", op: Operation, req: HttpRequest, out: _Out, source: str) -> list[Finding]:
    """Body findings (already Findings, from the validator of the body's kind), pointers under /body."""
    from .jsonload import load_json_bytes

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


def _clock(v: "Validator", req: HttpRequest) -> _dt.datetime:
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
    from .context import OSLO
    from .signing.verifier import parse_imf_fixdate

    dates = req.header_values("date")
    if len(dates) == 1:
        try:
            signed_at = parse_imf_fixdate(dates[0])
        except (ValueError, TypeError, OverflowError):
            signed_at = None
        if signed_at is not None and signed_at.astimezone(OSLO).date() == v.today:
            return signed_at
    return _dt.datetime.combine(v.today, _dt.time(12), tzinfo=OSLO)


def _verify(v: "Validator", op: Operation, req: HttpRequest) -> list[Finding]:
    from .signing import SignableRequest, VerifyOptions, verify_request

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


def request_findings(v: "Validator", parsed: Parsed, *, source: str = "<request>") -> list[Finding]:
    """Every finding for a parsed request, through the validator (profile severities, codes and statuses)."""
    out = _Out()
    out.problems.extend(parsed.problems)
    extra: list[Finding] = []
    req = parsed.request
    if req is not None:
        resolution = resolve_operation(v.spec, req.method, req.path, paths=v.profile.paths)
        out.problems.extend(resolution.problems)
        op = resolution.operation
        if op is not None:
            _check_headers(v.spec, op, req, out, MAX_HEADER_LENGTH)
            _check_query(v.spec, op, req, out)
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


def check_request(v: "Validator", payload: Any, *, source: str = "<request>") -> Report:
    """The report for a request given as an envelope (decoded JSON) or as raw ``.http`` bytes."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return check_request_bytes(v, bytes(payload), source=source)
    try:
        parsed = parse_envelope(payload)
        return Report(source, REQUEST_KIND, request_findings(v, parsed, source=source))
    except Exception as exc:  # a defect here must still be a finding, never a traceback
        return Report(source, REQUEST_KIND, [Finding("internal-error", ERROR, "", f"request check failed: {type(exc).__name__}: {exc}")])


def check_request_bytes(v: "Validator", data: bytes, *, source: str = "<request>") -> Report:
    """Bytes of a JSON envelope or of a raw HTTP/1.1 request."""
    from .jsonload import load_json_bytes

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


def request_kind(spec: Spec) -> Kind:
    """The pseudo-kind for listings (``obvalidate kinds``): every operation's request."""
    return Kind(REQUEST_KIND, "request", "(HTTP request)", tuple(f"{op} request" for op in spec.operations))


# ================================================================ building and signing requests
_FORMAT_SAMPLES = {  # values to *generate* a valid header or path value when the spec gives no example
    "uuid": "3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3c",
    "uri": "https://tpp.example.no/callback",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "date": "2026-07-01",
    "date-time": "2026-07-01T10:00:00Z",
}


def sample_value(spec: Spec, schema: dict) -> str:
    """A valid text value for a parameter schema: its first example, first enum member, or a format sample."""
    schema = _inline(spec, schema) if isinstance(schema, dict) else {}
    if schema.get("examples"):
        return str(schema["examples"][0])
    if schema.get("enum"):
        return str(schema["enum"][0])
    fmt = schema.get("format")
    if fmt in _FORMAT_SAMPLES:
        return _FORMAT_SAMPLES[fmt]
    for branch in schema.get("anyOf", ()):
        if branch.get("format") in _FORMAT_SAMPLES:
            return _FORMAT_SAMPLES[branch["format"]]
    if schema.get("type") == "boolean":
        return "true"
    if schema.get("type") == "integer":
        return str(max(int(schema.get("minimum", 0)), 1))
    return "sample-" + "x" * max(int(schema.get("minLength", 1)) - 7, 0)


_DEFAULT = object()


def _first_body_example(spec: Spec, op: Operation) -> Any:
    for location, _schema, value in spec.iter_examples():
        if location.startswith(f"{op.operation_id} request example "):
            return copy.deepcopy(value)
    return None


def body_text(value: Any) -> str:
    """The compact JSON text a client sends for ``value``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_request(spec: Spec, operation_id: str, *, path_values: Mapping[str, str] | None = None,
                  query: Mapping[str, str] | None = None, headers: Mapping[str, str | None] | None = None,
                  body: Any = _DEFAULT, paths: Mapping[str, str] | None = None) -> dict:
    """An unsigned envelope for ``operation_id`` with every required header and query parameter, from the spec.

    ``body`` defaults to the operation's first spec example (compact JSON text); a string is taken as the exact
    text, another value is serialised compactly, None means no body. ``query=None`` adds the required query
    parameters; a mapping is used as given. ``headers`` entries override (None removes).
    """
    op = spec.operation(operation_id)
    template = (paths or {}).get(operation_id, op.path)
    given = dict(path_values or {})
    params = {p.name: p for p in op.path_parameters}

    def fill(match: re.Match) -> str:
        name = match.group(1)
        value = given.get(name) or (sample_value(spec, params[name].schema) if name in params else "sample")
        return quote(value, safe="!$&'()*+,;=:@")

    path = re.sub(r"\{([^}]+)\}", fill, template)
    if query is None:
        query = {p.name: sample_value(spec, p.schema) for p in op.query_parameters if p.required}
    if query:
        path += "?" + urlencode(list(query.items()))
    out_headers: dict[str, str] = {}
    for p in op.header_parameters:
        if p.required and not _owned_by_verifier(p):
            out_headers[p.name] = sample_value(spec, p.schema)
    for name, value in (headers or {}).items():
        if value is None:
            out_headers.pop(name, None)
        else:
            out_headers[name] = value
    envelope: dict[str, Any] = {"method": op.method, "path": path, "headers": out_headers}
    if body is _DEFAULT:
        body = _first_body_example(spec, op) if op.request_schema_ref else None
    if body is not None:
        envelope["body"] = body if isinstance(body, str) else body_text(body)
    return envelope


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
    from .signing import SignableRequest, sign_request
    from .spec import load_spec

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
    from .signing import generate_test_identity, save_pem

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


# ================================================================ catalogue examples
def example_now(spec: Spec) -> _dt.datetime:
    """The clock of the catalogue's request examples: 10:00 UTC on the spec's x-example-today."""
    day = _dt.date.fromisoformat(spec.example_today)
    return _dt.datetime.combine(day, _dt.time(10, 0), tzinfo=_dt.timezone.utc)


@functools.lru_cache(maxsize=4)
def example_identity(which: str = "test-vector"):
    """``(key, certificate)`` for the catalogue's signed examples.

    The signing reference's deterministic test vector (key derived from SHAKE256, never stored; certificate valid
    2025-01-01..2030-01-01, covering the spec's x-example-today). ``expired`` and ``not-yet-valid`` re-certify the
    same key for 2020 and 2031, so the examples are reproducible and no private key is kept in the repository.
    """
    from cryptography import x509
    from .signing import test_vector_certificate, test_vector_key
    from .signing.keygen import build_self_signed

    key = test_vector_key()
    if which == "test-vector":
        return key, test_vector_certificate()
    windows = {"expired": (2020, 2021), "not-yet-valid": (2031, 2032)}
    start, end = windows[which]
    name: x509.Name = test_vector_certificate().subject
    cert = build_self_signed(key, name, 0x0B0000 + start, _dt.datetime(start, 1, 1, tzinfo=_dt.timezone.utc),
                             _dt.datetime(end, 1, 1, tzinfo=_dt.timezone.utc))
    return key, cert


@functools.lru_cache(maxsize=1)
def _ec_certificate_value() -> str:
    """A certificate with a P-256 key (deterministic key, for the certificate-key-weak example)."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from .signing import test_vector_certificate
    from .signing.certificate import certificate_header_value
    from .signing.keygen import build_self_signed

    key = ec.derive_private_key(0x5EC0DE, ec.SECP256R1())
    cert = build_self_signed(key, test_vector_certificate().subject, 0x0A1B2C3D4E5F60718293,
                             _dt.datetime(2025, 1, 1, tzinfo=_dt.timezone.utc), _dt.datetime(2030, 1, 1, tzinfo=_dt.timezone.utc))
    return certificate_header_value(cert)


_TOKENS = {"@ec-certificate": _ec_certificate_value}


def _patch(envelope: dict, pointer: str, value: Any) -> None:
    """Set (None: remove) ``/method``, ``/path``, ``/body`` or ``/headers/<Name>`` of an envelope."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    parent: Any = envelope
    for t in tokens[:-1]:
        parent = parent[t]
    last = tokens[-1]
    if isinstance(value, str) and value in _TOKENS:
        value = _TOKENS[value]()
    elif isinstance(value, str) and value.startswith("@algorithm:"):  # rewrite the signed Signature's algorithm
        value = re.sub(r'algorithm="[^"]*"', f'algorithm="{value.split(":", 1)[1]}"', parent[last])
    elif isinstance(value, str) and value.startswith("@keyid-serial:"):  # ... or its keyId serial
        value = re.sub(r'keyId="SN=[^,]*', f'keyId="SN={value.split(":", 1)[1]}', parent[last])
    if value is None:
        parent.pop(last, None)
    else:
        parent[last] = value


def materialize_example(document: Any, spec: Spec) -> Any:
    """Turn a catalogue example recipe ``{"x-example": {...}}`` into the (signed) envelope it stands for.

    Recipe members: ``operation`` (operationId), ``body`` (spec example label, a JSON value, null; default the
    operation's first example), ``body-patch`` ([[pointer, value]] on the body value), ``query`` (object),
    ``path-values`` (object), ``set`` ([[envelope pointer, value or null]] before signing), ``sign`` (default
    true), ``identity`` (test-vector | expired | not-yet-valid), ``signed-headers`` (list), ``after`` (patches after
    signing), ``body-as-value`` (give the body as a JSON value instead of exact text). Other documents pass through.
    """
    if not isinstance(document, dict) or EXAMPLE_KEY not in document:
        return document
    recipe = document[EXAMPLE_KEY]
    body: Any = _DEFAULT
    if "body" in recipe:
        body = recipe["body"]
        if isinstance(body, str):
            from .rules.examples import spec_example

            body = spec_example(spec, body)
    op = spec.operation(recipe["operation"])
    if body is _DEFAULT:
        body = _first_body_example(spec, op) if op.request_schema_ref else None
    for pointer, value in recipe.get("body-patch", ()):
        from .rules import REMOVE
        from .rules.examples import _set

        body = _set(body, pointer, REMOVE if value is None else value)
    envelope = build_request(spec, recipe["operation"], path_values=recipe.get("path-values"),
                             query=recipe.get("query"), body=body)
    for pointer, value in recipe.get("set", ()):
        _patch(envelope, pointer, value)
    if recipe.get("sign", True):
        key, cert = example_identity(recipe.get("identity", "test-vector"))
        envelope = sign_envelope(envelope, key, cert, now=example_now(spec), spec=spec, headers=recipe.get("signed-headers"))
    for pointer, value in recipe.get("after", ()):
        _patch(envelope, pointer, value)
    if recipe.get("body-as-value") and isinstance(envelope.get("body"), str):
        envelope["body"] = json.loads(envelope["body"])
    return envelope
