"""The verdicts of ``obvalidate traffic`` in each format, written as the entries are judged.

``text`` and ``json`` stream: a line per finding (text) or a result per entry (json) as each entry is judged, so a
recording of any size is reported in bounded memory. ``junit``, ``sarif``, ``github`` and ``html`` are whole
documents: they keep the entries with findings (and, for JUnit, one small test-case record per judged entry) and are
written at the end, through the validator's own formatters (junit, sarif, github) with each entry as an input.

Everything quoted from the recording (targets, header values in messages, rule pointers) is the recorder's and the
bank's text: shown through the one escaping of outside text (:mod:`validator.formats.escape`: ``printable`` for a
line, ``html_text`` for the page, ``json_text`` for JSON), so it can neither break a line nor drive a terminal.
"""
from __future__ import annotations

import abc
import json
from pathlib import PurePath
from typing import IO, Any

from validator import __version__
from validator.findings import ERROR, Finding, Report
from validator.formats import TOOL_NAME, display_pointer
from validator.formats.escape import html_text, json_text, printable

from .run import CLIENT, SERVER, EntryResult, Tally

FORMATS = ("text", "json", "junit", "sarif", "github", "html")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def summary_line(tally: Tally) -> str:
    """``12 entries: 9 judged (7 clean, 2 with findings), 3 skipped — 3 errors (2 client, 1 server), 0 warnings``."""
    parties = ", ".join(f"{tally.by_party.get(p, 0):,} {p}" for p in (CLIENT, SERVER))
    entries = f"{tally.entries:,} {'entry' if tally.entries == 1 else 'entries'}"
    return (f"{entries}: {tally.entries - tally.skipped:,} "
            f"judged ({tally.clean:,} clean, {tally.with_findings:,} with findings), {tally.skipped:,} skipped "
            f"\u2014 {_plural(tally.errors, 'error')}, {_plural(tally.warnings, 'warning')} "
            f"(findings by party: {parties})")


def skipped_line(tally: Tally) -> str | None:
    if not tally.skipped_by_reason:
        return None
    reasons = tally.as_dict()["skipped_by_reason"]
    return "skipped: " + "; ".join(f"{count:,} {printable(reason)}" for reason, count in reasons.items())


def request_label(result: EntryResult) -> str:
    answer = "no answer" if result.status is None else str(result.status)
    return f"{printable(result.method)} {printable(result.target)} \u2192 {answer}"


def finding_text(finding) -> str:
    text = (f"{printable(finding.party)} {printable(finding.severity)} [{printable(finding.rule)}] "
            f"{printable(display_pointer(finding.pointer))}: {printable(finding.message)}")
    if finding.party == SERVER and (finding.expected or finding.actual):
        text += f" (expected {printable(finding.expected or '-')}; actual {printable(finding.actual or '-')})"
    if finding.ref:
        text += f" (see {printable(finding.ref)})"
    return text


class Output(abc.ABC):
    """Receives each entry's result as it is judged, then the tally (every format implements both)."""

    def __init__(self, stream: IO[str], source: str, *, quiet: bool = False) -> None:
        self.stream = stream
        self.source = source
        self.quiet = quiet

    @abc.abstractmethod
    def add(self, result: EntryResult) -> None: ...

    @abc.abstractmethod
    def finish(self, tally: Tally) -> None: ...


class TextOutput(Output):
    """``rec.har entry 3: POST /v1/payments/sepa-credit-transfers → 201: client error [rule] /pointer: message``,
    a line per finding (``-q``: errors only), then the summary line and the skip reasons."""

    def add(self, result: EntryResult) -> None:
        if not result.findings:
            return
        head = f"{printable(self.source)} entry {result.entry}: {request_label(result)}"
        for finding in result.findings:
            if self.quiet and finding.severity != ERROR:
                continue
            self.stream.write(f"{head}: {finding_text(finding)}\n")

    def finish(self, tally: Tally) -> None:
        self.stream.write(summary_line(tally) + "\n")
        skipped = skipped_line(tally)
        if skipped and not self.quiet:
            self.stream.write(skipped + "\n")


def json_dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` keeping non-ASCII text, with what a terminal or UTF-8 cannot take (lone surrogates, C1,
    bidirectional controls quoted from a recording) as ``\\uXXXX`` escapes: the same data."""
    return json_text(json.dumps(value, ensure_ascii=False, **options))


class JsonOutput(Output):
    """``{"recording": {...}, "results": [one line per entry, ...], "summary": {...}, "tool": {...}}``."""

    def __init__(self, stream: IO[str], source: str, *, quiet: bool = False, recording_format: str = "har") -> None:
        super().__init__(stream, source, quiet=quiet)
        self.count = 0
        stream.write('{\n  "recording": ' + json_dumps({"file": source, "format": recording_format})
                     + ',\n  "results": [')

    def add(self, result: EntryResult) -> None:
        self.stream.write(("\n    " if self.count == 0 else ",\n    ") + json_dumps(result.as_dict()))
        self.count += 1

    def finish(self, tally: Tally) -> None:
        self.stream.write(("\n  ]" if self.count else "]") + ',\n  "summary": ' + json_dumps(tally.as_dict())
                          + ',\n  "tool": ' + json_dumps({"name": TOOL_NAME, "version": __version__}) + "\n}\n")


def _validator_finding(result: EntryResult, finding, *, with_entry: bool) -> Finding:
    message = finding.message
    if finding.party == SERVER and (finding.expected or finding.actual):
        message += f" (expected {finding.expected or '-'}; actual {finding.actual or '-'})"
    head = f"{finding.party}: "
    if with_entry:
        head = f"entry {result.entry} {result.method} {result.target} \u2192 " \
               f"{'no answer' if result.status is None else result.status}: {head}"
    # Escaped here too: a CI annotation is a line of its own, whichever formatter writes it.
    return Finding(printable(finding.rule), finding.severity, printable(finding.pointer), printable(head + message),
                   ref=finding.ref or None)


class DocumentOutput(Output):
    """Formats written whole at the end: the entries with findings are kept (a small record for the others)."""

    def __init__(self, stream: IO[str], source: str, fmt: str, *, quiet: bool = False) -> None:
        super().__init__(stream, source, quiet=quiet)
        self.format = fmt
        self.results: list[EntryResult] = []
        self.clean: list[tuple[int, str, str, int | None, str | None]] = []   # JUnit's passing test cases

    def add(self, result: EntryResult) -> None:
        if result.findings:
            self.results.append(result)
        elif result.skipped is None and self.format == "junit":
            self.clean.append((result.entry, result.method, result.target, result.status, result.operation))

    def finish(self, tally: Tally) -> None:
        from validator.formats import render
        from validator.formats.github import command
        from validator.rules import catalogue

        if self.format == "html":
            self.stream.write(html_report(self.source, self.results, tally))
            return
        if self.format == "junit":
            cases = [(r.entry, Report(_case_name(r.entry, r.method, r.target, r.status), r.operation,
                                      [_validator_finding(r, f, with_entry=False) for f in r.findings]))
                     for r in self.results]
            cases += [(clean[0], Report(_case_name(*clean[:4]), clean[4])) for clean in self.clean]
            reports = [report for _entry, report in sorted(cases, key=lambda case: case[0])]
        else:
            # SARIF and GitHub point at the recording; the entry is in each message.
            reports = [Report(self.source, r.operation, [_validator_finding(r, f, with_entry=True) for f in r.findings])
                       for r in self.results]
        if self.format == "github":
            from validator.formats.github import annotation

            lines = [annotation(report, finding) for report in reports for finding in report.findings]
            lines.append(command("notice", summary_line(tally)))
            self.stream.write("\n".join(lines) + "\n")
            return
        self.stream.write(render(reports, self.format, catalogue=catalogue(), tool_version=__version__))


def _case_name(entry: int, method: str, target: str, status: int | None) -> str:
    return printable(f"entry {entry}: {method} {target} \u2192 {'no answer' if status is None else status}")


def html_report(source: str, results: list[EntryResult], tally: Tally) -> str:
    """A self-contained page: the summary, each finding (entry, request, party, rule, where, message, expected and
    actual answer), the skip reasons."""
    def text(value: Any) -> str:
        return html_text("" if value is None else value)

    rows = []
    for result in results:
        for finding in result.findings:
            rows.append(
                f"<tr class=\"{text(finding.party)}\"><td>{result.entry}</td><td><code>{text(result.method)} "
                f"{text(result.target)}</code></td><td>{text(result.status if result.status is not None else '-')}"
                f"</td><td>{text(result.operation or '-')}</td><td>{text(finding.party)}</td>"
                f"<td>{text(finding.severity)}</td><td><code>{text(finding.rule)}</code></td><td>{text(finding.ref)}"
                f"</td><td><code>{text(display_pointer(finding.pointer))}</code></td><td>{text(finding.message)}</td>"
                f"<td>{text(finding.expected or '')}</td><td>{text(finding.actual or '')}</td></tr>")
    skipped = "".join(f"<tr><td>{count:,}</td><td>{text(reason)}</td></tr>"
                      for reason, count in tally.as_dict()["skipped_by_reason"].items())
    name = text(PurePath(source).name)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>obvalidate traffic: {name}</title><style>body{{font-family:sans-serif;margin:1.5em}}"
        "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:.25em .5em;"
        "vertical-align:top;text-align:left}tr.client td:nth-child(5){color:#8a5a00}"
        "tr.server td:nth-child(5){color:#b00020}</style></head><body>\n"
        f"<h1>obvalidate traffic: {name}</h1>\n<p>{text(summary_line(tally))}</p>\n"
        "<h2>Findings</h2>\n"
        + ("<table><tr><th>Entry</th><th>Request</th><th>Status</th><th>Operation</th><th>Party</th><th>Severity</th>"
           "<th>Rule</th><th>Section</th><th>Where</th><th>Message</th><th>Expected</th><th>Actual</th></tr>\n"
           + "\n".join(rows) + "\n</table>\n" if rows else "<p>None.</p>\n")
        + ("<h2>Skipped</h2>\n<table><tr><th>Entries</th><th>Why</th></tr>\n" + skipped + "\n</table>\n"
           if skipped else "")
        + f"<p>{TOOL_NAME} {text(__version__)}</p>\n</body></html>\n"
    )


def make_output(fmt: str, stream: IO[str], source: str, *, quiet: bool = False,
                recording_format: str = "har") -> Output:
    if fmt == "text":
        return TextOutput(stream, source, quiet=quiet)
    if fmt == "json":
        return JsonOutput(stream, source, quiet=quiet, recording_format=recording_format)
    if fmt in FORMATS:
        return DocumentOutput(stream, source, fmt, quiet=quiet)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
