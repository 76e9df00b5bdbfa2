"""The job on Dask: a ``distributed`` client (a scheduler's address, else a local cluster of ``jobs`` worker
processes, one thread each), the counting pass and the judging tasks as futures, their tallies gathered as they end.

Workers import this package and build the validator once per process (:meth:`Settings.validator`); a task carries
only its byte range or row group and the settings. A task that raises (``Stop`` under --fail-fast) cancels the rest.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Sequence


@contextlib.contextmanager
def client(scheduler: str | None, jobs: int) -> Iterator[Any]:
    """A client of the scheduler at ``scheduler``, or of a local cluster of ``jobs`` processes started (and ended)
    here."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.daemon": False, "logging.distributed": "error"}):
        if scheduler:
            try:
                connected = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError, ValueError) as exc:
                from .driver import Unusable

                raise Unusable(f"cannot reach the scheduler {scheduler}: {exc}") from None
            with connected:
                yield connected
            return
        with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=40) as cluster, Client(cluster) as connected:
            yield connected


def runner(connected: Any) -> Callable[..., list]:
    """The engine's ``run_all`` (:mod:`.driver`) on this client."""
    return functools.partial(run_all, connected)


def run_all(connected: Any, function: Callable, items: Sequence[Any], *args: Any) -> list[Any]:
    """``function(item, *args)`` for each item on the cluster, results in the items' order; the first exception
    cancels the other tasks and is raised here."""
    from distributed import as_completed

    if not items:
        return []
    futures = connected.map(function, items, *[[arg] * len(items) for arg in args], pure=False)
    position = {future.key: n for n, future in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    try:
        for future in as_completed(futures):
            results[position[future.key]] = future.result()
    except BaseException:
        connected.cancel(futures)
        raise
    return results
