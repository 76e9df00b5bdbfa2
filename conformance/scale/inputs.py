"""A job's inputs cut into tasks: JSON-lines files in byte ranges of whole lines, Parquet files in row groups; local
paths or any fsspec URL, with globs.

A task owns the lines that start in its byte range: it skips the line the range begins inside (the task before owns
it) and reads past its end to finish its last line. Its first line's number comes from a counting pass (the line
ends before each range, counted by tasks of their own), so every record keeps the number the command line gives it
(``file.jsonl:17``). The lines are cut as the command line cuts them (:func:`validator.jsonload.jsonl_blocks`): a line
longer than ``max_bytes`` is a record of its own that is never held in memory, so a task's memory is bounded by its
range, whatever the lines.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Sequence

JSONL, PARQUET = "jsonl", "parquet"
SUFFIXES = {".jsonl": JSONL, ".ndjson": JSONL, ".parquet": PARQUET, ".parq": PARQUET}
MAGIC = ("*", "?", "[")
READ_BYTES = 256 * 1024   # what a task reads at a time


class UnreadableInput(Exception):
    """An input the job cannot read (a missing file, an unknown suffix, a damaged Parquet file): its name and why."""


@dataclass(frozen=True)
class Input:
    source: str       # as the user named it (a local path as given, else the URL)
    url: str          # what fsspec opens
    format: str
    size: int


@dataclass(frozen=True)
class Task:
    """One partition of the job: ``length`` bytes from ``offset`` of a JSONL input, or row group ``offset`` of a
    Parquet input; ``first`` is the number of its first record once counted (0: not yet)."""

    index: int
    input: Input
    offset: int
    length: int
    first: int = 0


def _format(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    for suffix, fmt in SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    return None


def expand(names: Sequence[str]) -> tuple[list[Input], list[tuple[str, str]]]:
    """The inputs ``names`` stand for (globs and directories expanded, sorted), and the names that stand for nothing
    readable, with why."""
    import fsspec

    found: list[Input] = []
    problems: list[tuple[str, str]] = []
    for name in names:
        try:
            fs, _token, paths = fsspec.get_fs_token_paths(name)
        except Exception as exc:  # noqa: BLE001 - an unknown protocol, a missing driver: the name and why
            problems.append((name, f"{type(exc).__name__}: {exc}"))
            continue
        local = fs.protocol in ("file", "local") or "file" in getattr(fs, "protocol", ())
        magic = any(m in name for m in MAGIC)
        if not magic and paths and fs.isdir(paths[0]):
            paths = sorted(p for p in fs.find(paths[0]) if _format(p))
            magic = True
        if not paths:
            problems.append((name, "no such file (or no file matches)"))
            continue
        for path in sorted(paths):
            fmt = _format(path)
            if fmt is None:
                problems.append((path, "neither JSON lines (*.jsonl, *.ndjson) nor Parquet (*.parquet)"))
                continue
            try:
                info = fs.info(path)
            except OSError as exc:
                problems.append((name if not magic else path, f"cannot read it: {exc.strerror or exc}"))
                continue
            if info.get("type") == "directory":
                continue
            if local:
                source = os.path.relpath(path) if magic and not os.path.isabs(name) else (path if magic else name)
            else:
                source = fs.unstrip_protocol(path)
            found.append(Input(source, fs.unstrip_protocol(path) if not local else path, fmt, int(info.get("size") or 0)))
    return found, problems


def plan(inputs: Sequence[Input], task_bytes: int) -> tuple[list[Task], list[tuple[str, str]]]:
    """The tasks for ``inputs`` (JSONL cut every ``task_bytes``, Parquet by row group; numbered in input order) and the
    inputs that cannot be read (a Parquet file whose footer cannot be read), with why."""
    tasks: list[Task] = []
    problems: list[tuple[str, str]] = []
    for item in inputs:
        if item.format == JSONL:
            spans = range(0, max(item.size, 1), task_bytes)
            tasks.extend(Task(len(tasks) + n, item, start, min(task_bytes, item.size - start))
                         for n, start in enumerate(spans))
            continue
        try:
            groups = _row_groups(item)
        except Exception as exc:  # noqa: BLE001 - a damaged file is the input's problem: named, the job goes on
            problems.append((item.source, f"not a readable Parquet file: {exc}"))
            continue
        first = 1
        for group, rows in enumerate(groups):
            tasks.append(Task(len(tasks), item, group, rows, first))
            first += rows
    return tasks, problems


def _row_groups(item: Input) -> list[int]:
    import fsspec
    import pyarrow.parquet as pq

    with fsspec.open(item.url, "rb") as fh:
        metadata = pq.ParquetFile(fh).metadata
        return [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]


def count_lines(task: Task) -> int:
    """Line ends in the task's byte range (a JSONL task; the counting pass)."""
    import fsspec

    count, left = 0, task.length
    with fsspec.open(task.input.url, "rb") as fh:
        fh.seek(task.offset)
        while left > 0:
            chunk = fh.read(min(READ_BYTES * 4, left))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count


def numbered(tasks: Sequence[Task], counts: Sequence[int]) -> list[Task]:
    """The JSONL tasks with ``first`` set: 1 + the line ends before their range (``counts`` per task, in order)."""
    out, before, current = [], 0, None
    for task, count in zip(tasks, counts):
        if task.input != current:
            current, before = task.input, 0
        out.append(Task(task.index, task.input, task.offset, task.length, before + 1))
        before += count
    return out


class _Range:
    """A binary stream over one task's lines: from the first line that starts in the range to the end of the last."""

    def __init__(self, raw, end: int) -> None:
        self.raw, self.end = raw, end
        self.position = raw.tell()
        self.at_line_start = True

    def _moved(self, data: bytes) -> bytes:
        if data:
            self.position += len(data)
            self.at_line_start = data.endswith(b"\n")
        return data

    def read(self, size: int = -1) -> bytes:
        if self.position < self.end:
            want = self.end - self.position if size < 0 else min(size, self.end - self.position)
            return self._moved(self.raw.read(want))
        if self.at_line_start:
            return b""
        return self._moved(self.raw.readline(size if size > 0 else -1))   # the last line, past the range's end

    def readline(self, size: int = -1) -> bytes:
        if self.position >= self.end and self.at_line_start:
            return b""
        return self._moved(self.raw.readline(size))


def jsonl_records(task: Task, max_bytes: int) -> Iterator[tuple[str, int, bytes | None]]:
    """``(source, line number, line)`` of each non-blank line the task owns; None for a line over ``max_bytes``."""
    import fsspec

    from validator.jsonload import block_lines, jsonl_blocks

    source = task.input.source
    with fsspec.open(task.input.url, "rb") as raw:
        first = task.first
        if task.offset > 0:
            raw.seek(task.offset - 1)
            if raw.read(1) != b"\n":   # the range begins inside a line: the task before owns it
                while True:
                    skipped = raw.readline(1 << 20)
                    if not skipped or skipped.endswith(b"\n"):
                        break
                first += 1
                if not skipped:
                    return
        if raw.tell() >= task.offset + task.length and task.length > 0:
            return
        stream = _Range(raw, task.offset + task.length)
        for lineno, block in jsonl_blocks(stream, max_bytes, READ_BYTES):
            if block is None:
                yield source, first + lineno - 1, None
                continue
            for number, line in block_lines(block, first + lineno - 1):
                yield source, number, line


def parquet_records(task: Task, column: str) -> Iterator[tuple[str, int, bytes | None]]:
    """``(source, row number, value)`` of each row of the task's row group; text values as UTF-8, a null as empty."""
    import fsspec
    import pyarrow.parquet as pq

    source = task.input.source
    with fsspec.open(task.input.url, "rb") as fh:
        reader = pq.ParquetFile(fh)
        if column not in reader.schema_arrow.names:
            raise UnreadableInput(f"{source}: no column {column!r} (it has {', '.join(reader.schema_arrow.names)})")
        number = task.first
        for batch in reader.iter_batches(batch_size=4096, row_groups=[task.offset], columns=[column]):
            for value in batch.column(0).to_pylist():
                if value is None:
                    value = b""
                elif isinstance(value, str):
                    value = value.encode("utf-8")
                yield source, number, value
                number += 1


def records(task: Task, max_bytes: int, column: str) -> Iterator[tuple[str, int, bytes | None]]:
    if task.input.format == JSONL:
        return jsonl_records(task, max_bytes)
    return parquet_records(task, column)
