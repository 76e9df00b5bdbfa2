"""A target's text is data, never markup or terminal control (issue 19): whatever a misbehaving target answers --
C0 controls, a terminal title (ESC ] ... BEL), a carriage return and "PASS", a screen clear, C1's CSI, markup, a
GitHub workflow command on a line of its own -- every output of `conform`, of `edge-cases` and of the validator
shows it as the characters it is: the text output has no raw control character and no line of the target's
making, JUnit XML is well-formed, HTML and Markdown carry no markup of the target's, the JSON and SARIF parse with
the values kept, the GitHub annotations are exactly one command per finding.

The target is tests/misbehaving_target.py's, answering with :func:`nasty_answer` (or its refusal to everything);
the runs are short (--max-examples 1, a few checks, one request kind)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from conformance.edges import report as edges_report
from conformance.edges.cli import edge_cases
from conformance.edges.run import Case, Result
from conformance.gate.cli import conform
from misbehaving_target import Answer, MisbehavingTarget, fixed, send
from validator.cli import main as validator_main
from validator.formats.escape import html_text, json_text, markdown_text, printable, printable_lines, xml_text

# What a misbehaving target puts into its answers: every C0 control, a terminal title, "\r" + "PASS" (rewrites the
# line a CI log shows), a screen clear, C1's CSI, DEL, a right-to-left override, a non-character, markup, Markdown
# and a GitHub workflow command on a line of its own.
NASTY = ("".join(chr(c) for c in range(0x20)) + "\x1b]0;owned\x07\rPASS\x1b[2J\x9b31m\x7f\u202e\ufffe"
         "<img src=x onerror=alert(1)>\n::error::forged`|*_[link](https://example.invalid)")
TERMINAL_TITLE = "\\x1b]0;owned\\x07"   # how the outputs show it


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal or a reader would act on: controls (but our own line breaks), format
    characters (bidirectional overrides), separators, lone surrogates."""
    return [ch for ch in text if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


class Tags(HTMLParser):
    """The start tags of an HTML text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.data: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)

    def handle_data(self, data) -> None:
        self.data.append(data)


# ---------------------------------------------------------------------------------------------- the one escaping
def test_printable_shows_each_control_as_an_escape():
    for code in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, 0x202E, 0x200B, 0xFEFF, 0xD800, 0xFFFE, 0xE000):
        shown = printable(chr(code))
        assert shown.startswith("\\") and shown.isascii() and shown.isprintable(), hex(code)
    assert printable("\x1b]0;title\x07\rPASS\x1b[2J\x9b") == "\\x1b]0;title\\x07\\rPASS\\x1b[2J\\x9b"
    assert printable("plain æøå <&> ✓ 😀 \u00e9") == "plain æøå <&> ✓ 😀 \u00e9"
    assert printable("a\nb") == "a\\nb" and printable_lines("line one\nline\rtwo") == "line one\nline\\rtwo"


@settings(max_examples=300)
@given(st.text())
def test_printable_is_one_line_without_raw_controls_and_escaping_twice_is_escaping_once(text):
    shown = printable(text)
    assert not raw_controls(shown) and "\n" not in shown and "\r" not in shown
    assert printable(shown) == shown
    shown.encode("utf-8")   # lone surrogates escaped


@settings(max_examples=300)
@given(st.text())
def test_any_text_is_well_formed_xml(text):
    node = ET.Element("failure", message=printable(text))
    node.text = xml_text(text)
    parsed = ET.fromstring(ET.tostring(node, encoding="unicode"))
    assert parsed.get("message") == printable(text)


@settings(max_examples=300)
@given(st.text())
def test_html_text_is_never_markup(text):
    shown = html_text(text)
    assert not set("<>\"'") & set(shown) and not raw_controls(shown)
    assert "".join(Tags(f"<td>{shown}</td>").data) == printable(text)


_MARKDOWN = MarkdownIt("commonmark").enable("table").enable("strikethrough")   # GitHub's tables, raw HTML allowed


@settings(max_examples=300)
@given(st.text())
def test_markdown_text_renders_as_the_characters_it_is(text):
    """In a table cell, as is and inside <code> (how report.md shows inputs)."""
    for cell, tags in ((markdown_text(text), set()), (f"<code>{markdown_text(text)}</code>", {"code"})):
        rendered = _MARKDOWN.render(f"| value |\n|---|\n| {cell} |\n")
        parsed = Tags(rendered)
        assert set(parsed.tags) <= {"table", "thead", "tbody", "tr", "th", "td"} | tags, rendered
        shown = "".join(parsed.data).split("value", 1)[1].strip()
        assert shown == printable(text).strip(), rendered


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=300)
@given(_JSON)
def test_json_text_keeps_the_data_and_writes_no_raw_control(value):
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") and ch != "\n"]
    text.encode("utf-8")


# ---------------------------------------------------------------------------------------------- conform
def nasty_answer(method: str, path: str) -> Answer:
    """The target's text everywhere an answer can carry it: a creation 201 whose status, id and links carry it, a
    refusal whose tppMessages code and text carry it, a header with terminal escapes, and under /v1/sandbox/ a 404
    whose body is the raw bytes (and a byte that is not UTF-8)."""
    headers = [("Content-Type", "application/json"), ("X-Nasty", "\x1b]0;owned\x07\x1b[2J")]
    if path.startswith("/v1/sandbox/"):
        return Answer(404, headers, NASTY.encode() + b"\xff", "Not Found")
    if method == "POST":
        return Answer(201, headers, json.dumps({"transactionStatus": NASTY, "paymentId": NASTY, "_links": {
            "self": {"href": "/v1/payments/sepa-credit-transfers/" + NASTY}, "scaStatus": {"href": NASTY}}}).encode(),
            "Created")
    return Answer(400, headers, json.dumps({"tppMessages": [{"category": "ERROR", "code": NASTY, "text": NASTY}]})
                  .encode(), "Bad Request")


async def nasty(request, writer) -> None:
    await send(writer, nasty_answer(request.method, request.path).to_bytes())


CHECKS = "security:unsigned,stateful:lifecycle,stateful:read-back,stateful:unknown-ids"


def _assert_no_line_of_the_targets(text: str, what: str) -> None:
    assert not raw_controls(text), f"{what}: {sorted(set(raw_controls(text)))}"
    forged = [line for line in text.splitlines() if line.startswith(("PASS", "::error::forged"))]
    assert not forged, f"{what}: {forged[:3]}"


def _assert_files_are_data(directory: Path) -> dict[str, str]:
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.iterdir())}
    for name, text in files.items():
        _assert_no_line_of_the_targets(text, name)
    ET.fromstring(files["conform.junit.xml"].split("\n", 1)[1])   # the strict parser: well-formed
    for name in ("conform.json", "conform.sarif", "coverage.json"):
        json.loads(files[name])
    tags = Tags(files["conform.html"]).tags
    assert "img" not in tags and tags.count("script") == 1   # the page's own filter script, no tag of the target's
    return files


@pytest.fixture(scope="module")
def conform_run(tmp_path_factory):
    """One short run against the nasty target: the text output, the reports and the GitHub annotations."""
    out = tmp_path_factory.mktemp("conform")
    runner = CliRunner()
    with MisbehavingTarget(nasty) as target:
        args = ["--target", target.url, "--check", CHECKS, "--max-examples", "1"]
        text = runner.invoke(conform, [*args, "--report-dir", str(out)])
        github = runner.invoke(conform, [*args, "-q", "--format", "github"])
    assert text.exit_code == github.exit_code == 1, text.output
    return text, github, out


def test_the_text_output_shows_the_targets_controls_and_starts_no_line_for_it(conform_run):
    text, _github, _out = conform_run
    _assert_no_line_of_the_targets(text.stdout, "standard output")
    _assert_no_line_of_the_targets(text.stderr, "standard error (progress)")
    assert TERMINAL_TITLE in text.stdout and "\\rPASS" in text.stdout and "\\n::error::forged" in text.stdout


def test_every_report_file_is_well_formed_and_escaped(conform_run):
    _text, _github, out = conform_run
    files = _assert_files_are_data(out)
    suites = ET.fromstring(files["conform.junit.xml"].split("\n", 1)[1])
    messages = [f.get("message") for f in suites.iter("failure")]
    assert messages and any(TERMINAL_TITLE in m for m in messages)
    assert "&lt;img src=x onerror=alert(1)&gt;" in files["conform.html"]
    data = json.loads(files["conform.json"])
    # the JSON keeps what the target said (escaped by JSON itself): a finding's actual answer names its code as sent
    assert any(NASTY in f["actual"] for f in data["findings"])


def test_the_github_annotations_are_one_command_per_finding(conform_run):
    _text, github, out = conform_run
    lines = github.stdout.splitlines()
    _assert_no_line_of_the_targets(github.stdout, "annotations")
    findings = json.loads((out / "conform.json").read_text(encoding="utf-8"))["findings"]
    assert len(lines) == len(findings) + 1
    assert all(re.match(r"::(error|warning|notice) title=", line) for line in lines)
    assert any(TERMINAL_TITLE in line for line in lines)


def test_the_pytest_plugin_reports_the_targets_text_as_data(tmp_path):
    with MisbehavingTarget(nasty) as target:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "conformance.gate.pytest_plugin", "--ob-target", target.url,
             "--ob-check", "security:unsigned,stateful:lifecycle", "-q", "-p", "no:cacheprovider", "--rootdir",
             str(tmp_path), "--junitxml", str(tmp_path / "junit.xml"), str(tmp_path)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "failed" in done.stdout, done.stdout + done.stderr
    _assert_no_line_of_the_targets(done.stdout, "pytest's output")
    assert TERMINAL_TITLE in done.stdout
    ET.parse(tmp_path / "junit.xml")


# ---------------------------------------------------------------------------------------------- edge-cases
def _hostile_edges_result() -> Result:
    """An edge-case run whose target answered with its text everywhere a case shows it: the answer, the shrunk
    example's message, the value, the curl."""
    case = Case("amount-format", "instructedAmount.amount", "§4.2", "sepa-credit-transfer", "createSepaCreditTransfer",
                f"shrunk by Hypothesis: the target answered {NASTY}", "/instructedAmount/amount", NASTY, {"a": NASTY},
                "refused", [{"rule": "amount-format", "severity": "error", "status": 400, "code": "FORMAT_ERROR",
                             "pointer": "/instructedAmount/amount", "message": NASTY}],
                "400 FORMAT_ERROR", actual=f"400 {NASTY}", agree=False, note=NASTY,
                curl=f"curl -X POST 'http://127.0.0.1:1/v1/payments/{NASTY}```'")
    return Result("http://127.0.0.1:1", "2026-11-25", 0, 1, ("sepa-credit-transfer",), [case], 1.0, (), 1)


def test_the_edge_case_reports_show_the_targets_text_as_data(tmp_path):
    result = _hostile_edges_result()
    edges_report.write(result, tmp_path)
    files = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    for name, text in {**files, "text output": edges_report.text(result)}.items():
        _assert_no_line_of_the_targets(text, name)
    assert json.loads(files["report.json"])["cases"][0]["actual"] == f"400 {NASTY}"   # the data, as answered
    page = Tags(files["report.html"])
    assert "img" not in page.tags and "&lt;img src=x onerror=alert(1)&gt;" in files["report.html"]
    # report.md as GitHub renders it (raw HTML allowed): the target's text makes no tag, no link, no emphasis, and
    # the reproducer's backticks do not close its code block
    rendered = _MARKDOWN.render(files["report.md"])
    tags = Tags(rendered)
    assert not {"img", "a", "em", "s", "script"} & set(tags.tags), rendered
    assert tags.tags.count("pre") == 1 and TERMINAL_TITLE in "".join(tags.data)
    assert "<img src=x onerror=alert(1)>" in "".join(tags.data)   # shown as the characters it is


def test_edge_cases_against_a_nasty_target_write_reports_of_data(tmp_path):
    """Every request refused with the target's text as its code: each edge's answer, and why the search was not
    exercised (its valid control refused), carry it."""
    refusal = nasty_answer("GET", "/")
    with MisbehavingTarget(fixed(400, refusal.body, refusal.headers, "Bad Request")) as target:
        done = CliRunner().invoke(edge_cases, ["--target", target.url, "--kind", "sepa-credit-transfer",
                                               "--max-examples", "1", "--out", str(tmp_path)])
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit), done.output   # disagreements
    _assert_no_line_of_the_targets(done.output, "edge-cases output")
    assert TERMINAL_TITLE in done.output   # the search's reason, the target's refusal quoted
    files = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    for name, text in files.items():
        _assert_no_line_of_the_targets(text, name)
    report = json.loads(files["report.json"])
    assert any(NASTY in (c["actual"] or "") for c in report["cases"])   # the data, as answered
    assert "img" not in Tags(files["report.html"]).tags
    rendered = Tags(_MARKDOWN.render(files["report.md"]))
    assert not {"img", "a", "s", "script"} & set(rendered.tags)
    # the target's Markdown (emphasis, a link, a code span) is shown as the characters it is
    assert TERMINAL_TITLE in "".join(rendered.data) and "`|*_[link](https://example.invalid)" in "".join(rendered.data)


# ---------------------------------------------------------------------------------------------- the validator
@pytest.mark.parametrize("fmt", ["text", "github", "junit", "sarif", "json"])
def test_the_validators_outputs_show_a_payloads_text_and_its_files_name_as_data(fmt, tmp_path):
    """The validator quotes a payload's values (and names its file) in every format: shown, not acted on."""
    payload = tmp_path / "payment\x1b]0;owned\x07\rPASS\x9b.json"
    payload.write_text(json.dumps({"creditorName": NASTY, "instructedAmount": {"currency": "NOK", "amount": NASTY},
                                   NASTY: 1}), encoding="utf-8")
    done = CliRunner().invoke(validator_main, ["validate", "--kind", "sepa-credit-transfer", "--format", fmt,
                                               str(payload)])
    assert done.exit_code == 1, done.output
    _assert_no_line_of_the_targets(done.stdout, fmt)
    if fmt == "json":
        assert json.loads(done.stdout)["results"][0]["source"] == str(payload)   # the data, as it is
    elif fmt == "sarif":
        (run,) = json.loads(done.stdout)["runs"]
        assert all(not raw_controls(r["message"]["text"]) for r in run["results"])
        assert run["results"][0]["properties"]["source"] == str(payload)
    else:
        assert TERMINAL_TITLE in done.stdout
    if fmt == "junit":
        ET.fromstring(done.stdout.split("\n", 1)[1])
    if fmt == "github":
        assert all(re.match(r"::(error|warning|notice) file=", line) for line in done.stdout.splitlines()[:-1])
