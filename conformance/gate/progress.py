"""The conformance gate's progress on standard error: a live line on a terminal, plain periodic lines in a CI log
(where nothing redraws a line, a long run would otherwise print nothing until it ends)."""
from __future__ import annotations

import sys
import threading
import time

import click

from validator.formats.escape import printable

PLAIN_INTERVAL = 10.0   # seconds between the plain progress lines of a run whose standard error is no terminal


class Progress:
    """The run's progress on standard error. ``live`` (a terminal): a line per check, rewritten in place, and a line
    per failed check. ``plain`` (a CI log, a file): a line when the run starts, every ``interval`` seconds, at each
    suite's end and at the end -- the suite, the checks done of the total, the findings (distinct fingerprints) and
    the requests so far -- so a long run is never silent where nothing redraws a line. ``off``: nothing (``-q``)."""

    def __init__(self, mode: str, checks=(), interval: float | None = None) -> None:
        self.mode = mode
        self.enabled = mode == "live"   # the terminal's live line
        self.suite_of = {c.id: c.suite for c in checks}
        self.interval = PLAIN_INTERVAL if interval is None else interval
        self.done = 0
        self.failed = 0
        self.checks_done: set[str] = set()
        self.fingerprints: set[str] = set()
        self.requests = 0
        self.suite = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._started = time.monotonic()

    def start(self, target: str) -> None:
        if self.mode != "plain":
            return
        suites = list(dict.fromkeys(self.suite_of.values()))
        self._line(f"started: {_count(len(self.suite_of), 'check')} in {_count(len(suites), 'suite')} "
                   f"({', '.join(suites)}) against {target}")
        self._ticker = threading.Thread(target=self._tick, name="conform-progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self._line(self._state(f"[{self.suite}] " if self.suite else ""))

    def _state(self, head: str) -> str:
        with self._lock:
            return (f"{head}{len(self.checks_done)}/{len(self.suite_of)} checks, "
                    f"{_count(len(self.fingerprints), 'finding')}, {_count(self.requests, 'request')}, "
                    f"{time.monotonic() - self._started:.0f} s")

    def _line(self, text: str) -> None:
        click.echo(f"obvalidate conform: {printable(text)}", err=True)

    def __call__(self, event: str, name: str, outcome) -> None:
        if self.mode == "plain":
            self._plain(event, name, outcome)
        if not self.enabled or event == "suite":
            return
        if event == "start":
            click.echo(f"\r\033[K{self.done} done, {self.failed} failed · {printable(name)} …", nl=False, err=True)
            return
        self.done += 1
        if outcome is not None and outcome.status == "failed":
            self.failed += 1
            click.echo(f"\r\033[K✗ {printable(f'{name} [{outcome.operation}]')}", err=True)

    def _plain(self, event: str, name: str, outcome) -> None:
        if event == "suite":
            self._line(self._state(f"suite {name} ended: "))
            return
        with self._lock:
            self.suite = self.suite_of.get(name, self.suite)
            if event == "done" and outcome is not None:
                self.checks_done.add(name)
                self.fingerprints.update(f.fingerprint for f in outcome.findings)
                self.requests += outcome.cases

    def close(self, result=None) -> None:
        """Stop; the last plain line says "ended" with the ``result``'s own counts (its findings, its requests: what
        the summary says), "stopped" without one."""
        if self.enabled:
            click.echo("\r\033[K", nl=False, err=True)
        if self.mode == "plain" and not self._stop.is_set():
            self._stop.set()
            if self._ticker:
                self._ticker.join()
                if result is not None:
                    with self._lock:
                        self.fingerprints = {f.fingerprint for f in result.findings}
                        self.requests = len(result.cases)
                self._line(self._state("ended: " if result is not None else "stopped: "))


def progress_mode(quiet: bool, fmt: str) -> str:
    """``off`` with -q; on a terminal the live line (text output only: another format's reader gets no redraws);
    elsewhere the plain lines."""
    if quiet:
        return "off"
    if sys.stderr.isatty():
        return "live" if fmt == "text" else "off"
    return "plain"


def _count(n: int, noun: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
