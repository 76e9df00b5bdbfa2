"""`obvalidate edge-cases --target URL` on implementations that are not the bundled sandbox (issue 19): Stoplight
Prism mocking the spec, and a misbehaving target (tests/misbehaving_target.py) answering 404s, 500s, HTML, JSON
nested 100,000 deep, bytes that are not HTTP, or closing the connection. Whatever it answers: no traceback, a defined
exit code, the three reports written; edges needing the sandbox's fixed data (an account of its test data) are "not
exercised" with the reason, the others are sent and judged.

Kept lean: two request kinds (one needing the fixed data, one not), one Hypothesis example per rule."""
from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.edges.cli import edge_cases
from conformance.edges.run import NOT_EXERCISED, NOT_SENT
from validator.formats.escape import markdown_text
from misbehaving_target import MisbehavingTarget, fixed, send, when
from prism_target import serving_prism

REPO_ROOT = Path(__file__).resolve().parents[2]
NEEDS_DATA = "sandbox-account-transactions"   # its path names an account of the target's test data
NEEDS_NONE = "sepa-credit-transfer"
KINDS = ("--kind", NEEDS_DATA, "--kind", NEEDS_NONE, "--max-examples", "1")
FILES = ("report.html", "report.md", "report.json")


def _run(url: str, out: Path, kinds: tuple[str, ...] = KINDS) -> tuple[int, str, dict]:
    started = time.monotonic()
    result = CliRunner().invoke(edge_cases, ["--target", url, *kinds, "--out", str(out)], catch_exceptions=False)
    assert time.monotonic() - started < 60, "edge-cases took too long"
    report = json.loads((out / "report.json").read_text(encoding="utf-8")) if (out / "report.json").exists() else {}
    return result.exit_code, result.output, report


def _reports_written(out: Path) -> None:
    for name in FILES:
        assert (out / name).stat().st_size > 0, name


# ---------------------------------------------------------------------------------------------- misbehaving targets
JSON = [("Content-Type", "application/json")]
HOSTILE_CODE = "<img src=x onerror=alert(1)>\x1b]0;owned\x07\x1b[2J"
DEEP = b"[" * 100_000 + b"]" * 100_000


async def hang_up(request, writer) -> None:
    writer.close()


async def not_http(request, writer) -> None:
    await send(writer, b"\x00\xffgarbage, not a status line\r\n\r\n")
    writer.close()


def _root(request) -> bool:
    return request.method == "GET" and request.path == "/"


def _probe_answered(behaviour):
    """``behaviour`` for every request but the reachability probe (GET /), which gets a plain 200."""
    return when(lambda r: not _root(r), behaviour, fixed(200, b"{}", JSON))


BEHAVIOURS = {
    "404 everywhere (no sandbox extras)": fixed(404, json.dumps({"tppMessages": [{"category": "ERROR",
                                                                   "code": "RESOURCE_UNKNOWN"}]}).encode(),
                                                JSON, "Not Found"),
    "500 everywhere": fixed(500, b"oops", [("Content-Type", "text/plain")], "Internal Server Error"),
    "an HTML page": fixed(200, b"<html><img src=x onerror=alert(1)></html>", [("Content-Type", "text/html")]),
    "hostile error codes": fixed(400, json.dumps({"tppMessages": [{"category": "ERROR", "code": HOSTILE_CODE,
                                                                    "text": HOSTILE_CODE}]}).encode(), JSON,
                                 "Bad Request"),
    "JSON nested 100,000 deep (200)": fixed(200, DEEP, JSON),
    "JSON nested 100,000 deep (400)": fixed(400, DEEP, JSON, "Bad Request"),
    "the connection closed": _probe_answered(hang_up),
    "bytes that are not HTTP": _probe_answered(not_http),
}


@pytest.mark.parametrize("name", BEHAVIOURS)
def test_a_misbehaving_target_gets_a_report_never_a_traceback(name, tmp_path):
    with MisbehavingTarget(BEHAVIOURS[name]) as target:
        code, output, report = _run(target.url, tmp_path)
    assert code == 1, output  # it disagrees with the validator; it does not break the run
    _reports_written(tmp_path)
    assert "Traceback" not in output and "\x1b" not in output and "\x07" not in output
    cases = report["cases"]
    # edges that need no test data were sent, and each has the target's answer (or why there was none)
    sent = [c for c in cases if c["kind"] == NEEDS_NONE and c["agree"] is not None]
    assert len(sent) > 100 and all(c["actual"] and c["curl"] for c in sent)
    # the edges needing an account of the target's test data: not exercised, with the reason
    needing = [c for c in cases if c["kind"] == NEEDS_DATA and c["source"] == "derived" and not c["note"].startswith(
        "the validator judges")]
    assert needing and all(c["unsent"] == NOT_EXERCISED and c["agree"] is None and c["note"] for c in needing)
    # a search the target gave nothing to work with says why
    assert report["searches_not_exercised"] and all(s["why"] for s in report["searches_not_exercised"])
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    why = markdown_text(needing[0]["note"])   # the reason quotes the target's answer: as the report writes it
    assert f"| {NOT_EXERCISED} | {why} | {len(needing)} |" in md  # counted under "Not sent"
    assert f"not exercised: {why}" in md  # and on each row
    assert "## Searches not exercised" in md and 'id="searches-not-exercised"' in page
    assert f"<td>{NOT_EXERCISED}</td>" in page
    assert "<img" not in page.split("<main>")[1]  # the target's markup is text on the page
    assert f"not exercised: {len(needing)} case(s): " in output


def test_why_an_edge_was_not_exercised_names_what_the_target_answered(tmp_path):
    with MisbehavingTarget(BEHAVIOURS["404 everywhere (no sandbox extras)"]) as target:
        code, output, report = _run(target.url, tmp_path)
        asked = target.paths().count("GET /v1/sandbox/customers")
    reasons = {c["note"] for c in report["cases"] if c["unsent"] == NOT_EXERCISED}
    assert reasons == {"the target has no listSandboxCustomers (404 RESOURCE_UNKNOWN)"}
    assert asked <= 2, "the test data is looked up once for the edges (and once by the search), not per edge"
    # the edges the validator alone can judge (the Oslo-midnight instants) stay "not sent", with their own reason
    assert {c["unsent"] for c in report["cases"] if "midnight" in c["edge"]} == {NOT_SENT}


def test_deep_json_is_judged_by_its_status(tmp_path):
    with MisbehavingTarget(BEHAVIOURS["JSON nested 100,000 deep (400)"]) as target:
        code, output, report = _run(target.url, tmp_path)
    refused = [c for c in report["cases"] if c["kind"] == NEEDS_NONE and c["verdict"] == "refused"
               and c["agree"] is not None]
    assert refused and all(c["actual"] == "400" and c["agree"] is False for c in refused)  # no code readable
    assert {c["note"] for c in report["cases"] if c["unsent"] == NOT_EXERCISED} == {
        "the target's test data could not be read: JSON nested deeper than 512 levels (the gate decodes at most 512)"}


def test_a_target_that_goes_away_ends_the_run_with_exit_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there
    code, output, _ = _run(f"http://127.0.0.1:{port}", tmp_path)
    assert code == 2 and "not reachable" in output and "Traceback" not in output


# ---------------------------------------------------------------------------------------------- Prism
@pytest.fixture(scope="module")
def prism_url():
    with serving_prism() as url:
        yield url


def test_prism_gets_every_edge_it_can_answer(prism_url, tmp_path):
    code, output, report = _run(prism_url, tmp_path, ("--kind", NEEDS_DATA, "--max-examples", "1"))
    assert code == 1, output  # Prism checks the schema, not the interface's rules: it disagrees on those
    _reports_written(tmp_path)
    cases = report["cases"]
    # Prism's example customers give the account this kind's path needs: its edges are sent, none "not exercised"
    assert sum(c["agree"] is not None for c in cases) > 20
    assert not [c for c in cases if c["unsent"] == NOT_EXERCISED] and not report["searches_not_exercised"]
    by_edge = {(c["rule"], c["edge"]): c for c in cases}
    # a schema edge Prism answers as the validator does; a rule of the interface it does not know, it does not
    assert by_edge[("schema-length", "max+1: 15 characters")]["agree"] is True
    booking = next(c for c in cases if c["rule"] == "booking-after-value")
    assert booking["agree"] is False and booking["actual"].startswith("201")
    assert "✗ **disagree**" in (tmp_path / "report.md").read_text(encoding="utf-8")
