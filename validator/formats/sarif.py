"""SARIF 2.1.0: one run whose results are the findings, for code-scanning dashboards.

Choices worth knowing:

* ``tool.driver.rules`` lists the rules that occur in the results, sorted by id (and
  ``ruleIndex`` points into that list), not the whole catalogue: the descriptors a
  consumer needs are exactly those its results reference, the log stays proportional to
  what was found (a clean run is a few hundred bytes, not the full catalogue), and the
  catalogue has its own listing elsewhere. A rule id the catalogue lacks still gets a
  descriptor, made from its first finding.
* Locations: a file source becomes a relative URI (``./`` dropped, separators ``/``,
  everything but unreserved characters and ``/`` percent-encoded, so ``a:b.json`` can
  not be read as a URI scheme); an absolute path becomes a ``file:`` URI. A JSONL line
  (``file.jsonl:17``) points at ``file.jsonl``, line 17. ``region`` has the finding's
  line/column when known, else ``startLine`` 1 (code-scanning tools need a line).
  Standard input (``-``) has no artifact to point at, so such results carry only the
  logical location (the JSON pointer) plus ``properties.source``.
* ``columnKind`` is ``unicodeCodePoints``: columns come from Python's decoders, which
  count characters, not UTF-16 code units (SARIF's default).
* ``message.text`` is the finding's message followed by `` at <pointer>``, because
  viewers show the message but not logical locations; it is one printable line
  (:func:`validator.formats.escape.printable`: a payload's controls quoted in a message
  are shown as ``\\x1b``, ``\\n``), the ``properties`` keep the values as data.
"""
from __future__ import annotations

from pathlib import PurePath
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from validator.findings import ERROR, WARNING, Finding, Report

from . import TOOL_NAME, RuleInfo, code_label, display_pointer, rule_info, split_source
from .escape import printable
from .json_format import dumps

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"


def level(severity: str) -> str:
    if severity == ERROR:
        return "error"
    if severity == WARNING:
        return "warning"
    return "note"


def _encode(path: str) -> bytes:
    try:
        # File names the OS could not decode arrive as surrogate escapes: their raw bytes.
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogatepass")


def artifact_uri(path: str) -> str:
    """The URI for a source path: relative and percent-encoded, or ``file:`` when absolute."""
    native = PurePath(path)
    if native.is_absolute():
        return native.as_uri()
    return quote(_encode(native.as_posix()), safe="/")


def _help_text(info: RuleInfo) -> str:
    lines = [info.summary or info.name or info.id, ""]
    lines.append(f"Document reference: {info.ref}" if info.ref else "Document reference: none")
    if info.code is None and info.status is None:
        lines.append("Expected answer: none (the rule is about a response, which no server answers).")
    else:
        lines.append(
            f"Expected answer: HTTP status {info.status if info.status is not None else '-'}, "
            f"tppMessages code {info.code if info.code is not None else '-'} "
            f"({code_label(info.code, info.status)})."
        )
    return "\n".join(lines)


def _descriptor(rule_id: str, info: RuleInfo) -> dict[str, Any]:
    summary = info.summary or info.name or rule_id
    full = f"{summary} (see {info.ref})" if info.ref else summary
    return {
        "id": rule_id,
        "name": info.name or rule_id,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": _help_text(info)},
        "defaultConfiguration": {"level": level(info.severity)},
        "properties": {"documentRef": info.ref, "code": info.code, "status": info.status},
    }


def _location(report: Report, finding: Finding) -> dict[str, Any]:
    location: dict[str, Any] = {}
    origin = split_source(report.source)
    if not origin.stdin:
        region: dict[str, int] = {"startLine": origin.file_line(finding.line) or 1}
        if finding.line is not None and finding.column is not None:
            region["startColumn"] = finding.column
        location["physicalLocation"] = {
            "artifactLocation": {"uri": artifact_uri(origin.path)},
            "region": region,
        }
    location["logicalLocations"] = [{"fullyQualifiedName": finding.pointer, "kind": "member"}]
    return location


def _result(report: Report, finding: Finding, rule_index: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "pointer": finding.pointer,
        "code": finding.code,
        "status": finding.status,
        "source": report.source,
        "kind": report.kind,
    }
    if report.detected:
        properties["kindDetected"] = True
    if finding.line is not None:
        properties["line"] = finding.line
        properties["column"] = finding.column
    if report.candidates:
        properties["candidates"] = list(report.candidates)
    return {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": level(finding.severity),
        "message": {"text": printable(f"{finding.message} at {display_pointer(finding.pointer)}")},
        "locations": [_location(report, finding)],
        "properties": properties,
    }


def build(
    reports: Sequence[Report], *, catalogue: Mapping[str, RuleInfo], tool_version: str
) -> dict[str, Any]:
    """The SARIF log as a Python object."""
    infos: dict[str, RuleInfo] = {}
    for report in reports:
        for finding in report.findings:
            if finding.rule not in infos:
                infos[finding.rule] = rule_info(catalogue, finding)
    rule_ids = sorted(infos)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    driver: dict[str, Any] = {
        "name": TOOL_NAME,
        "version": tool_version,
        "rules": [_descriptor(rule_id, infos[rule_id]) for rule_id in rule_ids],
    }
    results = [
        _result(report, finding, index[finding.rule])
        for report in reports
        for finding in report.findings
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    return dumps(build(reports, catalogue=catalogue, tool_version=tool_version)) + "\n"
