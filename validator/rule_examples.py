"""Turn a rule's :class:`~validator.rules.Example` into the payload (or signed request) it stands for, and run it
through the validator the way the catalogue documents it (``obvalidate explain``, the catalogue tests)."""
from __future__ import annotations

import copy
from typing import Any

from .context import Context, Profile
from .api import Validator
from .request.examples import materialize_example
from .request.shape import REQUEST_KIND
from .rules import Example, Rule
from .rules.examples import set_pointer, spec_example
from .spec import Spec


def materialize(example: Example, spec: Spec) -> Any:
    if example.payload is not None:
        document = copy.deepcopy(example.payload)
    elif example.base is not None:
        document = spec_example(spec, example.base)
    else:
        raise ValueError("an example needs a payload, a base or raw bytes")
    for pointer, value in example.patch:
        document = set_pointer(document, pointer, value)
    if example.kind == REQUEST_KIND:  # whole-request examples are recipes, built and signed now
        document = materialize_example(document, spec)
    return document


def run_example(rule: Rule, example: Example, spec: Spec):
    """The report of validating an example the way the catalogue documents it."""
    options = dict(example.options or {})
    if isinstance(options.get("profile"), dict):  # a profile the example needs, as a profile file writes it
        options["profile"] = Profile.from_mapping(options["profile"], f"{rule.id} example profile")
    validator = Validator(
        spec=spec,
        context=Context.from_mapping(example.context) if example.context else None,
        today=spec.example_today,
        **options,
    )
    if example.raw is not None:
        return validator.validate_bytes(example.raw, example.kind, source=f"{rule.id} example")
    return validator.validate(materialize(example, spec), example.kind, source=f"{rule.id} example")
