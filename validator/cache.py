"""The per-user cache directory for data derived once from files that rarely change (the spec's YAML, the IBAN
registry of python-stdnum): each entry is named by what it was derived from, so a changed source is read afresh.

``OBVALIDATE_CACHE_DIR`` moves it; otherwise ``$XDG_CACHE_HOME/obvalidate`` or ``~/.cache/obvalidate``. A cache
that cannot be read or written costs only the derivation next time.
"""
from __future__ import annotations

import binascii
import json
import marshal
import os
import sys
from pathlib import Path
from typing import Any, Callable

CACHE_ENV = "OBVALIDATE_CACHE_DIR"


def cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "obvalidate"


def source_key(source: bytes) -> str:
    """A short name for what an entry was derived from: its length and CRC-32. Enough to tell versions of one
    file apart, and binascii is loaded by then (hashlib would load OpenSSL: ~3 ms of a command's start)."""
    return f"{len(source):x}-{binascii.crc32(source):08x}"


def code_key(*files: str) -> str | None:
    """A key for the code that derives an entry from a source: its modules' files (a changed algorithm makes a new
    entry, never reads an old one); None when one cannot be read (then nothing is remembered)."""
    try:
        return source_key(b"".join(Path(file).read_bytes() for file in files))
    except OSError:
        return None


def read_json(name: str) -> Any | None:
    """The cached JSON value called ``name``, or None when there is none (or it cannot be read)."""
    return _read(name, json.loads)


def write_json(name: str, value: Any) -> None:
    """Store ``value`` as JSON called ``name``, atomically (readers never see half a file); best effort."""
    _write(name, lambda: json.dumps(value, ensure_ascii=False).encode("utf-8"))


# marshal, Python's format for compiled modules, loads a large document in two thirds of JSON's time; its format
# may change between Python versions, so an entry's name carries MARSHAL_TAG.
MARSHAL_TAG = sys.implementation.cache_tag or "python"


def read_marshal(name: str) -> Any | None:
    """The cached value called ``name`` (plain data: dicts, lists, strings, numbers), or None."""
    return _read(name, marshal.loads)


def write_marshal(name: str, value: Any) -> None:
    _write(name, lambda: marshal.dumps(value))


def _read(name: str, decode: Callable[[bytes], Any]) -> Any | None:
    try:
        return decode((cache_dir() / name).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _write(name: str, encode: Callable[[], bytes]) -> None:
    import tempfile  # only when writing: it imports shutil, random and the compression modules

    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cache-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(encode())
            os.replace(tmp, directory / name)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass
