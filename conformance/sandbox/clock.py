"""The sandbox clock: the time batch runs, execution dates and signature Date windows are judged by.

Without a start it is the real time. ``--now`` starts it at an instant from which it runs on with real time;
``frozen`` keeps it there until :meth:`Clock.set` moves it (a test's clock: time does not pass unless the test moves
it). :meth:`Clock.set` moves it; a move back in time starts a new *timeline* (:attr:`Clock.timeline`), so that the
scheduled batch runs follow the clock as it is set: a test that sets the clock earlier than the last one left it gets
the runs of its own day, not nothing until the clock passes the other test's time.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import threading
import time
import uuid

from validator.context import OSLO, today_in_oslo

# The timeline of a clock that always ran with real time: the same for every process over one database, so that a
# sandbox served again on its database performs the runs it missed while it was down.
REAL_TIME = "real-time"


def parse_instant(text: str) -> _dt.datetime:
    """An aware UTC instant from ISO 8601 text (``Z`` or an offset; naive text is UTC)."""
    value = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc)


class Clock:
    def __init__(self, start: _dt.datetime | str | None = None, *, frozen: bool = False) -> None:
        self._lock = threading.Lock()
        self._frozen = frozen
        self._name = uuid.uuid4().hex[:12]
        self._generations = itertools.count()
        self._set(start)
        self._begin(None if start is None and not frozen else self._now())

    def _set(self, start) -> None:
        if isinstance(start, str):
            start = parse_instant(start)
        if start is None and self._frozen:   # a frozen clock stands at the instant it was frozen
            start = _dt.datetime.now(_dt.timezone.utc)
        self._start = start
        self._since = time.monotonic()

    def _begin(self, origin: _dt.datetime | None) -> None:
        """A new timeline from ``origin`` (None: the real time's own, :data:`REAL_TIME`)."""
        self._origin = origin
        self._timeline = REAL_TIME if origin is None else f"{self._name}/{next(self._generations)}"

    def set(self, instant: _dt.datetime | str | None, *, frozen: bool | None = None) -> None:
        """Move the clock to ``instant`` (None: the real time); ``frozen`` True stops it there, False lets it run
        (None: as it was). A move back in time starts a new timeline from ``instant``."""
        with self._lock:
            before = self._now()
            if frozen is not None:
                self._frozen = frozen
            self._set(instant)
            after = self._now()
            if after < before:
                self._begin(after)

    @property
    def frozen(self) -> bool:
        return self._frozen

    @property
    def timeline(self) -> str:
        """Which timeline the clock is on: it changes when the clock is set back (see the module)."""
        with self._lock:
            return self._timeline

    @property
    def origin(self) -> _dt.datetime | None:
        """The instant the current timeline started at (None: the real time, never set)."""
        with self._lock:
            return self._origin

    def now(self) -> _dt.datetime:
        with self._lock:
            return self._now()

    def _now(self) -> _dt.datetime:
        if self._start is None:
            return _dt.datetime.now(_dt.timezone.utc)
        if self._frozen:
            return self._start
        return self._start + _dt.timedelta(seconds=time.monotonic() - self._since)

    def today(self) -> _dt.date:
        """Today in Europe/Oslo (A13)."""
        return today_in_oslo(self.now())

    def oslo(self, instant: _dt.datetime | None = None) -> _dt.datetime:
        return (instant or self.now()).astimezone(OSLO)
