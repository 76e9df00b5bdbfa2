"""Where a JSON pointer's value starts in the JSON text: line and column for findings.

Findings point into the payload with RFC 6901 pointers; a person reading `bulk.json:214:9` in a
terminal, or a code-scanning UI placing an annotation, wants the line too. Only payloads with
findings are scanned, and only the containers on the findings' paths, each once: skipping a value
is done by the C decoder, so 200,000 findings in a 4 MB payload cost one pass, not 200,000. In a
text the loader found clean, a pointer along objects is first followed by searching the bytes for
each member's name (see _searched_offset), which takes no Python step per member before it.
"""
from __future__ import annotations

import bisect
import json
import re
from json.decoder import scanstring

_SCAN = json.JSONDecoder().scan_once
_NEWLINE = re.compile("\n")


_WHITESPACE = " \t\n\r"
_WHITESPACE_RUN = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, i: int) -> int:
    return _WHITESPACE_RUN.match(text, i).end()


def _after(text: str, i: int, end: int) -> int:
    """The start of the next member or element after a value ending at ``i`` (past white space and a comma)."""
    if i < end and text[i] in _WHITESPACE:
        i = _past_space(text, i + 1, end)
    if i < end and text[i] == ",":
        i += 1
        if i < end and text[i] in _WHITESPACE:
            i = _past_space(text, i + 1, end)
    return i


def _past_space(text: str, i: int, end: int) -> int:
    """Past the white space going on at ``i``: one space (json.dumps writes ", " and ": ") needs no pattern."""
    if i < end and text[i] in _WHITESPACE:
        return _WHITESPACE_RUN.match(text, i).end()
    return i


class _Scan:
    """How far the scan of one container got: what it found, where it goes on (-1: at its end), and whether a
    value found last (at ``next``) is still to be skipped."""

    __slots__ = ("found", "next", "pending")

    def __init__(self, found: dict[str, int] | list[int], next_: int):
        self.found = found
        self.next = next_
        self.pending = False


class PositionIndex:
    """Offsets of values in one JSON text, found lazily and cached per container.

    ``unique_keys``: the caller knows the text decodes cleanly and repeats no key in any object (the loader
    found no problem in it), so a member's first occurrence is the one parsers keep and a container is scanned
    only as far as the wanted member or element: a finding in a bulk's entries does not skip (decode) the
    whole array as a member of the document, then once more entry by entry. Without it every container is
    scanned whole on first use, the last of repeated members kept, and a container the scan cannot read
    (malformed text) gives no offsets at all."""

    def __init__(self, text: str, *, unique_keys: bool = False, data: bytes | None = None):
        """``data``: the UTF-8 bytes ``text`` was decoded from (no byte order mark), with ``unique_keys``: pointers
        along objects are first looked up in them by searching (:func:`_searched_offset`)."""
        self.text = text
        self.unique_keys = unique_keys
        self.data = data if unique_keys else None
        # bytes the searches may still read: a few times the text, so that many findings in one long object cost
        # no more than the scan, which is linear in all lookups
        self._search_budget = _SEARCH_BUDGET * len(data) if self.data is not None else 0
        self._search_misses = _SEARCH_MISSES
        # container offset -> _Scan (its members or elements found so far); None: not a container, or one whose
        # text the scan cannot read
        self._containers: dict[int, _Scan | None] = {}
        self._newlines: list[int] | None = None
        self._root: int | None = None  # where the value starts (past leading white space)

    def _container(self, i: int) -> _Scan | None:
        containers = self._containers
        if i in containers:
            return containers[i]
        text = self.text
        opening = text[i] if i < len(text) else ""
        scan = _Scan({} if opening == "{" else [], _past_space(text, i + 1, len(text))) if opening in ("{", "[") else None
        containers[i] = scan
        if scan is not None and not self.unique_keys:
            self._advance(i, scan, None)
        return containers[i]

    def _advance(self, start: int, scan: _Scan, wanted: str | int | None) -> None:
        """Scan the container at ``start`` on until ``wanted`` (a member's name; for an array, the number of
        elements) is found, else to its end. Each value is skipped by the C decoder; the scan stops before
        skipping the wanted one (a member holding a long array is not decoded to find where it starts)."""
        text, found, i = self.text, scan.found, scan.next
        end = len(text)
        try:
            if scan.pending:  # the value found last: skip it now
                i = _after(text, _SCAN(text, i)[1], end)
            scan.pending = False
            if type(found) is dict:
                while i < end and text[i] == '"':
                    key, i = scanstring(text, i + 1)
                    if i < end and text[i] in _WHITESPACE:
                        i = _past_space(text, i + 1, end)
                    if i >= end or text[i] != ":":
                        break
                    i += 1
                    if i < end and text[i] in _WHITESPACE:
                        i = _past_space(text, i + 1, end)
                    found[key] = i  # a repeated name: the last one, as parsers keep
                    if key == wanted:
                        scan.next, scan.pending = i, True
                        return
                    i = _after(text, _SCAN(text, i)[1], end)
            else:
                while i < end and text[i] != "]":
                    found.append(i)
                    if len(found) == wanted:
                        scan.next, scan.pending = i, True
                        return
                    i = _after(text, _SCAN(text, i)[1], end)
        except (StopIteration, ValueError, IndexError, RecursionError):  # malformed text: the loader reported it
            self._containers[start] = None
            return
        scan.next = -1  # read to its end

    def _child(self, i: int, token: str) -> int | None | bool:
        """The offset of the member or element ``token`` of the container at ``i``; True when it is absent
        (the container is what the pointer walks); None when the text is not what the pointer walks."""
        scan = self._container(i)
        if scan is None:
            return None
        found = scan.found
        if type(found) is dict:
            if token not in found and scan.next >= 0:
                self._advance(i, scan, token)
                if self._containers[i] is None:
                    return None
            return found.get(token, True)
        if not token.isdigit():
            return None
        index = int(token)
        if index >= len(found) and scan.next >= 0:
            self._advance(i, scan, index + 1)
            if self._containers[i] is None:
                return None
        return found[index] if index < len(found) else True

    def children(self, i: int) -> dict[str, int] | list[int] | None:
        """Every member (name -> offset) or element (offsets) of the container at ``i``; None for another value
        or an unreadable container."""
        scan = self._container(i)
        if scan is not None and scan.next >= 0:
            self._advance(i, scan, None)
            scan = self._containers[i]
        return None if scan is None else scan.found

    def offset(self, pointer: str) -> int | None:
        """Where the value at ``pointer`` starts; for an absent member (a missing required
        property) where its parent starts; None when the text is not what the pointer walks."""
        if pointer and self._search_budget > 0:
            searched = _searched_offset(self, pointer)
            if searched is not None:
                return searched
        i = self._root
        if i is None:
            text = self.text
            i = self._root = _skip_ws(text, 0) if text[:1] in _WHITESPACE else 0
        if i >= len(self.text):
            return None
        if not pointer:
            return i
        for raw in pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~") if "~" in raw else raw
            nxt = self._child(i, token)
            if nxt is None:
                return None
            if nxt is True:
                return i  # absent: point at the container
            i = nxt
        return i

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in characters) of an index."""
        if self._newlines is None:
            self._newlines = self._line_ends()
        if not self._newlines:  # one line
            return 1, offset + 1
        line = bisect.bisect_left(self._newlines, offset)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def _line_ends(self) -> list[int]:
        text = self.text
        # A text of one line (a JSONL line, a compact document) has none to look for
        return [m.start() for m in _NEWLINE.finditer(text)] if "\n" in text else []

    def offset_at(self, line: int, column: int | None) -> int:
        """The index of a 1-based line and column (the inverse of :meth:`line_column`)."""
        if self._newlines is None:
            self._newlines = self._line_ends()
        start = 0
        if line > 1:
            start = self._newlines[line - 2] + 1 if line - 2 < len(self._newlines) else len(self.text)
        return min(len(self.text), start + max((column or 1) - 1, 0))

    def position(self, pointer: str) -> tuple[int, int] | None:
        offset = self.offset(pointer)
        return None if offset is None else self.line_column(offset)


# ---- a pointer along objects of a clean text, found by searching ----
# In a text that decodes cleanly and repeats no key, an object's member is found without a Python step per member
# before it (the scan's cost): its name, as JSON writes it plainly, is searched for in the UTF-8 bytes, and a place
# found is taken when the bytes from the object's first member up to it hold no backslash (so each quote opens or
# closes a string), and their quotes and brackets, with each pair of adjacent quotes taken away (a string without
# brackets), leave no quote (no string holds a bracket, and the place is outside strings) and brackets that close
# each other in turn (the place is in this object, neither in a value within it nor past its end); a colon must
# follow the name. A member is absent when neither a plain spelling of its name nor a backslash (which could spell
# it otherwise) follows the object's first member. Anything else (an array on the way, a name written with escapes,
# a bracket in a string before the member) is left to the scan, which decides every text; the searches of one text
# read at most a few times its length (then the scan alone goes on).
_SEARCH_BUDGET = 4
_CANDIDATES = 4  # places of a name's spelling tried per member
_SPACE = re.compile(rb"[ \t\n\r]*+")
_NAME_END = re.compile(rb"[ \t\n\r]*+:[ \t\n\r]*+")
_SPACE_CODES = frozenset(b" \t\n\r")
_OPEN, _CLOSE, _QUOTE, _COLON = b"{}\":"
_SEARCH_MISSES = 4  # pointers the search cannot follow in one text before the scan alone goes on
_MARKS = bytes(range(256)).replace(b"[", b"{").replace(b"]", b"}")  # the two kinds of bracket alike
_NOT_MARKS = bytes(set(range(256)) - set(b'"{}[]'))


def _searched_offset(index: PositionIndex, pointer: str) -> int | None:
    """The offset (in characters) :meth:`PositionIndex.offset` gives for ``pointer`` (not the root's), when each
    of its steps is an object's member found by searching; None when the scan must decide."""
    data = index.data
    end = len(data)
    # Bytes are compared as numbers: ``b"x" in data`` first tries to read b"x" as a number (an exception raised
    # and cleared, dearer than the search)
    at = _SPACE.match(data).end() if end and data[0] in _SPACE_CODES else 0
    for raw in pointer.split("/")[1:]:
        if at >= end or data[at] != _OPEN:
            return _missed(index)
        first = at + 1
        if first < end and data[first] in _SPACE_CODES:
            first = _SPACE.match(data, first).end()
        if first < end and data[first] == _CLOSE:
            break  # absent: where its object starts
        name = raw.replace("~1", "/").replace("~0", "~") if "~" in raw else raw
        if not name.isprintable() or '"' in name or "\\" in name:  # not written as it is
            return _missed(index)
        spelled = b'"' + name.encode() + b'"'
        escape = data.find(b"\\", first)
        found = data.find(spelled, first)
        tries = _CANDIDATES
        while True:
            if found < 0:
                if escape < 0:
                    return at if index.text.isascii() else len(data[:at].decode())  # absent: where its object starts
                return _missed(index)
            if 0 <= escape < found or not tries:
                return _missed(index)
            tries -= 1
            if found > first:  # what comes before it in the object: brackets outside strings that close in turn?
                index._search_budget -= found - first
                if index._search_budget < 0:
                    return None
                marks = data[first:found].translate(_MARKS, _NOT_MARKS).replace(b'""', b"")
                if _QUOTE in marks:  # a string holding a bracket
                    return _missed(index)
                while marks:
                    inner = marks.replace(b"{}", b"")
                    if len(inner) == len(marks):
                        break
                    marks = inner
                if marks:
                    found = data.find(spelled, found + 1)
                    continue
            after = found + len(spelled)  # past the name: a colon and the value, or a string value of that text
            if after < end and data[after] == _COLON:
                after += 1
                if after < end and data[after] in _SPACE_CODES:
                    after = _SPACE.match(data, after).end()
                break
            if after < end and data[after] in _SPACE_CODES:
                colon = _NAME_END.match(data, after)
                if colon is not None:
                    after = colon.end()
                    break
            found = data.find(spelled, found + 1)
        at = after
    return at if index.text.isascii() else len(data[:at].decode())


def _missed(index: PositionIndex) -> None:
    """A pointer the search cannot follow: after a few, a text's pointers go to the scan straight away (an array on
    their way, names written with escapes)."""
    index._search_misses -= 1
    if not index._search_misses:
        index._search_budget = 0
    return None


def pointer_offset(text: str, pointer: str) -> int | None:
    return PositionIndex(text).offset(pointer)


def pointer_position(text: str, pointer: str) -> tuple[int, int] | None:
    return PositionIndex(text).position(pointer)


_ESCAPE = re.compile(r'\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|"', re.S)


def string_offsets(text: str, quote: int, indices: list[int]) -> dict[int, int]:
    """Where characters of a JSON string's decoded value sit in ``text``: for each index into the value, the
    offset of its (escaped) form in ``text``, where the string's opening quote is at ``quote``. One pass over
    the escapes, whatever the number of indices; an index beyond the string maps to its closing quote."""
    wanted = sorted(set(indices))
    found: dict[int, int] = {}
    raw = quote + 1  # offset in text
    decoded = 0      # index into the value
    k = 0
    for m in _ESCAPE.finditer(text, raw):
        # plain characters up to this escape map one to one
        while k < len(wanted) and wanted[k] < decoded + (m.start() - raw):
            found[wanted[k]] = raw + (wanted[k] - decoded)
            k += 1
        decoded += m.start() - raw
        if m.group(0) == '"':
            raw = m.start()
            break
        while k < len(wanted) and wanted[k] == decoded:
            found[wanted[k]] = m.start()
            k += 1
        decoded += 1  # an escape, a surrogate pair included, is one character of a Python str
        raw = m.end()
    for index in wanted[k:]:
        found[index] = raw
    return found
