"""Why a target refused a request, where its answer says: the ``path`` of its tppMessages (A6) judged against where
the request is wrong.

A status and code can agree by accident (a canned 400 FORMAT_ERROR for every request): where the answer gives a
tppMessage ``path``, it must point at one of the places the validator finds the request wrong -- the spec's examples
write it as a JSON pointer into the request body (``/instructedAmount/amount``, ``/paymentIds/1``); a header or query
parameter is named by its name. A path pointing elsewhere is a refusal for another reason. The document gives the
path no format, so dotted (``instructedAmount.amount``) and bracketed (``payments[0]``) forms are read as pointers,
a path may name the place or any part of it or within it, and ``/`` (the whole body) stands for any place in the
body. Where no message gives a path (the bulk operation's ``{id, system, status, code, message}`` body, a
tppMessage without one), only the status and code can be judged: :func:`reason_unjudged` says so for the evidence.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from validator.findings import Finding

from .decoding import decode

BODY, HEADERS, QUERY = "/body", "/headers/", "/query/"


def _messages(body: Any) -> list[dict[str, Any]]:
    """The tppMessages of an answer: its body's bytes, or the JSON value its exchange decoded (decoding.py)."""
    value = decode(body).value if isinstance(body, (bytes, bytearray)) else body
    messages = value.get("tppMessages") if isinstance(value, dict) else None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def answer_paths(body: Any) -> list[str]:
    """The tppMessage paths an answer gives (none for the bulk body or messages without a path)."""
    return [m["path"] for m in _messages(body) if isinstance(m.get("path"), str)]


def _tokens(path: str) -> list[str]:
    """A path as pointer tokens: ``/a/b/0``, ``a.b[0]`` and ``/body/a/b/0`` alike."""
    text = path.strip()
    if text.startswith("/"):
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in text[1:].split("/")] if text != "/" else []
    else:
        tokens = [t for t in re.split(r"[.\[\]]+", text) if t]
    return tokens[1:] if tokens[:1] == ["body"] else tokens


def _related(a: list[str], b: list[str]) -> bool:
    """One names the place or a part of the other (a prefix, token by token)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def points_at(path: str, pointer: str) -> bool | None:
    """Whether an answer's path points at a finding's place; None when the place has no form to compare (the method,
    the path of the request)."""
    tokens = _tokens(path)
    if pointer == BODY or pointer.startswith(BODY + "/"):
        return _related(tokens, _tokens(pointer[len(BODY):] or "/"))
    for prefix in (HEADERS, QUERY):
        if pointer.startswith(prefix):
            name = pointer[len(prefix):].replace("~1", "/").replace("~0", "~")
            return bool(tokens) and tokens[-1].lower() == name.lower()
    return None


def reason_problem(body: Any, errors: Iterable[Finding]) -> str | None:
    """A refusal for another reason: the answer gives paths and none points at a place the request is wrong. None
    when a path points there, when no path is given, or when no place has a comparable form."""
    paths = answer_paths(body)
    places = [e.pointer for e in errors if e.pointer]
    if not paths or not places:
        return None
    judged = [points_at(p, place) for p in paths for place in places]
    if any(j is None for j in judged) or any(judged):
        return None
    return (f"the refusal names path {_every(map(repr, paths))}, but the request is wrong at "
            f"{_every(places)}: a refusal for another reason")


NAMED = 100   # distinct paths or places a message names (a hostile answer may give thousands)


def _every(items) -> str:
    """Every distinct item, in order (at most :data:`NAMED`, then how many more)."""
    distinct = list(dict.fromkeys(items))
    more = f" and {len(distinct) - NAMED} more" if len(distinct) > NAMED else ""
    return ", ".join(distinct[:NAMED]) + more


def reason_unjudged(body: Any) -> str:
    """For the evidence of a refusal judged by status and code alone."""
    return "" if answer_paths(body) else " (the answer names no path: only its status and code are judged)"
