from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from formats_fixtures import CATALOGUE, TOOL_VERSION
from validator.findings import ERROR, WARNING, Finding, Report
from validator.formats import render
from validator.formats.text import oneline

EXPECTED = """\
payments/bad.json:/instructedAmount/amount: error FORMAT_ERROR/400 [amount-format] amount '12,5' is not a decimal string
payments/bad.json:/debtorAccount/iban: error FORMAT_ERROR/400 [iban-checksum] IBAN NO9386011117948 fails the mod-97 check
payments/warn.json:/remittanceInformationUnstructured: warning - [remittance-length] remittance is 141 characters; at most 140 are kept
broken.json:3:17: error FORMAT_ERROR/400 [json-syntax] Expecting ',' delimiter
links.json:/_links/a~1b/href: error FORMAT_ERROR/400 [links-href-shape] href is not a relative URI
links.json:(root): warning - [links-href-shape] document has no _links.self
dir with space/æøå,:%.json:/creditorName: error FORMAT_ERROR/400 [creditor-name] creditorName "Bl\\x07å\\nbær <&> \\x1b[31mAS\\u202e 100%: a,b" has a control character\\r
dir with space/æøå,:%.json:/remittanceInformationUnstructured: warning - [remittance-length] for <Ærlig & Redelig> 50% off,: now
batch.jsonl:17:/creditorAccount/iban: error FORMAT_ERROR/400 [iban-checksum] IBAN NO00 fails the mod-97 check
batch.jsonl:17:5: error FORMAT_ERROR/400 [json-syntax] Expecting value
-: note kind is ambiguous (candidates: payment-initiation, periodic-payment); checked as payment-initiation
-:/remittanceInformationUnstructured: warning - [remittance-length] too long
response.json:/transactionStatus: error - [response-status-enum] 'DONE' is not an ISO 20022 status
9 inputs: 3 valid, 6 invalid \u2014 8 errors, 4 warnings
"""


def _text(reports, **kw) -> str:
    return render(reports, "text", catalogue=CATALOGUE, tool_version=TOOL_VERSION, **kw)


def test_text_is_exactly_one_line_per_finding_then_the_summary(reports):
    assert _text(reports) == EXPECTED


def test_quiet_keeps_error_lines_and_summary_only(reports):
    out = _text(reports, quiet=True)
    expected = [
        line for line in EXPECTED.splitlines()
        if " error " in line.split(" [", 1)[0] or line.startswith("9 inputs")
    ]
    assert out.split("\n")[:-1] == expected
    assert len(expected) == 8 + 1  # 8 error findings + summary
    assert "warning" not in out.rsplit("\n", 2)[0]
    assert "candidates" not in out


def test_colour_wraps_only_the_severity_words(reports):
    out = _text(reports, color=True)
    assert out.count("\x1b[1;31merror\x1b[0m") == 8
    assert out.count("\x1b[33mwarning\x1b[0m") == 4
    assert out.count("\x1b[36mnote\x1b[0m") == 1
    # Stripping the colour codes gives the plain output back.
    for code in ("\x1b[1;31m", "\x1b[33m", "\x1b[36m", "\x1b[0m"):
        out = out.replace(code, "")
    assert out == EXPECTED


def test_no_escape_sequence_from_a_payload_reaches_the_terminal(reports):
    out = _text(reports)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out


def test_summary_of_nothing_and_singulars():
    assert _text([]) == "0 inputs: 0 valid, 0 invalid \u2014 0 errors, 0 warnings\n"
    one = Report("a.json", "k", [Finding("r", ERROR, "/a", "m"), Finding("r", WARNING, "/b", "w")])
    assert _text([one]).endswith("\n1 input: 0 valid, 1 invalid \u2014 1 error, 1 warning\n")


def test_code_label_halves_and_missing_column():
    report = Report("x.json", "k", [
        Finding("r", ERROR, "/a", "m", code="FORMAT_ERROR"),
        Finding("r", ERROR, "/a", "m", status=415),
        Finding("r", ERROR, "/", "key is the empty string", line=2),
    ])
    lines = _text([report]).split("\n")
    assert lines[0] == "x.json:/a: error FORMAT_ERROR [r] m"
    assert lines[1] == "x.json:/a: error -/415 [r] m"
    assert lines[2] == "x.json:2:/: error - [r] key is the empty string"


def test_stdin_jsonl_line_with_a_position_maps_to_the_file_line():
    report = Report("-:4", "k", [Finding("r", ERROR, "", "m", line=1, column=2)])
    assert _text([report]).split("\n")[0] == "-:4:2: error - [r] m"


def test_oneline_escapes_line_breakers_and_surrogates():
    assert oneline("a\u2028b\u0085c\ud800d\x7f") == "a\\u2028b\\x85c\\ud800d\\x7f"
    assert oneline("plain æøå <&>") == "plain æøå <&>"


@settings(max_examples=200, deadline=None)
@given(message=st.text(), source=st.text(min_size=1), pointer=st.text())
def test_any_text_stays_one_line_per_finding(message, source, pointer):
    report = Report(source, "k", [Finding("r", ERROR, pointer, message), Finding("r", WARNING, "", message)])
    out = _text([report])
    assert out.endswith("\n")
    lines = out[:-1].split("\n")
    assert len(lines) == 3
    assert all(line == oneline(line) for line in lines)
    out.encode("utf-8")  # lone surrogates were escaped
