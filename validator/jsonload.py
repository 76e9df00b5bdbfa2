"""Strict, robust JSON loading for every file, stdin line and request body.

``json.loads`` accepts things RFC 8259 interoperability forbids (duplicate keys,
``NaN``), crashes on others (``RecursionError`` on deep nesting, ``ValueError`` on
integers longer than 4300 digits) and words binary or UTF-16 input as baffling syntax
errors. This module turns all of that into :class:`LoadProblem` values with stable
rule ids:

``json-syntax``         malformed JSON (1-based line and column, json's message)
``json-duplicate-key``  an object repeats a key (key, JSON pointer, line/column)
``json-non-finite``     ``NaN``/``Infinity``/``-Infinity``, a number beyond IEEE double
                        range such as ``1e400``, or an integer too long to convert
``json-encoding``       invalid UTF-8 (byte offset), a UTF-8 byte order mark, UTF-16/32
``json-empty``          empty or whitespace-only input
``json-too-deep``       nesting deeper than ``max_depth``
``json-too-large``      more than ``max_bytes`` bytes
``json-binary``         NUL bytes or other obviously binary content

Every problem is an error. ``Loaded.value`` is None when the input could not be
understood; it is kept when the JSON itself was readable but broke an
interoperability rule (duplicate keys -- the last value wins, as in ``json.loads`` --,
non-finite numbers loaded as Python floats, integers too long to convert loaded as
infinity, a byte order mark), so callers can still run their other checks. Lines and
columns count characters of the decoded text. :func:`check_value` applies the same
limits (depth, integer length) to a value decoded elsewhere.

Speed: a document with nothing to report costs about one plain C-level ``json`` parse (dicts built in C, no hook
on objects; number hooks that only run on floats and ``NaN``/``Infinity``), one ``gc.get_referents`` pass per
nesting level counting the values the containers hold, and one C-speed ``bytes`` pass (a colon ``count``, or a
``translate`` keeping commas and opening brackets) that bounds the text's members and items: equal counts prove
that no object repeats a key (see "the fast path" below). Anything else takes the exact path, every check in
turn with counting hooks; locating a duplicate key or a bad number by line and column uses a pure-Python
tokenizer that runs only when there is something to locate.
"""
from __future__ import annotations

import functools
import gc
import io
import json
import re
import sys
import threading
from itertools import accumulate
from json.decoder import scanstring
from typing import Any, BinaryIO, Iterable, Iterator, TextIO

from .records import record

JSON_SYNTAX = "json-syntax"
JSON_DUPLICATE_KEY = "json-duplicate-key"
JSON_NON_FINITE = "json-non-finite"
JSON_ENCODING = "json-encoding"
JSON_EMPTY = "json-empty"
JSON_TOO_DEEP = "json-too-deep"
JSON_TOO_LARGE = "json-too-large"
JSON_BINARY = "json-binary"

RULES = (
    JSON_SYNTAX, JSON_DUPLICATE_KEY, JSON_NON_FINITE, JSON_ENCODING,
    JSON_EMPTY, JSON_TOO_DEEP, JSON_TOO_LARGE, JSON_BINARY,
)

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_DEPTH = 512
# At most this many duplicate-key / non-finite problems are reported per document.
MAX_PROBLEMS = 100


@record
class LoadProblem:
    rule: str
    message: str
    line: int | None = None
    column: int | None = None
    # RFC 6901 pointer of the object (duplicate keys) or value the problem is about.
    pointer: str | None = None


class Loaded:
    """A decoded value (None when it could not be decoded) and the problems found on the way."""

    __slots__ = ("value", "problems")

    def __init__(self, value: Any | None, problems: list[LoadProblem] | None = None):
        self.value = value
        self.problems = [] if problems is None else problems

    @property
    def ok(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------- helpers

_JSON_WS = b" \t\r\n"
_BINARY_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\x7fELF", "an executable (ELF)"),
)
# Control characters other than tab, LF, CR: never valid outside strings, and never
# valid unescaped inside them either.
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 13)) + b"\x7f"
# Keep quotes and brackets (as '[' / ']'), delete everything else.
_BRACKETS_AND_QUOTES = bytes.maketrans(b"{}", b"[]")
_DELETE_NON_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')
# The same, but also keeping backslashes and (as 'u') every character that may follow
# a backslash in an escape, so escapes can be paired up in the much shorter result.
_ESCAPE_FOLLOWERS = b"/bfnrtu"
_BRACKETS_QUOTES_ESCAPES = bytes.maketrans(b"{}" + _ESCAPE_FOLLOWERS, b"[]" + b"u" * len(_ESCAPE_FOLLOWERS))
_DELETE_NON_STRUCTURE_OR_ESCAPE = bytes(
    c for c in range(256) if c not in b'"[]{}\\' + _ESCAPE_FOLLOWERS
)
_STEP = [0] * 256
_STEP[ord("[")] = 1
_STEP[ord("]")] = -1


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return line, column


def _escape_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _bytes_position(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", "replace")) + 1
    return line, column


def _sniff_encoding(data: bytes) -> LoadProblem | None:
    """UTF-16/UTF-32 by byte order mark or by the NUL pattern of RFC 4627 section 3."""
    head = data[:4]
    name = None
    if head.startswith(b"\x00\x00\xfe\xff"):
        name = "UTF-32BE (byte order mark)"
    elif head.startswith(b"\xff\xfe\x00\x00"):
        name = "UTF-32LE (byte order mark)"
    elif head.startswith(b"\xfe\xff"):
        name = "UTF-16BE (byte order mark)"
    elif head.startswith(b"\xff\xfe"):
        name = "UTF-16LE (byte order mark)"
    elif len(head) == 4:
        b0, b1, b2, b3 = head
        if b0 == 0 and b1 == 0 and b2 == 0 and b3 != 0:
            name = "UTF-32BE"
        elif b0 != 0 and b1 == 0 and b2 == 0 and b3 == 0:
            name = "UTF-32LE"
        elif b0 == 0 and b1 != 0 and b2 == 0 and b3 != 0:
            name = "UTF-16BE"
        elif b0 != 0 and b1 == 0 and b2 != 0 and b3 == 0:
            name = "UTF-16LE"
    elif len(head) == 2:
        if head[0] == 0 and head[1] != 0:
            name = "UTF-16BE"
        elif head[0] != 0 and head[1] == 0:
            name = "UTF-16LE"
    if name is None:
        return None
    return LoadProblem(
        JSON_ENCODING,
        f"the input looks like {name} text; JSON exchanged between systems must be "
        f"UTF-8 (RFC 8259 section 8.1)",
        None, None,
    )


def _sniff_binary(data: bytes) -> LoadProblem | None:
    for magic, what in _BINARY_MAGIC:
        if data.startswith(magic):
            return LoadProblem(JSON_BINARY, f"the input is {what}, not JSON text", None, None)
    nul = data.find(b"\x00")
    if nul >= 0:
        return LoadProblem(
            JSON_BINARY,
            f"the input contains a NUL byte at byte offset {nul}; it looks like binary data, "
            f"not JSON text",
            *_bytes_position(data, nul),
        )
    head = data[:1024]
    controls = len(head) - len(head.translate(None, _CONTROL))
    if controls >= 8 and controls * 10 >= len(head):
        return LoadProblem(
            JSON_BINARY,
            f"{controls} of the first {len(head)} bytes are control characters; the input "
            f"looks like binary data, not JSON text",
            None, None,
        )
    return None


def _structure_depth(data: bytes, limit: int) -> int:
    """Maximum bracket nesting of ``data`` outside JSON strings (exact for valid JSON).

    Uses only C-speed bytes operations in the common case: escaped backslashes and
    quotes are removed, everything but quotes and brackets deleted, and adjacent
    quote pairs (strings without brackets in them) dropped; if quotes remain, strings
    with brackets in them exist and the parts between quote pairs are dropped.
    """
    if b"\\" in data:
        # Every backslash starts a two-character escape whose second character is kept
        # (as itself or as 'u'), so pairing "\\\\" and then '\\"' here is exact.
        seq = data.translate(_BRACKETS_QUOTES_ESCAPES, _DELETE_NON_STRUCTURE_OR_ESCAPE)
        seq = seq.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, b"\\u")
    else:
        seq = data.translate(_BRACKETS_AND_QUOTES, _DELETE_NON_STRUCTURE)
    if b'"' in seq:
        seq = seq.replace(b'""', b"")
        if b'"' in seq:
            seq = b"".join(seq.split(b'"')[0::2])
    if seq.count(b"[") <= limit:
        return seq.count(b"[")
    # Peel innermost "[]" pairs a few rounds (cheap: most nodes are shallow leaves),
    # then a running sum over what is left. Each round peels exactly one level.
    rounds = 0
    while rounds < 8:
        peeled = seq.replace(b"[]", b"")
        if len(peeled) == len(seq):
            break
        seq = peeled
        rounds += 1
    if not seq:
        return rounds
    return rounds + max(0, max(accumulate(map(_STEP.__getitem__, seq))))


# A token scanner for the rare path that locates duplicate keys and bad numbers: compiled there, on first use
# (re keeps what it compiled), not at import.
_TOKEN = r"""(?xs)[ \t\r\n]*(?:
        (?P<s>"[^"\\]*(?:\\.[^"\\]*)*")
      | (?P<p>[\[\]{},:])
      | (?P<n>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
      | (?P<l>true|false|null|NaN|Infinity|-Infinity)
    )"""
_INF = float("inf")


def _number_trouble(token: str) -> str | None:
    if token in ("NaN", "Infinity", "-Infinity"):
        return f"{token} is not a JSON number (RFC 8259 section 6 allows only finite numbers)"
    if token in ("true", "false", "null"):  # literals, not numbers ("true" and "false" hold an "e")
        return None
    if "." in token or "e" in token or "E" in token:
        if abs(float(token)) == _INF:
            shown = token if len(token) <= 40 else token[:20] + "..." + token[-10:]
            return f"the number {shown} is beyond the range of an IEEE 754 double"
        return None
    digits = len(token.lstrip("-"))
    limit = sys.get_int_max_str_digits()
    if limit and digits > limit:
        return (
            f"an integer with {digits} digits is longer than this parser converts "
            f"({limit} digits) and far beyond any interoperable number range"
        )
    return None


def _locate(text: str, want_duplicates: bool, want_numbers: bool, found: list[LoadProblem]) -> None:
    """Walk ``text`` (valid JSON apart from the problems being located) and append
    duplicate-key and number problems with line, column and pointer."""
    match = re.compile(_TOKEN).match
    # Stack entries: [True, keys seen, current key or None] for objects,
    # [False, current index, None] for arrays; ``path`` holds the pointer tokens.
    stack: list[list[Any]] = []
    path: list[str] = []
    pos = 0
    end = len(text)
    expect_key = False
    while pos < end and len(found) < MAX_PROBLEMS:
        m = match(text, pos)
        if m is None:
            return
        pos = m.end()
        kind = m.lastgroup
        token = m.group(kind)
        start = m.start(kind)
        if kind == "p":
            if token == "{":
                stack.append([True, set(), None])
                expect_key = True
            elif token == "[":
                stack.append([False, 0, None])
                path.append("0")
                expect_key = False
            elif token in "]}":
                frame = stack.pop()
                if not frame[0] or frame[2] is not None:
                    path.pop()
                expect_key = False
            elif token == ",":
                if stack:
                    frame = stack[-1]
                    if frame[0]:
                        if frame[2] is not None:
                            path.pop()
                            frame[2] = None
                        expect_key = True
                    else:
                        frame[1] += 1
                        path[-1] = str(frame[1])
            continue
        if kind == "s" and expect_key and stack and stack[-1][0]:
            frame = stack[-1]
            key = json.loads(token)
            if want_duplicates and key in frame[1]:
                line, column = _position(text, start)
                pointer = "".join("/" + _escape_pointer_token(t) for t in path)
                found.append(LoadProblem(
                    JSON_DUPLICATE_KEY,
                    f"duplicate key {key!r} in {'the object at ' + pointer if pointer else 'the top-level object'} (the meaning of "
                    f"duplicate names is undefined, RFC 8259 section 4)",
                    line, column, pointer or "",
                ))
            frame[1].add(key)
            frame[2] = key
            path.append(key)
            expect_key = False
            continue
        if want_numbers and kind in ("n", "l"):
            trouble = _number_trouble(token)
            if trouble is not None:
                line, column = _position(text, start)
                pointer = "".join("/" + _escape_pointer_token(t) for t in path)
                found.append(LoadProblem(JSON_NON_FINITE, trouble, line, column, pointer))


# --------------------------------------------------------------------------- loading


def _too_deep(max_depth: int, depth: int | str | None = None) -> LoadProblem:
    what = f"nesting depth {depth}" if depth is not None else "nesting deeper than the parser handles"
    return LoadProblem(
        JSON_TOO_DEEP,
        f"the document's arrays/objects are nested too deeply ({what}; at most "
        f"{max_depth} levels are accepted)",
        None, None,
    )


class _Counting:
    """A JSON decoder whose hooks count repeated keys and non-finite numbers (made once per thread: building a
    decoder costs about as much as decoding a small payload)."""

    def __init__(self, parse_int: Any = None) -> None:
        self.duplicates = 0
        self.non_finite = 0
        self.decoder = json.JSONDecoder(object_pairs_hook=self.pairs_hook, parse_float=self.float_hook,
                                        parse_constant=self.constant_hook, parse_int=parse_int)

    def pairs_hook(self, pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            self.duplicates += 1
        return obj

    def float_hook(self, token: str) -> float:
        number = float(token)
        if number - number != 0.0:  # inf - inf is nan; nan != 0.0
            self.non_finite += 1
        return number

    def constant_hook(self, token: str) -> float:
        self.non_finite += 1
        return float(token)

    def decode(self, text: str) -> Any:
        self.duplicates = self.non_finite = 0
        return self.decoder.decode(text)


_DECODERS = threading.local()


def _counting_decoder() -> _Counting:
    decoder = getattr(_DECODERS, "decoder", None)
    if decoder is None:
        decoder = _DECODERS.decoder = _Counting()
    return decoder


def _parse(text: str, max_depth: int, problems: list[LoadProblem]) -> Any | None:
    counting = _counting_decoder()
    huge_int = False
    while True:
        try:
            value = counting.decode(text)
            break
        except json.JSONDecodeError as exc:
            problems.append(LoadProblem(JSON_SYNTAX, exc.msg, exc.lineno, exc.colno))
            return None
        except RecursionError:
            problems.append(_too_deep(max_depth))
            return None
        except ValueError:
            if huge_int:
                raise
            # CPython's int conversion limit (CVE-2020-10735): decode again, such integers as infinity (they lie
            # beyond every double anyway), so the document's other checks still run.
            huge_int = True
            counting = _Counting(_int_or_infinity)
    duplicates, non_finite = counting.duplicates, counting.non_finite
    if duplicates or non_finite or huge_int:
        found: list[LoadProblem] = []
        _locate(text, duplicates > 0, non_finite > 0 or huge_int, found)
        if duplicates and not any(p.rule == JSON_DUPLICATE_KEY for p in found):
            found.append(LoadProblem(JSON_DUPLICATE_KEY, f"{duplicates} object(s) repeat a key", None, None))
        if (non_finite or huge_int) and not any(p.rule == JSON_NON_FINITE for p in found):
            found.append(LoadProblem(JSON_NON_FINITE, "the document contains a number outside the finite IEEE 754 double range", None, None))
        problems.extend(found)
    return value


def _int_or_infinity(token: str) -> int | float:
    if len(token.lstrip("-")) <= (sys.get_int_max_str_digits() or len(token)):
        return int(token)
    return -_INF if token.startswith("-") else _INF


def _load(data: bytes, max_bytes: int, max_depth: int, text: str | None = None) -> Loaded:
    """The fast path when it proves the input holds nothing to report, else the exact path (which words it)."""
    if len(data) <= max_bytes and _FAST:
        loaded = _load_fast(data, max_depth, text)
        if loaded is not None:
            return loaded
    return _load_exact(data, max_bytes, max_depth, text)


def _load_exact(data: bytes, max_bytes: int, max_depth: int, text: str | None = None) -> Loaded:
    """Every check in turn, the hooks counting repeated keys and bad numbers: the path that words and places
    problems (and the reference the fast path is tested against)."""
    problems: list[LoadProblem] = []
    readable = _readable(data, max_bytes, max_depth, problems, text)
    if readable is None:
        return Loaded(None, problems)
    data, text = readable
    # None after a syntax error, too-deep nesting or an integer too long to convert.
    value = _parse(text, max_depth, problems)
    if value is not None and _SURROGATE_ESCAPE.search(data):
        problems.extend(_lone_surrogates(value))
    return Loaded(value, problems)


def _readable(
    data: bytes, max_bytes: int, max_depth: int, problems: list[LoadProblem], text: str | None, depth: bool = True
) -> tuple[bytes, str] | None:
    """The checks before parsing (size, emptiness, encoding, binary content, depth), appending their problems:
    the bytes and text to parse, or None when the problems found are the whole answer."""
    size = len(data)
    if size > max_bytes:
        problems.append(LoadProblem(
            JSON_TOO_LARGE, f"the input has {size} bytes, more than the {max_bytes} accepted", None, None
        ))
        return None
    if not data or not data.strip(_JSON_WS):
        what = "empty" if not data else "only whitespace"
        problems.append(LoadProblem(JSON_EMPTY, f"the input is {what}; expected a JSON value", None, None))
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(LoadProblem(
            JSON_ENCODING,
            "the input starts with a UTF-8 byte order mark; RFC 8259 section 8.1 says "
            "implementations MUST NOT add one",
            1, 1,
        ))
        data = data[3:]
        text = None
        if not data.strip(_JSON_WS):
            problems.append(LoadProblem(JSON_EMPTY, "the input holds only a byte order mark", None, None))
            return None
    else:
        sniffed = _sniff_encoding(data)
        if sniffed is not None:
            problems.append(sniffed)
            return None
    binary = _sniff_binary(data)
    if binary is not None:
        problems.append(binary)
        return None
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = data[exc.start:exc.start + 4]
            line, column = _bytes_position(data, exc.start)
            problems.append(LoadProblem(
                JSON_ENCODING,
                f"the input is not valid UTF-8: byte offset {exc.start} "
                f"({' '.join(f'{b:02x}' for b in bad[: max(1, exc.end - exc.start)])}): {exc.reason}",
                line, column,
            ))
            return None
    # Each level of nesting opens a bracket: with no more brackets in all than the limit, it cannot be too deep.
    if not depth:  # the caller counts it (ArrayStream)
        return data, text
    nesting = _structure_depth(data, max_depth) if data.count(b"[") + data.count(b"{") > max_depth else 0
    if nesting > max_depth:
        problems.append(_too_deep(max_depth, nesting))
        return None
    return data, text


# A \uD800-\uDFFF escape: the one way JSON text can carry a code point no UTF-8 encoder can produce.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogates(value: Any) -> list[LoadProblem]:
    """A problem per string (key or value) holding a lone UTF-16 surrogate (escaped pairs decode to one
    character and pass)."""
    found: list[LoadProblem] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack and len(found) < MAX_PROBLEMS:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                child = f"{pointer}/{_escape_pointer_token(key)}"
                if _LONE_SURROGATE.search(key):
                    found.append(_surrogate_problem(child, key, "member name"))
                stack.append((child, item))
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", item) for i, item in enumerate(node))
        elif isinstance(node, str) and _LONE_SURROGATE.search(node):
            found.append(_surrogate_problem(pointer, node, "string"))
    return sorted(found, key=lambda p: p.pointer or "")


def _surrogate_problem(pointer: str, text: str, what: str) -> LoadProblem:
    code = ord(_LONE_SURROGATE.search(text).group())
    return LoadProblem(
        JSON_ENCODING,
        f"the {what} holds a lone UTF-16 surrogate \\u{code:04x}, which no UTF-8 text can carry (RFC 8259 section 8.2)",
        None, None, pointer,
    )


# --------------------------------------------------------------------------- the fast path
#
# A valid document is decoded by the C scanner with no hook on objects (dicts built in C), and the exact path's
# checks are shown moot by arguments that cost C-speed passes only:
# - empty input, a byte order mark, UTF-16/32, NUL bytes, the binary signatures and control characters other than
#   DEL cannot be part of a text the strict scanner accepts whole (DEL can: it is looked for in the first 1,024
#   bytes, where the binary sniffing counts control characters);
# - a non-finite number makes a number hook raise, an integer too long to convert makes the scanner raise;
# - repeated keys: a dict keeps one entry per distinct key, so the decoded containers hold as many children as the
#   text's containers (members and items) exactly when no object repeats a key, and fewer otherwise. The
#   decoded count is summed level by level by ``gc.get_referents`` (a dict's values, a list's items; JSON's
#   scalars are not containers and are skipped). The text's count is at most its commas plus its opening
#   brackets outside strings (a non-empty container has one child more than commas), so when the decoded
#   count reaches that bound, nothing was lost to a repeated key. The bound is first taken over the whole
#   text: without any "[" (no array) its colons, one per member; else one ``translate`` keeping commas and
#   opening brackets (both exact when no string holds those characters and no container is empty); then outside
#   strings, less the empty objects and, where an array may be empty, the decoded empty arrays;
# - nesting: the levels that hold children are as many as the depth, or one fewer (empty containers at the
#   bottom), so fewer levels than the limit prove it kept.
# Anything the fast path cannot prove (or any exception) goes to the exact path, which decides and words it.
# One character is looked for in the text (``in`` on ``str``), not in the bytes: ``needle in data`` first tries
# the needle as an integer and fails inside, a formatted TypeError that costs more than searching a short line.


class _Unsure(Exception):
    """A number the fast path leaves to the exact path (non-finite, or out of the double's range)."""


def _finite_float(token: str) -> float:
    number = float(token)
    if number - number != 0.0:  # inf - inf is nan; nan != 0.0
        raise _Unsure(token)
    return number


def _no_constant(token: str) -> float:
    raise _Unsure(token)


# Its hooks keep no state, so one scanner serves every thread (the C scanner's key memo only shares key strings).
_FAST_SCAN = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant).scan_once
_referents = gc.get_referents
# Kept: commas and opening brackets (the bound over the whole text).
_DELETE_BUT_SEPARATORS = bytes(c for c in range(256) if c not in b",[{")
_DELETE_BUT_SEPARATORS_AND_CLOSINGS = bytes(c for c in range(256) if c not in b",[]{}")
# Kept: quotes, colons (so that two quotes next to each other always close and open one string), commas and
# brackets (the bound outside strings).
_DELETE_BUT_STRUCTURE = bytes(c for c in range(256) if c not in b'":,[]{}')
_ESCAPES_AS_U = bytes.maketrans(_ESCAPE_FOLLOWERS, b"u" * len(_ESCAPE_FOLLOWERS))
_DELETE_BUT_STRUCTURE_OR_ESCAPE = bytes(c for c in range(256) if c not in b'":,[]{}\\' + _ESCAPE_FOLLOWERS)


def _referents_count_values() -> bool:
    """Whether ``gc.get_referents`` gives a decoded dict's values and a list's items, and skips scalars (as
    CPython does); where it does not, the fast path is not used."""
    probe = json.loads('{"a": "x", "b": [1, {"c": null}], "d": 1.5}')
    return len(_referents(probe)) == 3 and len(_referents(*_referents(probe))) == 2


_FAST = _referents_count_values()


def _children_outside_strings(data: bytes) -> tuple[int, bool]:
    """The commas and opening brackets outside the strings of ``data`` (valid JSON) less its empty objects, and
    whether an array may be empty (an empty array and one of one number or literal look the same here)."""
    if data.find(b'\\"') >= 0:
        # Escaped quotes (or a string ending in an escaped backslash): the backslashes are kept, and the character
        # after each (as itself or "u"), so that escapes pair up in the shorter text as in _structure_depth.
        seq = data.translate(_ESCAPES_AS_U, _DELETE_BUT_STRUCTURE_OR_ESCAPE)
        seq = seq.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, b"\\u")
    else:
        seq = data.translate(None, _DELETE_BUT_STRUCTURE)
    if seq.find(b'"') >= 0:
        # Two quotes side by side are one string without structure in it (between two strings there is always a
        # colon or comma); each string becomes one "s", so an empty object is exactly "{}".
        seq = seq.replace(b'""', b"s")
        if seq.find(b'"') >= 0:
            seq = b"s".join(seq.split(b'"')[0::2])
    return seq.count(b",") + seq.count(b"[") + seq.count(b"{") - seq.count(b"{}"), seq.find(b"[]") >= 0


def _empty_lists(value: Any) -> int:
    empty = 0
    level = [value]
    while level:
        empty += level.count(_NO_ITEMS)  # == compares a list's length first; nothing else equals []
        level = _referents(*level)
    return empty


_NO_ITEMS: list = []


def _held(value: Any) -> tuple[int, int]:
    """The values ``value``'s containers hold, all levels down, and the levels that hold any."""
    children = levels = 0
    level = [value]
    while level := _referents(*level):
        children += len(level)
        levels += 1
    return children, levels


_UNSEEN = object()


def _no_key_repeated(data: bytes, text: str, children: int, value: Any = _UNSEEN, empty_lists: int = 0) -> bool:
    """Whether no object of ``data`` (valid JSON, its text ``text``, decoded as ``value`` whose containers hold
    ``children`` values in all) repeats a key: the decoded count reaches a bound of the text's count (module
    comment above). Without ``value``, ``empty_lists`` is taken for the decoded empty arrays (fewer is safe: the
    answer is then False where it could have been True)."""
    if "[" not in text:  # no array: every child is a member, and every member has its colon
        if children == data.count(b":"):
            return True
    elif children == len(data.translate(None, _DELETE_BUT_SEPARATORS)):
        return True
    bound, maybe_empty = _children_outside_strings(data)
    if not maybe_empty:
        return children == bound
    return children == bound - (_empty_lists(value) if value is not _UNSEEN else empty_lists)


def _load_fast(data: bytes, max_depth: int, text: str | None) -> Loaded | None:
    """The loaded document when it holds nothing to report but (possibly) lone surrogates; None when the exact
    path must decide."""
    try:
        if text is None:
            text = data.decode()
        start = 0 if text[:1] not in _WS_CHARS else _WS.match(text).end()  # text[:1] is "" for no text
        value, end = _FAST_SCAN(text, start)
    except Exception:  # no value, a syntax error, a bad number, nesting beyond the interpreter's: the exact path's
        return None
    if end != len(text) and text[end:].strip(_WS_CHARS):
        return None
    if "\x7f" in text[:1024]:  # DEL in the part the binary sniffing counts (its first 1,024 bytes, or more)
        return None
    level = [value]
    children = levels = 0
    while True:
        level = _referents(*level)
        if not level:
            break
        children += len(level)
        levels += 1
    if levels >= max_depth or (children and not _no_key_repeated(data, text, children, value)):
        return None
    if value is not None and "\\" in text and _SURROGATE_ESCAPE.search(data):
        return Loaded(value, _lone_surrogates(value))
    return Loaded(value)


# --------------------------------------------------------------------------- one long array at a time


class Unstreamable(Exception):
    """The text holds something only the whole-document loader answers exactly (a syntax error, a repeated key,
    a number out of range, another shape than expected): the caller loads the document whole instead."""


def streamable_text(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH) -> str | None:
    """The text of ``data`` when the loader's checks before parsing find nothing to report (decoding it piece by
    piece then meets no problem but those :class:`ArrayStream` raises for, nesting included: it counts the levels
    of each value); None otherwise."""
    problems: list[LoadProblem] = []
    readable = _readable(data, max_bytes, max_depth, problems, None, depth=False)
    return readable[1] if readable is not None and not problems else None


_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = " \t\n\r"
_SURROGATE_ESCAPE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")


class ArrayStream:
    """A top-level JSON object one of whose members (the first with a name in ``keys``) is a long array: the other
    members are decoded whole, the array's entries one at a time (:meth:`entries`, as often as needed), so the
    array is never held. Decoding is the loader's fast path's (its scanner, its count of the values held, checked
    against the text's by :meth:`read_tail`): wherever the loader would report a problem, or the fast path cannot
    prove it would not, or the text is not such an object, :class:`Unstreamable` is raised.

    ``head`` holds the members before the array, ``tail`` (after :meth:`read_tail`) those after it."""

    def __init__(self, text: str, keys: frozenset[str], data: bytes | None = None,
                 max_depth: int = DEFAULT_MAX_DEPTH):
        """``data``: the bytes ``text`` was decoded from, when the caller holds them (else encoded again)."""
        self.text = text
        self._max_depth = max_depth
        self.key: str | None = None
        self.head: dict[str, Any] = {}
        self.tail: dict[str, Any] = {}
        self.length: int | None = None  # entries, once read to the end
        if not _FAST:
            raise Unstreamable("counting the decoded values needs gc.get_referents as CPython has it")
        # The values the decoded containers hold (the fast path's count), for the check of repeated keys at the end.
        self._values_held = self._entries_held = 0
        # The bound over the whole text (commas and opening brackets), and whether an array may be empty: then the
        # empty ones are counted (where an entry's text holds "[]"; one written "[ ]" leaves the count undecided).
        self._data = data if data is not None else text.encode()
        separators = self._data.translate(None, _DELETE_BUT_SEPARATORS_AND_CLOSINGS)
        self._bound = len(separators) - separators.count(b"]") - separators.count(b"}")
        self._maybe_empty = separators.find(b"[]") >= 0
        del separators
        self._empty_lists = self._entries_empty = 0
        # Escaped surrogates: each value is searched for a lone one (which the loader reports), as rarely as that.
        self._surrogates = "\\" in text and _SURROGATE_ESCAPE_TEXT.search(text) is not None
        self._start = self._end = -1  # where the array's '[' is, and after its ']'
        self._end_of_object = -1
        self._read_head(keys)

    def _ws(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def _value(self, i: int) -> tuple[Any, int]:
        try:
            value, end = _FAST_SCAN(self.text, i)
        except (StopIteration, ValueError, RecursionError, _Unsure) as exc:  # syntax, bad numbers, nesting
            raise Unstreamable(repr(exc)[:200]) from None
        held, levels = _held(value)
        if levels + 2 > self._max_depth:  # the member's value is one level down
            raise Unstreamable("nesting near or beyond the limit")
        self._values_held += held
        if self._maybe_empty:
            self._empty_lists += _empty_lists(value)
        if self._surrogates and _lone_surrogates(value):
            raise Unstreamable("a lone surrogate")
        return value, end

    def _member(self, i: int) -> tuple[str, int]:
        """The member name at ``i`` and where its value starts."""
        text = self.text
        if not text.startswith('"', i):
            raise Unstreamable("expected a member name")
        try:
            name, i = scanstring(text, i + 1, True)
        except ValueError as exc:
            raise Unstreamable(str(exc)) from None
        i = self._ws(i)
        if not text.startswith(":", i):
            raise Unstreamable("expected ':'")
        if name in self.head or name in self.tail or name == self.key:
            raise Unstreamable("a repeated key")
        if self._surrogates and _LONE_SURROGATE.search(name):
            raise Unstreamable("a lone surrogate")
        return name, self._ws(i + 1)

    def _next_member(self, i: int) -> int | None:
        """After a member's value: where the next member starts, None at the object's end."""
        i = self._ws(i)
        if self.text.startswith(",", i):
            return self._ws(i + 1)
        if self.text.startswith("}", i):
            self._end_of_object = i + 1
            return None
        raise Unstreamable("expected ',' or '}'")

    def _read_head(self, keys: frozenset[str]) -> None:
        text = self.text
        i = self._ws(0)
        if not text.startswith("{", i):
            raise Unstreamable("not an object")
        i = self._ws(i + 1)
        while True:
            name, i = self._member(i)
            if name in keys:
                if not text.startswith("[", i):
                    raise Unstreamable(f"{name!r} is not an array")
                self.key, self._start = name, i
                return
            self.head[name], i = self._value(i)
            if (i := self._next_member(i)) is None:
                raise Unstreamable("no array to stream")

    def entries(self) -> Iterator[Any]:
        """The array's entries in order, each decoded when asked for."""
        text, scan, skip, count_held, deepest = self.text, _FAST_SCAN, _WS.match, _held, self._max_depth - 3
        i = self._ws(self._start + 1)
        count = held = empty = 0
        maybe_empty = self._maybe_empty
        if not text.startswith("]", i):
            while True:
                start = i
                try:  # the decoder's scanner itself: raw_decode's wrapper costs a call per entry
                    entry, i = scan(text, i)
                except (StopIteration, ValueError, RecursionError, _Unsure) as exc:  # syntax, bad numbers, nesting
                    raise Unstreamable(f"no value at {i}: {exc!r}"[:200]) from None
                entry_held, levels = count_held(entry)
                if levels > deepest:  # an entry is two levels down
                    raise Unstreamable("nesting near or beyond the limit")
                held += entry_held
                if maybe_empty and text.find("[]", start, i) >= 0:
                    empty += _empty_lists(entry)
                if self._surrogates and _lone_surrogates(entry):
                    raise Unstreamable("a lone surrogate")
                count += 1
                yield entry
                del entry  # not held while the caller waits for the next one
                after = text[i:i + 1]
                if after in _WS_CHARS:  # also "" at the end of the text: then nothing follows, as below
                    i = skip(text, i).end()
                    after = text[i:i + 1]
                if after == ",":
                    i += 1
                    if text[i:i + 1] in _WS_CHARS:
                        i = skip(text, i).end()
                elif after == "]":
                    break
                else:
                    raise Unstreamable("expected ',' or ']'")
        self._end, self.length, self._entries_held, self._entries_empty = i + 1, count, held, empty

    def read_tail(self) -> None:
        """The members after the array (the entries must have been read to the end) and the end of the text."""
        if self._end < 0:
            raise Unstreamable("the array was not read to its end")
        i = self._next_member(self._end)
        while i is not None:
            name, i = self._member(i)
            self.tail[name], i = self._value(i)
            i = self._next_member(i)
        if self._ws(self._end_of_object) != len(self.text):
            raise Unstreamable("extra data after the object")
        # No key repeated inside a value (the top level's names are compared above): the fast path's count, over
        # the whole text, with the top level's members and the array's entries.
        held = len(self.head) + 1 + len(self.tail) + self.length + self._values_held + self._entries_held
        empty = self._empty_lists + self._entries_empty + (self.length == 0)
        data, self._data = self._data, None
        if held != self._bound and not _no_key_repeated(data, self.text, held, empty_lists=empty):
            raise Unstreamable("a key may be repeated (or an array is empty)")


def load_json_bytes(
    data: bytes | bytearray | memoryview,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    text: str | None = None,
) -> Loaded:
    """Load one JSON document from UTF-8 bytes. Never raises for any input bytes. ``text``: the same bytes already
    decoded, when the caller holds both (a request envelope's body), so they are not decoded again."""
    if not isinstance(data, bytes):
        if isinstance(data, (bytearray, memoryview)):
            if len(data) > max_bytes:  # do not copy what will be refused anyway
                return _load(data, max_bytes, max_depth)
            data = bytes(data)
        else:
            raise TypeError(f"load_json_bytes() needs bytes, got {type(data).__name__}")
    return _load(data, max_bytes, max_depth, text)


def load_json_text(
    text: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Loaded:
    """Load one JSON document from already-decoded text (sizes count UTF-8 bytes)."""
    if not isinstance(text, str):
        raise TypeError(f"load_json_text() needs str, got {type(text).__name__}")
    if len(text) > max_bytes:  # every character is at least one byte
        return Loaded(None, [LoadProblem(
            JSON_TOO_LARGE, f"the input has more than {max_bytes} bytes", None, None)])
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, column = _position(text, exc.start)
        return Loaded(None, [LoadProblem(
            JSON_ENCODING,
            f"the text contains an unpaired surrogate U+{ord(text[exc.start]):04X} at character "
            f"{exc.start}, which UTF-8 cannot encode",
            line, column,
        )])
    return _load(data, max_bytes, max_depth, None if text.startswith("\ufeff") else text)


def check_value(value: Any, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Loaded:
    """The load problems the JSON text of an already-decoded value would have. Never raises.

    Nesting deeper than ``max_depth`` gives ``json-too-deep`` and no value (checks recurse); an integer too long
    to convert to text gives ``json-non-finite`` and, in a copy, becomes infinity as the loader makes it, so
    messages quoting it and every other check still work. Otherwise the value is returned unchanged.
    """
    limit = sys.get_int_max_str_digits()
    bound = _int_bound(limit) if limit else None
    huge = False
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    if bound is not None and type(value) is int and not -bound < value < bound:
        huge = True
    push, pop = stack.append, stack.pop
    while stack:
        node, depth = pop()
        if depth > max_depth:
            return Loaded(None, [_too_deep(max_depth, f"more than {max_depth}")])
        for child in (node.values() if isinstance(node, dict) else node):
            kind = type(child)
            if kind is str or kind is float or kind is bool or child is None:  # the common leaves, first
                continue
            if kind is int:
                if bound is not None and not -bound < child < bound:
                    huge = True
            elif isinstance(child, (dict, list)):
                push((child, depth + 1))
    if not huge:
        return Loaded(value)
    problems: list[LoadProblem] = []
    return Loaded(_without_huge_ints(value, bound, problems), problems)


@functools.lru_cache(maxsize=4)
def _int_bound(digits: int) -> int:
    return 10 ** digits


def _without_huge_ints(value: Any, bound: int, problems: list[LoadProblem]) -> Any:
    """A copy of ``value`` with every integer beyond ``bound`` made infinity, as the loader makes it.

    Iterative: a value nested as deep as the loader allows (512) must not meet Python's recursion limit.
    """
    holder = [value]
    stack: list[tuple[Any, Any, Any, tuple]] = [(holder, 0, value, ())]
    while stack:
        parent, key, node, path = stack.pop()
        if isinstance(node, dict):
            parent[key] = copy = dict(node)
            stack.extend((copy, k, v, path + (k,)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            parent[key] = copy = list(node)
            stack.extend((copy, i, node[i], path + (str(i),)) for i in range(len(node) - 1, -1, -1))
        elif type(node) is int and not -bound < node < bound:
            if len(problems) < MAX_PROBLEMS:
                pointer = "".join("/" + _escape_pointer_token(str(t)) for t in path)
                problems.append(LoadProblem(
                    JSON_NON_FINITE,
                    f"an integer of about {int(node.bit_length() * 0.30103):,} digits is longer than this parser "
                    f"converts ({sys.get_int_max_str_digits()} digits) and far beyond any interoperable number range",
                    None, None, pointer,
                ))
            parent[key] = -_INF if node < 0 else _INF
    return holder[0]


def _with_line(loaded: Loaded, lineno: int) -> Loaded:
    if not loaded.problems:
        return loaded
    fixed = [
        LoadProblem(p.rule, p.message, lineno, p.column, p.pointer) for p in loaded.problems
    ]
    return Loaded(loaded.value, fixed)


def iter_jsonl(
    source: bytes | bytearray | str | BinaryIO | TextIO | Iterable[bytes] | Iterable[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Iterator[tuple[int, Loaded]]:
    """Load JSON Lines: yields ``(line_number, Loaded)`` per non-blank line (1-based).

    ``source`` is bytes, str, a binary or text stream, or any iterable of lines.
    ``max_bytes`` applies per line; a longer line is reported as ``json-too-large``
    without being held in memory as a whole when read from a binary stream. Problems
    carry the physical line number.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        lines: Iterable[Any] = bytes(source).split(b"\n")
    elif isinstance(source, str):
        lines = source.split("\n")
    elif hasattr(source, "readline") and not isinstance(source, io.TextIOBase) and _is_binary(source):
        lines = _bounded_lines(source, max_bytes)
    else:
        lines = source
    for lineno, line in enumerate(lines, 1):
        if line is _TOO_LONG:
            yield lineno, Loaded(None, [LoadProblem(
                JSON_TOO_LARGE, f"line {lineno} has more than {max_bytes} bytes", lineno, None)])
            continue
        if isinstance(line, str):
            if line.endswith("\n"):
                line = line[:-1]
            if line.endswith("\r"):
                line = line[:-1]
            if not line.strip(" \t\r"):
                continue
            loaded = load_json_text(line, max_bytes=max_bytes, max_depth=max_depth)
        else:
            if line.endswith(b"\n"):
                line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line.strip(b" \t\r"):
                continue
            loaded = load_json_bytes(line, max_bytes=max_bytes, max_depth=max_depth)
        yield lineno, _with_line(loaded, lineno)


_TOO_LONG = object()


JSONL_SUFFIXES = (".jsonl", ".ndjson")  # newline-delimited JSON: one payload per line


def jsonl_lines(stream: BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)`` per non-blank line of a binary JSONL stream, the line ending removed;
    ``None`` for a line longer than ``max_bytes``, which is skipped without being held in memory."""
    for first, block in jsonl_blocks(stream, max_bytes):
        if block is None:
            yield first, None
        else:
            yield from block_lines(block, first)


JSONL_BLOCK_BYTES = 256 * 1024


def jsonl_blocks(
    stream: BinaryIO, max_bytes: int = DEFAULT_MAX_BYTES, block_bytes: int = JSONL_BLOCK_BYTES
) -> Iterator[tuple[int, bytes | None]]:
    """A binary JSONL stream cut at line ends: ``(number of the block's first line, whole lines)``, about
    ``block_bytes`` at a time, for :func:`block_lines` to split (in a worker process, for one: the reader
    then never handles a line on its own); ``(line number, None)`` for a line longer than ``max_bytes``
    (exactly the lines :func:`_bounded_lines` refuses), skipped without being held in memory."""
    limit = max_bytes + 2  # room for "\r\n"
    lineno = 1
    while True:
        chunk = stream.read(block_bytes)
        if not chunk:
            return
        end = chunk.rfind(b"\n") + 1
        block, rest = chunk[:end], chunk[end:]
        lines = chunk.count(b"\n", 0, end)
        over_long = False
        if rest:  # a line the chunk cuts: its end read at once (a long line is not copied piece by piece)
            if len(rest) < limit:
                rest += stream.readline(limit - len(rest))
            # With "\n" it is whole (at most limit bytes); without, the last line of all if shorter than limit.
            over_long = not rest.endswith(b"\n") and len(rest) >= limit
            if not over_long:
                block += rest
                lines += 1
        if block:
            yield from _split_over_long(block, lineno, limit)
        lineno += lines
        if over_long:
            yield lineno, None
            lineno += 1
            while True:  # the rest of the line, discarded in bounded chunks
                skipped = stream.readline(1 << 20)
                if not skipped:
                    return
                if skipped.endswith(b"\n"):
                    break


def _split_over_long(whole: bytes, lineno: int, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """``whole`` (lines, each ending in "\n") as :func:`jsonl_blocks` yields it: the lines longer than
    ``limit`` with their "\n" taken out as ``None``."""
    if len(whole) <= limit:  # the common case: no line in it can be too long
        yield lineno, whole
        return
    start = run = 0
    first = lineno
    while start < len(whole):
        end = whole.find(b"\n", start) + 1 or len(whole)  # the last line of all may have no "\n"
        if end - start > limit:
            if run < start:
                yield first, whole[run:start]
            yield lineno, None
            run, first = end, lineno + 1
        start = end
        lineno += 1
    if run < len(whole):
        yield first, whole[run:]


def block_lines(block: bytes, first: int) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` per non-blank line of a block of :func:`jsonl_blocks`, the line ending removed."""
    lines = block.split(b"\n")
    if block.endswith(b"\n"):
        lines.pop()  # the empty text after the last line's end
    crlf = b"\r" in block
    for lineno, line in enumerate(lines, first):
        if crlf:
            line = line.rstrip(b"\r")
        if line.strip(b" \t\r"):
            yield lineno, line


# ---- a JSONL file read in byte ranges (--jobs: each worker reads its own) ----
def line_start(stream: BinaryIO, offset: int) -> int:
    """Where the first line starting at or after ``offset`` of a seekable binary stream begins (its end if none)."""
    size = stream.seek(0, io.SEEK_END)
    if offset <= 0 or offset >= size:
        return max(0, min(offset, size))
    stream.seek(offset - 1)
    if stream.read(1) == b"\n":
        return offset
    while True:  # the rest of the line that offset cuts, read in bounded pieces
        piece = stream.readline(1 << 20)
        if not piece or piece.endswith(b"\n"):
            return stream.tell()


def span_lines(stream: BinaryIO, start: int, end: int) -> tuple[int, int, int]:
    """The lines beginning in bytes [start, end) of a seekable JSONL stream: (where the first begins, where the last
    ends, the line ends between). Spans cut at consecutive offsets cover the stream, each line in exactly one."""
    first, stop = line_start(stream, start), line_start(stream, end)
    stream.seek(first)
    newlines, left = 0, stop - first
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        newlines += chunk.count(b"\n")
        left -= len(chunk)
    return first, stop, newlines


class _Span:
    """``read`` and ``readline`` of a binary stream up to an offset: the stream ends there."""

    __slots__ = ("stream", "left")

    def __init__(self, stream: BinaryIO, stop: int):
        self.stream = stream
        self.left = stop - stream.tell()

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self.stream.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data


def span_blocks(stream: BinaryIO, first: int, stop: int, first_line: int, max_bytes: int = DEFAULT_MAX_BYTES,
                block_bytes: int = JSONL_BLOCK_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """:func:`jsonl_blocks` of bytes [first, stop) of a seekable stream (a span of :func:`span_lines`), whose first
    line is line ``first_line`` of the stream."""
    stream.seek(first)
    for lineno, block in jsonl_blocks(_Span(stream, stop), max_bytes, block_bytes):  # type: ignore[arg-type]
        yield lineno + first_line - 1, block


def _is_binary(stream: Any) -> bool:
    mode = getattr(stream, "mode", None)
    if isinstance(mode, str):
        return "b" in mode
    return not isinstance(stream, io.TextIOBase)


def _bounded_lines(stream: BinaryIO, max_bytes: int) -> Iterator[Any]:
    limit = max_bytes + 2  # room for "\r\n"
    while True:
        line = stream.readline(limit)
        if not line:
            return
        if len(line) >= limit and not line.endswith(b"\n"):
            # Discard the rest of the over-long line in bounded chunks.
            while True:
                rest = stream.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield _TOO_LONG
            continue
        yield line


def pointer_of_duplicate(text: str) -> list[LoadProblem]:
    """The duplicate-key problems of ``text`` (valid JSON), with pointers and positions."""
    found: list[LoadProblem] = []
    _locate(text, True, False, found)
    return found


__all__ = [
    "RULES", "JSON_SYNTAX", "JSON_DUPLICATE_KEY", "JSON_NON_FINITE", "JSON_ENCODING",
    "JSON_EMPTY", "JSON_TOO_DEEP", "JSON_TOO_LARGE", "JSON_BINARY", "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH", "LoadProblem", "Loaded", "load_json_bytes", "load_json_text",
    "iter_jsonl", "pointer_of_duplicate", "check_value", "ArrayStream", "Unstreamable", "streamable_text",
]
