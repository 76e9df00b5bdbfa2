"""A job's tasks and its summary, the same whatever engine runs them (Dask, Spark or a plain loop).

:func:`run_task` judges one task's records and writes their finding rows as Parquet under ``OUT/findings``,
partitioned by kind, then rule (``kind=sepa-credit-transfer/rule=iban-checksum/part-7-0.parquet``; a record of no
kind under ``kind=__HIVE_DEFAULT_PARTITION__``), and returns the task's tally: records read, judged and not judged by
reason, and per rule and kind the count and the first record. :func:`merge` adds the tallies up; :func:`write_summary`
writes ``OUT/summary.json``.

No record is dropped silently: a record that cannot be judged (not JSON, not UTF-8, over the size limit, of no known
kind) is a finding row and is counted as not judged by its reason; an input the task cannot read (a Parquet file cut
short) is named in the tally with why, and the other tasks go on. With ``fail_fast`` the first of either stops the job
(:class:`Stop`, which the engines pass up to the command line).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .inputs import Task, UnreadableInput, count_lines, records
from .rows import Settings, arrow_schema, judged, not_judged_reason, report_rows

FINDINGS = "findings"
SUMMARY = "summary.json"
PARTITIONS = ["kind", "rule"]
FLUSH_ROWS = 20_000   # rows a task holds before it writes them


class Stop(Exception):
    """--fail-fast: the first record not judged, or the first input that cannot be read."""


@dataclass
class Tally:
    read: int = 0
    judged: int = 0
    not_judged: Counter = field(default_factory=Counter)
    severities: Counter = field(default_factory=Counter)
    rules: dict = field(default_factory=dict)          # (rule, kind) -> [count, (source, record)]
    unreadable: list = field(default_factory=list)     # (source, why)

    def add_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self.severities[row["severity"]] += 1
            key = (row["rule"], row["kind"])
            where = (row["source"], row["record"])
            seen = self.rules.get(key)
            if seen is None:
                self.rules[key] = [1, where]
            else:
                seen[0] += 1
                seen[1] = min(seen[1], where)

    def merge(self, other: "Tally") -> "Tally":
        self.read += other.read
        self.judged += other.judged
        self.not_judged.update(other.not_judged)
        self.severities.update(other.severities)
        for key, (count, where) in other.rules.items():
            seen = self.rules.get(key)
            if seen is None:
                self.rules[key] = [count, where]
            else:
                seen[0] += count
                seen[1] = min(seen[1], where)
        self.unreadable.extend(other.unreadable)
        return self

    def as_dict(self) -> dict[str, Any]:
        rules = sorted(self.rules.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
        return {
            "records": {"read": self.read, "judged": self.judged, "not_judged": sum(self.not_judged.values()),
                        "not_judged_by_reason": dict(sorted(self.not_judged.items()))},
            "findings": {"errors": self.severities.get("error", 0), "warnings": self.severities.get("warning", 0)},
            "by_rule_and_kind": [{"rule": rule, "kind": kind, "count": count, "first_source": where[0],
                                  "first_record": where[1]} for (rule, kind), (count, where) in rules],
            "unreadable": [{"source": source, "error": why} for source, why in sorted(self.unreadable)],
        }


def merge(tallies: Iterable[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        total.merge(tally)
    return total


def count_task(task: Task) -> int:
    """The counting pass's task: the line ends in a JSONL task's range (0 for Parquet, numbered at planning)."""
    return count_lines(task) if task.input.format == "jsonl" else 0


def run_task(task: Task, settings: Settings, out: str, fail_fast: bool = False, column: str = "payload") -> Tally:
    """Judge the task's records, write their rows under ``out``/findings, return the tally."""
    tally = Tally()
    rows: list[dict[str, Any]] = []
    written = 0
    digest = settings.profile_digest
    try:
        for source, number, report in judged(records(task, settings.max_bytes, column), settings):
            if len(rows) >= FLUSH_ROWS:   # a task's memory stays bounded whatever share of its records has findings
                tally.add_rows(rows)
                write_rows(rows, out, f"part-{task.index}-{written}")
                written += 1
                rows = []
            tally.read += 1
            reason = not_judged_reason(report)
            if reason is None:
                tally.judged += 1
            else:
                tally.not_judged[reason] += 1
                if fail_fast:
                    raise Stop(f"{source}:{number}: not judged ({reason}): {report.findings[0].message}")
            rows.extend(report_rows(source, number, report, digest))
    except (UnreadableInput, OSError, ValueError) as exc:   # ValueError: pyarrow's ArrowInvalid, a damaged file
        why = str(exc) if isinstance(exc, UnreadableInput) else f"{type(exc).__name__}: {exc}"
        if fail_fast:
            raise Stop(f"cannot read {task.input.source}: {why}") from None
        tally.unreadable.append((task.input.source, why))
    tally.add_rows(rows)
    write_rows(rows, out, f"part-{task.index}-{written}")
    return tally


def write_rows(rows: list[dict[str, Any]], out: str, name: str) -> None:
    """The rows as Parquet under ``out``/findings, partitioned by kind, then rule (nothing for no rows)."""
    if not rows:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    pq.write_to_dataset(table, f"{out.rstrip('/')}/{FINDINGS}", partition_cols=PARTITIONS,
                        basename_template=f"{name}-{{i}}.parquet", existing_data_behavior="overwrite_or_ignore")


def write_summary(tally: Tally, out: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    import fsspec

    document = {**tally.as_dict(), **(extra or {})}
    with fsspec.open(f"{out.rstrip('/')}/{SUMMARY}", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return document


def read_rows(out: str) -> list[dict[str, Any]]:
    """Every row a job wrote under ``out`` (tests, small outputs), the partition columns as written."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(f"{out.rstrip('/')}/{FINDINGS}", format="parquet", partitioning="hive",
                         schema=arrow_schema())
    return dataset.to_table().to_pylist()


def summary_line(tally: Tally) -> str:
    reasons = ", ".join(f"{n:,} {reason}" for reason, n in sorted(tally.not_judged.items()))
    not_judged = sum(tally.not_judged.values())
    line = (f"{tally.read:,} records: {tally.judged:,} judged, {not_judged:,} not judged"
            f"{f' ({reasons})' if reasons else ''} \u2014 {tally.severities.get('error', 0):,} errors, "
            f"{tally.severities.get('warning', 0):,} warnings")
    if tally.unreadable:
        line += f"; {len(tally.unreadable)} input(s) could not be read"
    return line
