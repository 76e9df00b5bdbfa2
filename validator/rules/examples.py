"""Turn a rule's :class:`Example` into the payload (or bytes) it stands for, and check it."""
from __future__ import annotations

import copy
from typing import Any

from ..spec import Spec, SpecError
from . import REMOVE, Example, Rule


def spec_example(spec: Spec, label: str) -> Any:
    """A spec example by label: "<operationId> request <name>" or "<operationId> <status> <name>"."""
    for location, _schema, value in spec.iter_examples():
        if location.replace(" example ", " ") == label:
            return copy.deepcopy(value)
    raise SpecError(f"no spec example {label!r}")


def _set(document: Any, pointer: str, value: Any) -> Any:
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


def materialize(example: Example, spec: Spec) -> Any:
    if example.payload is not None:
        document = copy.deepcopy(example.payload)
    elif example.base is not None:
        document = spec_example(spec, example.base)
    else:
        raise ValueError("an example needs a payload, a base or raw bytes")
    for pointer, value in example.patch:
        document = _set(document, pointer, value)
    if example.kind == "request":  # whole-request examples are recipes, built and signed now (validator.request)
        from ..request import materialize_example

        document = materialize_example(document, spec)
    return document


def run_example(rule: Rule, example: Example, spec: Spec):
    """The report of validating an example the way the catalogue documents it."""
    from ..context import Context
    from ..engine import Validator

    validator = Validator(
        spec=spec,
        context=Context.from_mapping(example.context) if example.context else None,
        today=spec.example_today,
        **(example.options or {}),
    )
    if example.raw is not None:
        return validator.validate_bytes(example.raw, example.kind, source=f"{rule.id} example")
    return validator.validate(materialize(example, spec), example.kind, source=f"{rule.id} example")
