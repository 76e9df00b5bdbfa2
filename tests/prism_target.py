"""Stoplight Prism serving spec/openapi.yaml on loopback: an implementation of the interface nobody here wrote, for
the tests that put the gate, the edge-case reports or the proxy against one.

Prism is a Node.js tool: `.ci/run` installs the pinned version into `.ci/node` (ignored by git). Without it a test
skips locally, saying how to install it, and fails when `CI` is set (CI installs it)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCAL_PRISM = REPO_ROOT / ".ci" / "node" / "node_modules" / ".bin" / "prism"
START_SECONDS = 90


def prism_executable() -> str:
    """Prism as .ci/run installs it; skip without it (fail when CI is set)."""
    if LOCAL_PRISM.is_file() and shutil.which("node"):
        return str(LOCAL_PRISM)
    match = re.search(r"^PRISM_VERSION=([0-9.]+)$", (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    how = ("Stoplight Prism is not installed; install it with: npm install --prefix .ci/node "
           f"@stoplight/prism-cli@{match.group(1) if match else 'latest'} (as .ci/run does)")
    if os.environ.get("CI"):
        pytest.fail(f"{how}, and CI is set", pytrace=False)
    pytest.skip(how)


@contextlib.contextmanager
def serving_prism() -> Iterator[str]:
    """`prism mock` of the spec on a free loopback port, once it answers: its base URL; stopped afterwards."""
    executable = prism_executable()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([executable, "mock", "-h", "127.0.0.1", "-p", str(port), "spec/openapi.yaml"],
                               cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
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
