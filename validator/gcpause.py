"""``with gc_paused(pause):`` the cyclic garbage collector off for a block that makes many objects holding no
reference cycles: a large decoded payload and its findings, or a command's start (modules, spec, rule catalogue),
which the collector would otherwise walk again and again while they are made. A caller that has switched the
collector off keeps it off.

A class, not a generator-based context manager: the engine enters it twice per input, thousands of times a second."""
from __future__ import annotations

import gc


class gc_paused:  # noqa: N801 - used as a context manager, named like one
    __slots__ = ("paused",)

    def __init__(self, pause: bool = True):
        self.paused = pause and gc.isenabled()

    def __enter__(self) -> None:
        if self.paused:
            gc.disable()

    def __exit__(self, *_exc: object) -> None:
        if self.paused:
            gc.enable()
