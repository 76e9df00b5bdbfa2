"""The `obvalidate` program (pyproject.toml's [project.scripts]) and `python -m validator`.

What only the program does, never code that imports validator.cli (whose process lives on):
- It imports its modules (click's and the command line's) with the cyclic garbage collector paused, then freezes what
  they made: those objects live as long as the process, and the collector's passes during the imports (and every
  later one) would walk them again and again for nothing (about 2 % of checking one payload, counted in instructions).
- When the command is done and nothing is left for the interpreter's own exit to do (no function registered with
  atexit, no other thread, the output flushed), it ends the process at once, with the command's exit code: tearing
  down every module and object one by one is about 3 % of checking one payload. Otherwise, and whenever flushing the
  output fails (a closed pipe), the interpreter exits as usual and reports as usual.
"""
from __future__ import annotations

import gc
import os
import sys


def run() -> None:
    collecting = gc.isenabled()
    gc.disable()
    from .cli import main

    gc.freeze()
    if collecting:
        gc.enable()
    try:
        main()
    except SystemExit as stop:
        _exit_at_once(stop.code)
        raise


def _exit_at_once(code: object) -> None:
    """os._exit(code) when the interpreter's exit would only tear down (see the module's docstring); else returns."""
    import atexit
    import threading

    callbacks = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered functions
    status = 0 if code is None else code
    if type(status) is not int or callbacks is None or callbacks() or threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - the usual exit reports it (e.g. a closed pipe), as it always did
        return
    os._exit(status)


if __name__ == "__main__":
    run()
