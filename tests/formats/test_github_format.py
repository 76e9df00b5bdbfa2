from __future__ import annotations

import re
from pathlib import PurePath

from hypothesis import given, settings
from hypothesis import strategies as st

from formats_fixtures import CATALOGUE, NASTY, TOOL_VERSION
from validator.findings import ERROR, WARNING, Finding, Report
from validator.formats import render
from validator.formats.escape import printable
from validator.formats.github import escape_data, escape_property

_COMMAND = re.compile(r"^::(?P<name>error|warning|notice)(?: (?P<props>[^:]*))?::(?P<data>.*)$")
_ESCAPE = re.compile(r"%(25|0D|0A|3A|2C)")
_UNESCAPE = {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}


def unescape(value: str) -> str:
    """The runner's reading of an escaped value (one pass, so ``%2525`` stays ``%25``)."""
    return _ESCAPE.sub(lambda m: _UNESCAPE[m.group(1)], value)


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = _COMMAND.match(line)
    assert match, line
    props: dict[str, str] = {}
    if match["props"]:
        for item in match["props"].split(","):
            key, _, value = item.partition("=")
            props[key] = unescape(value)
    return match["name"], props, unescape(match["data"])


def _github(reports) -> str:
    return render(reports, "github", catalogue=CATALOGUE, tool_version=TOOL_VERSION)


def _lines(out: str) -> list[str]:
    assert out.endswith("\n") and not out.endswith("\n\n")
    return out[:-1].split("\n")


def test_annotations_round_trip(reports):
    lines = _lines(_github(reports))
    # One per finding, one note for the ambiguous kind, one summary.
    assert len(lines) == sum(len(r.findings) for r in reports) + 1 + 1
    parsed = [parse(line) for line in lines]
    assert parsed[0] == (
        "error",
        {"file": "payments/bad.json", "title": "amount-format (FORMAT_ERROR/400)"},
        "amount '12,5' is not a decimal string at /instructedAmount/amount",
    )
    assert parsed[2] == (
        "warning",
        {"file": "payments/warn.json", "title": "remittance-length"},
        "remittance is 141 characters; at most 140 are kept at /remittanceInformationUnstructured",
    )
    assert parsed[3] == (
        "error",
        {"file": "broken.json", "line": "3", "col": "17", "title": "json-syntax (FORMAT_ERROR/400)"},
        "Expecting ',' delimiter at (root)",
    )
    assert parsed[4][2] == "href is not a relative URI at /_links/a~1b/href"
    assert parsed[4][1]["title"] == "links-href-shape (FORMAT_ERROR/400)"
    assert parsed[6] == (
        "error",
        {"file": "dir with space/æøå,:%.json", "title": "creditor-name (FORMAT_ERROR/400)"},
        f"{printable(NASTY)} at /creditorName",   # the payload's controls shown, not acted on
    )
    assert parsed[7][2] == "for <Ærlig & Redelig> 50% off,: now at /remittanceInformationUnstructured"
    assert parsed[8] == (
        "error",
        {"file": "batch.jsonl", "line": "17", "title": "iban-checksum (FORMAT_ERROR/400)"},
        "IBAN NO00 fails the mod-97 check at /creditorAccount/iban",
    )
    assert parsed[9][1] == {"file": "batch.jsonl", "line": "17", "col": "5", "title": "json-syntax (FORMAT_ERROR/400)"}
    assert parsed[10] == (
        "notice",
        {"title": "ambiguous kind"},
        "kind is ambiguous (candidates: payment-initiation, periodic-payment); checked as payment-initiation",
    )
    assert parsed[11] == ("warning", {"title": "remittance-length"}, "too long at /remittanceInformationUnstructured")
    assert parsed[12][0] == "error" and parsed[12][1] == {"file": "response.json", "title": "response-status-enum"}
    assert lines[-1] == "::notice::9 inputs: 3 valid, 6 invalid \u2014 8 errors, 4 warnings"


def test_escaping_is_exactly_githubs(reports):
    lines = _lines(_github(reports))
    nasty = lines[6]
    assert nasty.startswith("::error file=dir with space/æøå%2C%3A%25.json,title=creditor-name (FORMAT_ERROR/400)::")
    assert nasty.endswith(
        '::creditorName "Bl\\x07å\\nbær <&> \\x1b[31mAS\\u202e 100%25: a,b" has a control character\\r at /creditorName'
    )
    assert "\r" not in "".join(lines) and "\x1b" not in "".join(lines) and "\x07" not in "".join(lines)
    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    assert unescape(escape_property("%0A%25,:")) == "%0A%25,:"


def test_empty_report_list():
    assert _github([]) == "::notice::0 inputs: 0 valid, 0 invalid \u2014 0 errors, 0 warnings\n"


def test_lone_surrogate_is_escaped_so_the_output_encodes():
    out = _github([Report("s.json", "k", [Finding("r", ERROR, "/a", "x\ud800y")])])
    out.encode("utf-8")
    assert parse(_lines(out)[0])[2] == "x\\ud800y at /a"


@settings(max_examples=300, deadline=None)
@given(
    message=st.text(),
    # Not stdin, and no ":17" suffix (that is a JSONL line, tested above).
    path=st.text().filter(lambda p: p and p not in ("-", "<stdin>") and not re.search(r":[1-9]\d*$", p)),
    rule=st.text(),
)
def test_any_text_reads_back_as_its_printable_line(message, path, rule):
    report = Report(path, "k", [Finding(rule, WARNING, "/a", message, "FORMAT_ERROR", 400, line=2, column=3)])
    lines = _lines(_github([report]))
    assert len(lines) == 2
    name, props, data = parse(lines[0])
    assert name == "warning"
    assert data == f"{printable(message)} at /a"
    assert props["title"] == printable(f"{rule} (FORMAT_ERROR/400)")
    assert props["line"] == "2" and props["col"] == "3"
    assert list(props) == ["file", "line", "col", "title"]
    assert props["file"] == printable(PurePath(path).as_posix())
