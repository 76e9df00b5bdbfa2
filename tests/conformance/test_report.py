"""Findings a bank's engineer can read: the answer's own headers kept (bounded, escaped), one defect reported once
with a stable fingerprint naming every check that saw it, curls without whole certificates, and what stays "not
exercised" counted by reason -- in the JSON, JUnit, HTML and text reports."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import unicodedata
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from conformance.client import Identity, SignedClient
from conformance.gate import report
from conformance.gate.cli import conform
from conformance.exchange.reasons import reason_problem
from conformance.gate.model import HEADER_VALUE_LIMIT, HEADERS_LIMIT, Finding, fingerprint, grouped, refused_for
from conformance.gate.runner import RunOptions, merge_answers, run
from conformance.gate.session import LONG_HEADER, curl
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from gate_helpers import LoopbackServer
from validator.findings import ERROR, Finding as ValidatorFinding

VIOLATION = '[{"location":["request","header","signature"],"severity":"Error","message":"must have signature"}]'
HOSTILE_HEADERS = [
    b"Content-Type: application/json",
    b"sl-violations: " + VIOLATION.encode(),
    b"X-Bidi: safe\xe2\x80\xaeevil",                      # U+202E, right-to-left override
    b"X-Markup: <script>alert(1)</script>",
    b"X-Long: " + b"a" * 10_000,
    *(f"X-Many-{i}: {i}".encode() for i in range(60)),
]
HOSTILE_BODY = b'{"tppMessages":[{"category":"ERROR","code":"\x1b[2J\x1b[31mFORMAT_ERROR"}]}'


class HostileTarget(LoopbackServer):
    """A loopback HTTP/1.1 server answering every request with hostile headers and a body with terminal escapes:
    200 everywhere but under /v1/sandbox/, which it does not have (404)."""

    def __enter__(self) -> str:
        return self.start().url

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next((int(line.split(":", 1)[1]) for line in lines[1:]
                               if line.lower().startswith("content-length:")), 0)
                await reader.readexactly(length)
                status = b"404 Not Found" if path.startswith("/v1/sandbox/") else b"200 OK"
                writer.write(b"HTTP/1.1 " + status + b"\r\n" + b"\r\n".join(HOSTILE_HEADERS)
                             + f"\r\nContent-Length: {len(HOSTILE_BODY)}\r\n\r\n".encode() + HOSTILE_BODY)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError, ValueError):
            pass
        finally:
            writer.close()


def _unprintable(text: str) -> list[str]:
    return [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf")]


def test_answer_headers_are_kept_bounded_and_escaped_in_every_format(tmp_path):
    with HostileTarget() as url:
        done = CliRunner().invoke(conform, ["--target", url, "--check", "security:unsigned,stateful:pagination",
                                            "--max-examples", "1", "--report-dir", str(tmp_path)])
    assert done.exit_code == 1, done.output
    data = json.loads((tmp_path / "conform.json").read_text(encoding="utf-8"))
    unsigned = next(f for f in data["findings"] if f["check"] == "security:unsigned")
    headers = unsigned["headers"]
    assert headers["sl-violations"] == VIOLATION, "the target's own reason is kept as sent"
    assert len(headers) == HEADERS_LIMIT + 1 and headers["…"] == f"{4 + 60 + 2 - HEADERS_LIMIT} more headers"
    assert headers["x-long"] == "a" * HEADER_VALUE_LIMIT + f"… ({10_000 - HEADER_VALUE_LIMIT} more characters)"
    assert "\\u202e" in headers["x-bidi"] or "\\x80" in headers["x-bidi"]
    for f in data["findings"]:
        assert not _unprintable(f["excerpt"]) and not any(_unprintable(v) for v in f["headers"].values())
    assert "\\x1b[2J" in unsigned["excerpt"], "the excerpt is the answer's own body, escaped"
    # text: one line per header set, nothing a terminal would interpret
    assert "sl-violations: " + VIOLATION in done.output and "\x1b" not in done.output and "\u202e" not in done.output
    # JUnit: well-formed XML carrying the headers; HTML: markup in a header is text
    suites = ET.parse(tmp_path / "conform.junit.xml").getroot()
    failure = next(f for f in suites.iter("failure") if "sl-violations" in (f.text or ""))
    assert unsigned["fingerprint"] in failure.get("message") and "must have signature" in failure.text
    page = (tmp_path / "conform.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and page.count("<script") == 1   # the page's own filter
    assert "must have signature" in page


def test_not_exercised_is_counted_by_reason_in_every_summary(tmp_path):
    with HostileTarget() as url:
        done = CliRunner().invoke(conform, ["--target", url, "--check", "security:unsigned,stateful:pagination",
                                            "--max-examples", "1", "--report-dir", str(tmp_path)])
    data = json.loads((tmp_path / "conform.json").read_text(encoding="utf-8"))
    reasons = [o["reason"] for o in data["outcomes"] if o["status"] == "not-exercised"]
    assert reasons, data["outcomes"]
    by_reason = data["summary"]["not_exercised_by_reason"]
    assert by_reason == {r: reasons.count(r) for r in set(reasons)}
    page = (tmp_path / "conform.html").read_text(encoding="utf-8")
    for reason, count in by_reason.items():
        assert f"not exercised, {count} × {reason}" in done.output
        assert f'<tr><td class="n">{count}</td><td>{reason}' in page.replace("&#x27;", "'")


def _created_200(seed: int):
    server = ReferenceServer(faults=(F.CREATED_200,)).start()
    try:
        return run(RunOptions(server.url, ("schema", "stateful"), seed=seed, max_examples=1,
                              checks=("schema:generated-requests", "stateful:links")))
    finally:
        server.stop()


def test_one_defect_is_one_finding_naming_every_check_that_saw_it():
    first, second = _created_200(0), _created_200(0)
    data = report.as_json(first)
    shared = [f for f in data["findings"] if len(f["checks"]) > 1]
    assert shared, "the walk and the schema suite both meet a creation answered 200"
    defect = shared[0]
    assert defect["checks"] == ["schema:generated-requests", "stateful:links"] and defect["occurrences"] == 2
    assert defect["suites"] == ["schema", "stateful"]
    assert data["summary"]["findings"] == len(data["findings"]) < data["summary"]["occurrences"]
    assert len({f["fingerprint"] for f in data["findings"]}) == len(data["findings"])
    text = report.text(first)
    assert text.count(f"fingerprint {defect['fingerprint']}") == 1
    assert "seen 2 times, by schema:generated-requests, stateful:links" in text
    # what the other sighting says is kept with the check that saw it
    assert [a["check"] for a in defect["also"]] == ["stateful:links"]
    assert f"also (stateful:links): {defect['also'][0]['message']}" in text
    junit = ET.fromstring(report.junit(first))
    naming = [f for f in junit.iter("failure") if defect["fingerprint"] in f.get("message")]
    assert len(naming) == 2 and all("schema:generated-requests, stateful:links" in f.text for f in naming)
    assert defect["fingerprint"] in report.html_report(first)
    # the same defect in another run (other payment ids, another day's dates): the same fingerprint
    assert {f["fingerprint"] for f in data["findings"]} == {f["fingerprint"] for f in report.as_json(second)["findings"]}


def test_a_fingerprint_is_over_suite_independent_facts_only():
    base = fingerprint("getPayment", "A28", "404 RESOURCE_UNKNOWN", "200")
    assert base == fingerprint("getPayment", "A28", "404 RESOURCE_UNKNOWN", "200")
    assert base == fingerprint("getPayment", "A28", "404 RESOURCE_UNKNOWN", "200")
    assert fingerprint("getPayment", "x", "payment 6f0c2d1e-5b7a-4c3d-9e8f-1a2b3c4d5e6f on 2026-11-25", "200") == \
        fingerprint("getPayment", "x", "payment 3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3c on 2027-01-02", "200")
    for other in (("getPaymentStatus", "A28", "404 RESOURCE_UNKNOWN", "200"),
                  ("getPayment", "A4", "404 RESOURCE_UNKNOWN", "200"),
                  ("getPayment", "A28", "400 RESOURCE_UNKNOWN", "200"),
                  ("getPayment", "A28", "404 RESOURCE_UNKNOWN", "404 RESOURCE_UNKNOWN")):
        assert fingerprint(*other) != base


# ---------------------------------------------------------------- curls without whole certificates
def _signed_request():
    client = SignedClient("http://127.0.0.1:9", Identity.generate())
    return client.prepare("createSepaCreditTransfer", headers={"X-Long-Header": "b" * (LONG_HEADER + 1),
                                                               "X-Odd'Name": "v"})


@pytest.mark.skipif(not shutil.which("bash"), reason="bash checks the curl's shell syntax")
def test_a_curl_leaves_out_the_certificate_and_long_headers_and_stays_a_shell_command():
    request = _signed_request()
    command = curl("http://127.0.0.1:9", request)
    certificate = dict(request.headers)["TPP-Signature-Certificate"]
    assert certificate not in command and "b" * (LONG_HEADER + 1) not in command
    assert "Signature: keyId=" in command, "the Signature stays: its keyId and signed headers are evidence"
    assert subprocess.run(["bash", "-n", "-c", command]).returncode == 0
    # as a shell runs it (curl replaced by a function printing its arguments): with the variables set, the headers
    # are the ones sent; without, the shell stops saying how to re-sign
    printing = "curl() { printf '%s\\n' \"$@\"; }; " + command
    env = {**os.environ, "TPP_SIGNATURE_CERTIFICATE": certificate, "X_LONG_HEADER": "b" * (LONG_HEADER + 1)}
    sent = subprocess.run(["bash", "-c", printing], env=env, capture_output=True, text=True)
    assert sent.returncode == 0, sent.stderr
    arguments = sent.stdout.splitlines()
    assert [f"{name}: {value}" for name, value in request.headers] == \
        [arguments[i + 1] for i, a in enumerate(arguments) if a == "-H"]
    bare = {k: v for k, v in env.items() if k != "TPP_SIGNATURE_CERTIFICATE"}
    stopped = subprocess.run(["bash", "-c", printing], env=bare, capture_output=True, text=True)
    assert stopped.returncode != 0 and "obvalidate sign" in stopped.stderr and not stopped.stdout
    assert f"the {len(certificate)}-character TPP-Signature-Certificate value was left out" in stopped.stderr


# ---------------------------------------------------------------- one cause said once; evidence that reproduces
def test_an_empty_header_value_is_sent_by_the_curl_not_removed():
    """curl removes a header given as ``-H 'Name:'`` and sends it empty as ``-H 'Name;'``."""
    client = SignedClient("http://127.0.0.1:9", Identity.generate())
    request = client.prepare("createSepaCreditTransfer", headers={"PSU-Corporate-ID": ""})
    command = curl("http://127.0.0.1:9", request)
    assert "-H 'PSU-Corporate-ID;'" in command and "PSU-Corporate-ID:" not in command


def _hostile_report(tmp_path, checks: str) -> dict:
    with HostileTarget() as url:
        done = CliRunner().invoke(conform, ["--target", url, "--check", checks, "--max-examples", "1",
                                            "--report-dir", str(tmp_path)])
    assert done.exit_code == 1, done.output
    return json.loads((tmp_path / "conform.json").read_text(encoding="utf-8")), done.output


@pytest.mark.skipif(not shutil.which("bash"), reason="bash runs the curl")
def test_a_finding_about_the_certificate_ships_it_and_its_curl_sends_it(tmp_path):
    data, _output = _hostile_report(tmp_path, "security:expired-certificate")
    expired = next(f for f in data["findings"] if f["rule"] == "certificate-expired")
    [name] = expired["files"]
    shipped = (tmp_path / name).read_text(encoding="utf-8").strip()
    assert shipped == dict(expired["request"]["headers"]).get("TPP-Signature-Certificate", shipped)
    assert f"$(cat {name})" in expired["curl"]
    # run in the report directory (curl replaced by a function printing its arguments): the certificate sent
    printing = "curl() { printf '%s\\n' \"$@\"; }; " + expired["curl"]
    sent = subprocess.run(["bash", "-c", printing], cwd=tmp_path, capture_output=True, text=True)
    assert sent.returncode == 0, sent.stderr
    assert f"TPP-Signature-Certificate: {shipped}" in sent.stdout.splitlines()
    # a finding about something else leaves the certificate out, as before
    assert not [f for f in data["findings"] if f["rule"] != "certificate-expired" and f["files"]]


def test_an_answer_many_requests_got_byte_for_byte_is_said_once_above_its_findings(tmp_path):
    data, output = _hostile_report(tmp_path, "security:unsigned,security:tampered-body,security:wrong-digest")
    [same] = data["same_answers"]
    assert same["requests"] >= 3 and same["bytes"] == len(HOSTILE_BODY)
    assert same["findings"] == [f["id"] for f in data["findings"]]
    lines = output.splitlines()
    said = [i for i, line in enumerate(lines) if line.startswith("SAME ANSWER")]
    assert len(said) == 1 and said[0] < min(i for i, line in enumerate(lines) if line.startswith("FAIL"))
    assert f"the findings {', '.join(same['findings'])} carry it" in lines[said[0]]


def test_a_group_splits_by_the_refusals_own_reason():
    """Two refusals of one rule and operation with the same status and code but different reasons (the path or the
    words the target gives) are two findings; the same reason with other values is one."""
    def refused(body) -> str:
        return refused_for(400, body)

    alias = refused({"tppMessages": [{"code": "FORMAT_ERROR", "text": "unknown alias 'amount-as-text'"}]})
    array = refused({"tppMessages": [{"code": "FORMAT_ERROR", "text": "payments must be a non-empty array"}]})
    assert alias != array and alias == refused({"tppMessages": [{"code": "FORMAT_ERROR",
                                                                 "text": "unknown alias 'x-y'"}]})
    assert refused({"tppMessages": [{"code": "FORMAT_ERROR", "path": "/payments", "text": "a"}]}) == "path '/payments'"
    assert refused_for(201, {"tppMessages": [{"text": "x"}]}) == ""
    sightings = [Finding("semantic", "semantic:header-format", "createBulkPayment", "header-format", "A7", "m",
                         "400 FORMAT_ERROR", "400 FORMAT_ERROR", refused_for=reason)
                 for reason in (array, alias, array)]
    found = grouped(sightings)
    assert [len(g.occurrences) for g in found] == [2, 1]


def test_a_refusal_for_another_reason_names_every_path_and_place():
    errors = [ValidatorFinding("header-format", ERROR, f"/headers/H-{i}", "bad", "FORMAT_ERROR", 400)
              for i in range(5)]
    body = {"tppMessages": [{"code": "FORMAT_ERROR", "path": f"/p{i}"} for i in range(5)]}
    said = reason_problem(body, errors)
    assert all(f"'/p{i}'" in said and f"/headers/H-{i}" in said for i in range(5)), said


def test_workers_answers_are_counted_together():
    """With --workers each process counts its answers: the run's count is their sum, each operation once."""
    run_answers = {"a" * 64: [2, 10, "x", ["getPayment"]]}
    merge_answers(run_answers, {"a" * 64: [3, 10, "x", ["getPayment", "getPaymentStatus"]],
                                "b" * 64: [1, 4, "y", ["deletePayment"]]})
    assert run_answers == {"a" * 64: [5, 10, "x", ["getPayment", "getPaymentStatus"]],
                           "b" * 64: [1, 4, "y", ["deletePayment"]]}
