"""The fuzz run inside the test command, and the replay of every input a fuzz run has ever found failing.

The seeded run is bounded by time (``OBVALIDATE_FUZZ_SECONDS``, default 45 s) and by count; the cases are the
same on every machine (seed and index decide each one), a faster machine simply gets further. Long runs:
``python tools/fuzz_long.py`` (which also saves new failing inputs into ``tests/fuzz/corpus/``).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

import fuzzing

SEED = 20261122
MAX_CASES = 40_000
SECONDS = float(os.environ.get("OBVALIDATE_FUZZ_SECONDS", "45"))
CORPUS = fuzzing.corpus_cases()


def _explain(outcome: fuzzing.Outcome) -> str:
    lines = [f"{f.entry}: {f.problem}\n    input {f.case.description}" for f in outcome.failures[:10]]
    return f"{len(outcome.failures)} failure(s); replay one with tools/fuzz_long.py --seed {SEED} --replay INDEX:\n" + "\n".join(lines)


@pytest.mark.parametrize("case", CORPUS, ids=[c.description.split(":")[0].removeprefix("corpus ") for c in CORPUS])
def test_corpus_input_through_every_entry_point(case, tmp_path):
    outcome = fuzzing.Outcome()
    fuzzing.run_case(case, outcome, every_entry=True, workdir=tmp_path)
    if case.form == "bytes":
        fuzzing.run_cli_every_format(case, outcome, tmp_path)
    assert not outcome.failures, _explain(outcome)
    assert outcome.calls >= 3


def test_seeded_fuzz_run(tmp_path):
    outcome, done = fuzzing.fuzz(SEED, range(MAX_CASES), seconds=SECONDS, workdir=tmp_path)
    assert not outcome.failures, _explain(outcome)
    assert done >= min(MAX_CASES, 500)  # the budget bought a real run, not a handful of cases


def test_cases_are_reproducible():
    first, again = fuzzing.make_case(SEED, 123), fuzzing.make_case(SEED, 123)
    assert first.description == again.description and first.data == again.data
    assert fuzzing.to_text(first.value) == fuzzing.to_text(again.value)


def test_generator_reaches_every_form_and_entry_point(tmp_path):
    """The mix a run draws from: both forms, requests (.http and envelopes), payloads and every clock."""
    cases = [fuzzing.make_case(SEED, i) for i in range(400)]
    assert {c.form for c in cases} == {"object", "bytes"}
    assert {c.suffix for c in cases} >= {".json", ".jsonl", ".http"}
    assert {c.validator for c in cases} == {"today", "now", "real-time"}
    assert any("signed" in c.description for c in cases) and any("unsigned" in c.description for c in cases)
    assert any("bits flipped" in c.description for c in cases) and any(":=" in c.description for c in cases)
    outcome = fuzzing.Outcome(fastest={})
    fuzzing.run_case(next(c for c in cases if c.form == "bytes" and c.suffix == ".http"), outcome, every_entry=True, workdir=tmp_path)
    fuzzing.run_case(next(c for c in cases if c.form == "object"), outcome, every_entry=True, workdir=tmp_path)
    entries = set(outcome.fastest)
    assert {"Validator.validate", "validator.validate", "Validator.detect_kind", "Validator.validate_bytes",
            "validator.validate_bytes", "Validator.validate_line", "validate_file(.http)", "validator.validate_file",
            "validate_file(.jsonl)"} <= entries
    assert any(e.startswith("cli --format ") for e in entries)
    assert not outcome.failures


def test_the_harness_reports_an_escape(monkeypatch, tmp_path):
    """A harness that cannot see a failure proves nothing: make one entry point raise and one report an
    internal error."""
    from validator.api import Validator
    from validator.findings import Finding, Report

    case = fuzzing.make_case(SEED, next(i for i in range(100) if fuzzing.make_case(SEED, i).form == "bytes"))
    monkeypatch.setattr(Validator, "validate_bytes", lambda self, data, kind=None, **kw: 1 / 0)
    outcome = fuzzing.Outcome()
    fuzzing.run_case(case, outcome, workdir=tmp_path)
    assert outcome.failures and "ZeroDivisionError" in outcome.failures[0].problem
    monkeypatch.setattr(Validator, "validate_bytes",
                        lambda self, data, kind=None, **kw: Report("x", None, [Finding("internal-error", "error", "", "boom")]))
    outcome = fuzzing.Outcome()
    fuzzing.run_case(case, outcome, workdir=tmp_path)
    assert outcome.failures and "internal error" in outcome.failures[0].problem


def _long_run_tool():
    path = Path(__file__).resolve().parents[2] / "tools" / "fuzz_long.py"
    spec = importlib.util.spec_from_file_location("obvalidate_fuzz_long", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_long_run_tool_summarises_a_short_run(capsys):
    tool = _long_run_tool()
    assert tool.main(["--inputs", "60", "--workers", "1", "--seed", str(SEED), "--json", "--slowest", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["inputs"] == 60 and summary["escapes"] == 0 and summary["internal_errors"] == 0
    assert summary["inputs_per_second"] > 0 and len(summary["slowest_per_byte"]) == 3 and summary["retimed"]
    assert all(r["after_warm_up"] and r["end"] for r in summary["rss_kib"].values())
    assert tool.main(["--seed", str(SEED), "--replay", "7", "11"]) == 0
    assert capsys.readouterr().out.count("0 failing") == 2
