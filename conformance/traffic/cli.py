"""`obvalidate traffic FILE`: a recording judged (HAR 1.2 or the proxy's JSONL log).

Registered through the ``obvalidate.commands`` entry-point group (pyproject.toml). Exit codes as the validator's:
0 no error finding (no warning either with ``--fail-on warning``), 1 findings, 2 the recording or an option cannot
be used (missing file, not a HAR, malformed JSON, an unusable profile) -- a message, never a traceback.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


class TrafficUsageError(click.UsageError):
    exit_code = EXIT_UNUSABLE


class Unusable(click.ClickException):
    """The recording (or the output file) cannot be used: exit 2, one line."""

    exit_code = EXIT_UNUSABLE


class Progress:
    """One line on standard error, rewritten in place, on a terminal only: the entries judged of the total, those
    with findings, the megabytes read and the time. Nothing for runs shorter than a moment; erased at the end."""

    DELAY, INTERVAL = 0.3, 0.1

    def __init__(self, total_entries: int, total_bytes: int, enabled: bool) -> None:
        self.total_entries = total_entries
        self.total_bytes = total_bytes
        self.enabled = enabled
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.shown = False

    def update(self, done: int, with_findings: int, bytes_read: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.DELAY or now - self.shown_at < self.INTERVAL:
            return
        self.shown_at = now
        self.shown = True
        click.echo(f"\r\033[Kobvalidate traffic: {done:,}/{self.total_entries:,} entries, {with_findings:,} with "
                   f"findings, {bytes_read / 1e6:,.1f}/{self.total_bytes / 1e6:,.1f} MB, {now - self.started:.0f} s",
                   nl=False, err=True)

    def close(self) -> None:
        if self.shown:
            click.echo("\r\033[K", nl=False, err=True)


def _origins(values: tuple[str, ...]) -> tuple[str, ...]:
    from urllib.parse import urlsplit

    out = []
    for value in values:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") or parts.query:
            raise TrafficUsageError(f"--origin must be scheme://host[:port] (http or https), not {value!r}")
        out.append(f"{parts.scheme}://{parts.netloc}")
    return tuple(out)


def _traffic_on_engine(engine: str, recording_path: str, input_format: str, profile_path: str | None,
                       base_path: str, origins: tuple[str, ...], fail_on: str, scheduler: str | None, jobs: int,
                       out_dir: str | None) -> None:
    from validator.cli import load_engine

    runner = load_engine(engine)
    if not out_dir:
        raise TrafficUsageError(f"--engine {engine} writes its findings to a directory: name it with --out DIR")
    if input_format == "har" or (input_format == "auto" and not recording_path.endswith((".jsonl", ".ndjson"))):
        raise TrafficUsageError(f"--engine {engine} judges the proxy's JSONL log (*.jsonl, *.ndjson), not a HAR file")
    profile_text = Path(profile_path).read_text(encoding="utf-8") if profile_path else None
    try:
        code = runner.traffic([recording_path], profile_text=profile_text, base_path=base_path, origins=origins,
                              out=out_dir, scheduler=scheduler, jobs=jobs, fail_on=fail_on)
    except runner.Error as exc:
        raise Unusable(str(exc)) from None
    sys.exit(code)


@click.command("traffic")
@click.argument("recording_path", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@click.option("--input-format", "input_format", type=click.Choice(["auto", "har", "jsonl"]), default="auto",
              show_default=True, help="auto: *.jsonl and *.ndjson are the proxy's log, anything else a HAR 1.2 file.")
@click.option("--profile", "profile_path", type=click.Path(exists=True, dir_okay=False),
              help="The bank's implementer profile (YAML): its choices where the decisions allow them.")
@click.option("--origin", "origins", multiple=True, metavar="URL",
              help="The bank's origin (scheme://host[:port]; repeatable): exchanges with other hosts are skipped. "
                   "Default: every host is judged.")
@click.option("--base-path", default="", metavar="PATH",
              help="The path the interface is served under (/psd2 when /psd2/v1/payments/...).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "sarif", "github", "html"]),
              default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest severity that makes the exit code 1.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here (the summary line "
              "goes to standard error).")
@click.option("-q", "--quiet", is_flag=True, help="No progress line; text output keeps only errors and the summary.")
@click.option("--engine", default="process", show_default=True, metavar="NAME",
              help="process: this process; dask: the proxy's JSONL log judged on a Dask cluster, one partition per TPP "
                   "(the signing certificate's identity), the findings written as Parquet under --out "
                   "(pip install 'obvalidate[dask]').")
@click.option("--scheduler", metavar="ADDRESS", help="With --engine dask: the scheduler (tcp://host:8786); without it "
              "a local cluster of --jobs worker processes.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True,
              help="With --engine dask and no --scheduler: the local cluster's worker processes.")
@click.option("--out", "out_dir", metavar="DIR", help="With --engine dask: where the findings (Parquet, by kind then "
              "rule) and summary.json are written.")
def traffic(recording_path: str, input_format: str, profile_path: str | None, origins: tuple[str, ...],
            base_path: str, fmt: str, fail_on: str, output: str | None, quiet: bool, engine: str,
            scheduler: str | None, jobs: int, out_dir: str | None) -> None:
    """Judge recorded traffic: a HAR 1.2 file (browser devtools, mitmproxy, Charles, `obvalidate proxy --record`)
    or the proxy's JSONL log. Each exchange is judged in recorded order, at its own recorded time (startedDateTime:
    signatures and execution dates are judged by that clock, not today's), as one session: client findings are the
    TPP's request defects, server findings the bank's answer defects, with the answer expected and the one given.
    Exchanges that are no operation of the spec (the SCA page, other hosts, static files) are skipped."""
    from validator.context import DEFAULT_PROFILE, ConfigError, Profile

    from .har import HarError, Recording
    from .output import make_output
    from .run import Tally, judged

    if base_path and not base_path.startswith("/"):
        raise TrafficUsageError(f"--base-path must start with '/', not {base_path!r}")
    bank_origins = _origins(origins)
    try:
        profile = Profile.load(profile_path) if profile_path else DEFAULT_PROFILE
    except ConfigError as exc:
        raise TrafficUsageError(str(exc)) from None
    if engine != "process":
        _traffic_on_engine(engine, recording_path, input_format, profile_path, base_path, bank_origins, fail_on,
                           scheduler, jobs, out_dir)
    elif scheduler or out_dir:
        raise TrafficUsageError("--scheduler and --out go with --engine dask")
    try:
        recording = Recording(recording_path, None if input_format == "auto" else input_format)
        total = recording.scan()
    except HarError as exc:
        raise Unusable(f"{recording_path}: {exc}") from None
    except OSError as exc:
        raise Unusable(f"cannot read {recording_path}: {exc.strerror or exc}") from None

    from conformance.exchange import ExchangeJudge

    judge = ExchangeJudge(profile=profile, base_path=base_path, origins=bank_origins)
    try:
        stream = open(output, "w", encoding="utf-8") if output else sys.stdout  # noqa: SIM115
    except OSError as exc:
        raise Unusable(f"cannot write {output}: {exc.strerror or exc}") from None
    report = make_output(fmt, stream, recording_path, quiet=quiet, recording_format=recording.format)
    tally = Tally()
    progress = Progress(total, recording.size, enabled=sys.stderr.isatty() and not quiet)
    try:
        for result in judged(recording, judge):
            tally.add(result)
            report.add(result)
            progress.update(tally.entries, tally.with_findings, recording.bytes_read)
    except HarError as exc:   # the file changed between the two passes
        raise Unusable(f"{recording_path}: {exc}") from None
    finally:
        progress.close()
    report.finish(tally)
    if recording.cut:
        click.echo(f"obvalidate traffic: {recording_path}: {recording.cut}; every complete entry was judged", err=True)
    if output:
        stream.close()
        from .output import summary_line

        click.echo(f"{output}: {summary_line(tally)}", err=True)
    if tally.judge_failures:
        click.echo(f"Error: the judge failed on {tally.judge_failures:,} entries (reported as skipped); this is a "
                   "defect of obvalidate, please report it", err=True)
        sys.exit(EXIT_UNUSABLE)
    sys.exit(EXIT_FINDINGS if tally.failing(fail_on) else EXIT_CLEAN)
