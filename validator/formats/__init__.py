"""Output formats: turn per-input :class:`~validator.findings.Report` objects into text.

``render(reports, fmt, catalogue=..., tool_version=...)`` is the one entry point; every
format returns a complete document ending in exactly one newline, so callers write it
as is (``click.echo(out, nl=False)`` / ``sys.stdout.write(out)``).

The formats:

``text``
    compact, one line per finding (``source:pointer: severity CODE [rule] message``),
    then a one-line summary; before an input's findings, ``source: note checked as KIND
    (detected)`` when the kind was detected (for a JSONL line only when it has findings);
    ``quiet`` keeps only error lines and the summary;
    ``color`` colours the severities with ANSI escapes.
``json``
    ``{"results": [...], "summary": {...}, "tool": {...}}``.
``junit``
    JUnit XML, one test case per input.
``sarif``
    SARIF 2.1.0, for code-scanning dashboards.
``github``
    GitHub Actions workflow commands (``::error ...``), i.e. inline annotations.

``quiet`` and ``color`` only change ``text``; the machine-readable formats always
carry every finding.

Helpers shared by the format modules live here too: the :class:`RuleInfo` protocol and
its fallback for rule ids the catalogue does not know, :func:`summarize`, the
``CODE/status`` label, and :func:`split_source`, which reads the sources the CLI
produces (``-`` for stdin, ``file.jsonl:17`` for line 17 of a JSONL file).
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Mapping, Protocol, Sequence, runtime_checkable

from validator.findings import ERROR, WARNING, Finding, Report
from validator.records import record

__all__ = [
    "write_documents",
    "FORMATS",
    "RuleInfo",
    "FallbackRule",
    "Origin",
    "render",
    "summarize",
    "summary_line",
    "rule_info",
    "code_label",
    "split_source",
    "display_pointer",
    "kind_note",
    "has_line",
    "PART_FORMATS",
    "render_part",
    "render_parts",
    "merge_summaries",
]

FORMATS = ("text", "json", "junit", "sarif", "github")

_MODULES = {
    "text": "text",
    "json": "json_format",
    "junit": "junit",
    "sarif": "sarif",
    "github": "github",
}

TOOL_NAME = "obvalidate"

# Sources that mean "standard input" rather than a file.
STDIN_SOURCES = frozenset({"-", "<stdin>"})


@runtime_checkable
class RuleInfo(Protocol):
    """What the formats need to know about a rule (any object with these attributes)."""

    id: str
    name: str
    summary: str
    ref: str | None
    code: str | None
    status: int | None
    severity: str


@record
class FallbackRule:
    """Metadata for a rule id that is not in the catalogue, made from its first finding."""

    id: str
    name: str
    summary: str
    ref: str | None
    code: str | None
    status: int | None
    severity: str

    @classmethod
    def from_finding(cls, finding: Finding) -> "FallbackRule":
        return cls(
            id=finding.rule,
            name=finding.rule,
            summary=f"Rule {finding.rule} (not in the rule catalogue)",
            ref=finding.ref,
            code=finding.code,
            status=finding.status,
            severity=finding.severity,
        )


def rule_info(catalogue: Mapping[str, RuleInfo], finding: Finding) -> RuleInfo:
    """The catalogue entry for ``finding.rule``, or fallback metadata made from the finding."""
    info = catalogue.get(finding.rule)
    if info is None:
        return FallbackRule.from_finding(finding)
    return info


def code_label(code: str | None, status: int | None) -> str:
    """``FORMAT_ERROR/400``; ``FORMAT_ERROR`` or ``-/400`` when one half is missing; ``-``."""
    if code is None and status is None:
        return "-"
    label = code if code is not None else "-"
    if status is not None:
        label += f"/{status}"
    return label


def display_pointer(pointer: str) -> str:
    """The RFC 6901 pointer as shown to people: the empty (root) pointer is ``(root)``."""
    return pointer if pointer else "(root)"


@record
class Origin:
    """Where a report's input came from.

    ``path`` is the file (``None`` for standard input); ``line`` is the 1-based line of
    the file the input started on, when the input is one line of a JSONL file.
    """

    path: str | None
    line: int | None = None

    @property
    def stdin(self) -> bool:
        return self.path is None

    def file_line(self, finding_line: int | None) -> int | None:
        """The line of the file a finding is on.

        A finding's own ``line`` counts from the start of its input; for line ``L`` of a
        JSONL file, the input's line 1 is the file's line ``L``.
        """
        if finding_line is None:
            return self.line
        if self.line is None:
            return finding_line
        return self.line + finding_line - 1


_LINE_SUFFIX = re.compile(r"^(?P<path>.+):(?P<line>[1-9][0-9]*)$")


def split_source(source: str) -> Origin:
    """Read a report's ``source``: ``-`` (stdin), ``file.jsonl:17``, ``-:3`` or a path."""
    match = _LINE_SUFFIX.match(source)
    path, line = (match["path"], int(match["line"])) if match else (source, None)
    if path in STDIN_SOURCES:
        return Origin(None, line)
    return Origin(path, line)


def has_line(source: str) -> bool:
    """``split_source(source).line is not None`` (a JSONL line's report), without building the Origin."""
    return _LINE_SUFFIX.match(source) is not None


def summarize(reports: Sequence[Report]) -> dict:
    """Counts over all reports; ``by_rule`` counts findings of any severity, by rule id."""
    by_rule: dict[str, int] = {}
    errors = warnings = valid = 0
    for report in reports:
        if not report.findings:  # most inputs of a large batch: nothing to count but the input
            valid += 1
            continue
        if report.valid:
            valid += 1
        for finding in report.findings:
            by_rule[finding.rule] = by_rule.get(finding.rule, 0) + 1
            if finding.severity == ERROR:
                errors += 1
            elif finding.severity == WARNING:
                warnings += 1
    return {
        "inputs": len(reports),
        "valid": valid,
        "invalid": len(reports) - valid,
        "errors": errors,
        "warnings": warnings,
        "by_rule": dict(sorted(by_rule.items())),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(summary: Mapping[str, int]) -> str:
    """``3 inputs: 1 valid, 2 invalid — 4 errors, 1 warning``."""
    return (
        f"{_plural(summary['inputs'], 'input')}: "
        f"{summary['valid']} valid, {summary['invalid']} invalid \u2014 "
        f"{_plural(summary['errors'], 'error')}, {_plural(summary['warnings'], 'warning')}"
    )


def render(
    reports: Sequence[Report],
    fmt: str,
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    """Render ``reports`` in format ``fmt`` (one of :data:`FORMATS`)."""
    try:
        module_name = _MODULES[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    module = importlib.import_module(f"{__name__}.{module_name}")
    return module.render(
        list(reports), catalogue=catalogue, tool_version=tool_version, color=color, quiet=quiet
    )


# Formats whose document is its inputs' parts in order and a summary: a worker of --jobs renders the part of the
# inputs it checked, the main process only joins the parts (render_parts), byte for byte what render gives.
PART_FORMATS = ("text", "json")


def render_part(reports: Sequence[Report], fmt: str, *, color: bool = False, quiet: bool = False) -> tuple[str, dict]:
    """The part of a ``fmt`` document (one of :data:`PART_FORMATS`) that ``reports`` make, and their summary."""
    module = importlib.import_module(f"{__name__}.{_MODULES[fmt]}")
    return module.render_part(list(reports), color=color, quiet=quiet), summarize(reports)


def render_parts(parts: Sequence[tuple[str, dict]], fmt: str, *, tool_version: str) -> str:
    """The ``fmt`` document of parts from :func:`render_part`, in input order: what :func:`render` gives for all
    their reports."""
    module = importlib.import_module(f"{__name__}.{_MODULES[fmt]}")
    return module.join_parts([text for text, _summary in parts], merge_summaries(summary for _text, summary in parts),
                             tool_version=tool_version)


def merge_summaries(summaries) -> dict:
    """The summary of all inputs of several :func:`summarize` results."""
    merged = {"inputs": 0, "valid": 0, "invalid": 0, "errors": 0, "warnings": 0}
    by_rule: dict[str, int] = {}
    for summary in summaries:
        for key in merged:
            merged[key] += summary[key]
        for rule, count in summary["by_rule"].items():
            by_rule[rule] = by_rule.get(rule, 0) + count
    return {**merged, "by_rule": dict(sorted(by_rule.items()))}


def needs_candidates_note(report: Report) -> bool:
    """An ambiguous kind gets a note unless a kind-ambiguous finding already says so."""
    return bool(report.candidates) and not any(f.rule == "kind-ambiguous" for f in report.findings)


def kind_note(report: Report) -> str | None:
    """What the input was checked as, when that was not given: ``checked as bulk-payment (detected)``,
    or the candidates of an ambiguous kind no finding names; None when the kind was given (--kind)."""
    if needs_candidates_note(report):
        checked = f"checked as {report.kind}" if report.kind else "not checked"
        return f"kind is ambiguous (candidates: {', '.join(report.candidates)}); {checked}"
    if report.detected and report.kind:
        return f"checked as {report.kind} (detected)"
    return None


def write_documents(directory: str | Path, documents: Mapping[str, str]) -> list[Path]:
    """Write each rendered document (file name -> text, UTF-8) into ``directory``, made if missing: a report
    directory's files (the gate's, the edge-case reports', the proxy's), in the order given."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in documents.items():
        path = out / name
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
