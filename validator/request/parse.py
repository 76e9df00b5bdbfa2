"""Parsing of the two input forms of the ``request`` kind, never raising: every problem is a finding.

* a JSON *envelope* ``{"method": "POST", "path": "/v1/...?a=b", "headers": {...}, "body": "<exact text>"}``;
  ``headers`` is an object (a value may be a list for a repeated header) or a list of ``[name, value]`` pairs in
  wire order; ``body`` is the body text exactly as sent (absent or null: no body). A JSON value as ``body`` is
  accepted too; the Digest can then only be checked for syntax (the verifier's ``digest-unverifiable`` warning).
* raw HTTP/1.1 request bytes (``.http`` files): request line, header lines, blank line, body.

Both give the same :class:`~validator.request.message.HttpRequest`.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..findings import WARNING, escape_pointer_token
from ..schema import short_value as _short
from .message import HttpRequest, Parsed, RequestProblem, header_pointer

ENVELOPE_KEYS = ("method", "path", "headers", "body")
REQUEST_MALFORMED = "request-malformed"
HEADER_MALFORMED = "header-malformed"

_TOKEN_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_CTL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_VERSION_RE = re.compile(r"HTTP/1\.[01]\Z")
_ABSOLUTE_RE = re.compile(r"https?://", re.I)

# Texts already found to be HTTP tokens (header names, methods) and long header values already found to be printable
# ASCII (a certificate): a client sends the same ones on every request, and a set lookup costs a fraction of a regex
# match or of a scan character by character. Bounded, as the validator runs in servers: emptied when full.
_KNOWN_TOKENS: dict[str, str] = {}  # token -> its lower-case form (a header's index key)
_KNOWN_PRINTABLE: set[str] = set()
_KNOWN_PATHS: set[str] = set()  # request targets without query found usable (then path and target are the same)
_KNOWN_BOUND = 256
_TOKEN_REMEMBERED_UP_TO = 128  # characters
_PRINTABLE_REMEMBERED = (256, 8192)  # shorter values are scanned each time (cheap); longer ones are not kept


def _remember(known: set[str], text: str, up_to: int) -> None:
    if len(text) <= up_to:
        if len(known) >= _KNOWN_BOUND:
            known.clear()
        known.add(text)


def _is_token(text: str) -> bool:
    """``text`` is an HTTP token (RFC 9110 §5.6.2)."""
    if type(text) is not str:
        return _TOKEN_RE.match(text) is not None
    if text in _KNOWN_TOKENS:
        return True
    if _TOKEN_RE.match(text) is None:
        return False
    if len(text) <= _TOKEN_REMEMBERED_UP_TO:
        if len(_KNOWN_TOKENS) >= _KNOWN_BOUND:
            _KNOWN_TOKENS.clear()
        _KNOWN_TOKENS[text] = text.lower()
    return True


def _is_printable_ascii(value: str) -> bool:
    """``value`` is ASCII without control characters."""
    if not value.isascii():
        return False
    shortest, longest = _PRINTABLE_REMEMBERED
    if len(value) < shortest or type(value) is not str:
        return value.isprintable()
    if value in _KNOWN_PRINTABLE:
        return True
    if not value.isprintable():
        return False
    _remember(_KNOWN_PRINTABLE, value, longest)
    return True


def _split_target(target: str, problems: list[RequestProblem]) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(target as signed, path, decoded query) or None when the target is unusable."""
    if target in _KNOWN_PATHS:  # an origin-form path without query or fragment already found usable
        return target, target, []
    if not target:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", "the path is empty"))
        return None
    # ASCII text is printable exactly when it holds no control character (tab included)
    if (not target.isprintable() if target.isascii() else _CTL_RE.search(target) or "\t" in target) or " " in target:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the path {_short(target)} contains white space or control characters"))
        return None
    if target[:1] != "/" and _ABSOLUTE_RE.match(target):
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
    path, has_query, query_text = target.partition("?")
    query: list[tuple[str, str]] = []
    if not has_query and type(target) is str:  # no query: the target is the path (a creation's, sent on every request)
        _remember(_KNOWN_PATHS, target, _TOKEN_REMEMBERED_UP_TO)
    if query_text:
        try:
            query = parse_qsl(query_text, keep_blank_values=True, encoding="utf-8", errors="strict")
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append(RequestProblem(REQUEST_MALFORMED, "/query", f"the query string cannot be decoded as UTF-8: {exc}"))
    return target, path, query


def _check_header(name: str, value: str, problems: list[RequestProblem]) -> bool:
    """Report a malformed header name or value; False when the header must be dropped (unusable name)."""
    return _header_state(name, value, problems) != _DROPPED


_DROPPED, _KEPT, _CLEAN = 0, 1, 2


def _header_state(name: str, value: str, problems: list[RequestProblem]) -> int:
    """:func:`_check_header`, telling apart a header of a token and printable ASCII (_CLEAN) from one kept with
    problems or other text (_KEPT) and one dropped (_DROPPED)."""
    if _is_token(name) and _is_printable_ascii(value):
        return _CLEAN  # the common case, decided without scanning for each defect in turn
    if not _is_token(name):
        problems.append(RequestProblem(HEADER_MALFORMED, header_pointer(name), f"header name {_short(name)} is not an HTTP token (RFC 9110 §5.1)"))
        return _DROPPED
    if _CTL_RE.search(value):
        problems.append(RequestProblem(HEADER_MALFORMED, header_pointer(name), f"{name} contains control characters (CR, LF, NUL or another CTL): {_short(value)}"))
    if not value.isascii() and _unpaired_surrogate(value):
        problems.append(RequestProblem(HEADER_MALFORMED, header_pointer(name), f"{name} contains an unpaired surrogate (a \\ud800-style escape), which no HTTP header can carry"))
    return _KEPT


def _unpaired_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _take_headers(items: list[tuple[Any, Any, str | None]], headers: list[tuple[str, str]],
                  problems: list[RequestProblem]) -> None:
    """Each (name, value, pointer) of the envelope's headers: a usable header, or a problem."""
    for name, value, where in items:
        if not isinstance(name, str) or not isinstance(value, str):
            problems.append(RequestProblem(REQUEST_MALFORMED, where or header_pointer(str(name)), f"a header name and value are strings, got {_short(name)}: {_short(value)}"))
            continue
        if _check_header(name, value, problems):
            headers.append((name, value.strip(" \t")))


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
    if not isinstance(method, str) or not _is_token(method):
        problems.append(RequestProblem(REQUEST_MALFORMED, "/method", f"method must be an HTTP method token such as POST, got {_short(method)}"))
        method = None
    path = envelope.get("path")
    split = None
    if not isinstance(path, str):
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"path must be a string (path and query as sent), got {_short(path)}"))
    else:
        split = _split_target(path, problems)
    headers: list[tuple[str, str]] = []
    clean = None  # the header list when every name is a token and every value printable ASCII
    index = None  # the header index (HttpRequest.header_index) when built on the way
    within = None  # HttpRequest.header_values_within, when found on the way
    raw_headers = envelope.get("headers")
    items: list[tuple[Any, Any, str | None]] = []  # (name, value, pointer when not the header's own)
    if raw_headers is None:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/headers", "headers is missing: an object of header names to values, or a list of [name, value] pairs"))
    elif (pairs := _header_pairs(raw_headers)) is not None and (taken := _clean_headers(pairs)) is not None:
        headers, index, within = taken
        clean = headers
    elif isinstance(raw_headers, dict):
        # Taken in order as they come (the object form reports nothing while it is read): a known token with a
        # short printable or remembered value, the common case, needs no further look.
        shortest = _PRINTABLE_REMEMBERED[0]
        for name, value in raw_headers.items():
            if type(value) is str and type(name) is str and name in _KNOWN_TOKENS and value.isascii() and (
                    value.isprintable() if len(value) < shortest else value in _KNOWN_PRINTABLE):
                headers.append((name, value.strip(" \t")))
            else:
                _take_headers([(name, v, None) for v in value] if isinstance(value, list) else [(name, value, None)],
                              headers, problems)
    elif isinstance(raw_headers, list):
        for i, pair in enumerate(raw_headers):
            if isinstance(pair, (list, tuple)) and len(pair) == 2:
                items.append((pair[0], pair[1], f"/headers/{i}"))
            else:
                problems.append(RequestProblem(REQUEST_MALFORMED, f"/headers/{i}", f"a header in list form is a [name, value] pair, got {_short(pair)}"))
    else:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/headers", f"headers must be an object or a list of [name, value] pairs, got {type(raw_headers).__name__}"))
    if items:
        _take_headers(items, headers, problems)
    body: bytes | None = b""
    exact = True
    value = None
    text_of_body = None
    if "body" in envelope and envelope["body"] is not None:
        raw_body = envelope["body"]
        if isinstance(raw_body, str):
            try:
                body = raw_body.encode("utf-8")
                text_of_body = (body, raw_body)
            except UnicodeEncodeError:
                problems.append(RequestProblem(REQUEST_MALFORMED, "/body", "the body text contains unpaired surrogates and has no UTF-8 form"))
                body = None
                exact = False
        else:
            body, exact, value = None, False, raw_body
    if method is None or split is None:
        return Parsed(None, problems)
    target, path_part, query = split
    return Parsed(HttpRequest(method, target, path_part, query, headers, body, exact, value, "envelope",
                              clean_headers=clean, text_of_body=text_of_body, header_index=index,
                              header_values_within=within), problems)


# The ASCII control characters (C0 and DEL) made NUL, every other byte 1: printable ASCII text is ASCII text whose
# bytes translated by this table hold no NUL (a table-only translation and a search for one byte, both in C).
_CONTROL_TO_NUL = bytes(0 if b < 0x20 or b == 0x7F else 1 for b in range(256))
# A Signature value differs on every request (it signs the Date and the request id): never worth remembering.
_NEVER_REMEMBERED = frozenset({"signature"})


def _printable_ascii_text(text: str) -> bool:
    """``text`` (a str) is ASCII without control characters."""
    return text.isascii() and b"\0" not in text.encode("ascii").translate(_CONTROL_TO_NUL)


def _header_pairs(raw: Any) -> Any:
    """The (name, value) pairs of an envelope's headers in either form -- an object's items, a list of pairs --
    or None for anything else (which the header-by-header reading reports)."""
    if isinstance(raw, dict):
        return raw.items()
    if isinstance(raw, list) and all(type(p) in (list, tuple) and len(p) == 2 for p in raw):
        return raw
    return None


def _clean_headers(pairs) -> tuple[list[tuple[str, str]], dict[str, list[str]], int | None] | None:
    """The headers of ``pairs`` (name, value: an envelope's header object's items, or its list of pairs), values
    trimmed of blanks, and their index by lower-case name (:attr:`HttpRequest.header_index`, built on the same pass),
    when every name is a remembered HTTP token and every value printable ASCII text, told at once: the values not
    remembered as printable are joined and searched for control characters in one pass. None for anything else (a
    list of values, another type, a name not yet seen, a control character), which the header-by-header reading
    then takes in turn. The third item: when every name occurs once, a length no value exceeds (else None), which
    the signature verifier then need not check header by header (:attr:`HttpRequest.header_values_within`)."""
    shortest, longest = _PRINTABLE_REMEMBERED
    lower_case, known_printable = _KNOWN_TOKENS, _KNOWN_PRINTABLE
    headers: list[tuple[str, str]] = []
    index: dict[str, list[str]] = {}
    unknown = []  # the values to search for control characters
    longer = []  # (lower-case name, value) of the values of ``shortest`` characters or more
    for name, value in pairs:
        if type(value) is not str or type(name) is not str:
            return None
        lname = lower_case.get(name)
        if lname is None:
            return None
        if len(value) < shortest:
            unknown.append(value)
        else:
            longer.append((lname, value))
        trimmed = value.strip(" \t")
        headers.append((name, trimmed))
        index[lname] = [trimmed]
    within = shortest  # no value is longer
    new_long = []
    for lname, value in longer:
        if len(value) > within:
            within = len(value)
        if value not in known_printable:
            unknown.append(value)
            if len(value) <= longest and lname not in _NEVER_REMEMBERED:
                new_long.append(value)
    if not _printable_ascii_text("".join(unknown)):
        return None
    for value in new_long:
        _remember(known_printable, value, longest)
    if len(index) != len(headers):  # a name repeated (in any case): each name's values in wire order
        index = {}
        for name, value in headers:
            index.setdefault(name.lower(), []).append(value)
        return headers, index, None
    return headers, index, within


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
        if not _is_token(method):
            problems.append(RequestProblem(REQUEST_MALFORMED, "/method", f"method {_short(method)} is not an HTTP token"))
            method = None
        if version is not None and not _VERSION_RE.match(version):
            problems.append(RequestProblem(REQUEST_MALFORMED, "", f"HTTP version {_short(version)} is not HTTP/1.1 or HTTP/1.0"))
    headers: list[tuple[str, str]] = []
    all_clean = True
    for raw in lines[1:]:
        line = _decode_line(raw)
        if line[:1] in (" ", "\t"):
            problems.append(RequestProblem(HEADER_MALFORMED, "/headers", f"obsolete line folding (a header line starting with white space) is not allowed: {_short(line)}"))
            continue
        name, sep, value = line.partition(":")
        if not sep:
            problems.append(RequestProblem(HEADER_MALFORMED, "/headers", f"header line {_short(line)} is not 'Name: value'"))
            continue
        state = _header_state(name, value, problems)
        all_clean = all_clean and state == _CLEAN
        if state != _DROPPED:
            headers.append((name, value.strip(" \t")))
    lengths = [v for n, v in headers if n.lower() == "content-length"]
    if lengths:
        declared = lengths[0]
        # ASCII digits only ("²".isdigit() is true); more digits than any body could need are simply a mismatch.
        if not (declared.isascii() and declared.isdigit()) or len(set(lengths)) > 1:
            problems.append(RequestProblem(HEADER_MALFORMED, header_pointer("Content-Length"), f"Content-Length {_short(', '.join(lengths))} is not one decimal number"))
        elif (size := int(declared) if len(declared) <= 20 else None) != len(body):
            if size is not None and size < len(body) and body[size:] in (b"\n", b"\r\n"):
                body = body[:size]  # the final newline an editor adds to a .http file
            else:
                problems.append(RequestProblem(REQUEST_MALFORMED, "/body", f"Content-Length says {_short(declared)} bytes but the body has {len(body)}"))
    split = _split_target(target, problems) if target is not None else None
    if method is None or split is None:
        return Parsed(None, problems)
    target_text, path_part, query = split
    body_start = len(data) - len(data[start:]) + (end.end() if end is not None else len(data[start:]))
    return Parsed(HttpRequest(method, target_text, path_part, query, headers, body, True, None, "http", version, newline,
                              body_start, clean_headers=headers if all_clean else None), problems)

