"""The README stays true: its two commands (the main job's output and exit code, the test command CI runs), the
signing walk-through, and the profile section's table (every profile key and "profile: yes" decision, the document's own words)."""
from __future__ import annotations

import json
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


# ---- "Gating your implementation: its profile": the one table of every point a profile can state

PROFILE_SECTION = "## Gating your implementation: its profile"


def _profile_table() -> list[dict[str, str]]:
    section = README.split(PROFILE_SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    split = lambda line: [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
    header = split(lines[0])
    assert header == ["open point", "the document", "default", "key"]
    return [dict(zip(header, split(line))) for line in lines[2:]]


def _named_keys(cell: str) -> set[str]:
    """The profile keys a key cell names: each backticked `key: …` (or a bare `key`)."""
    return {m.group(1) for code in re.findall(r"`([^`]+)`", cell) for m in [re.match(r"([a-z][a-z-]*)(?::|$)", code)] if m}


def test_the_profile_section_names_every_profile_key():
    schema = json.loads((ROOT / "validator" / "profile.schema.json").read_text(encoding="utf-8"))
    keys = set(schema["properties"]) - {"name", "today"}
    named = set().union(*(_named_keys(row["key"]) for row in _profile_table()))
    missing = sorted(keys - named)
    assert not missing, f"the README's profile table names no row for {missing}"
    leading = {row["open point"]: _named_keys(re.search(r"`[^`]+`", row["key"]).group(0)) for row in _profile_table()
               if not row["key"].startswith("no key")}
    stale = {point: key for point, key in leading.items() if not key or not key <= keys}
    assert not stale, f"rows whose key the profile schema does not have: {stale}"


def test_the_profile_section_covers_every_decision_a_profile_states():
    assumptions = README.split("## Assumptions", 1)[1].split("\n## ", 1)[0]
    stated = [line.split("|")[1].strip() for line in assumptions.splitlines()
              if line.startswith("| A") and line.rstrip(" |").rsplit("|", 1)[1].strip().startswith("yes")]
    covered = {a for row in _profile_table() for a in re.findall(r"\bA\d+\b", row["open point"])}
    uncovered = [a for a in stated if a not in covered]
    assert stated and not uncovered, f"decisions marked 'profile: yes' without a row in the profile table: {uncovered}"
    assert README.count("| open point | the document | default | key |") == 1  # the table has one home
    assert "(#gating-your-implementation-its-profile)" in README.split("## Using it", 1)[1].split("\n## ", 1)[0]


def test_the_profile_section_quotes_the_document_exactly():
    from document import load_document  # the interface document, beside the repository (tests/document.py)

    text = " ".join(load_document().path.read_text(encoding="utf-8").split())
    quotes = [q for row in _profile_table() for q in re.findall(r'"([^"]+)"', row["the document"])]
    assert len(quotes) >= 20
    wrong = [q for q in quotes for part in q.split("…") if part.strip(" ,.()") and " ".join(part.split()) not in text]
    assert not wrong, f"not the document's words: {wrong}"


# ---- every command the README shows: run as written (from the checkout), or said why not here

def _readme_commands() -> list[str]:
    """Each command of the README's sh/bash blocks (continuation lines joined, comments dropped, ``&&`` apart), and each
    indented command a README paragraph or the example file shows (``    pytest ...``)."""
    commands = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)\n```", README, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands += [" ".join(part.split()) for part in line.split(" && ")]
    commands += [" ".join(c.split()) for c in re.findall(r"^    (pytest [^#\n]*?)\s*(?:#.*)?$", README, re.M)]
    return commands


# The commands a test runs as written here, with the exit code the README implies; `pytest ...` from the checkout.
RUN_HERE = {
    ".venv/bin/obvalidate --today 2026-07-01 validator/examples/": 1,
    "pytest examples/test_tpp_client.py": 0,
    "pytest examples/test_tpp_client.py --ob-sandbox-now 2031-03-14T07:30:00Z": 0,
    "obvalidate rules": 0,
    "obvalidate explain kid-invalid": 0,
    "obvalidate spec check": 0,
    "obvalidate sandbox faults": 0,
    "obvalidate edge-cases": 0,
    "obvalidate keygen keys/": 0,
    "obvalidate sign --key keys/key.pem --cert keys/cert.pem docs/examples/sepa-request.json > signed.json": 0,
    "obvalidate --format json --kind request signed.json": 0,
    "obvalidate sign --key keys/key.pem --cert keys/cert.pem docs/examples/sepa-request.http > signed.http": 0,
    "obvalidate signed.http": 0,
    "obvalidate docs/examples/sepa-request.json": 1,
}
# What the README shows that no test here runs as written, and why (each command matches one reason).
NOT_RUN_HERE = {
    r"pip install|^python3 -m venv \.venv$": "the Quick start's install: what CI's .ci/run does on its fresh clone",
    r"^\.venv/bin/python -m pytest$": "the whole test suite: the command CI runs (test_readme_has_the_two_commands)",
    r"(payload|bulk|batch|basket|ctx|bank|session|devtools|verdicts)\.(json|jsonl|yaml|har)|dir/|out\.sarif":
        "a file of the reader's own",
    r"https://[a-z0-9.-]*(bank|example)": "a bank's host: run by the tests of its section against the sandbox",
    r"sandbox serve|mitmdump|proxy --upstream": "a server running until stopped: the sandbox and proxy tests serve it",
    r"curl|mapfile|args=|sed |send |request\.http|pid=|href=|page=|action=|csrf=|BASE=|read -r|if \[|^\}$"
    r"|^[a-z]+\(\) \{":
        "the sandbox's curl walk-through: run as written by tests/sandbox/test_sandbox_readme.py",
    r"^obvalidate conform( |$)": "a gate run of minutes: the gate's tests run each option",
    r"^obvalidate edge-cases --": "an edge-case run against a sandbox: tests/edge_cases run each",
    r"tools/fuzz_long\.py": "a long fuzzing run (tests/fuzz runs its corpus)",
    r"^obvalidate (validate|traffic) --engine dask ":
        "a Dask job over a lake's archive or a month's log: tests/scale/test_dask.py runs it on generated files",
    r"^export PYSPARK_PYTHON=|^spark-submit ": "the spark-submit recipe: tests/scale/test_spark.py runs it (local mode)",
}


def test_every_readme_command_is_run_here_or_says_why_not():
    unaccounted = [c for c in _readme_commands()
                   if c not in RUN_HERE and not any(re.search(p, c) for p in NOT_RUN_HERE)]
    assert not unaccounted, f"README commands no test runs and no reason covers: {unaccounted}"
    shown = set(_readme_commands())
    assert not set(RUN_HERE) - shown, f"commands run here that the README no longer shows: {set(RUN_HERE) - shown}"


def test_the_readme_commands_run_as_written(tmp_path):
    """Each command of RUN_HERE through bash, as a reader types it: `pytest` from the checkout (its pyproject's
    pythonpath puts the checkout before tests/, so tests/validator/ never shadows the validator), the others in a
    directory of their own beside the checkout's files (the walk-through writes keys/ and signed.*)."""
    import os
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("docs", "validator", "spec", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(bin_dir.parent)
    failed = []
    for command, code in RUN_HERE.items():   # in README order: keygen before sign
        cwd = ROOT if command.startswith("pytest ") else tmp_path
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != code or "Traceback" in done.stdout + done.stderr:
            failed.append(f"{command}: exit {done.returncode} (expected {code})\n{(done.stdout + done.stderr)[-1500:]}")
    assert not failed, "\n\n".join(failed)


def test_the_tpp_sections_accounts_are_the_sandboxs():
    """"Testing your TPP client" names the accounts of the fixed test data by IBAN and id, with their balances."""
    from conformance.sandbox.domain import opaque_id
    from conformance.sandbox.testdata import ACCOUNTS, CUSTOMERS

    section = README.split("## Testing your TPP client", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip(" `*") for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and "`NO" in line]
    assert len(rows) == 5, rows
    names = {c["customerNumber"]: c["name"] for c in CUSTOMERS}
    for customer, account, iban, account_id, balance in rows:
        [data] = [a for a in ACCOUNTS if a["iban"] == iban]
        assert names[data["customerNumber"]] in customer and data["accountName"] in account
        assert account_id == opaque_id("ACC-" + data["bban"])
        amount = data["balances"][0]["balanceAmount"]["amount"]
        assert balance.replace(" ", "") == f"{amount // 100},{amount % 100:02d}", (iban, balance)


def test_the_quick_start_lists_each_optional_tool_as_ci_installs_it():
    """Issue 29, item 9: every tool whose tests skip without it, its tests (files that exist) and the install command
    .ci/run uses (the same pinned versions)."""
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| tool")]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert {r[0] for r in rows} >= {"Stoplight Spectral", "Stoplight Prism", "chromium (Debian's, headless)"}
    for tool, tests, install in rows:
        for path in re.findall(r"`(tests/[^`]+\.py)`", tests):
            assert (ROOT / path).exists(), (tool, path)
        for package, version in re.findall(r"(@stoplight/[a-z-]+)@([0-9.]+)", install):
            name = package.split("/")[1].split("-")[0].upper()
            assert f"{name}_VERSION={version}" in ci and package in ci, (tool, install)
        if "apt-get" in install:
            assert all(word in ci for word in install.strip("`").split()[2:]), (tool, install)
