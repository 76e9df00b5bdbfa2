from __future__ import annotations

import pytest

from formats_fixtures import CATALOGUE, TOOL_VERSION, Rule, make_reports
from validator.findings import ERROR, WARNING, Finding, Report
from validator.formats import (
    FORMATS,
    PART_FORMATS,
    FallbackRule,
    Origin,
    RuleInfo,
    code_label,
    display_pointer,
    merge_summaries,
    render,
    render_part,
    render_parts,
    rule_info,
    split_source,
    summarize,
    summary_line,
)


def test_formats():
    assert FORMATS == ("text", "json", "junit", "sarif", "github")


def test_unknown_format_is_refused(reports):
    with pytest.raises(ValueError, match="unknown format 'xml'; expected one of text, json, junit, sarif, github"):
        render(reports, "xml", catalogue=CATALOGUE, tool_version=TOOL_VERSION)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic_ends_in_one_newline_and_takes_any_sequence(fmt):
    first = render(make_reports(), fmt, catalogue=CATALOGUE, tool_version=TOOL_VERSION)
    again = render(iter(make_reports()), fmt, catalogue=CATALOGUE, tool_version=TOOL_VERSION)
    assert first == again
    assert first.endswith("\n") and not first.endswith("\n\n")
    first.encode("utf-8")
    empty = render((), fmt, catalogue={}, tool_version=TOOL_VERSION)
    assert empty.endswith("\n")


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_catalogue_still_renders_every_finding(fmt, reports):
    out = render(reports, fmt, catalogue={}, tool_version=TOOL_VERSION)
    for report in reports:
        for finding in report.findings:
            assert finding.rule in out


@pytest.mark.parametrize("fmt", ("json", "junit", "sarif", "github"))
def test_quiet_and_color_only_change_text(fmt, reports):
    plain = render(reports, fmt, catalogue=CATALOGUE, tool_version=TOOL_VERSION)
    assert render(reports, fmt, catalogue=CATALOGUE, tool_version=TOOL_VERSION, quiet=True, color=True) == plain


def test_summarize(reports):
    assert summarize(reports) == {
        "inputs": 9, "valid": 3, "invalid": 6, "errors": 8, "warnings": 4,
        "by_rule": {
            "amount-format": 1, "creditor-name": 1, "iban-checksum": 2, "json-syntax": 2,
            "links-href-shape": 2, "remittance-length": 3, "response-status-enum": 1,
        },
    }
    assert summarize([]) == {"inputs": 0, "valid": 0, "invalid": 0, "errors": 0, "warnings": 0, "by_rule": {}}
    # A report with warnings only is valid.
    only_warning = Report("w.json", "k", [Finding("r", WARNING, "", "m")])
    assert summarize([only_warning])["valid"] == 1
    assert summary_line(summarize([only_warning])) == "1 input: 1 valid, 0 invalid \u2014 0 errors, 1 warning"


def test_rule_info_and_fallback():
    known = Finding("amount-format", ERROR, "/a", "m")
    assert rule_info(CATALOGUE, known) is CATALOGUE["amount-format"]
    unknown = Finding("brand-new", WARNING, "/a", "m", "FORMAT_ERROR", 400, "§1")
    info = rule_info(CATALOGUE, unknown)
    assert info == FallbackRule("brand-new", "brand-new", "Rule brand-new (not in the rule catalogue)",
                                "§1", "FORMAT_ERROR", 400, WARNING)
    assert isinstance(info, RuleInfo) and isinstance(CATALOGUE["amount-format"], RuleInfo)
    assert not isinstance(object(), RuleInfo)
    assert isinstance(Rule("i", "n", "s", None, None, None, ERROR), RuleInfo)


def test_code_label_and_pointer_display():
    assert code_label("FORMAT_ERROR", 400) == "FORMAT_ERROR/400"
    assert code_label(None, None) == "-"
    assert code_label("FORMAT_ERROR", None) == "FORMAT_ERROR"
    assert code_label(None, 405) == "-/405"
    assert display_pointer("") == "(root)"
    assert display_pointer("/") == "/"  # the member named "", not the root
    assert display_pointer("/a~1b") == "/a~1b"


@pytest.mark.parametrize(
    ("source", "origin"),
    [
        ("payment.json", Origin("payment.json")),
        ("batch.jsonl:17", Origin("batch.jsonl", 17)),
        ("-", Origin(None)),
        ("<stdin>", Origin(None)),
        ("-:3", Origin(None, 3)),
        ("odd:0", Origin("odd:0")),
        ("a:b", Origin("a:b")),
        ("x.jsonl:07", Origin("x.jsonl:07")),
        (":5", Origin(":5")),
    ],
)
def test_split_source(source, origin):
    assert split_source(source) == origin


def test_origin_file_line():
    assert Origin("f.jsonl", 17).file_line(None) == 17
    assert Origin("f.jsonl", 17).file_line(1) == 17
    assert Origin("f.jsonl", 17).file_line(3) == 19
    assert Origin("f.json").file_line(4) == 4
    assert Origin("f.json").file_line(None) is None
    assert Origin(None).stdin and not Origin("f").stdin


@pytest.mark.parametrize("fmt", PART_FORMATS)
@pytest.mark.parametrize("quiet,color", [(False, False), (True, False), (False, True)])
def test_parts_joined_are_the_whole_document_wherever_the_inputs_are_cut(fmt, quiet, color):
    # --jobs workers render their own inputs' part; the main process joins them
    reports = make_reports() + [Report("odd.json", None, [Finding("json-syntax", ERROR, "/a\u2028", "\ud800 \x9b", None, None)])]
    whole = render(reports, fmt, catalogue=CATALOGUE, tool_version=TOOL_VERSION, quiet=quiet, color=color)
    n = len(reports)
    for cuts in ([0, n], [0, 0, n], [0, 1, n], [0, 1, 2, n, n], list(range(n + 1))):
        parts = [render_part(reports[a:b], fmt, quiet=quiet, color=color) for a, b in zip(cuts, cuts[1:])]
        assert render_parts(parts, fmt, tool_version=TOOL_VERSION) == whole, cuts
    assert merge_summaries([summarize(reports[:1]), summarize(reports[1:])]) == summarize(reports)
