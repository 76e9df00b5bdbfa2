"""The import layering written down in pyproject.toml ([tool.importlinter]) holds: `lint-imports` passes.

Run as part of the test suite so that a change which quietly imports upwards (an engine importing the CLI, the
validator importing conformance, a circle between the request checks and the engine) fails the tests.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def lint_imports(*args: str) -> subprocess.CompletedProcess:
    # The lint-imports of the interpreter running the tests (the project's .venv), not whichever is on PATH.
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if command is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[test]'")
    return subprocess.run([command, "--no-cache", "--no-logo", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_import_contracts_are_kept():
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_broken_contract_fails(tmp_path):
    """The check can fail: a contract the code breaks (the engine does import the spec) is reported."""
    config = tmp_path / "broken.toml"
    config.write_text(
        '[tool.importlinter]\nroot_packages = ["validator"]\n\n'
        '[[tool.importlinter.contracts]]\nname = "engine without spec"\ntype = "forbidden"\n'
        'source_modules = ["validator.engine"]\nforbidden_modules = ["validator.spec"]\n',
        encoding="utf-8",
    )
    result = lint_imports("--config", str(config))
    assert result.returncode == 1
    assert "engine without spec BROKEN" in result.stdout
