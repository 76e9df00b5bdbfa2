"""The schemas of an operation's header, query and path parameters, shared by the header and query checks and by
the request builder: ``$ref``s inlined, one python-jsonschema validator per parameter, the same wording as body
findings."""
from __future__ import annotations

from typing import Any

import jsonschema_rs

from ..schema import FORMAT_CHECKS, describe_error, detail_validator_class, format_checker
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


class ParameterSchema:
    """One parameter's schema, checked compiled (jsonschema-rs, with obvalidate's own format functions and
    the same ECMA pattern semantics): python-jsonschema runs only to word the problem of an invalid value."""

    def __init__(self, schema: dict):
        self.schema = schema
        self._fast = jsonschema_rs.validator_for(schema, formats=FORMAT_CHECKS, validate_formats=True, mask="…")
        self._detail = None

    def is_valid(self, value: Any) -> bool:
        """True when the value certainly conforms (False also when the compiled engine cannot take it)."""
        try:
            return self._fast.is_valid(value)
        except (ValueError, OverflowError, TypeError):
            return False

    def iter_errors(self, value: Any):
        try:
            if self._fast.is_valid(value):
                return iter(())
        except (ValueError, OverflowError, TypeError):  # values the compiled engine cannot take: decide slowly
            pass
        if self._detail is None:
            self._detail = detail_validator_class()(self.schema, format_checker=format_checker())
        return self._detail.iter_errors(value)


def parameter_validator(spec: Spec, param: Parameter, *, drop: tuple[str, ...] = ()) -> ParameterSchema:
    """Built once per spec, parameter schema and dropped keywords (cached on the spec, which holds the schema)."""
    cache = spec._cache.setdefault("parameter-schemas", {})
    key = (id(param.schema), drop)
    found = cache.get(key)
    if found is None or found[0] is not param.schema:  # the entry holds the schema: its id stays its own
        schema = {k: v for k, v in inline_refs(spec, param.schema).items() if k not in drop and not k.startswith("x-")}
        found = cache[key] = (param.schema, ParameterSchema(schema))
    return found[1]


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

