"""The GitHub Action (action.yml) and the pre-commit hooks (.pre-commit-hooks.yaml), exercised by running their
commands: the Action's `run:` steps in bash as a runner runs a composite step (its `${{ … }}` expressions substituted
here, the upload step left to GitHub), the hooks' entries with their args on the bundled examples and profiles.

Both install this checkout with pip the way GitHub and pre-commit do, into a fresh environment of the test (its
dependencies borrowed from the test's own, so no network is needed): what they run is the installed command."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from conformance.server_process import SandboxProcess, free_port

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*(?P<context>[a-z]+)\.(?P<name>[A-Za-z0-9_-]+)\s*\}\}")
EXAMPLES = ROOT / "validator" / "examples"


def expand(text: str, inputs: dict[str, str]) -> str:
    """The step's text with the ``${{ inputs.X }}`` and ``${{ github.action_path }}`` expressions substituted; any
    other expression fails the test (the runner would substitute something this test does not know)."""
    def value(match: re.Match) -> str:
        context, name = match["context"], match["name"]
        if context == "inputs":
            assert name in ACTION["inputs"], f"the action uses an input it does not declare: {name}"
            return inputs[name]
        assert (context, name) == ("github", "action_path"), match.group()
        return str(ROOT)

    expanded = EXPRESSION.sub(value, text)
    assert "${{" not in expanded, expanded
    return expanded


def action_inputs(**given: str) -> dict[str, str]:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update({name.replace("_", "-"): value for name, value in given.items()})
    for name, spec in ACTION["inputs"].items():
        assert not spec.get("required") or inputs[name], f"required input {name} not given"
    return inputs


def steps() -> list[dict]:
    return ACTION["runs"]["steps"]


def run_step(step: dict, inputs: dict[str, str], env: dict[str, str], cwd: Path, timeout: float = 300):
    """One composite `run:` step as the runner runs it (`shell: bash`: bash --noprofile --norc -eo pipefail)."""
    assert step["shell"] == "bash"
    script = cwd / "step.sh"
    script.write_text(expand(step["run"], inputs), encoding="utf-8")
    step_env = {**env, **{k: expand(str(v), inputs) for k, v in step.get("env", {}).items()}}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=step_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh environment with this checkout installed by the Action's install step (pip, not editable): its
    PATH first. The dependencies come from the test's environment (a .pth file), so pip installs only the checkout,
    without build isolation (the test's setuptools builds it) and without the network."""
    home = tmp_path_factory.mktemp("action")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "PIP_NO_DEPS": "1",
           "PIP_NO_BUILD_ISOLATION": "0", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("VIRTUAL_ENV", None)
    (install,) = [s for s in steps() if "pip install" in s.get("run", "")]
    done = run_step(install, action_inputs(target="http://unused.invalid"), env, home)
    assert done.returncode == 0, done.stderr
    where = subprocess.run(["obvalidate", "--version"], env=env, capture_output=True, text=True, cwd=home)
    assert where.returncode == 0, where.stderr
    located = subprocess.run(["python", "-c", "import validator, validator.spec as s; print(validator.__file__); "
                              "print(s.default_spec_path())"], env=env, capture_output=True, text=True, cwd=home)
    module, spec = located.stdout.split()
    assert Path(module).is_relative_to(venv), "the installed copy, not the checkout, must run"
    assert Path(spec).is_file() and not Path(spec).resolve().is_relative_to(ROOT)
    return env, home


# ---------------------------------------------------------------- the Action
def test_the_action_is_a_composite_action_with_its_inputs():
    assert ACTION["runs"]["using"] == "composite"
    for name in ("target", "cert", "key", "second-cert", "second-key", "tls-cert", "tls-key", "ca-bundle", "profile",
                 "suites", "checks", "seed", "max-examples", "wait-for-target", "rate-limit", "request-timeout",
                 "workers", "baseline", "write-baseline", "report-dir", "args", "headers"):
        assert name in ACTION["inputs"], name
    upload = steps()[-1]
    assert upload["uses"] == "actions/upload-artifact@v4" and upload["if"] == "always()"
    assert upload["with"]["path"] == "${{ inputs.report-dir }}"
    for step in steps():
        # An input pasted into a script would be run as shell: inputs reach the scripts through the environment.
        assert "${{" not in step.get("run", ""), step["name"]


def test_the_action_is_valid_action_metadata():
    from importlib import resources

    import jsonschema

    # SchemaStore's schema of action.yml files, as check-jsonschema vendors it (a test dependency).
    schema = json.loads(resources.files("check_jsonschema").joinpath("builtin_schemas/vendor/github-actions.json")
                        .read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    assert not [e.message for e in validator.iter_errors(ACTION)]
    broken = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    del broken["runs"]["steps"][0]["shell"]   # a composite run step must name its shell
    assert list(validator.iter_errors(broken))


def gate_step() -> dict:
    (step,) = [s for s in steps() if "obvalidate" in s.get("run", "") and "conform" in s["run"]]
    return step


def options_the_action_passes() -> set[str]:
    script = gate_step()["run"]
    passed = set(re.findall(r"^\s*option (-[-a-zA-Z]+)", script, re.M))
    passed |= set(re.findall(r"(--[a-z-]+)", re.search(r"args=\((.*)\)", script).group(1)))
    return passed


def test_every_option_the_action_passes_is_an_option_of_conform():
    from click.testing import CliRunner

    from conformance.gate.cli import conform

    assert {"--target", "--format", "--report-dir", "--cert", "--second-cert", "--tls-cert", "--wait-for-target",
            "--rate-limit", "--request-timeout", "--workers", "--baseline", "--write-baseline", "--profile",
            "-H"} <= options_the_action_passes()
    names = {opt for param in conform.params for opt in (*param.opts, *param.secondary_opts)}
    missing = sorted(options_the_action_passes() - names)
    assert not missing, f"the action passes options conform does not have: {missing}"
    assert CliRunner().invoke(conform, ["--help"]).exit_code == 0


def run_the_action(installed, tmp_path, **given):
    env, _ = installed
    inputs = action_inputs(**given)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    result = run_step(gate_step(), inputs, env, workspace)
    return result, workspace / inputs["report-dir"]


def test_the_action_waits_for_the_target_and_gates_it(installed, tmp_path):
    env, _ = installed
    server = SandboxProcess(tmp_path / "sandbox.db", port=free_port())
    # The target comes up seconds after the action starts, as a service an earlier step started in the background:
    # without the wait, the run would find nothing answering and exit 2.
    serve = shlex.join(["obvalidate", "sandbox", "serve", "--port", str(server.port), "--db", server.db])
    starter = subprocess.Popen(["bash", "-c", f"sleep 4 && exec {serve}"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        result, report_dir = run_the_action(installed, tmp_path, target=server.url, suites="stateful",
                                            checks="stateful:lifecycle", max_examples="1", seed="3",
                                            wait_for_target="60", headers="X-Test-Client: ci\nX-Other: two",
                                            report_dir="gate report")
    finally:
        starter.terminate()
        starter.wait(10)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {p.name for p in report_dir.iterdir()} >= {"conform.json", "conform.sarif", "conform.html",
                                                     "conform.junit.xml", "coverage.json"}
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("::error")]
    assert lines[-1].startswith("::notice title=obvalidate conform::1 check, ") and "(seed 3)" in lines[-1]
    assert re.search(r"^obvalidate conform: ended: 1/1 checks, 0 findings", result.stderr, re.M), result.stderr


def test_the_action_fails_with_annotations_on_findings_and_passes_with_their_baseline(installed, tmp_path):
    baseline = tmp_path / "conform-baseline.json"
    gate = dict(suites="stateful", checks="stateful:lifecycle", max_examples="1")
    with SandboxProcess(tmp_path / "sandbox.db", faults=("created-200",)) as server:
        # the common options as named inputs: the run writes its baseline, at the gateway's rate, with its timeout
        result, report_dir = run_the_action(installed, tmp_path, target=server.url, args="-q", workers="1",
                                            rate_limit="50", request_timeout="20", write_baseline=str(baseline),
                                            **gate)
        assert baseline.is_file(), result.stdout + result.stderr
        judged = json.loads((report_dir / "conform.json").read_text(encoding="utf-8"))["judged_by"]
        assert (judged["rate_limit"], judged["request_timeout"], judged["workers"]) == (50.0, 20.0, 1)
        (tmp_path / "workspace").rename(tmp_path / "first")
        known, _ = run_the_action(installed, tmp_path, target=server.url, baseline=str(baseline), **gate)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr == ""   # -q from args
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error title=")]
    assert errors and any("201" in e for e in errors), result.stdout
    assert (report_dir / "conform.sarif").is_file() and report_dir.name == "conform-report"
    # The same findings, known: warnings, and the step passes.
    assert known.returncode == 0, known.stdout + known.stderr
    warnings = [line for line in known.stdout.splitlines() if line.startswith("::warning title=")]
    assert len(warnings) == len(errors) and not [line for line in known.stdout.splitlines()
                                                  if line.startswith("::error")]
    assert "known (in the baseline)" in warnings[0] and "baseline " in known.stdout.splitlines()[-1]


def test_the_action_exits_2_when_the_run_cannot_happen(installed, tmp_path):
    result, report_dir = run_the_action(installed, tmp_path, target="http://127.0.0.1:9", wait_for_target="1",
                                        cert=str(tmp_path / "missing.pem"), key=str(tmp_path / "missing.key"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "missing.pem" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- the pre-commit hooks
def hook(hook_id: str) -> dict:
    (found,) = [h for h in HOOKS if h["id"] == hook_id]
    assert found["language"] == "python"
    return found


def run_hook(installed, found: dict, files: list[Path]):
    env, home = installed
    for file in files:   # pre-commit passes only the files its `files` pattern selects
        assert re.search(found["files"], file.as_posix()), (found["files"], file)
    command = [*shlex.split(found["entry"]), *found.get("args", []), *map(str, files)]
    return subprocess.run(command, env=env, cwd=home, capture_output=True, text=True, timeout=120)


def test_the_hooks_are_a_valid_pre_commit_manifest(tmp_path):
    from pre_commit.clientlib import InvalidManifestError, load_manifest

    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert [h["id"] for h in hooks] == ["obvalidate", "obvalidate-profile"]
    broken = tmp_path / ".pre-commit-hooks.yaml"
    broken.write_text(yaml.safe_dump([{**HOOKS[0], "language": "pythn"}]), encoding="utf-8")
    with pytest.raises(InvalidManifestError):
        load_manifest(str(broken))


def test_the_payload_hook_passes_good_payloads_and_fails_bad_ones(installed):
    found = hook("obvalidate")
    assert "--kind" not in found["entry"] + " ".join(found.get("args", []))   # each payload's kind detected
    good = run_hook(installed, found, [EXAMPLES / "bulk-payment-good.json"])
    assert good.returncode == 0, good.stdout + good.stderr
    assert "checked as bulk-payment (detected)" in good.stdout
    bad = run_hook(installed, found, [EXAMPLES / "bulk-payment-good.json", EXAMPLES / "bulk-payment-bad.json"])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert re.search(r"bulk-payment-bad\.json:52:24:\S+: error KID_INVALID/400 \[kid-invalid\]", bad.stdout), bad.stdout
    assert not re.search(found["files"], "bank-profile.yaml") and not re.search(found["files"], "README.md")


def test_the_profile_hook_checks_every_profile_it_is_given(installed, tmp_path):
    found = hook("obvalidate-profile")
    good = tmp_path / "bank-profile.yaml"
    good.write_text("name: Example Bank\namount-digits: exact\n", encoding="utf-8")
    also_good = tmp_path / "profiles" / "profile.yml"
    also_good.parent.mkdir()
    also_good.write_text("name: Other Bank\n", encoding="utf-8")
    bad = tmp_path / "old-profile.yaml"
    bad.write_text("amount-digit: exact\n", encoding="utf-8")
    ok = run_hook(installed, found, [good, also_good])
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "a valid profile (Example Bank)" in ok.stdout and "a valid profile (Other Bank)" in ok.stdout
    failed = run_hook(installed, found, [good, bad])
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "unknown key 'amount-digit'; did you mean 'amount-digits'?" in failed.stderr
    assert "a valid profile (Example Bank)" in failed.stdout
    assert not re.search(found["files"], "openapi.yaml")
