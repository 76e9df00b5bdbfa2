"""Compact text: one line per finding, then a one-line summary.

    payment.json:/instructedAmount/amount: error FORMAT_ERROR/400 [amount-format] ...
    broken.json:3:17: error FORMAT_ERROR/400 [json-syntax] Expecting ',' delimiter
    3 inputs: 1 valid, 2 invalid — 4 errors, 1 warning

A finding with a known line shows ``path:line:col:`` (the editor/compiler convention)
instead of the pointer; for line ``L`` of a JSONL file (source ``file.jsonl:L``) the
line shown is the file's line, so ``file.jsonl:17`` + input line 1, column 5 reads
``file.jsonl:17:5:``.

Every field comes from the input in the end (file names, payload values quoted in
messages), so control characters, line separators, bidirectional-override and other
format characters are shown as escapes (:func:`validator.formats.escape.printable`):
one finding is always exactly one line, and a payload cannot colour or rewrite the
terminal.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from validator.findings import ERROR, WARNING, Finding, Report

from . import RuleInfo, code_label, display_pointer, has_line, kind_note, split_source, summarize, summary_line
from .escape import printable

_RESET = "\x1b[0m"
_COLORS = {ERROR: "\x1b[1;31m", WARNING: "\x1b[33m", "note": "\x1b[36m"}

# Every field comes from the input in the end: shown through the one escaping of outside text (escape.py).
oneline = printable


def _severity(severity: str, color: bool) -> str:
    word = oneline(severity)
    if color and severity in _COLORS:
        return f"{_COLORS[severity]}{word}{_RESET}"
    return word


def _location(source: str, finding: Finding) -> str:
    if finding.line is None:
        return f"{oneline(source)}:{oneline(display_pointer(finding.pointer))}"
    origin = split_source(source)
    base = source.rsplit(":", 1)[0] if origin.line is not None else source
    where = f"{oneline(base)}:{origin.file_line(finding.line)}"
    if finding.column is not None:
        where += f":{finding.column}"
    # Editors jump to `file:line:col:`; the pointer still says which value (none for the text itself).
    return f"{where}:{oneline(display_pointer(finding.pointer))}" if finding.pointer else where


def finding_line(source: str, finding: Finding, *, color: bool = False) -> str:
    """``source:pointer: severity CODE [rule] message`` (``path:line:col:pointer: ...`` when the line is known)."""
    return (
        f"{_location(source, finding)}: {_severity(finding.severity, color)} "
        f"{oneline(code_label(finding.code, finding.status))} [{oneline(finding.rule)}] "
        f"{oneline(finding.message)}"
    )


def note_line(report: Report, *, color: bool = False) -> str | None:
    """``source: note checked as KIND (detected)`` or ``source: note kind is ambiguous (candidates:
    a, b); checked as a``; None when the kind was given. A valid JSONL line gets no note: a batch
    prints a line per finding, not per input."""
    if not report.findings and not report.candidates and has_line(report.source):
        return None  # tested first: most lines of a large batch are valid
    note = kind_note(report)
    if note is None:
        return None
    return f"{oneline(report.source)}: {_severity('note', color)} {oneline(note)}"


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    return join_parts([render_part(reports, color=color, quiet=quiet)], summarize(reports), tool_version=tool_version)


def render_part(reports: Sequence[Report], *, color: bool = False, quiet: bool = False) -> str:
    """The lines of ``reports`` (no summary); :func:`join_parts` joins parts."""
    lines: list[str] = []
    for report in reports:
        if not report.findings and not report.candidates and has_line(report.source):
            continue  # a valid JSONL line prints nothing (see note_line); most lines of a large batch
        note = None if quiet else note_line(report, color=color)
        if note:
            lines.append(note)
        for finding in report.findings:
            if quiet and finding.severity != ERROR:
                continue
            lines.append(finding_line(report.source, finding, color=color))
    return "\n".join(lines)


def join_parts(parts: Sequence[str], summary: Mapping, *, tool_version: str) -> str:
    return "\n".join([part for part in parts if part] + [summary_line(summary)]) + "\n"
