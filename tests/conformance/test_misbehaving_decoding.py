"""Issue 19, decoding answers: every answer is decoded once, with the validator's loader and its limits
(conformance/exchange/decoding.py). JSON nested 100,000 deep is not judged -- the finding ``answer-not-judged`` says
why --, never a RecursionError, an ``error`` outcome or a traceback on standard error; a 50 MB JSON string is read
and decoded once, the run's peak memory measured and bounded.

The target is the misbehaving test target (tests/misbehaving_target.py) with this module's behaviours."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.exchange import decoding
from conformance.exchange.decoding import NOT_JUDGED, decode
from conformance.gate.model import SUITES
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from gate_helpers import describe
from misbehaving_target import MisbehavingTarget, fixed, huge_body
from validator import Validator
from validator.jsonload import load_json_bytes

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
# A check of each way the gate reads an answer: Schemathesis' cases and its links (the walk sends the schema suite's
# cases), the signed clients of the security, semantic and stateful checks, the SCA walk, the concurrent creations'
# threads, the read-backs. (The whole gate, every suite, is measured in the README: it takes longer than a test.)
READERS = ("security:foreign-payment", "semantic:corporate-id-required", "stateful:lifecycle",
           "stateful:concurrent-creations", "stateful:read-back", "stateful:links")


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def test_the_loader_decodes_deep_json_without_recursion():
    for body in (DEEP, DEEP_OBJECT):
        decoded = decode(body)
        assert decoded.value is None
        assert decoded.why_not == f"JSON nested deeper than {decoding.MAX_DEPTH} levels (the gate decodes at most " \
                                  f"{decoding.MAX_DEPTH})"
    assert decode(b"[" * decoding.MAX_DEPTH + b"]" * decoding.MAX_DEPTH).why_not is None
    too_large = decode(b'"' + b"a" * 100 + b'"', max_bytes=50)
    assert too_large.why_not == "a JSON body of 102 bytes, more than the 50 the gate decodes"
    assert decode(b"<html>").why_not is None and decode(b"<html>").value is None   # not JSON: judged as such


def test_the_validator_judges_a_loaded_answer_as_its_bytes():
    """validate_loaded (the gate's way: the exchange's one decoded value) reports what validate_bytes reports."""
    validator = Validator()
    for body in (b'{"transactionStatus": "XXXX", "paymentId": 5}', b'{"a": 1, "a": 2}', b"[]", b"not json"):
        kind = "payment-response" if b"paymentId" in body else "payment-status"
        loaded = validator.validate_loaded(load_json_bytes(body), kind, data=body)
        assert [(f.rule, f.pointer, f.line) for f in loaded.findings] == \
            [(f.rule, f.pointer, f.line) for f in validator.validate_bytes(body, kind).findings]


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["arrays", "objects"])
def test_json_nested_100000_deep_is_not_judged_and_never_an_error(identities, capfd, body):
    with MisbehavingTarget(fixed(201, body)) as target:
        started = time.monotonic()
        result = run(RunOptions(target.url, SUITES, identities=identities, max_examples=1, checks=READERS))
        seconds = time.monotonic() - started
    stderr = capfd.readouterr().err
    assert "Traceback" not in stderr and "RecursionError" not in stderr, stderr[-2000:]
    errors = [(o.check, o.reason) for o in result.outcomes if o.status == "error"]
    assert not errors, errors
    assert not [o for o in result.outcomes if "RecursionError" in o.reason]
    not_judged = [f for f in result.findings if f.rule == NOT_JUDGED]
    assert {f.check for f in not_judged} >= {"security:foreign-payment", "stateful:read-back", "stateful:links",
                                             "stateful:concurrent-creations"}, describe(result)
    assert all(f"answer not judged: JSON nested deeper than {decoding.MAX_DEPTH} levels" in f.message
               for f in not_judged)
    assert len(target.requests) > 20 and seconds < 15, (len(target.requests), seconds)


def test_every_answer_is_decoded_once(identities, monkeypatch):
    """One decode per answer however many readers it has (the oracle, the response kinds, the links, the checks):
    against the reference sandbox, no more decodes than answers."""
    decodes = []
    original = decoding.load_json_bytes

    def counting(data, **options):
        decodes.append(len(data))
        return original(data, **options)

    monkeypatch.setattr(decoding, "load_json_bytes", counting)
    reference = ReferenceServer().start()
    try:
        with MisbehavingTarget(upstream=reference.url) as target:
            result = run(RunOptions(target.url, SUITES, identities=identities, max_examples=1,
                                    checks=("stateful:lifecycle", "stateful:read-back", "schema:*")))
    finally:
        reference.stop()
    assert not [o for o in result.outcomes if o.status == "error"]
    assert 0 < len(decodes) <= len(target.requests), (len(decodes), len(target.requests))


def _conform(url: str, tmp_path: Path, *options: str) -> tuple[dict, int, float, str]:
    """``obvalidate conform`` in a child process: its report, its own peak RSS (bytes, from wait4), seconds, stderr."""
    report_dir = tmp_path / f"report-{time.monotonic_ns()}"
    command = [sys.executable, "-m", "validator", "conform", "--target", url, "--max-examples", "1", "-q",
               "--check", "security:foreign-payment", "--report-dir", str(report_dir), *options]
    with open(tmp_path / "stderr", "wb") as err:
        started = time.monotonic()
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        killer = threading.Timer(60, child.kill)   # a hang fails the test, it does not hang it
        killer.start()
        try:
            _pid, status, usage = os.wait4(child.pid, 0)
        finally:
            killer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
    report = json.loads((report_dir / "conform.json").read_text(encoding="utf-8"))
    return report, usage.ru_maxrss * 1024, seconds, (tmp_path / "stderr").read_text(errors="replace")


def test_a_50_mb_json_string_is_cut_by_default_and_judged_from_one_copy_when_allowed(tmp_path):
    """The answer to the payment creation is ``{"padding": "aaa…"}``, 50,000,000 bytes. By default it is cut at the
    answer cap (answer-too-large, conformance/bounded.py); with the cap raised over it, it is read, decoded once and
    judged (the schema's required members missing), the child's peak memory a few times the body, not the 2.5 GB of
    a body decoded by every reader."""
    with MisbehavingTarget(fixed(201, b"{}")) as small:
        _report, baseline, _s, _err = _conform(small.url, tmp_path)
    with MisbehavingTarget(huge_body(50_000_000, status=201)) as target:
        cut, _rss, _s, _err = _conform(target.url, tmp_path)
        judged, peak, seconds, stderr = _conform(target.url, tmp_path, "--max-response-bytes", str(64 * MB))
    assert [f["rule"] for f in cut["findings"]] == ["answer-too-large"], cut["findings"]
    assert "Traceback" not in stderr, stderr[-2000:]
    rules = {(f["rule"], f["operation"]) for f in judged["findings"]}
    assert ("schema-required", "createSepaCreditTransfer") in rules, judged["findings"]
    assert not [o for o in judged["outcomes"] if o["status"] == "error"]
    assert peak - baseline < 8 * 50 * MB, (peak // MB, baseline // MB)
    assert seconds < 30, seconds
