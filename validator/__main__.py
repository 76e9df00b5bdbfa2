"""The `obvalidate` program (pyproject.toml's [project.scripts]) and `python -m validator`.

The program imports its modules (click's and the command line's) with the cyclic garbage collector paused, then
freezes what they made: those objects live as long as the process, and the collector's passes during the imports
(and every later one) would walk them again and again for nothing (about 2 % of checking one payload, counted in
instructions). Only the program does this: importing validator.cli from other code changes nothing of the caller's
collector.
"""
from __future__ import annotations

import gc


def run() -> None:
    collecting = gc.isenabled()
    gc.disable()
    from .cli import main

    gc.freeze()
    if collecting:
        gc.enable()
    main()


if __name__ == "__main__":
    run()
