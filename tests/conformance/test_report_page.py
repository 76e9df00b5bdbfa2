"""The HTML reports a person reads, in Debian's headless chromium (skipped locally without it, failing in CI, where
.ci/run installs it): the gate's conform.html of a run against a sandbox with two faults -- the verdict and counts at
the top, the operations × suites matrix coloured by outcome, the findings grouped by operation and rule with the
answer's body pretty-printed, the curl one click away, the filter and a matrix cell narrowing the findings -- and the
proxy's proxy.html; each self-contained, screenshot taken and not blank. Issue 29, point 7."""
from __future__ import annotations

import io
import json
import re

import pytest
from click.testing import CliRunner
from PIL import Image

from conformance.gate import html
from conformance.gate.cli import conform
from conformance.sandbox import faults as F
from sandbox_process.headless_chromium import Chromium, chromium_executable

CHECKS = "security:tampered-body,stateful:lifecycle,semantic:valid-control"
FAULTS = ("--fault", F.DIGEST_NOT_CHECKED, "--fault", F.STATUS_MISSING)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    result = CliRunner().invoke(conform, ["--check", CHECKS, *FAULTS, "--max-examples", "1", "--report-dir", str(out)])
    assert result.exit_code == 1, result.output[-3000:]
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Chromium(chromium_executable(), tmp_path_factory.mktemp("chromium") / "profile") as running:
        yield running


def _not_blank(png: bytes) -> int:
    """How many distinct colours the screenshot has (a blank or unstyled page has a handful)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 24))


def _self_contained(page: str) -> None:
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|url\(|@import", page), "the page loads nothing"
    assert page.count("<script") <= 1


def test_conform_html_reads_at_a_glance(reports, browser, tmp_path):
    path = reports / "conform.html"
    page_text = path.read_text(encoding="utf-8")
    _self_contained(page_text)
    data = json.loads((reports / "conform.json").read_text(encoding="utf-8"))
    page = browser.new_page(width=1400, height=1100)
    page.navigate(path.resolve().as_uri())
    assert _not_blank(page.screenshot(tmp_path / "conform-top.png")) > 200    # verdict, counts, matrix
    assert page.evaluate("document.querySelector('.verdict').textContent") == "FAIL"
    cards = page.evaluate("[...document.querySelectorAll('.card')].map(c => c.textContent)")
    assert f"{len(data['findings'])}failures" in cards and "0differences" in cards, cards
    failed_cells = page.evaluate("[...document.querySelectorAll('td.c-failed')].map(c => c.dataset.op + ' ' + "
                                 "c.dataset.suite)")
    assert "createSepaCreditTransfer security" in failed_cells and "getPaymentStatus stateful" in failed_cells
    assert page.evaluate("document.querySelectorAll('td.c-passed').length") > 3
    total = len(data["findings"])
    assert page.evaluate("document.getElementById('shown').textContent") == f"{total} of {total} findings shown"
    # grouped by operation, then rule; the answer's JSON body indented in a block of its own
    assert page.evaluate("[...document.querySelectorAll('section.op h3')].map(h => h.textContent)") == sorted(
        {f["operation"] for f in data["findings"]}, key=lambda op: op)
    bodies = page.evaluate("[...document.querySelectorAll('pre.body')].map(p => p.textContent)")
    assert bodies and all("\n  " in b for b in bodies if b.startswith("{")), bodies
    # the curl one click away
    page.click("details.curl summary")
    assert page.evaluate("document.querySelector('details.curl').open") is True
    assert page.evaluate("document.querySelector('details.curl pre').textContent").startswith("curl ")
    assert _not_blank(page.screenshot(tmp_path / "conform-curl.png")) > 200
    # a matrix cell narrows the findings to its operation and suite; the search box to a rule
    page.click("td.c-failed[data-op='getPaymentStatus'][data-suite='stateful']")
    status = [f for f in data["findings"] if f["operation"] == "getPaymentStatus" and "stateful" in f["suites"]]
    assert page.evaluate("document.getElementById('shown').textContent") == f"{len(status)} of {total} findings shown"
    page.click("#clear")
    page.type_text("#q", "digest-mismatch")
    digest = [f for f in data["findings"] if "digest-mismatch" in json.dumps(f)]
    assert page.evaluate("document.getElementById('shown').textContent") == f"{len(digest)} of {total} findings shown"


def test_a_report_with_tiers_shows_its_differences_apart():
    """A finding the report marks as a difference (the document leaves the point open) is counted and shown apart,
    in amber, and does not fail the page's verdict; a finding without a tier is a failure."""
    finding = {"id": "F1", "check": "stateful:lifecycle", "checks": ["stateful:lifecycle"], "suites": ["stateful"],
               "operation": "getPaymentStatus", "rule": "a29", "ref": "A29", "message": "<b>m</b>",
               "expected": "x", "actual": "y", "excerpt": '{"a": 1}', "headers": {}, "also": [], "curl": "curl x",
               "fingerprint": "0" * 16, "occurrences": 1}
    data = {"run": {"target": "http://t", "seconds": 1}, "seed": 0, "max_examples": 1, "suites": ["stateful"],
            "summary": {"checks": 1, "outcomes": 1, "passed": 0, "failed": 1, "error": 0, "not-exercised": 0,
                        "findings": 1, "cases": 3, "not_exercised_by_reason": {}},
            "outcomes": [{"suite": "stateful", "check": "stateful:lifecycle", "operation": "getPaymentStatus",
                          "status": "failed", "cases": 3, "reason": ""}],
            "findings": [finding], "coverage": {}}
    assert html.failed(data) and html.counts(data) == {"failures": 1, "differences": 0}
    differing = {**data, "findings": [{**finding, "tier": "difference", "decision": "A29"}],
                 "summary": {**data["summary"], "failures": 0, "differences": 1}}
    page = html.page(differing)
    assert not html.failed(differing) and '<span class="verdict pass">PASS</span>' in page
    assert 'class="cell c-difference"' in page and 'class="rule difference"' in page and "&lt;b&gt;m" in page
    assert '<div class="card warn"><b>1</b><span>differences</span>' in page


def test_the_proxy_report_renders(browser, tmp_path):
    from conformance.gate.target import ReferenceServer
    from conformance.proxy import report as proxy_report
    from proxy.proxy_helpers import RunningProxy, client
    from sandbox.flows import sepa_body

    upstream = ReferenceServer(faults=(F.CREATED_200,)).start()
    try:
        with RunningProxy(upstream.url) as proxy:
            tpp = client(proxy.url)
            assert tpp.call("createSepaCreditTransfer", body=sepa_body()).status_code == 200
            tpp.call("createSepaCreditTransfer", body=sepa_body("10.001"))
            tally = proxy.stop()
    finally:
        upstream.stop()
    proxy_report.write(tally, tmp_path / "proxy", upstream.url, enforce=False)
    path = tmp_path / "proxy" / "proxy.html"
    _self_contained(path.read_text(encoding="utf-8"))
    page = browser.new_page(width=1200, height=900)
    page.navigate(path.resolve().as_uri())
    assert "obvalidate proxy: FAIL" in page.evaluate("document.title")
    assert page.evaluate("document.querySelectorAll('table tr').length") >= 3
    assert _not_blank(page.screenshot(tmp_path / "proxy.png")) > 20


def test_the_summary_line_counts_in_words_that_agree():
    from conformance.gate.report import summary_line
    from conformance.gate.runner import RunOptions, RunResult

    result = RunResult("http://t", RunOptions("http://t"), seconds=1.0)
    result.cases = [("op", "digest")]
    line = summary_line(result, {"checks": 1, "outcomes": 1, "passed": 1, "failed": 0, "not-exercised": 0,
                                 "error": 0, "findings": 1, "occurrences": 1, "failures": 1, "differences": 0,
                                 "cases": 1})
    assert line.startswith("1 check, 1 check × operation outcome: 1 passed, 0 failed, 0 not exercised, 0 errors; "
                           "1 finding: 1 failure, 0 differences; 1 request in 1.0 s"), line


def test_reports_record_what_judged_the_run(tmp_path):
    """Issue 29, item 8: the profile (name, file, digest), the -H names never their values, rate limit, timeouts,
    seed and examples; a baseline's title for a finding about several answers does not say 'as the message says'."""
    import hashlib

    from conformance.gate.baseline import title
    from conformance.gate.model import SEVERAL_ANSWERS, Finding, grouped
    from conformance.gate.runner import RunOptions

    profile = tmp_path / "bank.yaml"
    profile.write_text("name: Example Bank\nrequest-id-replay: conflict\n", encoding="utf-8")
    options = RunOptions("http://t", profile_path=str(profile), seed=7, max_examples=3,
                         headers=(("X-IBM-Client-Id", "secret-value"),), rate_limit=5.0, request_timeout=12.0)
    judged = options.judged_by()
    assert judged["profile"] == {"name": "Example Bank", "file": str(profile),
                                 "sha256": hashlib.sha256(profile.read_bytes()).hexdigest()}
    assert judged["gateway_headers"] == ["X-IBM-Client-Id"] and "secret-value" not in json.dumps(judged)
    assert (judged["seed"], judged["max_examples"], judged["rate_limit"], judged["request_timeout"]) == (7, 3, 5.0, 12.0)
    [several] = grouped([Finding("stateful", "stateful:pagination", "listSandboxAccountTransactions", "r", "A22",
                                 "pages repeat an item", "no duplicates", SEVERAL_ANSWERS)])
    assert title(several) == "r on listSandboxAccountTransactions: expected no duplicates"
