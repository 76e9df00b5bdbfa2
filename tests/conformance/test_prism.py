"""The gate against an implementation nobody here wrote: Stoplight Prism mocking spec/openapi.yaml on loopback.

Prism is a Node.js tool: `.ci/run` installs the pinned version into `.ci/node` (ignored by git). Without npx the test
skips; with npx but without that install it skips saying how to install it (in CI, where .ci/run installed it, it
runs). The run must complete and classify -- findings are expected: a stateless mock cannot keep a lifecycle."""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.gate.cli import conform

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCAL_PRISM = REPO_ROOT / ".ci" / "node" / "node_modules" / ".bin" / "prism"
CHECKS = ("security:unsigned,security:tampered-body,semantic:amount-minor-units,semantic:valid-control,stateful:lifecycle,"
          "schema:generated-requests,negative:schema-invalid-requests,stateful:links")


def prism() -> str:
    if not shutil.which("npx"):
        pytest.skip("npx (Node.js) is not available: the Prism run needs it")
    if LOCAL_PRISM.is_file():
        return str(LOCAL_PRISM)
    match = re.search(r"^PRISM_VERSION=([0-9.]+)$", (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    pytest.skip("Stoplight Prism is not installed; install it with: npm install --prefix .ci/node "
                f"@stoplight/prism-cli@{match.group(1) if match else 'latest'} (as .ci/run does)")


@pytest.fixture
def prism_url():
    executable = prism()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([executable, "mock", "-h", "127.0.0.1", "-p", str(port), "spec/openapi.yaml"],
                               cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(url + "/v1/sandbox/customers", timeout=2)
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("Prism did not start")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_prism_run_completes_and_classifies(prism_url, tmp_path):
    result = CliRunner().invoke(conform, ["--target", prism_url, "--check", CHECKS, "--max-examples", "1",
                                          "--report-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    data = json.loads((tmp_path / "conform.json").read_text(encoding="utf-8"))
    statuses = {o["status"] for o in data["outcomes"]}
    assert "error" not in statuses, [o["reason"] for o in data["outcomes"] if o["status"] == "error"]
    assert data["summary"]["outcomes"] >= 5
    # What a stateless mock gets right: it refuses an unsigned request (400 from its own header validation).
    # What it cannot do: keep a payment it created, so the lifecycle fails or is not exercised.
    lifecycle = [o for o in data["outcomes"] if o["check"] == "stateful:lifecycle"]
    assert lifecycle and {o["status"] for o in lifecycle} & {"failed", "not-exercised"}
