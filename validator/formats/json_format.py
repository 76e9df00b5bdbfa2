"""JSON: ``{"results": [report.as_dict(), ...], "summary": {...}, "tool": {...}}``.

Keys keep the order :meth:`Report.as_dict` / :meth:`Finding.as_dict` give them (the
output is byte-for-byte the same for the same reports); non-ASCII text stays as is
(``ensure_ascii=False``), indented by 2.

The one thing ``ensure_ascii=False`` cannot write is a lone UTF-16 surrogate (a payload
string such as ``"\\ud800"`` decodes to one, and messages may quote it): the output
could not be encoded as UTF-8. :func:`dumps` writes those as ``\\uXXXX`` escapes, which
decode back to the same string, and so DEL, the C1 controls (``\\u009b`` is a terminal's
CSI), line separators and bidirectional characters (:func:`validator.formats.escape.json_text`):
the same data, safe to print.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any, Mapping, Sequence

from validator.findings import Report

from . import TOOL_NAME, RuleInfo, summarize
from .escape import json_text


def dumps(document: Any) -> str:
    """``json.dumps`` with indent 2, ``ensure_ascii=False``, surrogates and controls escaped."""
    return json_text(json.dumps(document, ensure_ascii=False, indent=2))


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    return join_parts([render_part(reports)], summarize(reports), tool_version=tool_version)


def render_part(reports: Sequence[Report], *, color: bool = False, quiet: bool = False) -> str:
    """The members of ``results`` that ``reports`` make, as they stand in the document (indented by 4); "" for none."""
    if not reports:
        return ""
    try:
        return json_text(",\n".join(["    " + _indented(report.as_dict(), "    ") for report in reports]))
    except _Unexpected:
        # dumps of the list: "[\n  {...\n  }\n]"; a line break is only ever between tokens (strings escape theirs)
        return "  " + dumps([report.as_dict() for report in reports])[2:-2].replace("\n", "\n  ")


class _Unexpected(Exception):
    """A value _indented does not write (a float, say): json.dumps writes the part."""


_STRING = encode_basestring  # json's own string encoder (C): ensure_ascii=False writes strings this way
_CONSTANTS = {None: "null", True: "true", False: "false"}


def _indented(value: Any, pad: str) -> str:
    """What ``json.dumps(value, ensure_ascii=False, indent=2)`` writes for a report's dict at indentation ``pad``
    (before json_text): strings, integers, booleans, None, lists and dicts with string keys. json.dumps writes an
    indented document with its pure-Python encoder, a generator per container, most of a batch's JSON rendering."""
    kind = type(value)
    if kind is str:
        return _STRING(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = pad + "  "
        members = []
        for key, member in value.items():
            if type(key) is not str:
                raise _Unexpected
            members.append(f"{inner}{_STRING(key)}: {_indented(member, inner)}")
        return "{\n" + ",\n".join(members) + "\n" + pad + "}"
    if kind is list:
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n" + ",\n".join([inner + _indented(item, inner) for item in value]) + "\n" + pad + "]"
    if kind is int:
        return int.__repr__(value)
    if value is None or kind is bool:
        return _CONSTANTS[value]
    raise _Unexpected


def join_parts(parts: Sequence[str], summary: Mapping, *, tool_version: str) -> str:
    document = dumps({"results": [], "summary": summary, "tool": {"name": TOOL_NAME, "version": tool_version}})
    results = ",\n".join(part for part in parts if part)
    if results:  # "results" is the document's first member
        document = document.replace('"results": []', '"results": [\n' + results + "\n  ]", 1)
    return document + "\n"
