"""Every spec example names only properties its schema declares (issue 7: a YAML slip such as an unquoted
comma in a flow mapping — `text: ..., got 3` — adds a key `"got 3": null` that lenient checks accept).

The schemas are read strictly: `unevaluatedProperties: false` on every object schema that declares properties
(never on an allOf part, whose siblings declare the rest), so composition still works and nothing undeclared
passes, at any depth, for responses as much as for requests."""
from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from validator.spec import load_spec

SPEC = load_spec()
PREFIX = "#/components/schemas/"
PART = "__allOf_part"


def _strict(node, part: bool = False):
    if isinstance(node, list):
        return [_strict(n, part) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "allOf":
            out[key] = [_as_part(v) for v in value]
        elif key in ("anyOf", "oneOf"):
            out[key] = [_strict(v, part) for v in value]
        elif key in ("properties", "patternProperties", "$defs"):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"):
            out[key] = _strict(value)
        else:
            out[key] = copy.deepcopy(value)
    declares = "properties" in node or "allOf" in node
    if declares and not part and "additionalProperties" not in node and "unevaluatedProperties" not in node:
        out["unevaluatedProperties"] = False
    return out


def _as_part(node):
    if isinstance(node, dict) and set(node) == {"$ref"} and node["$ref"].startswith(PREFIX):
        return {"$ref": node["$ref"] + PART}
    return _strict(node, part=True)


def _strict_checker():
    schemas = {}
    for name, schema in SPEC.schemas.items():
        schemas[name] = _strict(schema)
        schemas[name + PART] = _strict(schema, part=True)
    resource = Resource.from_contents({"components": {"schemas": schemas}}, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:obvalidate:strict", resource)

    def problems(schema: dict, value) -> list[str]:
        rooted = {"$ref": "urn:obvalidate:strict" + schema["$ref"]} if "$ref" in schema else {
            "anyOf": [{"$ref": "urn:obvalidate:strict" + s["$ref"]} for s in schema["anyOf"]]
        }
        validator = jsonschema.Draft202012Validator(rooted, registry=registry)
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(value)]

    return problems


PROBLEMS = _strict_checker()


@pytest.mark.parametrize(("schema", "value"), [pytest.param(s, v, id=loc) for loc, s, v in SPEC.iter_examples()])
def test_spec_example_declares_only_known_properties(schema, value):
    assert PROBLEMS(schema, value) == []


def test_the_strict_reading_catches_a_key_made_by_an_unquoted_comma():
    # The defect the issue found: YAML reads `text: ..., got 3` in a flow mapping as a second key "got 3".
    (message,) = yaml.safe_load("- {category: ERROR, code: FORMAT_ERROR, text: EUR allows at most 2 fraction digits, got 3}")
    assert message["got 3"] is None
    problems = PROBLEMS({"$ref": PREFIX + "TppMessagesError"}, {"tppMessages": [message]})
    assert problems and "got 3" in problems[0]


def test_the_strict_reading_still_accepts_composed_schemas():
    # PaymentDetail = a SEPA or bulk request (allOf part) + transactionStatus: nothing undeclared, nothing refused.
    detail = next(v for loc, _, v in SPEC.iter_examples() if loc.startswith("getPayment 200"))
    assert PROBLEMS({"$ref": PREFIX + "PaymentDetail"}, detail) == []
    assert PROBLEMS({"$ref": PREFIX + "PaymentDetail"}, {**detail, "transactionStatu": "ACSC"}) != []
