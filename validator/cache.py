"""The per-user cache directory for data derived once from files that rarely change (the spec's YAML, the IBAN
registry of python-stdnum): each entry is named by what it was derived from, so a changed source is read afresh.

``OBVALIDATE_CACHE_DIR`` moves it; otherwise ``$XDG_CACHE_HOME/obvalidate`` or ``~/.cache/obvalidate``. A cache
that cannot be read or written costs only the derivation next time.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CACHE_ENV = "OBVALIDATE_CACHE_DIR"


def cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "obvalidate"


def read_json(name: str) -> Any | None:
    """The cached JSON value called ``name``, or None when there is none (or it cannot be read)."""
    try:
        return json.loads((cache_dir() / name).read_bytes())
    except (OSError, ValueError):
        return None


def write_json(name: str, value: Any) -> None:
    """Store ``value`` as ``name``, atomically (readers never see half a file); best effort."""
    import tempfile  # only when writing: it imports shutil, random and the compression modules

    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cache-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(value, fh, ensure_ascii=False)
            os.replace(tmp, directory / name)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass
