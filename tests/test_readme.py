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
