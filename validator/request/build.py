"""Building requests from the spec: an unsigned envelope for an operation with every required header and query
parameter (valid sample values from the parameter schemas) and, by default, the operation's first body example."""
from __future__ import annotations

import copy
import json
import re
from typing import Any, Mapping
from urllib.parse import quote, urlencode

from ..spec import Operation, Spec
from .parameters import inline_refs, owned_by_verifier

_FORMAT_SAMPLES = {  # values to *generate* a valid header or path value when the spec gives no example
    "uuid": "3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3c",
    "uri": "https://tpp.example.no/callback",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "date": "2026-07-01",
    "date-time": "2026-07-01T10:00:00Z",
}


def sample_value(spec: Spec, schema: dict) -> str:
    """A valid text value for a parameter schema: its first example, first enum member, or a format sample."""
    schema = inline_refs(spec, schema) if isinstance(schema, dict) else {}
    if schema.get("examples"):
        return str(schema["examples"][0])
    if schema.get("enum"):
        return str(schema["enum"][0])
    fmt = schema.get("format")
    if fmt in _FORMAT_SAMPLES:
        return _FORMAT_SAMPLES[fmt]
    for branch in schema.get("anyOf", ()):
        if branch.get("format") in _FORMAT_SAMPLES:
            return _FORMAT_SAMPLES[branch["format"]]
    if schema.get("type") == "boolean":
        return "true"
    if schema.get("type") == "integer":
        return str(max(int(schema.get("minimum", 0)), 1))
    return "sample-" + "x" * max(int(schema.get("minLength", 1)) - 7, 0)


FIRST_EXAMPLE = object()  # build_request's default body: the operation's first spec example


def first_body_example(spec: Spec, op: Operation) -> Any:
    for location, _schema, value in spec.iter_examples():
        if location.startswith(f"{op.operation_id} request example "):
            return copy.deepcopy(value)
    return None


def body_text(value: Any) -> str:
    """The compact JSON text a client sends for ``value``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_request(spec: Spec, operation_id: str, *, path_values: Mapping[str, str] | None = None,
                  query: Mapping[str, str] | None = None, headers: Mapping[str, str | None] | None = None,
                  body: Any = FIRST_EXAMPLE, paths: Mapping[str, str] | None = None) -> dict:
    """An unsigned envelope for ``operation_id`` with every required header and query parameter, from the spec.

    ``body`` defaults to the operation's first spec example (compact JSON text); a string is taken as the exact
    text, another value is serialised compactly, None means no body. ``query=None`` adds the required query
    parameters; a mapping is used as given. ``headers`` entries override (None removes).
    """
    op = spec.operation(operation_id)
    template = (paths or {}).get(operation_id, op.path)
    given = dict(path_values or {})
    params = {p.name: p for p in op.path_parameters}

    def fill(match: re.Match) -> str:
        name = match.group(1)
        value = given.get(name) or (sample_value(spec, params[name].schema) if name in params else "sample")
        return quote(value, safe="!$&'()*+,;=:@")

    path = re.sub(r"\{([^}]+)\}", fill, template)
    if query is None:
        query = {p.name: sample_value(spec, p.schema) for p in op.query_parameters if p.required}
    if query:
        path += "?" + urlencode(list(query.items()))
    out_headers: dict[str, str] = {}
    for p in op.header_parameters:
        if p.required and not owned_by_verifier(p):
            out_headers[p.name] = sample_value(spec, p.schema)
    for name, value in (headers or {}).items():
        if value is None:
            out_headers.pop(name, None)
        else:
            out_headers[name] = value
    envelope: dict[str, Any] = {"method": op.method, "path": path, "headers": out_headers}
    if body is FIRST_EXAMPLE:
        body = first_body_example(spec, op) if op.request_schema_ref else None
    if body is not None:
        envelope["body"] = body if isinstance(body, str) else body_text(body)
    return envelope

