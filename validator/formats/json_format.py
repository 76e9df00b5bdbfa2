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
    # dumps of the list: "[\n  {...\n  }\n]"; a line break is only ever between tokens (strings escape theirs)
    return "  " + dumps([report.as_dict() for report in reports])[2:-2].replace("\n", "\n  ")


def join_parts(parts: Sequence[str], summary: Mapping, *, tool_version: str) -> str:
    document = dumps({"results": [], "summary": summary, "tool": {"name": TOOL_NAME, "version": tool_version}})
    results = ",\n".join(part for part in parts if part)
    if results:  # "results" is the document's first member
        document = document.replace('"results": []', '"results": [\n' + results + "\n  ]", 1)
    return document + "\n"
