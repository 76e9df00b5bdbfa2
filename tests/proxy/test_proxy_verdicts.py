"""Verdicts that hold: what ``--enforce`` answers is what the bank itself should, live judging agrees with
``obvalidate traffic`` on the same session's recording (the order requests started in, a cancelled payment in a
basket), a refused request is never silent, and what a client received is never lost (kill -9)."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from conformance.gate.target import ReferenceServer
from misbehaving_target import MisbehavingTarget, fixed, rewrite, when
from proxy_helpers import RunningProxy, client, proxy_command
from raw_wire import RawUpstream
from sandbox.flows import SEPA, sepa_body


@pytest.fixture
def sandbox():
    server = ReferenceServer().start()
    yield server
    server.stop()


def _traffic(recording) -> dict:
    run = subprocess.run([sys.executable, "-m", "validator", "traffic", str(recording), "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    return {"results": json.loads(run.stdout)["results"], "stderr": run.stderr}


def _flagged(results: list[dict]) -> set[tuple[int, str, str]]:
    return {(r["entry"], f["party"], f["rule"]) for r in results for f in r["findings"] if f["severity"] == "error"}


def _live(proxy: RunningProxy) -> set[tuple[int, str, str]]:
    return {(f["entry"], f["party"], f["rule"]) for f in proxy.findings()}


def test_enforce_refuses_an_unsigned_request_as_the_bank_does_401_signature_missing(sandbox):
    direct = client(sandbox.url).call("createSepaCreditTransfer", body=sepa_body(), sign=False)
    with RunningProxy(sandbox.url, enforce=True) as proxy:
        enforced = client(proxy.url).call("createSepaCreditTransfer", body=sepa_body(), sign=False)
    code = enforced.json()["tppMessages"][0]["code"]
    assert (enforced.status_code, code) == (direct.status_code, direct.json()["tppMessages"][0]["code"])
    assert (enforced.status_code, code) == (401, "SIGNATURE_MISSING")
    assert "answered by the proxy (--enforce)" in proxy.lines()[0]


def test_overlapping_status_reads_are_judged_in_the_order_they_started_live_as_recorded(sandbox, tmp_path):
    """Two status reads of one payment across its SCA: the first asked is answered last (RCVD, as it was when it
    was asked), the second first (ACSC). Judged in the order the answers ended, the live judge saw ACSC then RCVD
    -- a status-backwards error that ``obvalidate traffic`` on the recording (ordered by startedDateTime) did not
    give."""
    reads = []

    async def status(request, writer):
        reads.append(request.path)
        if len(reads) == 1:
            await asyncio.sleep(1.0)
            await fixed(200, b'{"transactionStatus": "RCVD"}')(request, writer)
        else:
            await fixed(200, b'{"transactionStatus": "ACSC"}')(request, writer)

    behaviour = when(lambda request: request.path.endswith("/status"), status)
    with MisbehavingTarget(behaviour, upstream=sandbox.url) as target, \
            RunningProxy(target.url, record=tmp_path / "session.har") as proxy:
        tpp = client(proxy.url)
        pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
        first = threading.Thread(target=lambda: client(proxy.url).call("getPaymentStatus",
                                                                      path={**SEPA, "paymentId": pid}))
        first.start()
        time.sleep(0.3)
        assert client(proxy.url).call("getPaymentStatus", path={**SEPA, "paymentId": pid}).json()[
            "transactionStatus"] == "ACSC"
        first.join(10)
        proxy.stop()
    assert "status-backwards" not in {rule for _e, _p, rule in _live(proxy)}
    recorded = _traffic(tmp_path / "session.har")
    assert _flagged(recorded["results"]) == _live(proxy)


def test_a_payment_deleted_with_204_is_cancelled_and_its_basket_cannot_be_actc_live_or_recorded(sandbox, tmp_path):
    def actc(request, answer):
        if request.method == "GET" and request.path.endswith("/status") and "signing-baskets" in request.path:
            answer.set_json({"transactionStatus": "ACTC"})

    with MisbehavingTarget(rewrite(actc), upstream=sandbox.url) as target, \
            RunningProxy(target.url, record=tmp_path / "session.har") as proxy:
        tpp = client(proxy.url)
        kept = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
        cancelled = tpp.call("createSepaCreditTransfer", body=sepa_body("17.00")).json()["paymentId"]
        basket = tpp.call("createSigningBasket", body={"paymentIds": [kept, cancelled]}).json()["basketId"]
        assert tpp.call("deletePayment", path={**SEPA, "paymentId": cancelled}).status_code == 204
        assert tpp.call("getSigningBasketStatus", path={"basketId": basket}).json()["transactionStatus"] == "ACTC"
        proxy.stop()
    live = _live(proxy)
    assert live == {(4, "server", "basket-status-worst-case")}
    (finding,) = proxy.findings()
    assert finding["expected"] == "RJCT" and f"{cancelled} CANC" in finding["message"]
    assert _flagged(_traffic(tmp_path / "session.har")["results"]) == live


def test_a_refusal_the_session_explains_is_a_client_finding_that_says_so(sandbox):
    with RunningProxy(sandbox.url) as proxy:
        tpp = client(proxy.url)
        refused = tpp.call("createSigningBasket", body={"paymentIds": ["never-created-in-this-session"]})
    assert (refused.status_code, refused.json()["tppMessages"][0]["code"]) == (400, "RESOURCE_UNKNOWN")
    (finding,) = proxy.findings()
    assert (finding["party"], finding["rule"]) == ("client", "resource-unknown-named")
    assert "'never-created-in-this-session'" in finding["message"] and "no answer of this session" in \
        finding["message"]


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="a process group killed at once (POSIX)")
def test_the_recording_of_a_proxy_killed_with_its_judge_is_read_to_its_last_entry(tmp_path):
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    record = tmp_path / "session.har"
    with RawUpstream(ok) as upstream, \
            proxy_command("--upstream", upstream.url, "--quiet", "--record", str(record)) as (process, port):
        with httpx.Client(timeout=10) as http:
            for n in range(12):
                assert http.get(f"http://127.0.0.1:{port}/v1/x{n}").status_code == 200
        deadline = time.monotonic() + 10   # the judge writes each entry once the exchange is handed over
        while record.read_text().count('"startedDateTime"') < 12 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGKILL)   # the proxy and its judge, as kill -9 of the group does
        process.wait(10)
    assert not record.read_text().rstrip().endswith("]}}")
    recorded = _traffic(record)
    assert [r["entry"] for r in recorded["results"]] == list(range(12))
    assert "cut short after entry 11" in recorded["stderr"]
