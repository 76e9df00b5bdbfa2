"""``obvalidate validate --engine dask`` and ``traffic --engine dask`` against a real ``distributed`` scheduler and two
worker processes this module starts (and ends) itself: the rows are exactly the command line's, field by field, for
the archive with every defect class and for the proxy's log; a bad record or a damaged file never stops the job, and
--fail-fast stops at the first (issue 30). The cluster starts once for the module, bounded in time."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from scale_archive import MAX_BYTES, TODAY, assert_same_rows, cli_rows, write_archive
from scale_traffic import cli_traffic_rows, write_log
from validator.cli import main

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from conformance.scale import job  # noqa: E402
from conformance.scale.traffic import TrafficSettings  # noqa: E402

START_SECONDS = 90


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a scheduler with two worker processes (one thread each), all ended after the module."""
    from distributed import Client

    where = tmp_path_factory.mktemp("cluster")
    address_file = where / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=where)
    processes = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file", str(address_file)], **quiet)]
    try:
        deadline = time.monotonic() + START_SECONDS
        while not address_file.exists():
            assert processes[0].poll() is None and time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        for _ in range(2):
            processes.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--nworkers", "1",
                                               "--nthreads", "1", "--no-nanny", "--no-dashboard", "--scheduler-file",
                                               str(address_file)], **quiet))
        address = json.loads(address_file.read_text())["address"]
        with Client(address, timeout=START_SECONDS) as client:
            client.wait_for_workers(2, timeout=START_SECONDS)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_archive_on_the_cluster_gives_the_command_lines_rows(scheduler, tmp_path):
    archive = write_archive(tmp_path / "archive.jsonl")
    out = tmp_path / "out"
    result = run("validate", "--engine", "dask", "--scheduler", scheduler, "--today", TODAY, "--max-bytes",
                 str(MAX_BYTES), str(archive), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert_same_rows(job.read_rows(str(out)), cli_rows(archive))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "dask" and summary["records"]["not_judged"] == 6
    assert "records:" in result.stderr and "not judged" in result.stderr
    again = run("validate", "--engine", "dask", "--scheduler", scheduler, str(archive), "--out", str(out))
    assert again.exit_code == 2 and "holds findings of an earlier run" in again.output


def test_the_proxy_log_on_the_cluster_gives_the_traffic_commands_rows(scheduler, tmp_path):
    log = write_log(tmp_path)
    out = tmp_path / "out"
    result = run("traffic", "--engine", "dask", "--scheduler", scheduler, str(log), "--out", str(out))
    assert result.exit_code == 1, result.output
    expected, _summary = cli_traffic_rows(log, TrafficSettings().profile_digest)
    assert_same_rows(job.read_rows(str(out)), expected)
    assert json.loads((out / "summary.json").read_text())["tpps"] == 3


def test_bad_records_and_a_damaged_file_never_stop_the_job(scheduler, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = b'{"paymentIds": ["a"]}'
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(b"\n".join([good, b"{not json", b'{"paymentIds": ["\xff"]}', b'{"what": 1}', good]) + b"\n")
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table({"payload": [good.decode()] * 2}), whole)
    (tmp_path / "cut.parquet").write_bytes(whole.read_bytes()[:-25])
    out = tmp_path / "out"
    result = run("validate", "--engine", "dask", "--scheduler", scheduler, str(tmp_path / "*.jsonl"),
                 str(tmp_path / "*.parquet"), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert f"cannot read {tmp_path / 'cut.parquet'}: not a readable Parquet file" in result.stderr
    records = json.loads((out / "summary.json").read_text())["records"]
    assert records == {"read": 7, "judged": 4, "not_judged": 3,
                       "not_judged_by_reason": {"json-encoding": 1, "json-syntax": 1, "kind-undetected": 1}}
    stopped = run("validate", "--engine", "dask", "--scheduler", scheduler, "--fail-fast", str(lines), "--out",
                  str(tmp_path / "stopped"))
    assert stopped.exit_code == 2
    assert "stopped at the first record not judged (--fail-fast)" in stopped.stderr
    assert f"{lines}:2: not judged (json-syntax)" in stopped.stderr


def test_without_a_scheduler_a_local_cluster_of_jobs_workers(tmp_path):
    archive = write_archive(tmp_path / "archive.jsonl", lines=30)
    out = tmp_path / "out"
    result = run("validate", "--engine", "dask", "--jobs", "1", "--today", TODAY, "--max-bytes", str(MAX_BYTES),
                 str(archive), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert_same_rows(job.read_rows(str(out)), cli_rows(archive))


def test_engine_options_are_checked_before_anything_starts(tmp_path):
    archive = tmp_path / "archive.jsonl"
    archive.write_bytes(b'{"paymentIds": ["a"]}\n')
    assert "--out goes with --engine dask" in run("validate", str(archive), "--out", str(tmp_path)).output
    unknown = run("validate", "--engine", "hadoop", str(archive), "--out", str(tmp_path))
    assert unknown.exit_code == 2 and "no engine 'hadoop'; one of process, dask" in unknown.output
    assert "--out DIR" in run("validate", "--engine", "dask", str(archive)).output
    assert "not --format or --output" in run("validate", "--engine", "dask", "--format", "json", str(archive),
                                             "--out", str(tmp_path / "o")).output
    assert "--scheduler and --out go with --engine dask" in run("traffic", str(archive), "--out", str(tmp_path)).output
    har = run("traffic", "--engine", "dask", "--input-format", "har", str(archive), "--out", str(tmp_path / "o"))
    assert har.exit_code == 2 and "judges the proxy's JSONL log" in har.output
    missing = run("validate", "--engine", "dask", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"))
    assert missing.exit_code == 2 and "none.jsonl: cannot read it: No such file" in missing.output
