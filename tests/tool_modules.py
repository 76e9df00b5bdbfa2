"""The scripts under tools/ as modules for the tests: they are scripts run by path, not a package."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool(stem: str) -> ModuleType:
    """``tools/<stem>.py`` as the module ``stem`` (loaded once): its dataclasses look their module up by that name,
    and a tool importing a sibling by name (``from bench_payloads import ...``) finds the same module."""
    loaded = sys.modules.get(stem)
    if loaded is not None and getattr(loaded, "__file__", None) == str(TOOLS / f"{stem}.py"):
        return loaded
    spec = importlib.util.spec_from_file_location(stem, TOOLS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
