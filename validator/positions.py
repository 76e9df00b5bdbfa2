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

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
_NEWLINE = re.compile("\n")


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WHITESPACE:
        i += 1
    return i


class PositionIndex:
    """Offsets of values in one JSON text, found lazily and cached per container."""

    def __init__(self, text: str):
        self.text = text
        self._children: dict[int, dict[str, int] | list[int] | None] = {}
        self._newlines: list[int] | None = None

    def _scan(self, i: int) -> dict[str, int] | list[int] | None:
        """Offsets of the members (object: name -> offset, the last of duplicates as parsers keep)
        or elements (array) of the container starting at ``i``."""
        text = self.text
        if text[i] == "{":
            members: dict[str, int] = {}
            i = _skip_ws(text, i + 1)
            while i < len(text) and text[i] == '"':
                key, i = scanstring(text, i + 1)
                i = _skip_ws(text, i)
                if i >= len(text) or text[i] != ":":
                    break
                i = _skip_ws(text, i + 1)
                members[key] = i
                i = _skip_ws(text, _DECODER.raw_decode(text, i)[1])
                if i < len(text) and text[i] == ",":
                    i = _skip_ws(text, i + 1)
            return members
        if text[i] == "[":
            elements: list[int] = []
            i = _skip_ws(text, i + 1)
            while i < len(text) and text[i] != "]":
                elements.append(i)
                i = _skip_ws(text, _DECODER.raw_decode(text, i)[1])
                if i < len(text) and text[i] == ",":
                    i = _skip_ws(text, i + 1)
            return elements
        return None

    def children(self, i: int):
        if i not in self._children:
            try:
                self._children[i] = self._scan(i)
            except (ValueError, IndexError, RecursionError):  # malformed text: the loader reported it
                self._children[i] = None
        return self._children[i]

    def offset(self, pointer: str) -> int | None:
        """Where the value at ``pointer`` starts; for an absent member (a missing required
        property) where its parent starts; None when the text is not what the pointer walks."""
        i = _skip_ws(self.text, 0)
        if i >= len(self.text):
            return None
        for raw in pointer.split("/")[1:] if pointer else ():
            token = raw.replace("~1", "/").replace("~0", "~")
            children = self.children(i)
            if isinstance(children, dict):
                nxt = children.get(token)
            elif isinstance(children, list) and token.isdigit():
                index = int(token)
                nxt = children[index] if index < len(children) else None
            else:
                return None
            if nxt is None:
                return i  # absent: point at the container
            i = nxt
        return i

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in characters) of an index."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.text)]

        line = bisect.bisect_left(self._newlines, offset)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def offset_at(self, line: int, column: int | None) -> int:
        """The index of a 1-based line and column (the inverse of :meth:`line_column`)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self.text)]
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
