"""Every example in the spec passes the full validator (schema + every rule), not only JSON Schema."""
from __future__ import annotations

import pytest

from validator import Validator
from validator.spec import load_spec

SPEC = load_spec()
SCHEMA_PREFIX = "#/components/schemas/"
KIND_BY_SCHEMA = {k.schema_name: k.name for k in SPEC.kinds.values()}


def _examples():
    for location, schema, value in SPEC.iter_examples():
        refs = [schema.get("$ref")] + [s.get("$ref") for s in schema.get("anyOf", [])]
        kinds = [KIND_BY_SCHEMA[r[len(SCHEMA_PREFIX):]] for r in refs if r and r[len(SCHEMA_PREFIX):] in KIND_BY_SCHEMA]
        yield pytest.param(kinds, value, id=location)


@pytest.mark.parametrize(("kinds", "value"), list(_examples()))
def test_spec_example_is_valid(kinds, value):
    assert kinds, "every example's schema is a payload kind"
    validator = Validator(today=SPEC.example_today)
    reports = [validator.validate(value, kind) for kind in kinds]
    # An example of an anyOf response (e.g. 401: SCA redirect or tppMessages) must fit one of them cleanly.
    assert any(not r.findings for r in reports), [[(f.rule, f.pointer, f.message) for f in r.findings] for r in reports]


def test_every_kind_has_a_spec_example():
    covered = {k for param in _examples() for k in param.values[0]}
    assert covered == set(SPEC.kinds), set(SPEC.kinds) - covered
