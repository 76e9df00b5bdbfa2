"""The library on Spark in local mode (local[2], one session for the module): ``mapInArrow`` over a DataFrame of
records, and the job spark-submit runs, give exactly the command line's rows for the archive with every defect class
and for the proxy's log (issue 30). Spark needs a Java runtime and pyspark: `.ci/run` installs both (Debian's
openjdk-17-jre-headless, the spark extra); without them the tests skip, except in CI (CI set), where they fail."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from scale_archive import MAX_BYTES, TODAY, assert_same_rows, cli_rows, settings, write_archive
from scale_traffic import cli_traffic_rows, write_log

from conformance.scale.rows import ROW_FIELDS  # noqa: E402


def _missing() -> str | None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        return f"pyspark and pyarrow are not installed ({exc}): pip install -e '.[spark]'"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java runtime: apt-get install -y openjdk-17-jre-headless (as .ci/run does)"
    return None


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"Spark cannot run, and CI is set: {missing}", pytrace=False)
        pytest.skip(missing)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("obvalidate-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.memory", "512m")
               .config("spark.local.dir", str(tmp_path_factory.mktemp("spark-local"))).getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return write_archive(tmp_path_factory.mktemp("archive") / "archive.jsonl")


def test_map_in_arrow_over_records_gives_the_command_lines_rows(spark, archive):
    from conformance.scale.spark import findings

    lines = archive.read_bytes().split(b"\n")
    records = [(str(archive), n, bytearray(line.rstrip(b"\r"))) for n, line in enumerate(lines, 1)
               if line.strip(b" \t\r")]
    frame = spark.createDataFrame(records, "source STRING, record BIGINT, payload BINARY").repartition(2)
    rows = [row.asDict() for row in findings(frame, settings()).collect()]
    assert rows and list(rows[0]) == list(ROW_FIELDS)
    assert_same_rows(rows, cli_rows(archive))


def test_the_spark_job_gives_the_command_lines_rows_and_summary(spark, archive, tmp_path):
    from conformance.scale import job
    from conformance.scale.spark import validate_job

    out = tmp_path / "out"
    tally = validate_job(spark, [str(archive)], settings(), str(out), size=16384)
    assert_same_rows(job.read_rows(str(out)), cli_rows(archive))
    assert tally.read == tally.judged + 6


def test_the_proxy_log_on_spark_gives_the_traffic_commands_rows(spark, tmp_path):
    from conformance.scale import job
    from conformance.scale.spark import traffic_job
    from conformance.scale.traffic import TrafficSettings

    log = write_log(tmp_path)
    tally, tpps = traffic_job(spark, [str(log)], TrafficSettings(), str(tmp_path / "out"))
    expected, summary = cli_traffic_rows(log, TrafficSettings().profile_digest)
    assert tpps == 3 and tally.read == summary["entries"]
    assert_same_rows(job.read_rows(str(tmp_path / "out")), expected)


def test_spark_submit_runs_the_recipe(spark, archive, tmp_path):
    """The README's recipe: spark-submit with the module's file, the command line's options, its exit code."""
    import pyspark

    from conformance.scale import spark as entry

    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    out = tmp_path / "out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run([submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false", entry.__file__,
                             "--today", TODAY, "--max-bytes", str(MAX_BYTES), "--out", str(out), str(archive)],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 1, result.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "spark" and summary["records"]["not_judged"] == 6
