"""The sandbox clock: the time batch runs, execution dates and signature Date windows are judged by.

Without a start it is the real time. ``--now`` starts it at an instant from which it runs on with real time;
``frozen`` keeps it there (tests), and :meth:`Clock.set` moves it.
"""
from __future__ import annotations

import datetime as _dt
import threading
import time

from validator.context import OSLO, today_in_oslo


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
        self._set(start)

    def _set(self, start) -> None:
        if isinstance(start, str):
            start = parse_instant(start)
        self._start = start
        self._since = time.monotonic()

    def set(self, instant: _dt.datetime | str) -> None:
        with self._lock:
            self._set(instant)

    def now(self) -> _dt.datetime:
        with self._lock:
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
