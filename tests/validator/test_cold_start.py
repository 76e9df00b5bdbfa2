"""What the command does for its own start: the collector paused while it starts, objects frozen only when the
command is the process's program (never for an in-process call, whose caller lives on)."""
from __future__ import annotations

import gc
import json
import subprocess
import sys

from click.testing import CliRunner

from validator.cli import _make_validator, main

SETTINGS = {"kind": None, "context": None, "profile": None, "today": "2026-07-01", "now": None,
            "max_bytes": 1024, "max_findings": 10}


def _payload(tmp_path):
    path = tmp_path / "basket.json"
    path.write_text(json.dumps({"paymentIds": ["enc!!UEFZLTAwMQ=="]}))
    return path


def test_the_collector_is_on_again_after_the_start() -> None:
    assert gc.isenabled()
    _make_validator(SETTINGS)
    assert gc.isenabled()
    gc.disable()
    try:
        _make_validator(SETTINGS)
        assert not gc.isenabled()  # a caller's choice is left as it was
    finally:
        gc.enable()


def test_an_in_process_call_freezes_nothing(tmp_path) -> None:
    before = gc.get_freeze_count()
    result = CliRunner().invoke(main, ["--today", "2026-07-01", str(_payload(tmp_path))])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before


def test_the_program_freezes_at_its_end(tmp_path) -> None:
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, file=sys.stderr))\n"
            "from validator.cli import main\n"
            "main()\n")
    run = subprocess.run([sys.executable, "-c", code, "--today", "2026-07-01", str(_payload(tmp_path))],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "valid" in run.stdout and "frozen True" in run.stderr


def _program(tmp_path, *args, code=None):
    command = ["-m", "validator"] if code is None else ["-c", code]
    return subprocess.run([sys.executable, *command, "--today", "2026-07-01", *args], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_the_program_ends_with_the_commands_output_and_exit_code(tmp_path) -> None:
    valid = _program(tmp_path, str(_payload(tmp_path)))
    assert valid.returncode == 0 and "1 input: 1 valid" in valid.stdout, valid.stderr
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"paymentIds": []}))
    invalid = _program(tmp_path, str(broken))
    assert invalid.returncode == 1 and "1 invalid" in invalid.stdout, invalid.stderr
    missing = _program(tmp_path, str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and not missing.stdout


def test_the_program_collects_again_after_its_imports_and_leaves_exit_functions_their_run(tmp_path) -> None:
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('at exit: collecting', gc.isenabled(), 'frozen', gc.get_freeze_count() > 0,"
            " file=sys.stderr))\n"
            "from validator.__main__ import run\n"
            "run()\n")
    run = _program(tmp_path, str(_payload(tmp_path)), code=code)
    assert run.returncode == 0 and "1 input: 1 valid" in run.stdout
    assert "at exit: collecting True frozen True" in run.stderr
