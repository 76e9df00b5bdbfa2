"""HAR recordings of sessions with the reference sandbox, made as a recorder in front of it would: a TPP's signed
client sends through Starlette's test client (in process), and every request exactly as sent (headers in order,
the body's bytes, the sandbox clock's time) and every answer exactly as received is written with the HAR writer
that ``obvalidate proxy --record`` uses."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import httpx

from conformance.client import Identity, SignedClient
from conformance.exchange import RecordedAnswer, RecordedRequest
from conformance.sandbox import Sandbox, create_app
from conformance.sandbox.clock import Clock
from conformance.traffic.har import HarWriter
from sandbox.flows import BULK, REDIRECT, SEPA, SESSION, bulk_body, sca, sepa_body

START = "2026-07-01T08:30:00Z"   # 10:30 in Oslo on the spec's example day, between two batch runs
ORIGIN = "http://testserver"
TPP = Identity.generate("PSDNO-FSA-TRAFFIC")


def _pairs(raw) -> tuple[tuple[str, str], ...]:
    return tuple((name.decode("latin-1"), value.decode("latin-1")) for name, value in raw)


class SandboxRecorder:
    """A fresh sandbox (fault switches as given, a frozen clock) and a HAR of everything sent to it."""

    def __init__(self, path: Path, *faults: str, start: str = START) -> None:
        self.path = path
        self.sandbox = Sandbox.create(faults=faults, clock=Clock(start, frozen=True))
        self.app = create_app(self.sandbox)
        self.writer = HarWriter(path)
        self.count = 0

    def hook(self, response: httpx.Response) -> None:
        response.read()
        request = response.request
        sent = RecordedRequest(request.method, request.url.raw_path.decode("ascii"), _pairs(request.headers.raw),
                               request.content, self.sandbox.clock.now(), ORIGIN)
        answer = RecordedAnswer(response.status_code, _pairs(response.headers.raw), response.content)
        self.writer.add(sent, answer, time_ms=1.0)
        self.count += 1

    def http(self) -> httpx.Client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from starlette.testclient import TestClient

            http = TestClient(self.app, base_url=ORIGIN, follow_redirects=False)
        del http.headers["user-agent"]   # the test client's own; a TPP's client sends its own or none
        http.event_hooks["response"] = [self.hook]
        return http

    def client(self, identity: Identity = TPP) -> SignedClient:
        return SignedClient(ORIGIN, identity, clock=self.sandbox.clock.now, http=self.http())

    def close(self) -> Path:
        self.writer.close()
        return self.path


def ordinary_session(recorder: SandboxRecorder) -> dict[str, str]:
    """A TPP's ordinary session: payments created and read, a basket authorised through the SCA page, a deletion.
    Returns the ids it made."""
    tpp = recorder.client()
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    where = {**SEPA, "paymentId": pid}
    tpp.call("getPaymentStatus", path=where)
    tpp.call("getPayment", path=where)
    bulk = tpp.call("createBulkPayment", body=bulk_body("250.00", "100.50")).json()["paymentId"]
    other = tpp.call("createSepaCreditTransfer", body=sepa_body("17.00")).json()["paymentId"]
    basket = tpp.call("createSigningBasket", body={"paymentIds": [pid, other]}).json()["basketId"]
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    started = tpp.call("startSigningBasketAuthorisation", path={"basketId": basket},
                       headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}).json()
    sca(recorder.http(), started, "12345678")   # the PSU's browser on the SCA page (its form, its anti-CSRF token)
    tpp.call("getPaymentStatus", path=where)
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    tpp.call("getPaymentStatus", path=where)          # the TPP polls again
    tpp.call("deletePayment", path={**BULK, "paymentId": bulk})
    return {"payment": pid, "other": other, "bulk": bulk, "basket": basket}


def entries(path: Path) -> list[dict]:
    return json.loads(path.read_text())["log"]["entries"]


def rewrite(path: Path, edit) -> Path:
    """The HAR with ``edit(entries)`` applied (a defect edited into the recording)."""
    document = json.loads(path.read_text())
    edit(document["log"]["entries"])
    out = path.with_name(path.stem + "-edited.har")
    out.write_text(json.dumps(document))
    return out
