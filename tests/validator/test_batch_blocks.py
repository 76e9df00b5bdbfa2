"""JSONL handed to --jobs workers as blocks of whole lines (issue 7, batch throughput): every format's report is
the one of reading and validating the file line by line, with one process or two, from a file, an .ndjson file,
standard input or -o; invalid, malformed, blank, CRLF, over-long and unterminated lines included."""
from __future__ import annotations

import copy
import io
import json

import pytest
from click.testing import CliRunner

import validator.cli as cli
from validator import __version__
from validator.api import Validator
from validator.formats import render
from validator.jsonload import _TOO_LONG, _bounded_lines
from validator.rules.examples import spec_example
from validator.spec import load_spec

SPEC = load_spec()
TODAY = SPEC.example_today
MAX_BYTES = 2000


def numbered_sepa(count: int):
    """(n, a distinct SEPA payload) for n below ``count``: the spec's example, its endToEndIdentification numbered."""
    base = spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")
    for i in range(count):
        p = copy.deepcopy(base)
        p["endToEndIdentification"] = f"E2E-{i:08d}"
        yield i, p


def mixed_jsonl() -> bytes:
    lines = []
    for i, p in numbered_sepa(240):
        if i % 7 == 3:
            p["instructedAmount"]["amount"] = "-1.00"  # a rule finding
        if i % 11 == 5:
            p["creditorNme"] = p.pop("creditorName")  # detected with a did-you-mean warning
        lines.append(json.dumps(p).encode())
    lines[10] = b'{"broken": '  # malformed
    lines[20] = b"   "  # blank
    lines[30] = b"[" + b"1," * MAX_BYTES + b"1]"  # longer than --max-bytes
    lines[40] = b'{"a": 1, "a": 2}'  # a duplicate key, no kind
    text = b"\n".join(line + (b"\r" if i % 5 == 0 else b"") for i, line in enumerate(lines))
    return text + b"\n\n" + lines[1]  # a blank line, then a last line without a newline


def expected(data: bytes, source: str, fmt: str, quiet: bool = False) -> str:
    """The report of reading the bytes line by line (the reader the blocks replace) and validating each line."""
    validator = Validator(today=TODAY, max_bytes=MAX_BYTES)
    reports = []
    for lineno, line in enumerate(_bounded_lines(io.BytesIO(data), MAX_BYTES), 1):
        if line is _TOO_LONG:
            reports.append(validator.validate_line(None, None, f"{source}:{lineno}"))
        elif line.rstrip(b"\r\n").strip(b" \t\r"):
            reports.append(validator.validate_line(line.rstrip(b"\r\n"), None, f"{source}:{lineno}"))
    return render(reports, fmt, catalogue=validator.catalogue, tool_version=__version__, quiet=quiet)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(cli, "PARALLEL_MIN_BYTES", 0)  # workers even for a small file
    monkeypatch.setattr(cli, "BATCH_BYTES_SEQUENTIAL", 4096)  # many blocks, with edges inside lines
    monkeypatch.setattr(cli, "BATCH_BYTES_MIN", 4096)


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_reports_equal_line_by_line_reading_with_one_or_two_processes(tmp_path, small_blocks, fmt, jobs):
    data = mixed_jsonl()
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data)
    args = ["--today", TODAY, "--max-bytes", str(MAX_BYTES), "--format", fmt, "--jobs", jobs]
    result = CliRunner().invoke(cli.main, [*args, str(path)])
    assert result.exit_code == 1, result.output
    assert result.stdout == expected(data, str(path), fmt)
    assert "json-too-large" in result.stdout and "json-syntax" in result.stdout


def test_quiet_text_with_two_processes(tmp_path, small_blocks):
    data = mixed_jsonl()
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data)
    args = ["--today", TODAY, "--max-bytes", str(MAX_BYTES), "--quiet", "--jobs", "2", str(path)]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 1, result.output
    assert result.stdout == expected(data, str(path), "text", quiet=True)
    assert " warning " not in result.stdout and " error " in result.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_named_twice_is_numbered_from_its_first_line_each_time(tmp_path, small_blocks, jobs):
    data = mixed_jsonl()
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data)
    args = ["--today", TODAY, "--max-bytes", str(MAX_BYTES), "--format", "text", "--jobs", jobs]
    result = CliRunner().invoke(cli.main, [*args, str(path), str(path)])
    assert result.exit_code == 1, result.output
    once = expected(data, str(path), "text").splitlines()
    assert result.stdout.splitlines()[:-1] == once[:-1] * 2


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ndjson_output_file_and_stdin_equal_line_by_line_reading(tmp_path, small_blocks, jobs):
    data = mixed_jsonl()
    path = tmp_path / "batch.ndjson"
    path.write_bytes(data)
    out = tmp_path / "report.txt"
    args = ["--today", TODAY, "--max-bytes", str(MAX_BYTES), "--jobs", jobs]
    result = CliRunner().invoke(cli.main, [*args, "-o", str(out), str(path)])
    assert result.exit_code == 1
    assert out.read_text(encoding="utf-8") == expected(data, str(path), "text")
    piped = CliRunner().invoke(cli.main, [*args, "-"], input=data)
    assert piped.exit_code == 1
    assert piped.stdout == expected(data, "-", "text")


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("fail_on,exit_code", [("error", 0), ("warning", 1)])
def test_workers_parts_give_the_summary_and_exit_code(tmp_path, small_blocks, fmt, fail_on, exit_code):
    lines = []
    for i, p in numbered_sepa(120):
        if i % 9 == 4:
            p["creditorNickname"] = "Ola"  # a warning only: unknown-property
        lines.append(json.dumps(p).encode())
    path = tmp_path / "warnings.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "report"
    args = ["--today", TODAY, "--format", fmt, "--jobs", "2", "--fail-on", fail_on, "-o", str(out), str(path)]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == exit_code, result.output
    assert out.read_text(encoding="utf-8") == expected(path.read_bytes(), str(path), fmt)
    assert result.stderr.strip() == f"{out}: 120 inputs: 120 valid, 0 invalid \u2014 0 errors, 26 warnings"
