from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from formats_fixtures import CATALOGUE, NASTY, TOOL_VERSION
from validator.findings import ERROR, WARNING, Finding, Report
from validator.formats import render
from validator.formats.junit import xml_text
from validator.formats.text import oneline


def _junit(reports) -> str:
    return render(reports, "junit", catalogue=CATALOGUE, tool_version=TOOL_VERSION)


def _parse(out: str) -> ET.Element:
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(out.encode("utf-8"))


def _counts(element: ET.Element) -> dict[str, str]:
    return {k: element.get(k) for k in ("tests", "failures", "errors", "skipped")}


def test_one_suite_one_case_per_input_and_counts_match(reports):
    root = _parse(_junit(reports))
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1 and suites[0].get("name") == "obvalidate"
    suite = suites[0]
    cases = suite.findall("testcase")
    assert len(cases) == len(reports) == 9
    expected = {"tests": "9", "failures": "6", "errors": "0", "skipped": "0"}
    assert _counts(root) == _counts(suite) == expected
    # The counts agree with the elements actually there.
    assert sum(1 for c in cases if c.find("failure") is not None) == 6
    assert not suite.findall(".//error") and not suite.findall(".//skipped")
    assert suite.find("properties/property[@name='obvalidate.version']").get("value") == TOOL_VERSION


def test_testcase_names_and_failures(reports):
    cases = _parse(_junit(reports)).findall("testsuite/testcase")
    for report, case in zip(reports, cases):
        assert case.get("name") == report.source
        assert case.get("classname") == f"obvalidate.{report.kind or 'unknown'}"
        failures = case.findall("failure")
        assert len(failures) == (0 if report.valid else 1)
        if failures:
            text = failures[0].text
            assert len(text.split("\n")) == len(report.errors)
            for finding in report.errors:
                assert f"[{finding.rule}]" in text
    bad = cases[1].find("failure")
    assert bad.get("type") == "amount-format, iban-checksum"
    assert bad.get("message") == (
        "2 errors; first: [amount-format] /instructedAmount/amount: amount '12,5' is not a decimal string"
    )
    assert bad.text.split("\n")[0] == (
        "error FORMAT_ERROR/400 [amount-format] /instructedAmount/amount: "
        "amount '12,5' is not a decimal string (see §4.3.2)"
    )
    # One error, one rule: type is the rule id; line and column are shown.
    syntax = cases[3].find("failure")
    assert syntax.get("type") == "json-syntax"
    assert syntax.get("message") == "[json-syntax] (root): Expecting ',' delimiter"
    assert "(root) (line 3, column 17): Expecting ',' delimiter" in syntax.text
    # A rule missing from the catalogue still renders; ~1 in a pointer is kept.
    assert cases[4].find("failure").get("type") == "links-href-shape"
    assert "/_links/a~1b/href" in cases[4].find("failure").text


def test_warnings_and_candidates_go_to_system_out(reports):
    cases = _parse(_junit(reports)).findall("testsuite/testcase")
    warn = cases[2]
    assert warn.find("failure") is None
    assert warn.find("system-out").text == (
        "warning - [remittance-length] /remittanceInformationUnstructured: "
        "remittance is 141 characters; at most 140 are kept (see §4.5)"
    )
    stdin = cases[7]
    out = stdin.find("system-out").text.split("\n")
    assert out[0] == (
        "note: kind is ambiguous (candidates: payment-initiation, periodic-payment); "
        "checked as payment-initiation"
    )
    assert out[1].startswith("warning - [remittance-length]")
    assert cases[0].find("system-out") is None  # valid, nothing to say


def test_specials_are_escaped_and_illegal_characters_replaced(reports):
    out = _junit(reports)
    assert "\x07" not in out and "\x1b" not in out
    nasty = _parse(out).findall("testsuite/testcase")[5]
    assert nasty.get("name") == "dir with space/æøå,:%.json"
    failure = nasty.find("failure")
    expected = oneline(NASTY)
    assert expected == (
        'creditorName "Bl\\x07å\\nbær <&> \\x1b[31mAS\\u202e 100%: a,b" has a control character\\r'
    )
    assert failure.get("message") == f"[creditor-name] /creditorName: {expected}"
    assert f"/creditorName: {expected} (see §4.4)" in failure.text
    assert "for <Ærlig & Redelig> 50% off,: now" in nasty.find("system-out").text


def test_empty_report_list():
    root = _parse(_junit([]))
    assert _counts(root) == _counts(root.find("testsuite")) == {
        "tests": "0", "failures": "0", "errors": "0", "skipped": "0",
    }
    assert root.findall("testsuite/testcase") == []


def test_xml_text_keeps_legal_and_replaces_illegal():
    assert xml_text("tab\tnl\ncr\r æ \U0001f600") == "tab\tnl\ncr\r æ \U0001f600"
    assert xml_text("\x00\x0b\ud800\ufffe") == "\\x00\\x0b\\ud800\\ufffe"


@settings(max_examples=200, deadline=None)
@given(message=st.text(), source=st.text(min_size=1), kind=st.none() | st.text())
def test_any_text_gives_parseable_xml(message, source, kind):
    report = Report(source, kind, [Finding("r", ERROR, "/a", message), Finding("r", WARNING, "/b", message)])
    root = _parse(_junit([report]))
    case = root.find("testsuite/testcase")
    assert case.get("name") == oneline(source)
    assert case.get("classname") == oneline(f"obvalidate.{kind or 'unknown'}")
    failure = case.find("failure")
    assert failure.get("message") == oneline(f"[r] /a: {message}")
    assert failure.text == oneline(f"error - [r] /a: {message}")
    assert case.find("system-out").text == oneline(f"warning - [r] /b: {message}")
