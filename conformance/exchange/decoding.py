"""A target's answer decoded once, with the validator's loader and its limits.

A body is whatever the target sent: JSON nested 100,000 deep makes ``json.loads`` raise RecursionError (and every
recursive walk after it), a 50 MB string costs 50 MB more with each decode. Every reader of an answer in the gate
reads it here: the loader (:mod:`validator.jsonload`) decodes it once -- at most :data:`MAX_DEPTH` levels deep and
``max_bytes`` long, never raising -- and the :class:`Decoded` answer travels with the exchange (the oracle, the
response kinds, the links, the checks all read the same value). An answer beyond those limits is not judged: the
finding :data:`NOT_JUDGED` says why, and a check reading it finds nothing in it.
"""
from __future__ import annotations

from typing import Any

from validator.jsonload import (DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, JSON_TOO_DEEP, JSON_TOO_LARGE, Loaded,
                                load_json_bytes)

NOT_JUDGED = "answer-not-judged"
MAX_DEPTH = DEFAULT_MAX_DEPTH
MAX_BYTES = DEFAULT_MAX_BYTES


class Decoded:
    """One answer's body as the loader read it: ``value`` (None when it is no JSON the loader could read), the
    loader's ``problems``, and ``why_not``: why the gate cannot judge it (None when it can)."""

    __slots__ = ("loaded", "why_not")

    def __init__(self, loaded: Loaded, why_not: str | None = None) -> None:
        self.loaded, self.why_not = loaded, why_not

    @property
    def value(self) -> Any:
        return self.loaded.value

    def object(self) -> dict:
        """The value when it is a JSON object, else an empty one (what a check reading members finds in it)."""
        return self.loaded.value if isinstance(self.loaded.value, dict) else {}


def decode(content: bytes | None, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Decoded:
    """The body ``content`` decoded (never raises; an empty or non-JSON body has no value and the loader's problem
    saying why, which the response kinds report as the validator does)."""
    loaded = load_json_bytes(content or b"", max_bytes=max_bytes, max_depth=max_depth)
    rules = {p.rule for p in loaded.problems}
    if JSON_TOO_DEEP in rules:
        return Decoded(loaded, f"JSON nested deeper than {max_depth} levels (the gate decodes at most {max_depth})")
    if JSON_TOO_LARGE in rules:
        return Decoded(loaded, f"a JSON body of {len(content):,} bytes, more than the {max_bytes:,} the gate decodes")
    return Decoded(loaded)


def not_judged_message(why: str) -> str:
    return f"answer not judged: {why}"


def _error_field(value: Any, in_message: str, in_bulk_body: str) -> str | None:
    """A field of a decoded error answer: of its first tppMessage (A6), else of the bulk error body's own fields."""
    if not isinstance(value, dict):
        return None
    messages = value.get("tppMessages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        found = messages[0].get(in_message)
    else:
        found = value.get(in_bulk_body)
    return found if isinstance(found, str) else None


def text_of(value: Any) -> str | None:
    """The words a decoded error answer gives: ``tppMessages[0].text`` (A6), or the bulk error body's ``message``."""
    text = _error_field(value, "text", "message")
    return text[:300] if text is not None else None


def code_of(value: Any) -> str | None:
    """The error code a decoded answer names: ``tppMessages[0].code`` (A6), or the bulk error body's ``code``."""
    return _error_field(value, "code", "code")
