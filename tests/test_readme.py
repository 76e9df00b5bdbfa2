"""The README's two commands stay true: the main job's output and exit code, and the test command CI runs."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from validator.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_readme_has_the_two_commands():
    setup, tests = _quick_start_commands()
    assert "pip install" in setup and "obvalidate" in setup
    assert tests.strip() == ".venv/bin/python -m pytest"
    assert tests.strip() in (ROOT / ".ci" / "run").read_text(), ".ci/run must run the README's test command"


def test_main_job_prints_what_the_readme_shows(monkeypatch):
    setup, _ = _quick_start_commands()
    args = shlex.split(setup.split(".venv/bin/obvalidate", 1)[1])
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1  # the bad example has errors
    shown = README.split("```text\n", 1)[1].split("```", 1)[0]
    assert result.output == shown
    good = [line for line in result.output.splitlines() if "bulk-payment-good.json" in line]
    assert good == ["validator/examples/bulk-payment-good.json: note checked as bulk-payment (detected)"]  # no findings


def test_readme_signing_walkthrough(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    keys = tmp_path / "keys"
    assert runner.invoke(main, ["keygen", str(keys)]).exit_code == 0
    for example in ("docs/examples/sepa-request.json", "docs/examples/sepa-request.http"):
        signed = runner.invoke(main, ["sign", "--key", str(keys / "key.pem"), "--cert", str(keys / "cert.pem"), example])
        assert signed.exit_code == 0, signed.output
        target = tmp_path / Path(example).name
        target.write_bytes(signed.stdout_bytes)
        checked = runner.invoke(main, ["--format", "json", "--kind", "request", str(target)])
        assert checked.exit_code == 0, checked.output
        assert '"findings": []' in checked.output
    unsigned = runner.invoke(main, ["docs/examples/sepa-request.json"])
    assert unsigned.exit_code == 1
    for rule in ("signature-missing", "certificate-missing", "digest-missing"):
        assert f"[{rule}]" in unsigned.output
