"""The README's sandbox walk-through stays true: `obvalidate sign` + curl creates a payment on a running sandbox."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("## The reference sandbox", 1)[1].split("\n## ", 1)[0]


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("bash")), reason="needs bash and curl")
def test_signed_payment_with_obvalidate_sign_and_curl(server, tmp_path):
    server.app.state.sandbox = Sandbox.create()          # the real clock: `obvalidate sign` dates with it
    script = re.findall(r"```sh\n(.*?)\n```", SECTION, re.S)[1]
    assert "obvalidate sign" in script and "curl" in script
    script = script.replace("http://127.0.0.1:8080", server.url)
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert answer["transactionStatus"] == "RCVD" and answer["paymentId"]


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("bash")), reason="needs bash and curl")
def test_a_curl_user_gets_from_creation_to_acsc(server, tmp_path):
    """The README's curl recipe for the SCA steps, run as written after the creation recipe: the authorisation is
    started, the SCA form submitted as Kari, the batch run executes the payment (issue 21)."""
    server.app.state.sandbox = Sandbox.create()          # the real clock: `obvalidate sign` dates with it
    blocks = re.findall(r"```sh\n(.*?)\n```", SECTION, re.S)
    [recipe] = [b for b in blocks if "sepa-start-authorisation.http" in b]
    script = (blocks[1] + "\necho\n" + recipe).replace("http://127.0.0.1:8080", server.url)
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().strip().splitlines()
    redirect = next(line for line in lines if line.startswith("303 "))
    assert "&psu-id=" in redirect and "tpp-session-id=3f1c9a52-tpp-session" in redirect and redirect.split()[1].startswith("https://tpp.example.no/callback")
    statuses = [json.loads(line)["transactionStatus"] for line in lines if '"transactionStatus"' in line]
    assert statuses[-2:] == ["PDNG", "ACSC"], lines
    executed = json.loads(next(line for line in lines if '"executed"' in line))["executed"]
    assert len(executed) == 1
