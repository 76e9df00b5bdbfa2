"""The proxy in the tests' own process: :class:`RunningProxy` serves ``obvalidate proxy``'s application (the same
:func:`conformance.proxy.cli.serve` the command runs) on a free loopback port in a thread, its terminal lines, log
and HAR kept for the assertions; and a TPP's ordinary session through it."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from conformance.bounded import Limits
from conformance.client import Identity, SignedClient
from conformance.proxy.cli import serve
from conformance.proxy.forward import ProxyOptions, Upstream
from conformance.proxy.judging import Judging, Outputs
from conformance.server_process import free_port
from validator.context import DEFAULT_PROFILE, Profile
from sandbox.flows import BULK, REDIRECT, SEPA, SESSION, bulk_body, sepa_body

TPP = Identity.generate("PSDNO-FSA-PROXYA")


class RunningProxy:
    """``obvalidate proxy --upstream UPSTREAM`` in a thread (``stop`` as SIGINT does: in-flight exchanges finish,
    the judge's queue is judged, the log flushed)."""

    def __init__(self, upstream: str, *, record: Path | None = None, enforce: bool = False,
                 limits: Limits = Limits(), preserve_host: bool = False, profile: Profile = DEFAULT_PROFILE,
                 ssl_context=None, judging: dict | None = None, **options) -> None:
        """``options``: the rest of :class:`ProxyOptions` (its connection limits); ``judging``: :class:`Judging`'s
        (``backlog``, ``judge_seconds``, ``stop_seconds``)."""
        where = Upstream(upstream)
        self.options = ProxyOptions(upstream, limits, enforce=enforce, preserve_host=preserve_host, profile=profile,
                                    **options)
        self._files = tempfile.TemporaryDirectory(prefix="obvalidate-proxy-test-")   # removed with this object
        self.out, self.log = Path(self._files.name) / "out.txt", Path(self._files.name) / "log.jsonl"
        self.judging = Judging(Outputs(str(self.out), str(self.log), str(record) if record else None),
                               profile=profile, base_path=where.base_path, origins=(where.origin,), asks=enforce,
                               **(judging or {}))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = None
        self.tally = None
        self._thread = threading.Thread(target=serve, args=(self.options, self.judging, "127.0.0.1", self.sock),
                                        kwargs={"announce": self._announce, "ssl_context": ssl_context}, daemon=True)

    def _announce(self, server) -> None:
        self.server = server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "RunningProxy":
        self._thread.start()
        deadline = time.monotonic() + 10
        while self.server is None or not self.server.started:
            assert time.monotonic() < deadline and self._thread.is_alive(), "the proxy did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self):
        if self.tally is None:
            self.judging.stopping()
            self.server.should_exit = True
            self._thread.join(15)
            self.tally = self.judging.close(15)
        return self.tally

    # ---- what it said
    def lines(self) -> list[str]:
        self.stop()
        return self.out.read_text(encoding="utf-8").splitlines()

    def logged(self, kind: str = "finding") -> list[dict]:
        self.stop()
        return [v for v in map(json.loads, self.log.read_text(encoding="utf-8").splitlines()) if v["type"] == kind]

    def findings(self, party: str | None = None, severity: str = "error") -> list[dict]:
        return [f for f in self.logged() if (party is None or f["party"] == party) and f["severity"] == severity]


def client(base_url: str, identity: Identity = TPP) -> SignedClient:
    """A TPP's signed client sending only the interface's headers (no User-Agent, Accept-Encoding of a library)."""
    http = httpx.Client(timeout=10, follow_redirects=False, headers={})
    for name in ("user-agent", "accept", "accept-encoding", "connection"):
        http.headers.pop(name, None)
    return SignedClient(base_url, identity, http=http)


def ordinary_session(tpp: SignedClient) -> dict[str, str]:
    """A TPP's ordinary session: payments created (SEPA, a NOK bulk), read (status, detail), put in a basket whose
    authorisation the PSU completes on the SCA page (straight at the bank: the page is the PSU's browser's), the
    statuses read again, a payment cancelled. Every request valid and signed."""
    created = tpp.call("createSepaCreditTransfer", body=sepa_body())
    assert created.status_code in (200, 201), created.text
    pid = created.json()["paymentId"]
    where = {**SEPA, "paymentId": pid}
    tpp.call("getPaymentStatus", path=where)
    other = tpp.call("createSepaCreditTransfer", body=sepa_body("17.00")).json()["paymentId"]
    tpp.call("getPayment", path=where)
    bulk = tpp.call("createBulkPayment", body=bulk_body("250", "100.50")).json()["paymentId"]
    tpp.call("getPayment", path={**BULK, "paymentId": bulk})
    basket = tpp.call("createSigningBasket", body={"paymentIds": [pid, other]}).json()["basketId"]
    tpp.call("getSigningBasket", path={"basketId": basket})
    started = tpp.call("startSigningBasketAuthorisation", path={"basketId": basket},
                       headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}).json()
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        page = browser.get(started["_links"]["scaRedirect"]["href"])
        action = page.text.split('action="', 1)[1].split('"', 1)[0]
        browser.post(httpx.URL(started["_links"]["scaRedirect"]["href"]).join(action),
                     data={"customerNumber": "12345678"})
    tpp.call("getPaymentStatus", path=where)
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": other})
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    tpp.call("deletePayment", path={**BULK, "paymentId": bulk})
    return {"payment": pid, "basket": basket, "bulk": bulk}


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024


@contextlib.contextmanager
def proxy_command(*arguments: str):
    """``obvalidate proxy ARGUMENTS`` as a command, a process of its own on a free port, in a process group of its
    own with its judge: ``(process, port)`` once it listens; the group killed at the end if the test did not end
    it."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "validator", "proxy", "--port", str(port), *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
    try:
        wait_listening(port, process)
        yield process, port
    finally:
        if process.returncode is None:   # not reaped yet: its id is still its group's, no one else's
            with contextlib.suppress(ProcessLookupError):   # the proxy and its judge at once (the judge holds its pipes)
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=10)   # reaped, its pipes closed


def wait_listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
            time.sleep(0.05)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                pass
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
