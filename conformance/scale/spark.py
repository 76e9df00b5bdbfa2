"""The library on Spark: :func:`findings` -- ``mapInArrow`` from a DataFrame of records (``source``, ``record``,
``payload``) to the finding rows' schema -- for a pipeline's own DataFrames; and the job of ``obvalidate validate
--engine dask`` / ``traffic --engine dask`` on a Spark session (:func:`validate_job`, :func:`traffic_job`), run by
``spark-submit`` with this file::

    spark-submit --master 'local[2]' "$(python -c 'import conformance.scale.spark as m; print(m.__file__)')" \\
        --today 2026-07-01 --out findings/ 'archive/*.jsonl'

The executors need obvalidate with its ``spark`` extra installed (``PYSPARK_PYTHON`` naming that Python).
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Iterator, Sequence

from conformance.scale import driver
from conformance.scale.job import Stop, Tally
from conformance.scale.rows import Settings, arrow_schema, finding_rows, spark_ddl
from conformance.scale.traffic import TrafficSettings

RECORD_COLUMNS = ("source", "record", "payload")


def finding_batches(batches: Iterator[Any], settings: Settings) -> Iterator[Any]:
    """``mapInArrow``'s function: Arrow record batches of records (``source`` text, ``record`` number, ``payload``
    text or bytes) to record batches of finding rows."""
    import pyarrow as pa

    schema = arrow_schema()
    for batch in batches:
        sources, numbers, payloads = (batch.column(batch.schema.get_field_index(name)).to_pylist()
                                      for name in RECORD_COLUMNS)
        records = ((source, number, payload.encode("utf-8") if isinstance(payload, str) else (payload or b""))
                   for source, number, payload in zip(sources, numbers, payloads))
        rows = list(finding_rows(records, settings))
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)


def findings(records: Any, settings: Settings | None = None) -> Any:
    """The finding rows (a DataFrame of the rows' schema) of a DataFrame of records with the columns ``source``,
    ``record`` and ``payload``."""
    return records.mapInArrow(functools.partial(finding_batches, settings=settings or Settings()), spark_ddl())


def runner(spark: Any) -> Callable[..., list]:
    """:mod:`.driver`'s ``run_all`` on a Spark session: one partition per item, results collected in order."""
    def run_all(function: Callable, items: Sequence[Any], *args: Any) -> list:
        if not items:
            return []
        call = functools.partial(_call, function, args)
        try:
            return spark.sparkContext.parallelize(list(items), len(items)).map(call).collect()
        except Exception as exc:  # noqa: BLE001 - a task's Stop arrives wrapped in the JVM's exception
            text = str(exc)
            marker = "conformance.scale.job.Stop: "
            if marker in text:
                raise Stop(text.split(marker, 1)[1].splitlines()[0]) from None
            raise

    return run_all


def _call(function: Callable, args: tuple, item: Any) -> Any:
    return function(item, *args)


def validate_job(spark: Any, names: Sequence[str], settings: Settings, out: str, *, fail_fast: bool = False,
                 column: str = "payload", size: int | None = None) -> Tally:
    """``names`` judged on ``spark``, the rows under ``out``/findings; the tally (not yet written: :func:`finish`)."""
    driver.fresh_out(out)
    workers = spark.sparkContext.defaultParallelism
    return driver.validate(runner(spark), names, settings, out, workers=workers, fail_fast=fail_fast,
                           column=column, size=size)


def traffic_job(spark: Any, names: Sequence[str], settings: TrafficSettings, out: str) -> tuple[Tally, int]:
    driver.fresh_out(out)
    return driver.traffic(runner(spark), names, settings, out)


def main(argv: Sequence[str] | None = None) -> int:
    """spark-submit's entry: the options of ``obvalidate validate --engine dask`` (and ``--traffic`` for the proxy's
    logs); the exit code as the command line's."""
    import argparse

    from validator.context import ConfigError

    parser = argparse.ArgumentParser(prog="conformance/scale/spark.py", description=main.__doc__)
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--out", required=True, metavar="DIR")
    parser.add_argument("--traffic", action="store_true", help="the inputs are the proxy's JSONL logs")
    parser.add_argument("--kind")
    parser.add_argument("--profile")
    parser.add_argument("--context")
    parser.add_argument("--today")
    parser.add_argument("--now")
    parser.add_argument("--base-path", default="")
    parser.add_argument("--max-bytes", type=int, default=50 * 1024 * 1024)
    parser.add_argument("--max-findings", type=int, default=1000)
    parser.add_argument("--column", default="payload")
    parser.add_argument("--fail-fast", action="store_true")
    parser.add_argument("--fail-on", choices=("error", "warning"), default="error")
    options = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("obvalidate").getOrCreate()
    try:
        if options.traffic:
            text = open(options.profile, encoding="utf-8").read() if options.profile else None
            settings = TrafficSettings(text, options.base_path)
            tally, tpps = traffic_job(spark, options.inputs, settings, options.out)
            extra = {"engine": "spark", "tpps": tpps, "profile_digest": settings.profile_digest}
        else:
            settings = Settings.from_options(kind=options.kind, profile=options.profile, context=options.context,
                                             today=options.today, now=options.now, max_bytes=options.max_bytes,
                                             max_findings=options.max_findings)
            tally = validate_job(spark, options.inputs, settings, options.out, fail_fast=options.fail_fast,
                                 column=options.column)
            extra = {"engine": "spark", "profile_digest": settings.profile_digest}
    except Stop as exc:
        return driver.stopped(str(exc))
    except (ConfigError, driver.Unusable, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    return driver.finish(tally, options.out, options.fail_on, extra)


if __name__ == "__main__":
    sys.exit(main())
