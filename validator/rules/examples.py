"""The pieces a rule :class:`~validator.rules.Example` is made of: a spec example by label, and a JSON-pointer
patch. Materialising and running examples needs the engine: :mod:`validator.rule_examples`."""
from __future__ import annotations

import copy
from typing import Any

from ..spec import Spec, SpecError
from . import REMOVE


def spec_example(spec: Spec, label: str) -> Any:
    """A spec example by label: "<operationId> request <name>" or "<operationId> <status> <name>"."""
    for location, _schema, value in spec.iter_examples():
        if location.replace(" example ", " ") == label:
            return copy.deepcopy(value)
    raise SpecError(f"no spec example {label!r}")


def set_pointer(document: Any, pointer: str, value: Any) -> Any:
    """Set (``REMOVE``: delete, ``-``: append) the value at ``pointer``; the patched document."""
    if pointer == "":
        return value
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    parent = document
    for token in tokens[:-1]:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    last = tokens[-1]
    if isinstance(parent, list):
        if value is REMOVE:
            del parent[int(last)]
        elif last == "-":
            parent.append(value)
        else:
            parent[int(last)] = value
    elif value is REMOVE:
        del parent[last]
    else:
        parent[last] = value
    return document
