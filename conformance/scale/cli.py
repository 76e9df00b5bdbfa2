"""The engines the command line runs on: ``obvalidate validate --engine dask`` and ``obvalidate traffic --engine
dask``. Registered under the ``obvalidate.engines`` entry points (pyproject.toml) and loaded only when named, so the
command line knows no engine and ``obvalidate payload.json`` imports none.

Exit codes as the command line's: 0 no error finding (no warning either with --fail-on warning), 1 findings, 2 an
input that could not be read (named on standard error, the others judged and written), --fail-fast's stop, or an
unusable option -- a message, never a traceback.
"""
from __future__ import annotations

from typing import Any, Sequence

from .driver import Unusable



def _require(extra: str, *modules: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise Unusable(f"the {extra} engine needs {', '.join(missing)}: pip install 'obvalidate[{extra}]'")


class DaskEngine:
    """``--engine dask``: the command line's options in, the exit code out (the command line loads this object by
    its entry point and knows nothing else of it)."""

    name = "dask"
    Error = Unusable

    @staticmethod
    def settings(*, kind: str | None, **options: Any):
        """The job's settings from the command line's options (ConfigError for an unusable profile, context or
        kind)."""
        from validator.context import ConfigError

        from .rows import Settings

        settings = Settings.from_options(kind=kind, **options)
        if kind is not None:
            from validator.request.shape import REQUEST_KIND

            known = set(settings.validator().spec.kinds) | {REQUEST_KIND}
            if kind not in known:
                raise ConfigError(f"unknown kind {kind!r}; one of {', '.join(sorted(known))}")
        return settings

    def validate(self, names: Sequence[str], settings: Any, *, out: str, scheduler: str | None, jobs: int,
                 fail_fast: bool, column: str, fail_on: str) -> int:
        """``obvalidate validate --engine dask``: the findings of ``names`` under ``out``; the exit code."""
        _require("dask", "distributed", "pyarrow", "fsspec")
        from . import dask_engine, driver
        from .job import Stop

        inputs = driver.inputs_of(names)
        driver.fresh_out(out)
        with dask_engine.client(scheduler, jobs) as connected:
            workers = len(connected.scheduler_info().get("workers", {})) or jobs
            try:
                tally = driver.validate(dask_engine.runner(connected), inputs, settings, out, workers=workers,
                                        fail_fast=fail_fast, column=column)
            except Stop as exc:
                return driver.stopped(str(exc))
        return driver.finish(tally, out, fail_on, {"engine": "dask", "profile_digest": settings.profile_digest})

    def traffic(self, names: Sequence[str], *, profile_text: str | None, base_path: str, origins: tuple[str, ...],
                out: str, scheduler: str | None, jobs: int, fail_on: str) -> int:
        """``obvalidate traffic --engine dask``: the proxy's JSONL logs judged per TPP; the exit code."""
        _require("dask", "distributed", "pyarrow", "fsspec")
        from . import dask_engine, driver
        from .traffic import TrafficSettings

        driver.fresh_out(out)
        settings = TrafficSettings(profile_text, base_path, origins)
        with dask_engine.client(scheduler, jobs) as connected:
            tally, tpps = driver.traffic(dask_engine.runner(connected), names, settings, out)
        return driver.finish(tally, out, fail_on, {"engine": "dask", "tpps": tpps,
                                                  "profile_digest": settings.profile_digest})


DASK = DaskEngine()
