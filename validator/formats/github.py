"""GitHub Actions workflow commands: one annotation per finding, then a summary notice::

    ::error file=payment.json,title=amount-format (FORMAT_ERROR/400)::amount ... at /instructedAmount/amount
    ::warning file=batch.jsonl,line=17,title=...::... at (root)
    ::notice::3 inputs: 1 valid, 2 invalid — 4 errors, 1 warning

Every message and property value is first made one printable line
(:func:`validator.formats.escape.printable`: a payload's CR, LF, ESC and other controls
as visible ``\\r``, ``\\n``, ``\\x1b``), so a value quoted in a message can neither
colour the log, end the command, start a line (a ``::`` command of its own) nor add a
line to the annotation. Then the escaping of the Actions runner (``@actions/core``
``escapeData`` / ``escapeProperty``): in the message ``%`` → ``%25``, CR → ``%0D``,
LF → ``%0A``; in property values additionally ``:`` → ``%3A`` and ``,`` → ``%2C``.

``line`` is given when known (the finding's line, or the JSONL line of the input,
both mapped to the file's line), ``col`` when the finding has a column; input read
from stdin (``-``) has no ``file``. Findings that are neither errors nor warnings
become ``::notice``.
"""
from __future__ import annotations

from pathlib import PurePath
from typing import Mapping, Sequence

from validator.findings import ERROR, WARNING, Finding, Report

from . import Origin, RuleInfo, code_label, display_pointer, kind_note, split_source, summarize, summary_line
from .escape import printable


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """``::name key=value,...::message`` with every part one printable line, then escaped; ``None`` values left
    out."""
    props = ",".join(
        f"{key}={escape_property(printable(str(value)))}" for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(printable(message))}"


def _command_name(severity: str) -> str:
    if severity == ERROR:
        return "error"
    if severity == WARNING:
        return "warning"
    return "notice"


def _path(origin: Origin) -> str | None:
    return None if origin.path is None else PurePath(origin.path).as_posix()


def annotation(report: Report, finding: Finding) -> str:
    origin = split_source(report.source)
    label = code_label(finding.code, finding.status)
    title = finding.rule if label == "-" else f"{finding.rule} ({label})"
    return command(
        _command_name(finding.severity),
        f"{finding.message} at {display_pointer(finding.pointer)}",
        file=_path(origin),
        line=origin.file_line(finding.line),
        col=finding.column if finding.line is not None else None,
        title=title,
    )


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    lines: list[str] = []
    for report in reports:
        note = kind_note(report)
        if note and (report.findings or report.candidates):  # a notice per valid input would flood the run
            origin = split_source(report.source)
            lines.append(
                command(
                    "notice", note, file=_path(origin), line=origin.line,
                    title="ambiguous kind" if report.candidates else "detected kind",
                )
            )
        lines.extend(annotation(report, finding) for finding in report.findings)
    lines.append(command("notice", summary_line(summarize(reports))))
    return "\n".join(lines) + "\n"
