"""What the driver of a job does, whatever engine runs its tasks: the inputs expanded and cut into tasks, the
counting pass, the judging tasks, the tallies added up. An engine gives ``run_all(function, items, *args)``: each
``function(item, *args)`` run on its workers, the results in the items' order (an exception raised by one -- ``Stop``
under --fail-fast -- raised on the driver).
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from .inputs import expand, numbered, plan
from .job import Stop, Tally, count_task, merge, run_task
from .rows import Settings
from .traffic import TrafficSettings, exchanges_of, judge_partition, partitions

RunAll = Callable[..., list]
EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2
TASK_BYTES_MIN, TASK_BYTES_MAX = 1 << 20, 64 << 20


class Unusable(Exception):
    """The job cannot start: no input named can be read, --out holds an earlier run, a package is missing."""


def fresh_out(out: str) -> None:
    """``out`` made, if need be; it must not hold an earlier run's findings (rows of two runs would mix)."""
    import fsspec

    from .job import FINDINGS, SUMMARY

    fs, path = fsspec.core.url_to_fs(out)
    for name in (FINDINGS, SUMMARY):
        if fs.exists(f"{path.rstrip('/')}/{name}"):
            raise Unusable(f"--out {out} holds {name} of an earlier run: remove it or name another directory")
    fs.makedirs(path, exist_ok=True)


def sequential(function: Callable, items: Sequence[Any], *args: Any) -> list:
    """``run_all`` in this process, one item after the other (tests, and a job too small for an engine)."""
    return [function(item, *args) for item in items]


def task_bytes(total: int, workers: int) -> int:
    """About four tasks per worker, each between 1 and 64 MiB (a worker's memory is bounded by its task's range)."""
    return max(TASK_BYTES_MIN, min(TASK_BYTES_MAX, total // max(1, 4 * workers) + 1))


def inputs_of(names: Sequence[str]) -> tuple[list, list[tuple[str, str]]]:
    """The inputs ``names`` stand for and those that cannot be read; Unusable when none can (before any engine
    starts)."""
    inputs, problems = expand(names)
    if not inputs and problems:
        raise Unusable("; ".join(f"{name}: {why}" for name, why in problems))
    return inputs, problems


def validate(run_all: RunAll, names: Sequence[str] | tuple[list, list], settings: Settings, out: str, *,
             workers: int, fail_fast: bool = False, column: str = "payload", size: int | None = None) -> Tally:
    """The findings of the records ``names`` hold (or the inputs :func:`inputs_of` found), written under ``out``;
    the job's tally. ``size``: the bytes of a task (default: about four tasks per worker)."""
    inputs, problems = names if isinstance(names, tuple) else inputs_of(names)
    tasks, unreadable = plan(inputs, size or task_bytes(sum(i.size for i in inputs), workers))
    problems = problems + unreadable
    if fail_fast and problems:
        raise Stop(f"cannot read {problems[0][0]}: {problems[0][1]}")
    counts = run_all(count_task, tasks)
    tasks = [task if task.input.format != "jsonl" else counted for task, counted in zip(tasks, numbered(tasks, counts))]
    tally = merge(run_all(run_task, tasks, settings, out, fail_fast, column))
    tally.unreadable.extend(problems)
    return tally


def traffic(run_all: RunAll, names: Sequence[str], settings: TrafficSettings, out: str) -> tuple[Tally, int]:
    """The proxy's JSONL logs ``names`` judged one partition per TPP, the findings written under ``out``; the tally
    and the number of partitions."""
    found = run_all(exchanges_of, list(enumerate(names)))
    groups = partitions([exchange for part in found for exchange in part])
    return merge(run_all(judge_partition, groups, settings, out)), len(groups)


def finish(tally, out: str, fail_on: str, extra: dict) -> int:
    """The summary written, the unreadable inputs and the summary line on standard error; the exit code."""
    from .job import summary_line, write_summary

    write_summary(tally, out, extra)
    for source, why in tally.unreadable:
        _echo(f"Error: cannot read {source}: {why}")
    _echo(f"{out}: {summary_line(tally)}")
    if tally.unreadable:
        return EXIT_UNUSABLE
    failing = tally.severities.get("error", 0) or (fail_on == "warning" and tally.severities.get("warning", 0))
    return EXIT_FINDINGS if failing else EXIT_OK


def stopped(message: str) -> int:
    _echo(f"Error: stopped at the first record not judged (--fail-fast): {message}")
    return EXIT_UNUSABLE


def _echo(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
