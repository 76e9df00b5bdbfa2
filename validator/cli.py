"""`obvalidate`: check payloads and requests from the shell.

Exit codes: 0 no error findings; 1 at least one error finding (or a warning with
--fail-on warning); 2 usage errors and inputs that cannot be read (missing file, bad option,
unusable profile or context) — never a traceback.
"""
from __future__ import annotations

import gc
import json
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

import click

from . import __version__
from .gcpause import gc_paused
from .jsonload import JSONL_SUFFIXES, load_json_bytes
from .records import record

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
INPUT_SUFFIXES = (".json", ".http", *JSONL_SUFFIXES)
# JSONL is validated in blocks of whole lines: small enough for the progress line to move, and with --jobs
# for every worker to get several; large enough that handing a block to a worker costs little. A block is
# handed over as it was read (the worker splits it into lines), so the main process does no work per line.
BATCH_BYTES_SEQUENTIAL = 256 * 1024
BATCH_BYTES_MIN, BATCH_BYTES_MAX = 32 * 1024, 1024 * 1024
# Below this much input, starting worker processes costs about what they save (1,000 SEPA payloads,
# 0.54 MB: 0.44 CPU-seconds in one process, 0.53 with two): --jobs then runs in one process.
PARALLEL_MIN_BYTES = 1024 * 1024


class InputError(click.ClickException):
    """Input or output the user named cannot be used: exit 2, one line, no traceback."""

    exit_code = EXIT_USAGE


# A click type keeps nothing of the parameter it is for: one instance serves every option of its kind (making a Path
# type looks up the translation of its name, 0.5M instructions each, four fewer at every start).
_FILE_PATH = click.Path(dir_okay=False)
_EXISTING_FILE = click.Path(exists=True, dir_okay=False)

# Subcommands other packages add (conformance's, for one): entry points NAME = "module:click_command_or_group".
COMMANDS_GROUP = "obvalidate.commands"


def _registered_commands() -> dict:
    """The entry points of COMMANDS_GROUP by name; nothing is imported until one is run."""
    from importlib.metadata import entry_points  # ~0.1 s: only when a name may be a registered subcommand

    return {entry.name: entry for entry in entry_points(group=COMMANDS_GROUP)}


def _command_hint(word: str) -> str:
    """For a missing input named like a word (no suffix, no directory): the command it probably misspells."""
    if not word.isidentifier() and not word.replace("-", "").isalnum():
        return ""
    from .suggest import closest

    near = closest(word, [*main.commands, *_registered_commands()])
    return f"; did you mean the command {near!r} (obvalidate {near} ...)?" if near else ""


# Whether the command line is the process's own (main() without arguments: the `obvalidate` program), not an
# in-process call such as click's CliRunner, whose caller lives on: only the program's objects are ever frozen.
_PROGRAM = {"own": False}


class DefaultToValidate(click.Group):
    """`obvalidate payload.json` means `obvalidate validate payload.json`. Subcommands registered under the
    `obvalidate.commands` entry points are loaded lazily, the way pytest and flake8 load plugins; a built-in
    command wins over a registered one of the same name."""

    def main(self, args=None, *rest, **options):
        if args is None:
            _PROGRAM["own"] = True
        try:
            return super().main(args, *rest, **options)
        finally:
            if args is None:
                # The process's own command line (not an in-process call, such as click's CliRunner): the process
                # ends with the command, and what it made goes with it. Frozen, it is not searched for reference
                # cycles once more as the interpreter exits (~7 % of checking one payload).
                gc.freeze()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not self._is_command(args[0]) and args[0] not in ("--help", "-h", "--version"):
            args = ["validate", *args]
        return super().parse_args(ctx, args)

    def _is_command(self, name: str) -> bool:
        if name in self.commands:
            return True
        if name.startswith("-") or name.endswith(INPUT_SUFFIXES):
            return False  # an option or an input file: the common case never looks for registered commands
        return name in _registered_commands()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_registered_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = self.commands.get(name)
        if command is not None:
            return command
        entry = _registered_commands().get(name)
        if entry is None:
            return None
        where = f"{entry.value} (entry point {name!r} of {COMMANDS_GROUP})"
        try:
            command = entry.load()
        except Exception as exc:  # a broken plugin is a message, never a traceback
            return _unusable(name, f"cannot load the {name!r} command from {where}: {type(exc).__name__}: {exc}")
        if not isinstance(command, click.Command):
            return _unusable(name, f"{where} is a {type(command).__name__}, not a click command or group")
        return command


def _unusable(name: str, problem: str) -> click.Command:
    """Stands in for a registered command that cannot be loaded: --help lists it, running it exits 2 with why."""

    def fail(args) -> None:
        raise InputError(problem)

    return click.Command(name, callback=fail, help=f"(unusable) {problem}", add_help_option=False,
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
                         context_settings={"ignore_unknown_options": True})


@click.group(cls=DefaultToValidate, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="obvalidate")
def main() -> None:
    """Contract checks for the PSD2 payment-initiation and sandbox interface.

    `obvalidate PATH...` validates payloads (JSON files, JSONL files, directories, `-` for stdin)
    and whole requests (.http files or request envelopes). See `obvalidate validate --help`.
    """


# ------------------------------------------------------------------ inputs
@record
class Unit:
    """One thing to validate: a file, stdin, a block of JSONL lines (``block``, its first line numbered
    ``first_line``) or a few numbered lines; ``size`` is the bytes it covers."""

    source: str
    path: str | None = None
    data: bytes | None = None
    lines: tuple[tuple[int, bytes | None], ...] = ()
    size: int = 0
    block: bytes | None = None
    first_line: int = 1
    span: tuple[int, int] | None = None  # bytes [start, end) of the JSONL file ``path``: its lines starting there

    @property
    def whole_input(self) -> bool:
        """A file or standard input as one document, not JSONL lines."""
        return self.block is None and not self.lines and self.span is None


def _is_jsonl(path: str) -> bool:
    return path.endswith(JSONL_SUFFIXES)


def _expand(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in INPUT_SUFFIXES)
            out.extend(str(f) for f in found)
        elif path.is_file():
            out.append(p)
        elif path.exists():
            raise click.BadParameter(f"{p} is neither a file nor a directory", param_hint="PATH")
        else:
            raise click.BadParameter(f"{p} does not exist{_command_hint(p)}", param_hint="PATH")
    return out


def _input_size(path: str) -> int | None:
    """Bytes of an input, None when not known before reading (standard input from a pipe)."""
    try:
        if path == "-":
            info = os.fstat(sys.stdin.fileno())
            return info.st_size if stat.S_ISREG(info.st_mode) else None
        return os.stat(path).st_size
    except (OSError, ValueError, AttributeError):  # a stdin without a file descriptor (tests, embedding)
        return None


def _use_workers(inputs: list[str], total: int | None, jobs: int) -> bool:
    """--jobs above 1 starts workers once there is enough input (or its size is unknown) and more than one
    piece of work: several files, or JSONL (a file or standard input) to split into batches."""
    enough = total is None or total >= PARALLEL_MIN_BYTES
    divisible = len(inputs) > 1 or _is_jsonl(inputs[0]) or inputs[0] == "-"
    return jobs > 1 and enough and divisible


def _batch_bytes(total: int | None, jobs: int) -> int:
    if jobs == 1 or total is None:
        return BATCH_BYTES_SEQUENTIAL
    return max(BATCH_BYTES_MIN, min(BATCH_BYTES_MAX, total // (32 * jobs)))


def _units(paths: list[str], max_bytes: int, batch_bytes: int, spans: bool = False) -> Iterator[Unit]:
    """What there is to validate; ``spans``: a JSONL file as byte ranges its workers read themselves (--jobs)."""
    for p in paths:
        if p == "-":
            yield from _stdin_units(max_bytes, batch_bytes)
        elif spans and _is_jsonl(p):
            size = _input_size(p) or 0
            for start in range(0, size, batch_bytes):
                yield Unit(p, path=p, span=(start, min(start + batch_bytes, size)), size=min(batch_bytes, size - start))
        elif _is_jsonl(p):
            with open(p, "rb") as fh:
                yield from _jsonl_units(p, fh, max_bytes, batch_bytes)
        else:
            yield Unit(p, path=p, size=_input_size(p) or 0)


def _jsonl_units(source: str, stream, max_bytes: int, batch_bytes: int, first_lines=(), offset: int = 0) -> Iterator[Unit]:
    """Blocks of whole lines of a JSONL stream, and a unit of its own for each line longer than the limit
    (None: never read); ``first_lines`` (line number, line) were read from it already (standard input,
    while telling JSONL from one document)."""
    from .jsonload import jsonl_blocks

    if first_lines:
        yield Unit(source, lines=tuple(first_lines), size=sum(len(line) + 1 for _, line in first_lines))
    for first, block in jsonl_blocks(stream, max_bytes, batch_bytes):
        if block is None:
            yield Unit(source, lines=((first + offset, None),), size=max_bytes + 1)
        else:
            yield Unit(source, block=block, first_line=first + offset, size=len(block))


def _stdin_units(max_bytes: int, batch_bytes: int) -> Iterator[Unit]:
    """Standard input is JSONL when its first line is a JSON value on its own and more lines follow;
    otherwise it is one document (JSON or a raw HTTP request), read up to the size limit."""
    stream = sys.stdin.buffer
    head: list[bytes] = []
    first = second = None
    while second is None:
        line = stream.readline(max_bytes + 2)
        if not line:
            break
        head.append(line)
        if not line.strip():
            continue
        if first is None:
            if not line.endswith(b"\n") or not _is_json_value(line):
                break
            first = line
        else:
            second = line
    if second is not None:
        numbered = [(n, line.rstrip(b"\r\n")) for n, line in enumerate(head, 1) if line.strip()]
        yield from _jsonl_units("-", stream, max_bytes, batch_bytes, first_lines=numbered, offset=len(head))
        return
    data = b"".join(head)
    data += stream.read(max_bytes + 1 - len(data)) if len(data) <= max_bytes else b""
    yield Unit("-", data=data, size=len(data))


def _is_json_value(line: bytes) -> bool:
    # The project's loader, which never raises (json.loads does on deep nesting): a line is one JSON value when
    # it decodes at all, whatever the value's own problems.
    return load_json_bytes(line).value is not None or line.strip() == b"null"


# ------------------------------------------------------------------ validation (also in worker processes)
_WORKER = None


def _make_validator(settings: dict):
    # The start (the validator's modules, the spec, the rule catalogue) makes tens of thousands of objects that
    # live as long as the process: no collector passes over them while they are made.
    with gc_paused():
        from .context import Context, Profile
        from .api import Validator

        profile = Profile.load(settings["profile"]) if settings.get("profile") else None
        context = Context.load(settings["context"]) if settings.get("context") else None
        return Validator(
            profile=profile, context=context, today=settings.get("today"), now=settings.get("now"),
            max_bytes=settings["max_bytes"], max_findings=settings["max_findings"],
        )


def _init_worker(settings: dict) -> None:
    global _WORKER
    if _FORKED_FROM is not None and _FORKED_FROM[2] is settings:
        # A forked worker has the main process's validator already (made for these settings before the workers
        # started): making it again would cost each worker the start the main process paid.
        _WORKER = _FORKED_FROM
    else:
        _WORKER = (_make_validator(settings), settings.get("kind"), settings)


# (validator, kind, settings) of the main process while its forked workers run (see _init_worker)
_FORKED_FROM = None


def _run_unit(unit: Unit, validator=None, kind=None) -> list:
    if validator is None:
        validator, kind, _settings = _WORKER
    if unit.span is not None:
        return _run_span(unit, validator, kind)
    if unit.block is not None:
        from .jsonload import block_lines

        return [validator.validate_line(line, kind, f"{unit.source}:{lineno}") for lineno, line in block_lines(unit.block, unit.first_line)]
    if unit.lines:
        return [validator.validate_line(line, kind, f"{unit.source}:{lineno}") for lineno, line in unit.lines]
    if unit.data is not None:
        if len(unit.data) > validator.max_bytes:  # stdin is read only up to the limit
            return [validator.too_large(unit.source, f"standard input is larger than {validator.max_bytes:,} bytes (--max-bytes)")]
        return [validator.validate_bytes(unit.data, kind, source=unit.source)]
    try:
        return validator.validate_path(unit.path, kind)
    except OSError as exc:
        raise click.FileError(unit.path, hint=exc.strerror or str(exc)) from None


def _run_span(unit: Unit, validator, kind) -> list:
    """The reports of the lines of a JSONL file's span (see _first_lines), read here."""
    from .jsonload import block_lines, span_blocks

    reports: list = []
    try:
        with open(unit.path, "rb") as stream:
            for first, block in span_blocks(stream, *unit.span, unit.first_line, validator.max_bytes, BATCH_BYTES_SEQUENTIAL):
                if block is None:  # longer than the limit, never read
                    reports.append(validator.validate_line(None, kind, f"{unit.source}:{first}"))
                else:
                    reports.extend(validator.validate_line(line, kind, f"{unit.source}:{lineno}")
                                   for lineno, line in block_lines(block, first))
    except OSError as exc:
        raise click.FileError(unit.path, hint=exc.strerror or str(exc)) from None
    return reports


def _span_lines(unit: Unit) -> tuple[int, int, int]:
    from .jsonload import span_lines

    try:
        with open(unit.path, "rb") as stream:
            return span_lines(stream, *unit.span)
    except OSError as exc:
        raise click.FileError(unit.path, hint=exc.strerror or str(exc)) from None


def _first_lines(units: list[Unit], pool) -> list[Unit]:
    """Each JSONL span where its lines begin and end and the number of its first line: the workers count the line
    ends of their spans (one C-speed pass over the file), the numbers are their running sums per file."""
    spans = [n for n, unit in enumerate(units) if unit.span is not None]
    counted = pool.map(_span_lines, [units[n] for n in spans])
    line = 1
    for n, (first, stop, newlines) in zip(spans, counted):
        unit = units[n]
        if unit.span[0] == 0:  # a file's first span (a file named twice is numbered from 1 again)
            line = 1
        units[n] = unit._replace(span=(first, stop), first_line=line)
        line += newlines
    return units


# ------------------------------------------------------------------ validate
@main.command("validate")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--kind", "kind", metavar="KIND", help="Payload kind (see `obvalidate kinds`); detected from the shape when omitted.")
@click.option("--context", "context_file", type=_FILE_PATH, help="JSON context: today, and the payments a basket refers to.")
@click.option("--profile", "profile_file", type=_FILE_PATH, help="YAML implementer profile overriding the 'profile: yes' decisions.")
@click.option("--today", metavar="YYYY-MM-DD", help="The date rules compare against (default: today in Europe/Oslo). For signed requests it is also the verification day: a Date header on that day stands in for the time.")
@click.option("--now", metavar="DATE-TIME", help="The time signature checks compare against (Date window, certificate validity), ISO 8601, e.g. 2026-07-01T10:00:00Z (default: the real time, unless --today is given).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "sarif", "github"]), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True, help="Lowest severity that makes the exit code 1.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True, help="Worker processes, used when the inputs total at least 1 MiB (below that one process is as fast); files and batches of JSONL lines are shared among them.")
@click.option("--max-bytes", type=click.IntRange(1), default=50 * 1024 * 1024, show_default=True, help="Largest input accepted.")
@click.option("--max-findings", type=click.IntRange(1), default=1000, show_default=True, help="Findings reported per input; one more finding counts the rest.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to a file instead of stdout; the summary line goes to standard error.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line; in text format also only errors and the summary (no warnings, no 'checked as' notes).")
@click.option("--engine", default="process", show_default=True, metavar="NAME", help="process: this machine (--jobs processes); dask: a Dask cluster over JSON-lines and Parquet inputs, local paths or fsspec URLs and globs, the findings written as Parquet under --out (pip install 'obvalidate[dask]').")
@click.option("--scheduler", metavar="ADDRESS", help="With --engine dask: the scheduler to use (tcp://host:8786); without it a local cluster of --jobs worker processes.")
@click.option("--out", "out_dir", metavar="DIR", help="With --engine dask: where the findings (Parquet, by kind then rule) and summary.json are written.")
@click.option("--fail-fast", is_flag=True, help="With --engine dask: stop at the first record that cannot be judged (or input that cannot be read).")
@click.option("--column", default="payload", show_default=True, metavar="NAME", help="With --engine dask: the Parquet column holding each record's JSON text.")
def validate_command(paths, kind, context_file, profile_file, today, now, fmt, fail_on, jobs, max_bytes, max_findings, output, quiet, engine, scheduler, out_dir, fail_fast, column) -> None:
    """Validate payloads and requests: files, directories (every *.json, *.jsonl, *.ndjson, *.http under
    them), JSONL files (*.jsonl, *.ndjson: one payload per line) and `-` for standard input (JSONL when
    its first line is a JSON value on its own and more lines follow). On a terminal, a progress line on
    standard error follows the bytes validated."""
    if engine != "process":
        if fmt != "text" or output:
            raise click.UsageError(f"--engine {engine} writes Parquet and summary.json under --out, not --format or --output")
        _validate_on_engine(engine, paths, kind, context_file, profile_file, today, now, fail_on, jobs, max_bytes,
                            max_findings, scheduler, out_dir, fail_fast, column)
    for option, given in (("--scheduler", scheduler), ("--out", out_dir), ("--fail-fast", fail_fast)):
        if given:
            raise click.UsageError(f"{option} goes with --engine dask")
    settings = {
        "kind": kind, "context": context_file, "profile": profile_file, "today": today, "now": now,
        "max_bytes": max_bytes, "max_findings": max_findings,
    }
    # The start: its modules, the spec, the catalogue, the kinds; one pause of the collector (see _make_validator).
    with gc_paused():
        from .context import ConfigError, parse_day, parse_instant
        from .formats import PART_FORMATS, merge_summaries, render, render_parts, summarize

        try:
            if today:
                parse_day(today, "--today")
            if now:
                parse_instant(now, "--now")
            validator = _make_validator(settings)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
        known = _kind_names(validator.spec)
        if _PROGRAM["own"]:
            gc.freeze()  # what the start made lives as long as the process: no pass of the collector walks it again
    if kind and kind not in known:
        from .suggest import did_you_mean

        hint = did_you_mean(kind, known)
        raise click.BadParameter(f"unknown kind {kind!r}{hint}{' The kinds: ' if hint else '; one of '}"
                                 f"{', '.join(sorted(known))}", param_hint="--kind")
    if output:
        parent = Path(output).resolve().parent
        if not parent.is_dir() or not os.access(parent, os.W_OK):
            raise click.BadParameter(f"cannot write {output}: {parent} is not a writable directory", param_hint="--output")
    inputs = _expand(paths)
    if paths.count("-") > 1:
        raise click.BadParameter("standard input can be read only once", param_hint="PATH")
    if not inputs:
        raise InputError(f"nothing to validate: no *.json, *.jsonl, *.ndjson or *.http file under {', '.join(paths)}")
    sizes = [_input_size(p) for p in inputs]
    total = None if None in sizes else sum(sizes)
    parallel = _use_workers(inputs, total, jobs)
    # With workers, a format made of its inputs' parts is rendered by them, each its own part (and a JSONL file is
    # read by them, each its own byte ranges): the main process only joins the parts.
    parts = parallel and fmt in PART_FORMATS
    settings.update(fmt=fmt if parts else None, color=_color(output), quiet=quiet)
    units = _units(inputs, max_bytes, _batch_bytes(total, jobs if parallel else 1), spans=parallel)
    progress = Progress(total) if _stderr_is_terminal() and not quiet else None
    try:
        done = _validate_units(units, validator, kind, settings, jobs if parallel else 1, progress)
    finally:
        if progress:
            progress.close()
    if parts:
        text = render_parts(done, fmt, tool_version=__version__)
        summary = merge_summaries(part_summary for _part, part_summary in done)
    else:
        summary = summarize(done)
    if not summary["inputs"]:
        raise InputError(f"nothing to validate: {', '.join(paths)} holds no payload")
    if not parts:
        text = render(done, fmt, catalogue=validator.catalogue, tool_version=__version__, color=_color(output), quiet=quiet)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {output}: {exc.strerror or exc}") from None
        from .formats import summary_line

        click.echo(f"{output}: {summary_line(summary)}", err=True)
    else:
        click.echo(text, nl=False)
    if summary["errors"] or (fail_on == "warning" and summary["warnings"]):
        sys.exit(EXIT_FINDINGS)


# Engines other packages add (--engine NAME): entry points NAME = "module:object" with validate() (and traffic()).
ENGINES_GROUP = "obvalidate.engines"


def load_engine(name: str):
    """The engine registered as ``name`` under ENGINES_GROUP; a usage error naming the installed ones otherwise."""
    from importlib.metadata import entry_points

    engines = {entry.name: entry for entry in entry_points(group=ENGINES_GROUP)}
    if name not in engines:
        known = ", ".join(["process", *sorted(engines)])
        raise click.BadParameter(f"no engine {name!r}; one of {known}", param_hint="--engine")
    try:
        return engines[name].load()
    except Exception as exc:  # a broken installation is a message, never a traceback
        raise InputError(f"cannot load the {name!r} engine ({engines[name].value}): {type(exc).__name__}: {exc}") from None


def _validate_on_engine(engine, paths, kind, context_file, profile_file, today, now, fail_on, jobs, max_bytes,
                        max_findings, scheduler, out_dir, fail_fast, column) -> None:
    from .context import ConfigError

    runner = load_engine(engine)
    if not out_dir:
        raise click.UsageError(f"--engine {engine} writes its findings to a directory: name it with --out DIR")
    try:
        settings = runner.settings(kind=kind, profile=profile_file, context=context_file, today=today, now=now,
                                   max_bytes=max_bytes, max_findings=max_findings)
        code = runner.validate(list(paths), settings, out=out_dir, scheduler=scheduler, jobs=jobs,
                               fail_fast=fail_fast, column=column, fail_on=fail_on)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    except runner.Error as exc:
        raise InputError(str(exc)) from None
    sys.exit(code)


def _validate_units(units: Iterator[Unit], validator, kind, settings, jobs: int, progress: "Progress | None") -> list:
    if jobs == 1:
        if progress:
            progress.start()
        reports: list = []
        for unit in units:
            if progress and unit.whole_input:
                progress.working_on(unit.source, unit.size)
            batch = _run_unit(unit, validator, kind)
            reports.extend(batch)
            if progress:
                progress.advance(unit.size, len(batch))
        return reports
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    global _FORKED_FROM
    # Taken as each batch ends, so the progress line moves; the reports (or parts) are put back in input order.
    # An executor, not multiprocessing.Pool: the Pool's worker-handling thread wakes on every result still in the
    # pipe until its result thread has read it all, and spun for about a third of the main process's CPU time
    # while the parts of a large report came in; the executor's one thread reads each result whole.
    done: dict[int, list] = {}
    forking = sys.platform != "win32"
    if forking:
        _FORKED_FROM = (validator, kind, settings)
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork" if forking else "spawn"),
                               initializer=_init_worker, initargs=(settings,))
    try:
        if progress:
            progress.start()
        units = _first_lines(list(units), pool)
        for future in as_completed([pool.submit(_run_numbered_unit, numbered) for numbered in enumerate(units)]):
            index, size, inputs, batch = future.result()
            done[index] = batch
            if progress:
                progress.advance(size, inputs)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # a unit's error ends the run: the others are not waited for
        raise
    finally:
        pool.shutdown(wait=True)
        _FORKED_FROM = None
    if settings.get("fmt"):
        return [done[index] for index in sorted(done)]
    return [report for index in sorted(done) for report in done[index]]


def _run_numbered_unit(numbered: tuple[int, Unit]) -> tuple[int, int, int, object]:
    """A worker's share: its reports, or with a format of parts (settings["fmt"]) the part they make and their summary."""
    index, unit = numbered
    reports = _run_unit(unit)
    settings = _WORKER[2]
    if settings.get("fmt"):
        from .formats import render_part

        return index, unit.size, len(reports), render_part(reports, settings["fmt"], color=settings["color"],
                                                           quiet=settings["quiet"])
    return index, unit.size, len(reports), reports


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class Progress:
    """One line on standard error, rewritten in place: the bytes of input validated (of the total when
    known), the inputs done, the time taken, and the file being checked. Shown only on a terminal, only
    for runs longer than a moment, and erased before the report is written."""

    DELAY = 0.3  # nothing for runs shorter than this
    TICK = 0.25  # the time shown moves even while one large input is checked
    INTERVAL = 0.1  # at most this often on progress

    def __init__(self, total: int | None, stream=None):
        self.total = total
        self.stream = stream or sys.stderr
        self.done_bytes = 0
        self.inputs = 0
        self.current: str | None = None
        self.began = time.monotonic()
        self.shown = False
        self.last = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)

    def start(self) -> None:
        """Start the clock line; after any worker processes are forked (a fork copies no thread)."""
        self._ticker.start()

    def advance(self, nbytes: int, inputs: int) -> None:
        with self._lock:
            self.done_bytes += nbytes
            self.inputs += inputs
            self.current = None
        self.render(throttled=True)

    def working_on(self, source: str, size: int) -> None:
        with self._lock:
            self.current = f"checking {source} ({_megabytes(size)})"
        self.render(throttled=True)

    def line(self) -> str:
        elapsed = time.monotonic() - self.began
        done = _megabytes(self.done_bytes)
        if self.total:
            amount = f"{min(100, 100 * self.done_bytes // self.total):3d}%  {done} of {_megabytes(self.total)}"
        else:
            amount = f"{done} read"
        text = f"validating {amount}  {self.inputs:,} input{'s' if self.inputs != 1 else ''}  {elapsed:.0f} s"
        if self.current:
            text += f"  {self.current}"
        return text

    def render(self, throttled: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self.began < self.DELAY or (throttled and now - self.last < self.INTERVAL):
                return
            self.stream.write("\r\x1b[K" + self.line())
            self.stream.flush()
            self.shown, self.last = True, now

    def _tick(self) -> None:
        while not self._stop.wait(self.TICK):
            self.render()

    def close(self) -> None:
        self._stop.set()
        if self._ticker.is_alive():
            self._ticker.join()
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _megabytes(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _color(output: str | None) -> bool:
    return output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _kind_names(spec) -> set[str]:
    from .request.shape import REQUEST_KIND

    return set(spec.kinds) | {REQUEST_KIND}


# ------------------------------------------------------------------ kinds, rules, explain
@main.command("kinds")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kinds_command(fmt: str) -> None:
    """List the payload kinds and the operation each belongs to."""
    from .spec import load_spec

    spec = load_spec()
    rows = [
        {"kind": k.name, "direction": k.direction, "schema": k.schema_name, "operations": list(k.operations)}
        for k in sorted(spec.kinds.values(), key=lambda k: (k.direction != "request", k.name))
    ]
    from .request.checker import REQUEST_KIND, REQUEST_KIND_DESCRIPTION

    rows.insert(0, {
        "kind": REQUEST_KIND, "direction": "request", "schema": None,
        "operations": ["every operation (a whole signed HTTP request)"], "description": REQUEST_KIND_DESCRIPTION,
    })
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["kind"]) for r in rows)
    for r in rows:
        ops = r["operations"]
        shown = ", ".join(ops) if len(ops) <= 3 else f"{', '.join(ops[:2])}, … ({len(ops)} operation responses)"
        click.echo(f"{r['kind']:<{width}}  {r['direction']:<8}  {shown}")


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """Print the rule catalogue."""
    from .rules import catalogue

    rules = sorted(catalogue().values(), key=lambda r: (r.group, r.id))
    if fmt == "json":
        click.echo(json.dumps([_rule_dict(r) for r in rules], indent=2, ensure_ascii=False))
        return
    width = max(len(r.id) for r in rules)
    group = None
    for r in rules:
        if r.group != group:
            group = r.group
            click.echo(f"\n{group} rules" if group else "")
        answer = f"{r.status} {r.code}" if r.code else "-"
        click.echo(f"  {r.id:<{width}}  {r.severity:<7}  {answer:<30}  {r.name}")


def _rule_dict(r) -> dict:
    return {
        "id": r.id,
        "name": r.name,
        "group": r.group,
        "severity": r.severity,
        "code": r.code,
        "status": r.status,
        "ref": r.ref,
        "assumptions": list(r.assumptions),
        "targets": list(r.targets),
        "kinds": list(r.kinds) if r.kinds is not None else None,
        "direction": r.direction,
        "summary": r.summary,
    }


@main.command("explain")
@click.argument("rule_id", metavar="RULE")
def explain_command(rule_id: str) -> None:
    """Explain one rule: what it checks, where the document says so, what to answer, and a good and
    a bad example (run live, as the test suite runs them)."""
    import difflib

    from .rules import catalogue
    from .rule_examples import materialize, run_example
    from .spec import load_spec

    rules = catalogue()
    rule = rules.get(rule_id)
    if rule is None:
        close = difflib.get_close_matches(rule_id, rules, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else " See `obvalidate rules`."
        raise click.BadParameter(f"no rule {rule_id!r}.{hint}", param_hint="RULE")
    spec = load_spec()
    click.echo(f"{rule.id} — {rule.name}\n")
    click.echo(click.wrap_text(rule.summary, width=100) + "\n")
    click.echo(f"  document section : {rule.ref}")
    if rule.assumptions:
        click.echo(f"  assumptions      : {', '.join(rule.assumptions)} (see the README's assumption table)")
    click.echo(f"  severity         : {rule.severity}")
    if rule.code:
        answer = f"HTTP {rule.status} with tppMessages code {rule.code}"
    elif rule.severity == "warning":
        answer = "accepts the request (a warning); a profile that makes it an error answers HTTP 400 FORMAT_ERROR"
    else:
        answer = "nothing: the finding is about a response or the input itself, which no server answers"
    click.echo(f"  an implementation answers: {answer}")
    bodies = {label: json.dumps(_elide(materialize(example, spec)), indent=2, ensure_ascii=False).splitlines()
              for label, example in (("Good example", rule.good), ("Bad example", rule.bad))
              if example is not None and example.raw is None}
    changed = _changed_lines(bodies.get("Good example"), bodies.get("Bad example"))
    for label, example in (("Good example", rule.good), ("Bad example", rule.bad)):
        if example is None:
            continue
        marked = " — » marks the lines that differ from the good example" if label == "Bad example" and changed \
            else ""
        click.echo(f"\n{label} (kind {example.kind or 'detected'}; today {spec.example_today}){marked}:")
        if example.context:
            click.echo("  context: " + json.dumps(example.context, ensure_ascii=False))
        if example.raw is not None:
            shown = example.raw if len(example.raw) <= 200 else example.raw[:200] + b"..."
            click.echo("  bytes: " + repr(shown))
        else:
            mark = changed if label == "Bad example" else set()
            click.echo("\n".join(("» " if i in mark else "  ") + line for i, line in enumerate(bodies[label])))
        report = run_example(rule, example, spec)
        if not report.findings:
            click.echo("  -> no findings")
        for f in report.findings:
            answer = f" ({f.status} {f.code})" if f.code else ""
            click.echo(f"  -> {f.severity} [{f.rule}] at {f.pointer or '(root)'}: {f.message}{answer}")


def _changed_lines(good: list[str] | None, bad: list[str] | None) -> set[int]:
    """The numbers of the bad example's lines that the good example does not have at that place (its changes)."""
    if not good or not bad:
        return set()
    import difflib

    matcher = difflib.SequenceMatcher(a=good, b=bad, autojunk=False)
    return {j for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") for j in range(j1, j2)}


def _elide(value, limit: int = 120):
    """Shorten long texts (certificates, signatures, bodies) for display; the checks used the full value."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit - 30]}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {k: _elide(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_elide(v, limit) for v in value]
    return value


# ------------------------------------------------------------------ spec
@main.group("spec")
def spec_group() -> None:
    """Inspect spec/openapi.yaml."""


@spec_group.command("check")
def spec_check() -> None:
    """Check the spec with openapi-spec-validator and print what it holds."""
    from openapi_spec_validator import validate as validate_spec

    from .spec import SpecError, load_spec

    try:
        spec = load_spec()
        validate_spec(spec.document)
    except SpecError as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:  # the validator's own error types vary by version
        click.echo(f"spec/openapi.yaml is not a valid OpenAPI document: {exc}", err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo(
        f"{spec.path.name}: valid OpenAPI {spec.document['openapi']} — {len(spec.operations)} operations, "
        f"{len(spec.kinds)} payload kinds, {len(spec.schemas)} schemas, "
        f"{len(spec.code_set('CurrencyCode'))} currencies, {len(spec.code_set('CountryCode'))} countries, "
        f"{len(spec.assumptions)} assumptions"
    )


# ------------------------------------------------------------------ profile
@main.group("profile")
def profile_group() -> None:
    """Implementer profiles (YAML): their schema, and checking one."""


@profile_group.command("schema")
def profile_schema_command() -> None:
    """Print the profile's JSON Schema (operation ids, rule ids, codes and algorithms as enums), for
    editors: save it and name it in the profile's first line,
    `# yaml-language-server: $schema=profile.schema.json`."""
    from .context import PROFILE_SCHEMA_FILE

    click.echo(PROFILE_SCHEMA_FILE.read_text(encoding="utf-8"), nl=False)


@profile_group.command("check")
@click.argument("profile_files", metavar="PROFILE...", nargs=-1, required=True, type=_FILE_PATH)
def profile_check_command(profile_files: tuple[str, ...]) -> None:
    """Check profiles against the schema: exit 0 when every one is usable, 2 otherwise, with each one's first
    problem (several files at once, as a pre-commit hook passes them)."""
    from .context import ConfigError, Profile

    problems = []
    for profile_file in profile_files:
        try:
            profile = Profile.load(profile_file)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        click.echo(f"{profile_file}: a valid profile ({profile.name})")
    if problems:
        raise InputError("\n".join(problems))


# ------------------------------------------------------------------ signing (TPP side)
@main.command("sign")
@click.option("--key", "key_file", required=True, type=_EXISTING_FILE, help="RSA private key (PEM).")
@click.option("--cert", "cert_file", required=True, type=_EXISTING_FILE, help="Signing certificate (PEM or DER).")
@click.option("--profile", "profile_file", type=_FILE_PATH, help="Implementer profile (its `paths` resolve the operation).")
@click.argument("request_file", metavar="REQUEST", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
def sign_command(key_file: str, cert_file: str, profile_file: str | None, request_file: str) -> None:
    """Sign a request (a JSON envelope or an .http file): add Date, Digest over the exact body bytes,
    TPP-Signature-Certificate and a cavage-10 Signature, and write the signed request to stdout in
    the same form."""
    from .context import ConfigError, Profile
    from .request.sign import RequestError, load_signing_identity, sign_envelope

    try:
        paths = Profile.load(profile_file).paths if profile_file else None
        data = sys.stdin.buffer.read() if request_file == "-" else Path(request_file).read_bytes()
        key, cert = load_signing_identity(Path(key_file).read_bytes(), Path(cert_file).read_bytes())
        signed = sign_envelope(data, key, cert, paths=paths)
    except (RequestError, ConfigError, OSError) as exc:
        raise InputError(f"cannot sign: {exc}") from None
    if isinstance(signed, bytes):
        sys.stdout.buffer.write(signed)
    else:
        click.echo(json.dumps(signed, indent=2, ensure_ascii=False))


@main.command("keygen")
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--organization-identifier", default="PSDNO-FSA-TEST01", show_default=True, help="PSD2 organizationIdentifier of the subject.")
@click.option("--force", is_flag=True, help="Replace key.pem and cert.pem if they exist.")
def keygen_command(out_dir: str, organization_identifier: str, force: bool) -> None:
    """Create a test RSA-2048 key and a self-signed certificate with a PSD2-style subject (key.pem,
    cert.pem) for sandboxes and tests. Never for production."""
    from .request.sign import keygen

    if not organization_identifier.strip():
        raise click.BadParameter("must not be empty", param_hint="--organization-identifier")
    try:
        key_path, cert_path = keygen(out_dir, organization_identifier=organization_identifier, overwrite=force)
    except OSError as exc:
        raise InputError(str(exc) if isinstance(exc, FileExistsError) else f"cannot write to {out_dir}: {exc.strerror or exc}") from None
    click.echo(f"wrote {key_path} and {cert_path}")
