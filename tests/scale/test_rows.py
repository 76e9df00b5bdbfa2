"""The finding rows of the library function and of a job's tasks are exactly the command line's findings, field by
field (issue 30): in one process, the archive cut into many small tasks, so lines are cut at task boundaries of every
kind; the same records from Parquet; and the records the job cannot judge counted by reason, never dropped."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scale_archive import TODAY, assert_same_rows, cli_rows, settings, write_archive

pytest.importorskip("pyarrow")
pytest.importorskip("fsspec")

from conformance.scale import driver, job  # noqa: E402
from conformance.scale.rows import Settings, finding_rows  # noqa: E402


def run_in_process(names, out: Path, task_bytes: int, the_settings: Settings, fail_fast: bool = False):
    """The job as an engine runs it, in this process: plan, counting pass, tasks; the tally and the rows written."""
    tally = driver.validate(driver.sequential, [str(n) for n in names], the_settings, str(out), workers=1,
                            fail_fast=fail_fast, size=task_bytes)
    return tally, (job.read_rows(str(out)) if (out / job.FINDINGS).exists() else [])


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    return write_archive(tmp_path_factory.mktemp("archive") / "archive.jsonl")


@pytest.fixture(scope="module")
def expected(archive) -> list[dict]:
    return cli_rows(archive)


def test_the_library_function_gives_the_command_lines_rows(archive, expected):
    lines = archive.read_bytes().split(b"\n")
    records = [(str(archive), n, line.rstrip(b"\r")) for n, line in enumerate(lines, 1) if line.strip(b" \t\r")]
    rows = list(finding_rows(records, settings()))
    rules = {row["rule"] for row in rows}
    assert {"amount-minor-units", "iban-invalid", "schema-required", "execution-date-past", "json-syntax",
            "json-encoding", "json-too-large", "kind-undetected", "json-binary", "json-too-deep",
            "json-duplicate-key", "json-non-finite"} <= rules, rules
    assert_same_rows(rows, expected)


@pytest.mark.parametrize("task_bytes", [97, 1000, 1 << 20])
def test_tasks_cut_anywhere_give_the_command_lines_rows(archive, expected, tmp_path, task_bytes, monkeypatch):
    monkeypatch.setattr(job, "FLUSH_ROWS", 7)   # a task writes its rows in several parts
    tally, rows = run_in_process([archive], tmp_path / "out", task_bytes, settings())
    assert_same_rows(rows, expected)
    records = len([line for line in archive.read_bytes().split(b"\n") if line.strip(b" \t\r")])
    assert tally.read == records and tally.judged + sum(tally.not_judged.values()) == records
    assert set(tally.not_judged) == {"json-syntax", "json-encoding", "json-too-large", "kind-undetected",
                                     "json-binary", "json-too-deep"}
    summary = job.write_summary(tally, str(tmp_path / "out"))
    first = {(r["rule"], r["kind"]): (r["first_source"], r["first_record"], r["count"]) for r in summary["by_rule_and_kind"]}
    for (rule, kind), (source, record, count) in first.items():
        mine = [(row["source"], row["record"]) for row in expected if (row["rule"], row["kind"]) == (rule, kind)]
        assert (source, record, count) == (*min(mine), len(mine))


def test_parquet_records_give_the_rows_of_the_same_lines(archive, expected, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = [line.rstrip(b"\r") for line in archive.read_bytes().split(b"\n")]
    kept = [(n, line) for n, line in enumerate(lines, 1) if line.strip(b" \t\r")]
    table = pa.table({"payload": pa.array([line for _n, line in kept], pa.binary())})
    path = tmp_path / "archive.parquet"
    pq.write_table(table, path, row_group_size=17)
    _tally, rows = run_in_process([path], tmp_path / "out", 1 << 20, settings())
    number = {row: n for row, (n, _line) in enumerate(kept, 1)}   # Parquet row -> the line it was
    mine = [{**row, "source": str(archive), "record": number[row["record"]]} for row in rows]
    assert_same_rows(mine, [{**row, "source": str(archive)} for row in expected])


def test_bad_records_never_stop_the_job_and_fail_fast_stops_at_the_first(tmp_path):
    good = b'{"paymentIds": ["a"]}\n'
    path = tmp_path / "bad.jsonl"
    with path.open("wb") as fh:
        fh.write(good + b'{"paymentIds": [\n' + b'{"paymentIds": ["\xc3\x28"]}\n' + b'{"nothing": "known"}\n')
        fh.write(b'{"paymentIds": ["' + b"x" * 50_000_000 + b'"]}\n')   # a 50 MB line
        fh.write(good)
    whole = tmp_path / "whole.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"payload": [good.strip().decode()] * 3}), whole)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes()[:-30])
    big = Settings(today=TODAY, max_bytes=1 << 20)
    tally, rows = run_in_process([path, cut, whole], tmp_path / "out", 1 << 20, big)
    assert (tally.read, tally.judged) == (9, 5)
    assert dict(tally.not_judged) == {"json-syntax": 1, "json-encoding": 1, "kind-undetected": 1, "json-too-large": 1}
    assert [(s, "not a readable Parquet file" in why) for s, why in tally.unreadable] == [(str(cut), True)]
    assert {(row["source"], row["record"], row["rule"]) for row in rows if row["kind"] is None} == {
        (str(path), 2, "json-syntax"), (str(path), 3, "json-encoding"), (str(path), 4, "kind-undetected"),
        (str(path), 5, "json-too-large")}
    with pytest.raises(job.Stop, match=r"bad.jsonl:2: not judged \(json-syntax\)"):
        run_in_process([path], tmp_path / "stopped", 1 << 20, big, fail_fast=True)


def test_the_settings_pickle_and_build_the_validator_once_per_process():
    import pickle

    from conformance.scale import rows as rows_module

    mine = settings()
    again = pickle.loads(pickle.dumps(mine))
    assert again == mine and again.validator() is mine.validator()
    assert len([s for s in rows_module._VALIDATORS if s == mine]) == 1


def test_importing_the_rows_imports_no_engine():
    code = ("import sys, conformance.scale.rows, conformance.scale.job, conformance.scale.inputs;"
            "print(sorted(m for m in ('pyarrow', 'dask', 'distributed', 'pyspark', 'fsspec') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_readmes_library_example_runs():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Past one machine: Dask and Spark", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)   # noqa: S102 - the README's own example
    assert [(row["rule"], row["record"]) for row in namespace["rows"]] == [("basket-size", 1)]


def test_an_fsspec_url_and_glob_give_the_rows_of_the_same_file(archive, expected, tmp_path):
    import fsspec

    with fsspec.open("memory://lake/2026/archive.jsonl", "wb") as fh:
        fh.write(archive.read_bytes())
    _tally, rows = run_in_process(["memory://lake/*/*.jsonl"], tmp_path / "out", 1000, settings())
    assert {row["source"] for row in rows} == {"memory:///lake/2026/archive.jsonl"}   # fsspec's own form of the URL
    assert_same_rows([{**row, "source": str(archive)} for row in rows], expected)
