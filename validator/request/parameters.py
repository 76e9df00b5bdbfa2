"""The schemas of an operation's header, query and path parameters, shared by the header and query checks and by
the request builder: ``$ref``s inlined, one python-jsonschema validator per parameter, the same wording as body
findings."""
from __future__ import annotations

import json
from typing import Any

from ..schema import describe_error, detail_validator_class, format_checker
from ..schema import short_value as _short
from ..spec import Parameter, Spec, as_tuple

# Decision whose parameters the signature verifier owns (presence, format, duplicates): Digest, Signature,
# TPP-Signature-Certificate carry ``x-assumption: A8`` in the spec.
SIGNATURE_DECISION = "A8"


def inline_refs(spec: Spec, node: Any, depth: int = 0) -> Any:
    if depth > 32:
        return node
    if isinstance(node, dict):
        if "$ref" in node and isinstance(node["$ref"], str):
            resolved = inline_refs(spec, spec.resolve(node["$ref"]), depth + 1)
            rest = {k: inline_refs(spec, v, depth + 1) for k, v in node.items() if k != "$ref"}
            return {**resolved, **rest} if rest else resolved
        return {k: inline_refs(spec, v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(spec, v, depth + 1) for v in node]
    return node


_VALIDATORS: dict[tuple, Any] = {}  # python-jsonschema validators (imported lazily: cold start)


def parameter_validator(spec: Spec, param: Parameter, *, drop: tuple[str, ...] = ()) -> Any:
    key = (id(spec), param.location, param.name, json.dumps(param.schema, sort_keys=True, default=str), drop)
    found = _VALIDATORS.get(key)
    if found is None:
        schema = {k: v for k, v in inline_refs(spec, param.schema).items() if k not in drop and not k.startswith("x-")}
        found = detail_validator_class()(schema, format_checker=format_checker())
        _VALIDATORS[key] = found
    return found


def schema_problem(validator: Any, value: Any) -> str | None:
    from jsonschema.exceptions import best_match

    errors = list(validator.iter_errors(value))
    if not errors:
        return None
    error = best_match(errors)
    if error.validator in ("anyOf", "oneOf"):
        formats = [b.get("format") for b in error.validator_value if isinstance(b, dict) and b.get("format")]
        if formats:
            return f"{_short(value)} is not a valid {' or '.join(formats)}"
    return describe_error(error)  # the same wording as body findings


def owned_by_verifier(param: Parameter) -> bool:
    return SIGNATURE_DECISION in as_tuple(param.raw.get("x-assumption"))

