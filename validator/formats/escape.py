"""Text that came from outside -- a payload's values, a file's name, a target's answer -- is data, never markup or
terminal control. Every output shows it through one of these, each for its medium:

:func:`printable`
    one line of plain text (a terminal, a CI log, a JUnit message, a GitHub annotation, a SARIF message): every
    control character (C0, DEL, C1 -- ESC and CSI included), line or paragraph separator, format character
    (bidirectional overrides, zero-width characters), lone surrogate, private-use or unassigned character written
    as a visible escape (``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``), so nothing quoted can colour, move the cursor,
    set a window title, reorder the line or start a line of its own (``\\r`` + "PASS").
:func:`printable_lines`
    the same for a text of several lines of our own (a traceback), keeping its own line breaks.
:func:`xml_text`
    the characters XML 1.0 cannot hold at all (C0 but tab, newline and CR; U+FFFE, U+FFFF; lone surrogates) as
    visible escapes, the rest as is: the document stays well-formed whatever a value holds.
:func:`html_text`
    HTML text or attribute value: :func:`printable`, then ``<>&"'`` as character references.
:func:`markdown_text`
    a Markdown table cell or inline text (GitHub's dialect): :func:`printable`, ``<>&`` as character references, and
    every character that makes an inline construct (emphasis, code spans, links, images, table bars) escaped with a
    backslash, so the text renders as the characters it is and never as markup.
:func:`json_text`
    a JSON document's text with DEL, C1, lone surrogates, line separators and bidirectional / zero-width
    characters written as ``\\uXXXX`` escapes (JSON itself escapes C0): the same data, safe to ``cat``, encodable
    as UTF-8.

Escapes are made of printable ASCII: :func:`printable` of a printable text is the same text (escaping twice is
escaping once).
"""
from __future__ import annotations

import functools
import re

# Nothing here is imported or compiled before it is needed: a text report of valid payloads only calls printable(),
# whose fast path is str.isprintable(). At import, html (its table of entities), unicodedata and the patterns below
# (their ranges of surrogates make large character sets) cost about a twentieth of a command's start.


@functools.cache
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)  # kept here, never evicted from re's own cache by the patterns of a spec

# Categories shown as escapes: controls, format characters, surrogates, private use, unassigned, line and
# paragraph separators (str.isprintable() is False for each, which is the fast test below).
_UNPRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` on one line, every control, separator, format, surrogate, private-use or unassigned character
    written as its escape (``\\x1b``, ``\\n``, ``\\u202e``)."""
    if text.isprintable():   # most texts: nothing to do, tested at C speed
        return text
    import unicodedata

    return "".join(_escape(ch) if unicodedata.category(ch) in _UNPRINTABLE else ch for ch in text)


def printable_lines(text: str) -> str:
    """A text of several lines of our own (a traceback quoting a value): each line :func:`printable`, the line
    breaks kept (``\\n``; a ``\\r`` or any other separator inside a line is escaped)."""
    return "\n".join(printable(line) for line in text.split("\n"))


_XML_ILLEGAL = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by a visible escape (``\\x00``, ``\\ud800``)."""
    return _compiled(_XML_ILLEGAL).sub(lambda m: _escape(m.group()), text)


def html_text(value: object) -> str:
    """HTML text or attribute value: printable, then markup-free (``<>&"'`` as references)."""
    import html

    return html.escape(printable(str(value)), quote=True)


# The characters that make Markdown's inline constructs (emphasis, strike-through, code spans, links and images,
# table cells); "<>&" are references already (html_text). An "_" between two letters or digits (RESOURCE_UNKNOWN)
# can neither open nor close emphasis (CommonMark's flanking rules), so it stays as it is. Block constructs
# (headings, lists, quotes) begin a line, and a cell or a line of ours never begins with the target's text. A
# backslash escapes only ASCII punctuation (or what follows the text): "\\x1b" stays as it is.
_MARKDOWN = r"[`*\[\]|~]|\\(?=[!-/:-@\[-`{-~]|$)|(?<![^\W_])_|_(?![^\W_])"


def markdown_text(value: object) -> str:
    """A Markdown table cell or line: printable, no HTML, no Markdown syntax (each escaped with a backslash)."""
    import html

    # quotes stay: they make no markup in text (never in an attribute here), and "target's" stays readable
    return _compiled(_MARKDOWN).sub(lambda m: "\\" + m.group(), html.escape(printable(str(value)), quote=False))


# JSON escapes C0 itself; these it writes raw with ensure_ascii=False. Outside string literals JSON text is ASCII, so
# every match sits inside a string, where ``\\uXXXX`` is the same character.
_JSON_ESCAPED = "[\x7f-\x9f\ud800-\udfff\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"


def json_text(document_text: str) -> str:
    """A JSON document's text (``json.dumps(..., ensure_ascii=False)``) with the characters a terminal or an editor
    would act on written as ``\\uXXXX`` escapes: the same data."""
    return _compiled(_JSON_ESCAPED).sub(lambda m: f"\\u{ord(m.group()):04x}", document_text)
