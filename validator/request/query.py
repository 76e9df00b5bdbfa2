"""The query checks of the ``request`` kind: unknown, repeated, missing and malformed query parameters (values
coerced to the schema's type first), and the date range of the list operations (A22)."""
from __future__ import annotations

import re
from typing import Any

from ..findings import WARNING
from ..schema import short_value as _short
from ..spec import Operation, Parameter, Spec
from .message import HttpRequest, Problems, query_pointer
from .parameters import inline_refs, parameter_validator, schema_problem

QUERY_UNKNOWN = "query-unknown"
QUERY_DUPLICATE = "query-duplicate"
QUERY_FORMAT = "query-format"
QUERY_REQUIRED = "query-required"
QUERY_DATE_ORDER = "query-date-order"

DATE_RANGE = ("fromDate", "toDate")  # A22: fromDate <= toDate
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_MAX_INT_DIGITS = 100


def _coerce_query(value: str, schema: dict) -> tuple[Any, str | None]:
    kind = schema.get("type")
    if kind == "boolean":
        if value in ("true", "false"):
            return value == "true", None
        return None, f"{_short(value)} is not a boolean (true or false)"
    if kind == "integer":
        if not _INT_RE.match(value):
            return None, f"{_short(value)} is not an integer"
        if len(value.lstrip("+-")) > _MAX_INT_DIGITS:  # int() refuses such text, and no limit of the interface is near
            return None, f"{_short(value)} is an integer of {len(value.lstrip('+-')):,} digits, beyond any value this parameter takes"
        return int(value), None
    if kind == "number":
        try:
            return float(value), None
        except ValueError:
            return None, f"{_short(value)} is not a number"
    return value, None


def _declared(spec: Spec, op: Operation) -> tuple[dict[str, Parameter], bool]:
    """The operation's query parameters by name and whether one is required, once per spec and operation (cached
    on the spec)."""
    cache = spec._cache.get("request-query-parameters")  # no new empty dict per call (setdefault's default)
    if cache is None:
        cache = spec._cache.setdefault("request-query-parameters", {})
    found = cache.get(id(op))
    if found is None or found[0] is not op:
        params = {p.name: p for p in op.query_parameters}
        found = cache[id(op)] = (op, params, any(p.required for p in params.values()))
    return found[1], found[2]


def check_query(spec: Spec, op: Operation, req: HttpRequest, out: Problems) -> None:
    params, any_required = _declared(spec, op)
    if not req.query and not any_required:
        return  # nothing sent, nothing required (most requests): nothing to report
    seen: dict[str, list[str]] = {}
    for name, value in req.query:
        seen.setdefault(name, []).append(value)
    for name in seen:
        if name not in params:
            known = ", ".join(params) or "none"
            out.add(QUERY_UNKNOWN, query_pointer(name), f"{op.operation_id} has no query parameter {name!r} (known: {known}); it is ignored", WARNING)
    valid: dict[str, Any] = {}
    for name, p in params.items():
        values = seen.get(name)
        if not values:
            if p.required:
                out.add(QUERY_REQUIRED, query_pointer(name), f"query parameter {name} is required for {op.operation_id} but absent")
            continue
        if len(values) > 1:
            out.add(QUERY_DUPLICATE, query_pointer(name), f"query parameter {name} occurs {len(values)} times; it takes one value")
        schema = inline_refs(spec, p.schema)
        coerced, problem = _coerce_query(values[0], schema)
        if problem is None:
            problem = schema_problem(parameter_validator(spec, p), coerced)
        if problem:
            out.add(QUERY_FORMAT, query_pointer(name), f"{name}: {problem}")
        else:
            valid[name] = coerced
    low, high = DATE_RANGE
    if low in valid and high in valid and str(valid[low]) > str(valid[high]):
        out.add(QUERY_DATE_ORDER, query_pointer(low), f"{low} {valid[low]} lies after {high} {valid[high]}")

