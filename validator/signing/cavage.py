"""draft-cavage-http-signatures-10 as profiled by the interface: the request model, strict parsing of the
``Signature`` header (after RFC 2047 encoded-word unwrapping) and construction of the signing string.

Parsing is strict about what it reads: the parameters ``keyId``, ``algorithm`` (optional), ``headers`` and
``signature``, each once, each a quoted string, in a list of ``name="value"`` parameters. A parameter the profile
does not know (``created``/``expires`` of later drafts, a vendor's own) is skipped: cavage-10 section 2.1 says
"Any parameter that is not recognized as a parameter [...] MUST be ignored", so a signer that adds one is within the
draft the document names. It is never used, so it cannot change what is verified.
"""
from __future__ import annotations

import base64
import binascii
import functools
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

REQUEST_TARGET = "(request-target)"
SIGNATURE_PARAMS = ("keyId", "algorithm", "headers", "signature")
REQUIRED_PARAMS = ("keyId", "headers", "signature")

# RFC 7230 token characters, used for parameter names and header names.
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN_RE = re.compile(_TOKEN + r"\Z")
# A quoted string: characters other than quote and backslash, or backslash pairs. The Base64 run first and the
# possessive repeats keep it linear and fast on a 344-character signature (no backtracking is ever needed).
_PARAM_RE = re.compile(r"[ \t]*(" + _TOKEN + r')[ \t]*=[ \t]*"([A-Za-z0-9+/=]*+(?:[^"\\]++|\\.)*+)"[ \t]*', re.S)
_ENCODED_WORD_RE = re.compile(r"=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=")
_CHARSETS = {
    "utf-8": "utf-8", "utf8": "utf-8",
    "iso-8859-1": "iso-8859-1", "iso8859-1": "iso-8859-1", "latin1": "iso-8859-1", "latin-1": "iso-8859-1",
    "us-ascii": "ascii",
}


class SignatureFormatError(ValueError):
    """The Signature header (or its RFC 2047 wrapper) does not follow the profile's grammar."""


class SigningStringError(ValueError):
    """The signing string cannot be built: a listed header is absent or a value would forge a line."""

    def __init__(self, message: str, *, header: str, injection: bool = False):
        super().__init__(message)
        self.header = header
        self.injection = injection


@dataclass(frozen=True)
class SignableRequest:
    method: str                         # "POST"
    target: str                         # path + query exactly as sent
    headers: list[tuple[str, str]]      # wire order, duplicates allowed, original case
    body: bytes | None                  # exact bytes; None = body unknown

    def header_values(self, name: str) -> list[str]:
        """All values of a header (case-insensitive name), in wire order."""
        wanted = name.lower()
        return [v for n, v in self.headers if isinstance(n, str) and n.lower() == wanted]

    def has_header(self, name: str) -> bool:
        return bool(self.header_values(name))


@dataclass(frozen=True)
class SignatureParams:
    key_id: str
    algorithm: str | None
    headers: tuple[str, ...]
    signature: str
    encoded_word: bool                  # the header was RFC 2047 wrapped


def decode_rfc2047(value: str) -> tuple[str, bool]:
    """Unwrap a header value made of RFC 2047 encoded words (utf-8 or iso-8859-1, B or Q encoding).

    Returns ``(decoded, was_encoded)``. A value that does not start with ``=?`` is returned unchanged. Several
    encoded words separated by linear whitespace are concatenated (the whitespace between them is dropped, as
    RFC 2047 §6.2 says). Anything else is a ``SignatureFormatError``.
    """
    stripped = value.strip(" \t")
    if not stripped.startswith("=?"):
        return value, False
    parts: list[str] = []
    pos = 0
    while pos < len(stripped):
        m = _ENCODED_WORD_RE.match(stripped, pos)
        if not m:
            raise SignatureFormatError(
                f"the Signature value starts like an RFC 2047 encoded word but is not one at offset {pos}")
        charset_label, encoding, text = m.group(1), m.group(2).upper(), m.group(3)
        charset = _CHARSETS.get(charset_label.split("*", 1)[0].lower())
        if charset is None:
            raise SignatureFormatError(f"RFC 2047 charset {charset_label!r} is not supported (utf-8 or iso-8859-1)")
        if encoding == "B":
            try:
                raw = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raise SignatureFormatError("RFC 2047 B-encoded word is not valid Base64") from None
        else:
            raw = _decode_q(text)
        try:
            parts.append(raw.decode(charset))
        except UnicodeDecodeError:
            raise SignatureFormatError(f"RFC 2047 encoded word is not valid {charset}") from None
        pos = m.end()
        ws = pos
        while ws < len(stripped) and stripped[ws] in " \t":
            ws += 1
        if ws < len(stripped) and ws == pos:
            raise SignatureFormatError("RFC 2047 encoded words must be separated by whitespace")
        pos = ws
    return "".join(parts), True


def _decode_q(text: str) -> bytes:
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "_":
            out.append(0x20)
            i += 1
        elif ch == "=":
            pair = text[i + 1:i + 3]
            if len(pair) != 2 or not all(c in "0123456789abcdefABCDEF" for c in pair):
                raise SignatureFormatError("RFC 2047 Q-encoded word has a bad =XX escape")
            out.append(int(pair, 16))
            i += 3
        elif " " < ch < "\x7f":
            out.append(ord(ch))
            i += 1
        else:
            raise SignatureFormatError("RFC 2047 Q-encoded word contains a character that must be escaped")
    return bytes(out)


def encode_rfc2047(value: str) -> str:
    """``=?utf-8?B?<base64 of the UTF-8 value>?=`` (one encoded word, as the profile and real clients send it)."""
    return "=?utf-8?B?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def parse_signature(value: str) -> SignatureParams:
    """Parse a Signature header value strictly. Raises ``SignatureFormatError`` with a specific message."""
    if not isinstance(value, str):
        raise SignatureFormatError("the Signature value is not text")
    decoded, wrapped = decode_rfc2047(value)
    if "\r" in decoded or "\n" in decoded or "\x00" in decoded:
        raise SignatureFormatError("the Signature value contains CR, LF or NUL")
    text = decoded
    if not text.strip(" \t"):
        raise SignatureFormatError("the Signature value is empty")
    params = _plain_params(text) if "\\" not in text else None
    if params is None:
        params = _params(text)
    missing = [p for p in REQUIRED_PARAMS if p not in params]
    if missing:
        raise SignatureFormatError("Signature parameter(s) missing: " + ", ".join(missing))
    if not params["keyId"]:
        raise SignatureFormatError("Signature parameter keyId is empty")
    if "algorithm" in params and not params["algorithm"]:
        raise SignatureFormatError("Signature parameter algorithm is empty")
    if not params["signature"]:
        raise SignatureFormatError("Signature parameter signature is empty")
    headers = parse_headers_param(params["headers"])
    return SignatureParams(params["keyId"], params.get("algorithm"), headers, params["signature"], wrapped)


# The parameters before the signature, as clients write them (keyId, algorithm, headers, then signature), parsed
# once per text: a client sends the same ones on every request and only the signature differs. Bounded (emptied
# when full), as the verifier runs in servers.
_SIGNATURE_MARK = ',signature="'
_KNOWN_HEADS: dict[str, SignatureParams] = {}
_KNOWN_HEADS_BOUND = 256


def signature_at_once(value: str) -> tuple[SignatureParams, bytes] | None:
    """The parameters of a Signature value written as clients write it -- ``...,signature="<Base64>"`` last, no
    RFC 2047 wrapping, no escapes -- and the signature's bytes, exactly what :func:`parse_signature` and a strict
    Base64 decoding give; the parameters before the signature are parsed once per text. None for any other value
    (:func:`parse_signature` then reads and words it).

    Why it is the same: the signature is strict Base64, so it holds no quote, backslash, CR, LF or NUL, and parsing
    ``<head>,signature="<it>"`` takes exactly the steps of parsing ``<head>,signature="A"``, which is what is
    remembered."""
    found = signature_head_at_once(value)
    if found is None:
        return None
    known, encoded, signature = found
    return SignatureParams(known.key_id, known.algorithm, known.headers, encoded, False), signature


def signature_head_at_once(value: str) -> tuple[SignatureParams, str, bytes] | None:
    """:func:`signature_at_once` as the verifier reads it: the parameters remembered for the text before the
    signature (their keyId, algorithm and headers are the value's; their signature is a placeholder), the signature's
    Base64 text and its bytes; no new parameters object per request."""
    cut = value.rfind(_SIGNATURE_MARK)
    if cut <= 0 or value[-1:] != '"':
        return None
    head = value[:cut]
    known = _KNOWN_HEADS.get(head)
    if known is None:
        try:
            known = parse_signature(head + _SIGNATURE_MARK + 'A"')
        except SignatureFormatError:
            return None
        if known.encoded_word or known.signature != "A":
            return None
        if len(_KNOWN_HEADS) >= _KNOWN_HEADS_BOUND:
            _KNOWN_HEADS.clear()
        _KNOWN_HEADS[head] = known
    encoded = value[cut + len(_SIGNATURE_MARK):-1]
    try:
        signature = binascii.a2b_base64(encoded, strict_mode=True)  # strict: only what b64decode(validate=True) takes
    except (binascii.Error, ValueError):
        return None
    if not signature:
        return None
    return known, encoded, signature


def _plain_params(text: str) -> dict[str, str] | None:
    """The parameters of a value without backslashes, found with ``str.find`` and no regular expression (the common
    case: four parameters, one a 344-character Base64 signature); None for anything unusual, which :func:`_params`
    then parses and words. What it accepts, :func:`_params` accepts with the same result."""
    params: dict[str, str] = {}
    pos = 0
    end_of_text = len(text)
    while True:
        eq = text.find("=", pos)
        if eq < 0:
            return None
        name = text[pos:eq].strip(" \t")  # [ \t]* name [ \t]*: a parameter name holds no blank
        if name not in SIGNATURE_PARAMS or name in params:
            return None  # repeated, or a parameter to skip: the general parser words or skips it
        quote = eq + 1
        while quote < end_of_text and text[quote] in " \t":
            quote += 1
        if quote == end_of_text or text[quote] != '"':
            return None
        close = text.find('"', quote + 1)
        if close < 0:
            return None
        params[name] = text[quote + 1:close]
        pos = close + 1
        while pos < end_of_text and text[pos] in " \t":
            pos += 1
        if pos == end_of_text:
            return params
        if text[pos] != ",":
            return None
        pos += 1


def _params(text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    pos = 0
    while True:
        m = _PARAM_RE.match(text, pos)
        if not m:
            raise SignatureFormatError(
                f"the Signature value is not a list of name=\"value\" parameters (at offset {pos}: "
                f"{text[pos:pos + 20]!r})")
        name, raw = m.group(1), m.group(2)
        if name not in SIGNATURE_PARAMS:
            pass  # not recognised: ignored (cavage-10 section 2.1)
        elif name in params:
            raise SignatureFormatError(f"Signature parameter {name!r} occurs more than once")
        else:
            params[name] = raw.replace('\\"', '"')
        pos = m.end()
        if pos == len(text):
            break
        if text[pos] != ",":
            raise SignatureFormatError(f"expected ',' between Signature parameters at offset {pos}")
        pos += 1
    return params


@functools.lru_cache(maxsize=256)  # a client sends the same list every time; values are bounded by the header limit
def parse_headers_param(value: str) -> tuple[str, ...]:
    """The ``headers`` parameter: whitespace-separated header names, compared case-insensitively, no duplicates."""
    names = value.split()
    if not names:
        raise SignatureFormatError("Signature parameter headers is empty")
    out: list[str] = []
    for name in names:
        lname = name.lower()
        if lname.startswith("("):
            if lname != REQUEST_TARGET:
                raise SignatureFormatError(f"pseudo-header {name!r} is not part of cavage-10 or the profile")
        elif not _TOKEN_RE.match(name):
            raise SignatureFormatError(f"{name!r} in Signature parameter headers is not a header name")
        if lname in out:
            raise SignatureFormatError(f"header {lname!r} is listed twice in Signature parameter headers")
        out.append(lname)
    return tuple(out)


def format_signature(key_id: str, algorithm: str | None, headers: Sequence[str], signature_b64: str,
                     *, encode: bool = False) -> str:
    """Serialise the Signature header value; wrap it as an RFC 2047 encoded word when asked or non-ASCII."""
    def q(s: str) -> str:
        return '"' + s.replace('"', '\\"') + '"'
    parts = [f"keyId={q(key_id)}"]
    if algorithm is not None:
        parts.append(f"algorithm={q(algorithm)}")
    parts.append(f"headers={q(' '.join(headers))}")
    parts.append(f"signature={q(signature_b64)}")
    value = ",".join(parts)
    if encode or not value.isascii():
        return encode_rfc2047(value)
    return value


def header_index(headers: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Lower-case name -> values in wire order."""
    index: dict[str, list[str]] = {}
    for name, value in headers:
        index.setdefault(name.lower(), []).append(value)
    return index


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, as a JSON envelope's "\ud800" escape gives
        return False
    return True


def _forges_lines(value: str) -> bool:
    return "\n" in value or "\r" in value or "\x00" in value


def build_signing_string(method: str, target: str, signed: Sequence[str],
                         index: Mapping[str, list[str]]) -> str:
    """One ``name: value`` line per signed name, joined by ``\\n`` (no trailing newline).

    Values are trimmed of surrounding spaces/tabs; repeated headers are joined with ``", "`` in wire order.
    A CR, LF or NUL inside a value would let the value forge further lines: refused.
    """
    lines = []
    for name in signed:
        if name == REQUEST_TARGET:
            value = f"{method.lower()} {target}"
            if _forges_lines(value):
                raise SigningStringError("the request target contains CR, LF or NUL", header=name, injection=True)
        else:
            values = index.get(name)
            if not values:
                raise SigningStringError(f"headers lists {name!r} but the request has no such header", header=name)
            for v in values:
                if _forges_lines(v):
                    raise SigningStringError(
                        f"signed header {name!r} contains CR, LF or NUL, which would forge signing-string lines",
                        header=name, injection=True)
            value = values[0].strip(" \t") if len(values) == 1 else ", ".join(v.strip(" \t") for v in values)
        if not value.isascii() and not _utf8_encodable(value):
            raise SigningStringError(
                f"signed {'request target' if name == REQUEST_TARGET else 'header ' + repr(name)} holds an unpaired "
                f"surrogate, which has no UTF-8 form: no signature can cover it", header=name)
        lines.append(f"{name}: {value}")
    return "\n".join(lines)
