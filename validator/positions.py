"""Where a JSON pointer's value starts in the JSON text: line and column for findings.

Findings point into the payload with RFC 6901 pointers; a person reading `bulk.json:214:9` in a
terminal, or a code-scanning UI placing an annotation, wants the line too. Only payloads with
findings are scanned, and only the containers on the findings' paths, each once: skipping a value
is done by the C decoder, so 200,000 findings in a 4 MB payload cost one pass, not 200,000.
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

    def __init__(self, text: str, *, unique_keys: bool = False):
        self.text = text
        self.unique_keys = unique_keys
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
        i = self._root
        if i is None:
            i = self._root = _skip_ws(self.text, 0)
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
