"""Progress follows bytes validated, for every input form, on a terminal only (issue 7, item 3); JSONL
on stdin and .ndjson; -o still prints the summary."""
from __future__ import annotations

import copy
import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import validator.cli as cli
from validator.rules.examples import spec_example
from validator.spec import load_spec

SPEC = load_spec()
ROOT = Path(__file__).resolve().parents[2]
TODAY = ["--today", SPEC.example_today]
PERCENT = re.compile(r"validating +(\d+)%  ([\d.,]+) MB of ([\d.,]+) MB  ([\d,]+) inputs?")


def sepa_lines(n: int) -> str:
    base = spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")
    out = []
    for i in range(n):  # distinct payloads
        p = copy.deepcopy(base)
        p["endToEndIdentification"] = f"E2E-{i:08d}"
        p["instructedAmount"]["amount"] = f"{i % 900 + 1}.{i % 100:02d}"
        out.append(json.dumps(p))
    return "\n".join(out) + "\n"


@pytest.fixture
def terminal(monkeypatch):
    """Standard error taken for a terminal, and progress drawn at once and on every step."""
    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli.Progress, "DELAY", 0.0)
    monkeypatch.setattr(cli.Progress, "INTERVAL", 0.0)
    monkeypatch.setattr(cli, "PARALLEL_MIN_BYTES", 0)  # --jobs 2 even on a small test input
    monkeypatch.setattr(cli, "BATCH_BYTES_SEQUENTIAL", 16 * 1024)
    monkeypatch.setattr(cli, "BATCH_BYTES_MIN", 16 * 1024)


def percents(stderr: str) -> list[int]:
    return [int(m.group(1)) for m in PERCENT.finditer(stderr)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jsonl_progress_moves_in_steps_of_bytes(tmp_path, terminal, jobs):
    path = tmp_path / "batch.jsonl"
    path.write_text(sepa_lines(300), encoding="utf-8")
    result = CliRunner().invoke(cli.main, [*TODAY, "--jobs", jobs, str(path)])
    assert result.exit_code == 0, result.output
    steps = percents(result.stderr)
    assert len(set(steps)) >= 4, result.stderr  # 0 → 100 % in several steps, not one jump
    assert steps == sorted(steps) and steps[-1] == 100
    total = f"{path.stat().st_size / 1e6:,.1f}"
    assert all(m.group(3) == total for m in PERCENT.finditer(result.stderr))
    assert result.stderr.endswith("\r\x1b[K")  # erased before the report
    assert result.stdout.endswith("300 inputs: 300 valid, 0 invalid \u2014 0 errors, 0 warnings\n")


def test_a_single_file_is_named_while_it_is_checked(tmp_path, terminal):
    path = tmp_path / "bulk.json"
    path.write_bytes((ROOT / "validator" / "examples" / "bulk-payment-good.json").read_bytes())
    result = CliRunner().invoke(cli.main, [*TODAY, str(path)])
    assert f"checking {path} (0.0 MB)" in result.stderr
    assert percents(result.stderr)[-1] == 100


def test_a_directory_counts_the_bytes_of_all_its_files(tmp_path, terminal):
    (tmp_path / "a.json").write_text(json.dumps(spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")))
    (tmp_path / "b.ndjson").write_text(sepa_lines(100))
    result = CliRunner().invoke(cli.main, [*TODAY, str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "101 inputs" in result.stdout  # the .ndjson file is JSONL, found in the directory
    steps = percents(result.stderr)
    assert steps[-1] == 100 and len(set(steps)) >= 3


def test_jsonl_on_stdin_is_understood_and_counted_in_bytes_read(terminal):
    text = sepa_lines(120)
    bad = json.loads(text.splitlines()[1])
    bad["creditorNme"] = bad.pop("creditorName")
    lines = text.splitlines()
    lines[1] = json.dumps(bad)
    result = CliRunner().invoke(cli.main, [*TODAY, "-"], input="\n".join(lines) + "\n")
    assert result.exit_code == 1
    assert "120 inputs: 119 valid, 1 invalid" in result.stdout
    assert "-:2: note checked as sepa-credit-transfer (detected)" in result.stdout
    assert re.search(r"validating [\d.]+ MB read  120 inputs", result.stderr)  # size unknown before reading


def test_one_document_on_stdin_is_still_one_input():
    pretty = json.dumps(spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin"), indent=2)
    result = CliRunner().invoke(cli.main, [*TODAY, "-"], input=pretty)
    assert result.exit_code == 0 and "1 input: 1 valid" in result.stdout


def test_no_progress_off_a_terminal_or_with_quiet(tmp_path, terminal, monkeypatch):
    path = tmp_path / "batch.jsonl"
    path.write_text(sepa_lines(50), encoding="utf-8")
    assert CliRunner().invoke(cli.main, [*TODAY, "-q", str(path)]).stderr == ""
    monkeypatch.setattr(cli, "_stderr_is_terminal", lambda: False)
    assert CliRunner().invoke(cli.main, [*TODAY, str(path)]).stderr == ""


def test_output_file_still_prints_the_summary(tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(sepa_lines(3), encoding="utf-8")
    out = tmp_path / "report.sarif"
    result = CliRunner().invoke(cli.main, [*TODAY, "--format", "sarif", "-o", str(out), str(path)])
    assert result.exit_code == 0
    assert result.stderr == f"{out}: 3 inputs: 3 valid, 0 invalid \u2014 0 errors, 0 warnings\n"
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_jobs_are_used_by_size_not_by_line_count():
    mib = 1024 * 1024
    assert cli._use_workers(["bulk.jsonl"], mib, 2)  # e.g. 400 bulk payments of 2.6 KB: far below 2,001 lines
    assert not cli._use_workers(["small.jsonl"], mib - 1, 2)
    assert cli._use_workers(["-"], None, 2)  # a pipe: size unknown
    assert not cli._use_workers(["one.json"], 50 * mib, 2)  # one document: nothing to share
    assert cli._use_workers(["a.json", "b.json"], 2 * mib, 2)
    assert not cli._use_workers(["bulk.jsonl"], 50 * mib, 1)


def test_jobs_share_small_batches_among_workers():
    # A 0.5 MB file is split into at least 8 batches per worker once it is worth running in parallel.
    assert cli._batch_bytes(2 * 1024 * 1024, 2) == 32 * 1024
    assert cli._batch_bytes(None, 2) == cli.BATCH_BYTES_SEQUENTIAL
    assert cli._batch_bytes(10**9, 2) == cli.BATCH_BYTES_MAX


def test_progress_on_a_real_pseudo_terminal(tmp_path):
    """The real terminal check, through a pty; --jobs 2 with the parallel threshold lowered."""
    path = tmp_path / "batch.jsonl"
    path.write_text(sepa_lines(400), encoding="utf-8")
    code = (
        "import sys, validator.cli as c; c.Progress.DELAY = 0; c.Progress.INTERVAL = 0; c.PARALLEL_MIN_BYTES = 0; "
        "c.BATCH_BYTES_MIN = 16384; sys.argv[0] = 'obvalidate'; c.main()"
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *TODAY, "--jobs", "2", str(path)],
        stdout=subprocess.PIPE, stderr=slave, cwd=ROOT,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    stdout = proc.communicate(timeout=120)[0].decode()
    os.close(master)
    seen = b"".join(chunks).decode()
    assert "400 inputs: 400 valid" in stdout
    steps = percents(seen)
    assert len(set(steps)) >= 3 and steps[-1] == 100, seen
