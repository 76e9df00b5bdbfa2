"""JUnit XML, in the shape Jenkins, GitLab and the GitHub test-report actions load::

    <testsuites name="obvalidate" tests=".." failures=".." errors="0" skipped="0" time="0">
      <testsuite name="obvalidate" tests=".." failures=".." errors="0" skipped="0" time="0">
        <properties><property name="obvalidate.version" value=".."/></properties>
        <testcase classname="obvalidate.<kind>" name="<source>" time="0">
          <failure type="<rule>" message="..">one line per error finding</failure>
          <system-out>warnings, ambiguous-kind note</system-out>
        </testcase>

One test case per input; an input with errors fails with exactly one ``<failure>``
(several per test case are rejected or miscounted by many readers) whose text lists
every error finding, one line each (control characters and line breaks inside a
message are shown as escapes, as in the text format); ``type`` is the rule id, or the
distinct rule ids joined by ``, `` when the errors come from several rules. Warnings never fail a test case and go to
``<system-out>``. Findings are failures (the input broke a rule), never JUnit
``errors`` (the test itself crashed), so ``errors`` is always 0; nothing is skipped.

The XML is built with ElementTree (it escapes ``<&>"``); every name, message and line
is one printable line (:mod:`validator.formats.escape`): control characters, C1 and
lone surrogates quoted from a payload (in a source name, kind or rule id too) -- those
XML 1.0 cannot hold at all and those a CI page would pass to a terminal -- are replaced
by a visible ``\\xNN`` / ``\\uXXXX`` escape rather than dropped, so a message about an
illegal character still says which.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Mapping, Sequence

from validator.findings import ERROR, Finding, Report

from . import TOOL_NAME, RuleInfo, code_label, display_pointer, kind_note, rule_info
from .escape import printable as oneline, xml_text

_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def _describe(finding: Finding, catalogue: Mapping[str, RuleInfo]) -> str:
    ref = finding.ref or rule_info(catalogue, finding).ref
    text = (
        f"{finding.severity} {code_label(finding.code, finding.status)} [{finding.rule}] "
        f"{display_pointer(finding.pointer)}"
    )
    if finding.line is not None:
        text += f" (line {finding.line}" + (
            f", column {finding.column})" if finding.column is not None else ")"
        )
    text += f": {finding.message}"
    if ref:
        text += f" (see {ref})"
    return oneline(text)


def _failure(errors: list[Finding], catalogue: Mapping[str, RuleInfo]) -> ET.Element:
    rules = list(dict.fromkeys(f.rule for f in errors))
    first = errors[0]
    summary = oneline(f"[{first.rule}] {display_pointer(first.pointer)}: {first.message}")
    if len(errors) > 1:
        summary = f"{len(errors)} errors; first: {summary}"
    failure = ET.Element("failure", type=oneline(", ".join(rules)), message=summary)
    failure.text = xml_text("\n".join(_describe(f, catalogue) for f in errors))
    return failure


def _testcase(report: Report, catalogue: Mapping[str, RuleInfo]) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=oneline(f"{TOOL_NAME}.{report.kind or 'unknown'}"),
        name=oneline(report.source),
        time="0",
    )
    errors = report.errors
    if errors:
        case.append(_failure(errors, catalogue))
    out: list[str] = []
    note = kind_note(report)
    if note:
        out.append(oneline(f"note: {note}"))
    out.extend(_describe(f, catalogue) for f in report.findings if f.severity != ERROR)
    if out:
        ET.SubElement(case, "system-out").text = xml_text("\n".join(out))
    return case


def render(
    reports: Sequence[Report],
    *,
    catalogue: Mapping[str, RuleInfo],
    tool_version: str,
    color: bool = False,
    quiet: bool = False,
) -> str:
    tests = len(reports)
    failures = sum(1 for r in reports if not r.valid)
    counts = {
        "tests": str(tests),
        "failures": str(failures),
        "errors": "0",
        "skipped": "0",
        "time": "0",
    }
    root = ET.Element("testsuites", name=TOOL_NAME, **counts)
    suite = ET.SubElement(root, "testsuite", name=TOOL_NAME, **counts)
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(
        properties, "property", name=f"{TOOL_NAME}.version", value=oneline(tool_version)
    )
    for report in reports:
        suite.append(_testcase(report, catalogue))
    ET.indent(root, space="  ")
    return _XML_DECLARATION + ET.tostring(root, encoding="unicode") + "\n"
