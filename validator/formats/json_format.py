"""JSON: ``{"results": [report.as_dict(), ...], "summary": {...}, "tool": {...}}``.

Keys keep the order :meth:`Report.as_dict` / :meth:`Finding.as_dict` give them (the
output is byte-for-byte the same for the same reports); non-ASCII text stays as is
(``ensure_ascii=False``), indented by 2.

The one thing ``ensure_ascii=False`` cannot write is a lone UTF-16 surrogate (a payload
string such as ``"\\ud800"`` decodes to one, and messages may quote it): the output
could not be encoded as UTF-8. :func:`dumps` writes those as ``\\uXXXX`` escapes, which
decode back to the same string.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from validator.findings import Report

from . import TOOL_NAME, RuleInfo, summarize

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(document: Any) -> str:
    """``json.dumps`` with indent 2, ``ensure_ascii=False`` and surrogates escaped.

    Outside string literals JSON text is ASCII, so every surrogate in the output sits
    inside a string, where ``\\uXXXX`` is the same character.
    """
    text = json.dumps(document, ensure_ascii=False, indent=2)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    document = {
        "results": [report.as_dict() for report in reports],
        "summary": summarize(reports),
        "tool": {"name": TOOL_NAME, "version": tool_version},
    }
    return dumps(document) + "\n"
