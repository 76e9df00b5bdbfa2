"""The spec passes Stoplight Spectral's `spectral:oas` ruleset (.spectral.yaml) with no finding at all.

Spectral is a Node.js tool: `.ci/run` installs the pinned version into `.ci/node` (ignored by git).
Without it the tests skip, saying how to install it, except in CI (the CI environment variable set),
where a missing Spectral fails them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
RULESET = REPO_ROOT / ".spectral.yaml"
SPEC = REPO_ROOT / "spec" / "openapi.yaml"
LOCAL_SPECTRAL = REPO_ROOT / ".ci" / "node" / "node_modules" / ".bin" / "spectral"
CI_RUN = REPO_ROOT / ".ci" / "run"


def pinned_version() -> str:
    match = re.search(r"^SPECTRAL_VERSION=([0-9.]+)$", CI_RUN.read_text(encoding="utf-8"), re.M)
    assert match, ".ci/run pins the Spectral version it installs (SPECTRAL_VERSION=x.y.z)"
    return match.group(1)


def spectral() -> str:
    """The Spectral executable: .ci/run's install, else one on PATH; skip (fail in CI) without one."""
    found = str(LOCAL_SPECTRAL) if LOCAL_SPECTRAL.is_file() else shutil.which("spectral")
    if found:
        return found
    how = f"npm install --prefix .ci/node @stoplight/spectral-cli@{pinned_version()} (as .ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(f"Stoplight Spectral is not installed, and CI is set: {how}", pytrace=False)
    pytest.skip(f"Stoplight Spectral is not installed; install it with: {how}")


def lint(spec_path: Path, tmp_path: Path) -> list[dict]:
    """Spectral's results (every severity) for a spec file, with the project's ruleset."""
    output = tmp_path / "spectral.json"
    run = subprocess.run(
        [spectral(), "lint", "--ruleset", str(RULESET), "--format", "json", "--output", str(output),
         "--fail-severity", "hint", str(spec_path)],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT,
    )
    assert output.is_file(), f"spectral wrote no results (exit {run.returncode}): {run.stderr[-2000:]}"
    results = json.loads(output.read_text(encoding="utf-8") or "[]")
    assert (run.returncode == 0) == (results == []), f"exit {run.returncode} with {len(results)} results"
    return results


def describe(results: list[dict]) -> str:
    return "\n".join(
        f"  {r.get('code')} ({['error', 'warning', 'info', 'hint'][r.get('severity', 0)]}) "
        f"{'.'.join(map(str, r.get('path', [])))}: {r.get('message')}"
        for r in results
    )


def test_the_ruleset_is_spectral_oas_unchanged() -> None:
    ruleset = yaml.safe_load(RULESET.read_text(encoding="utf-8"))
    assert ruleset == {"extends": ["spectral:oas"]}, "no rule of spectral:oas is switched off or weakened"


def test_the_spec_passes_spectral_oas_without_any_warning(tmp_path: Path) -> None:
    results = lint(SPEC, tmp_path)
    assert not results, f"{len(results)} Spectral findings:\n{describe(results)}"


def test_spectral_reports_what_the_ruleset_checks(tmp_path: Path) -> None:
    document = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    del document["info"]["contact"]
    del document["paths"]["/v1/sandbox/batch-runs"]["post"]["description"]
    broken = tmp_path / "openapi.json"  # JSON: a YAML dump would let YAML 1.2 read "0180" as a number
    broken.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    results = lint(broken, tmp_path)
    assert sorted(r["code"] for r in results) == ["info-contact", "operation-description"], describe(results)


def test_the_readme_installs_the_version_ci_pins() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"@stoplight/spectral-cli@([0-9.]+)", readme) == [pinned_version()]
