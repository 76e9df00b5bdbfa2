"""`obvalidate sandbox faults` and `obvalidate sandbox serve` (a real server process on a loopback port)."""
from __future__ import annotations

import datetime as _dt
import socket
import subprocess
import sys
import time
from importlib.metadata import entry_points

import httpx
from click.testing import CliRunner

from conformance.client import Identity, SignedClient
from conformance.sandbox.cli import sandbox
from conformance.sandbox.faults import FAULTS
from validator.cli import main


def test_faults_lists_every_switch():
    result = CliRunner().invoke(sandbox, ["faults"])
    assert result.exit_code == 0
    for fault in FAULTS.values():
        assert fault.name in result.output and fault.breaks in result.output


def test_registered_as_an_obvalidate_command():
    found = [e for e in entry_points(group="obvalidate.commands") if e.name == "sandbox"]
    assert found and found[0].load() is sandbox
    result = CliRunner().invoke(main, ["sandbox", "faults"])
    assert result.exit_code == 0 and all(name in result.output for name in FAULTS)


def test_serve_refuses_unknown_fault_and_bad_instant():
    result = CliRunner().invoke(sandbox, ["serve", "--fault", "no-such-fault", "--db", ":memory:"])
    assert result.exit_code == 2 and "unknown fault switch" in result.output
    result = CliRunner().invoke(sandbox, ["serve", "--now", "yesterday", "--db", ":memory:"])
    assert result.exit_code == 2 and "--now" in result.output


def test_serve_on_loopback_with_a_database_file(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "sandbox.db"
    code = "from conformance.sandbox.cli import sandbox; sandbox()"
    process = subprocess.Popen([sys.executable, "-c", code, "serve", "--port", str(port), "--db", str(db),
                                "--now", "2026-07-01T08:30:00Z", "--fault", "created-200"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/v1/sandbox/customers", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, process.stderr.read().decode()
                time.sleep(0.1)
        with SignedClient(base, Identity.generate("PSDNO-FSA-CLI"),
                          clock=lambda: _dt.datetime(2026, 7, 1, 8, 30, 5, tzinfo=_dt.timezone.utc)) as client:
            r = client.call("createSepaCreditTransfer")
            assert r.status_code == 200 and r.json()["transactionStatus"] == "RCVD"   # the switch is on
            assert client.call("listSandboxCustomers").status_code == 200
    finally:
        process.terminate()
        process.wait(10)
    assert db.exists()
