"""JSON Schema checking of a payload against its kind's component schema.

Two engines, one verdict: a compiled validator (jsonschema-rs) answers "valid?" fast and lists the
errors of an invalid payload; each error's schema path is resolved to the subschema that failed, so
findings can name the document section (``x-document-ref``) and defer to the semantic rule that
owns a constraint (``x-rule``). python-jsonschema decides only where it must (the closest ``anyOf``
branch, integers beyond 64 bits); tests prove both engines give the same findings. Each JSON Schema
keyword maps to one catalogue rule.
"""
from __future__ import annotations

import datetime as _dt
import functools
import json
import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

import jsonschema_rs

from .findings import escape_pointer_token
from .locate import SCHEMA_PREFIX
from .spec import Spec, as_tuple

DRAFT = "https://json-schema.org/draft/2020-12/schema"

# JSON Schema keyword -> catalogue rule id (see rules/schema_rules.py)
KEYWORD_RULES = {
    "required": "schema-required",
    "type": "schema-type",
    "maxLength": "schema-length",
    "minLength": "schema-length",
    "enum": "schema-enum",
    "const": "schema-enum",
    "format": "schema-format",
    "minItems": "schema-items",
    "maxItems": "schema-items",
    "uniqueItems": "schema-items",
    "minimum": "schema-range",
    "maximum": "schema-range",
    "exclusiveMinimum": "schema-range",
    "exclusiveMaximum": "schema-range",
}


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    rule: str
    pointer: str
    message: str
    ref: str | None


# ---- formats: one definition for python-jsonschema, matching what the compiled engine accepts ----
# Plain functions (the name -> check table is below); the python-jsonschema checker is built lazily:
# importing jsonschema costs ~80 ms, and a valid payload never needs it.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE.match(value):
        return False
    _dt.date.fromisoformat(value)
    return True


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME.match(value):
        return False
    text = value.upper().replace("Z", "+00:00")
    if text[17:19] == "60":  # RFC 3339 allows a leap second, as the compiled engine does
        text = text[:17] + "59" + text[19:]
    _dt.datetime.fromisoformat(text)
    return True


def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or bool(_UUID.match(value))


def _is_ipv4(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def _is_ipv6(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if any(c.isspace() or ord(c) < 0x20 for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", parts.scheme) is not None


FORMAT_CHECKS = {
    "date": _is_date,
    "date-time": _is_date_time,
    "uuid": _is_uuid,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "uri": _is_uri,
}


_UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")


@functools.lru_cache(maxsize=256)
def _ecma_pattern(pattern: str) -> re.Pattern:
    # ECMA-262 '$' matches only at the very end; Python's also before a final newline.
    return re.compile(_UNESCAPED_DOLLAR.sub(r"\\Z", pattern))


def _pattern_keyword(validator, pattern, instance, schema):
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.lru_cache(maxsize=1)
def detail_validator_class():
    """Draft 2020-12 with ECMA semantics for `pattern`, so both engines agree on every value."""
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern_keyword})


@functools.lru_cache(maxsize=1)
def format_checker():
    """A python-jsonschema FormatChecker with exactly obvalidate's format definitions."""
    import jsonschema

    checker = jsonschema.FormatChecker(())
    for name, check in FORMAT_CHECKS.items():
        checker.checks(name, raises=ValueError)(check)
    return checker


def __getattr__(name: str):
    if name == "FORMAT_CHECKER":
        return format_checker()
    raise AttributeError(name)


def _closure(spec: Spec, root: str) -> dict[str, dict]:
    """The component schemas reachable from ``root``: a small document compiles fast."""
    seen: dict[str, dict] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = spec.schema(name)
        stack = [seen[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX):
                    todo.append(ref[len(SCHEMA_PREFIX):])
                stack.extend(v for k, v in node.items() if not k.startswith("x-"))
            elif isinstance(node, list):
                stack.extend(node)
    return seen


def bundled_schema(spec: Spec, component: str) -> dict:
    """A self-contained Draft 2020-12 schema for one component (refs stay ``#/components/...``)."""
    return {
        "$schema": DRAFT,
        "$ref": SCHEMA_PREFIX + component,
        "components": {"schemas": _closure(spec, component)},
    }


class SchemaChecker:
    """Compiled checking of one component schema."""

    def __init__(self, spec: Spec, component: str):
        self.component = component
        self.schema = bundled_schema(spec, component)
        self._fast = jsonschema_rs.validator_for(self.schema, validate_formats=True)
        self._detail_validator = None
        self.root_ref = spec.schema(component).get("x-document-ref")

    @property
    def _detail(self):
        if self._detail_validator is None:
            self._detail_validator = detail_validator_class()(self.schema, format_checker=format_checker())
        return self._detail_validator

    def is_valid(self, payload: Any) -> bool:
        try:
            return self._fast.is_valid(payload)
        except (ValueError, OverflowError, TypeError):
            # Values the compiled engine cannot take (e.g. integers beyond 64 bits): decide slowly.
            return not any(True for _ in self._detail.iter_errors(payload))

    def issues(self, payload: Any) -> Iterator[SchemaIssue]:
        if self.is_valid(payload):
            return
        yield from self.detailed_issues(payload)

    def detailed_issues(self, payload: Any) -> Iterator[SchemaIssue]:
        errors = self._compiled_errors(payload)
        if errors is None:  # alternatives (anyOf) or values the compiled engine cannot take
            errors = self._detail.iter_errors(payload)
        issues = [issue for error in errors for issue in self._convert(error)]
        yield from _one_problem_per_value(issues)

    def _compiled_errors(self, payload: Any) -> list[_Error] | None:
        """The compiled engine's errors with the failing subschema resolved: a 10,000-entry bulk with one
        bad entry costs milliseconds, not a second of python-jsonschema. None when the python engine
        must decide (it picks the closest anyOf branch; it takes integers beyond 64 bits)."""
        try:
            raw = list(self._fast.iter_errors(payload))
        except (ValueError, OverflowError, TypeError):
            return None
        errors = []
        for e in raw:
            *where, keyword = e.schema_path
            if keyword in ("anyOf", "oneOf", "not") or not isinstance(keyword, str):
                return None
            schema = _walk(self.schema, where)
            parent = _walk(payload, e.instance_path)
            if not isinstance(schema, dict) or schema is _MISSING or parent is _MISSING:
                return None
            missing = getattr(e.kind, "property", None) if keyword == "required" else None
            errors.append(_Error(keyword, schema.get(keyword), parent, schema, e.message, list(e.instance_path), missing=missing))
        return errors

    def _convert(self, error) -> Iterator[SchemaIssue]:
        keyword = error.validator
        if keyword in ("anyOf", "oneOf") and error.context:
            # Report the branch that came closest rather than "matches none of".
            from jsonschema.exceptions import best_match

            best = best_match(error.context)
            if best is not None:
                branch = [e for e in error.context if e.relative_schema_path[0] == best.relative_schema_path[0]]
                for sub in branch:
                    yield from self._convert(sub)
                return
        schema = error.schema if isinstance(error.schema, dict) else {}
        if schema.get("x-rule"):
            return  # a semantic rule owns this constraint and words its finding
        if keyword == "$ref":
            return
        pointer = "".join("/" + escape_pointer_token(t) for t in error.absolute_path)
        # Every keyword the spec uses has a rule (a test proves it); another would surface as schema-<keyword>.
        rule = KEYWORD_RULES.get(keyword, f"schema-{keyword}")
        message = _message(error, keyword, schema)
        if keyword == "required":
            missing = _missing_property(error)
            if missing is not None:
                pointer += "/" + escape_pointer_token(missing)
        yield SchemaIssue(rule, pointer, message, schema.get("x-document-ref") or self.root_ref)


_MISSING = object()


def _one_problem_per_value(issues: list[SchemaIssue]) -> list[SchemaIssue]:
    """A value of the wrong type is one problem, not also an enum or length problem; a code outside
    its set is one problem, not also a length or pattern problem."""
    typed = {i.pointer for i in issues if i.rule == "schema-type"}
    coded = {i.pointer for i in issues if i.rule == "schema-enum"}
    return [
        i
        for i in issues
        if not (i.pointer in typed and i.rule in ("schema-enum", "schema-length", "schema-format", "schema-range"))
        and not (i.pointer in coded and i.rule in ("schema-length", "schema-pattern"))
    ]


def _walk(node: Any, tokens) -> Any:
    for token in tokens:
        try:
            node = node[token]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


@dataclass(frozen=True, slots=True)
class _Error:
    """A compiled-engine error in the shape of a python-jsonschema error (what _convert reads)."""

    validator: str
    validator_value: Any
    instance: Any
    schema: dict
    message: str
    absolute_path: list
    context: tuple = ()
    missing: str | None = None  # the property of a `required` error


def _missing_property(error) -> str | None:
    """The one property a `required` error is about (each engine reports one error per missing name)."""
    missing = getattr(error, "missing", None)
    if missing is not None:
        return missing
    instance = error.instance if isinstance(error.instance, dict) else {}
    absent = [name for name in error.validator_value or () if name not in instance]
    for name in absent:  # python-jsonschema words it "'<name>' is a required property"
        if error.message.startswith(repr(name) + " "):
            return name
    return absent[0] if absent else None


_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null", int: "integer", float: "number"}


def json_type(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def short_value(value: Any, limit: int = 60) -> str:
    """A value for a message: strings in double quotes as JSON writes them, long ones cut."""
    text = repr(value) if not isinstance(value, str) else '"' + value + '"'
    return text if len(text) <= limit else text[: limit - 1] + "…"


_short = short_value


def _message(error, keyword: str, schema: dict) -> str:
    value = error.instance
    expected = error.validator_value
    title = schema.get("title")
    if keyword == "required":
        missing = _missing_property(error)
        return f"required property {missing!r} is missing" if missing else error.message
    if keyword == "type":
        wanted = " or ".join(as_tuple(expected))
        return f"expected {wanted}, got {json_type(value)} {_short(value)}"
    if keyword == "maxLength":
        return f"{len(value)} characters; at most {expected} allowed"
    if keyword == "minLength":
        return f"{len(value)} characters; at least {expected} required" if value else "must not be empty"
    if keyword == "enum":
        members = list(expected)
        where = f"the {title.lower()} set" if title else "the allowed values"
        if len(members) <= 6:
            return f"{_short(value)} is not one of {', '.join(json.dumps(m, ensure_ascii=False) for m in members)}"
        close = _close_match(value, members)
        hint = f"; did you mean {close!r}?" if close else ""
        return f"{_short(value)} is not in {where} ({len(members)} values){hint}"
    if keyword == "const":
        return f"{_short(value)} must be {expected!r}"
    if keyword == "pattern":
        return f"{_short(value)} does not have the required form {expected}"
    if keyword == "format":
        return f"{_short(value)} is not a valid {expected}"
    if keyword == "minItems":
        return f"{len(value)} items; at least {expected} required"
    if keyword == "maxItems":
        return f"{len(value)} items; at most {expected} allowed"
    if keyword == "uniqueItems":
        return "items must be unique"
    if keyword in ("minimum", "exclusiveMinimum"):
        return f"{value} is below the minimum {expected}"
    if keyword in ("maximum", "exclusiveMaximum"):
        return f"{value} is above the maximum {expected}"
    return error.message


def describe_error(error) -> str:
    """A plain message for one python-jsonschema error."""
    return _message(error, error.validator, error.schema if isinstance(error.schema, dict) else {})


def _close_match(value: Any, members: list) -> str | None:
    if not isinstance(value, str):
        return None
    import difflib

    upper = value.upper()
    if upper in members:
        return upper
    if len(upper) == 3 and upper.isalpha():  # an ISO 3166 alpha-3 code where alpha-2 is wanted ("NOR")
        import pycountry

        country = pycountry.countries.get(alpha_3=upper)
        if country is not None and country.alpha_2 in members:
            return country.alpha_2
    found = difflib.get_close_matches(value, [str(m) for m in members], n=1, cutoff=0.75)
    return found[0] if found else None


def checker_for(spec: Spec, component: str) -> SchemaChecker:
    """The compiled checker of a component schema; built once per spec and component."""
    key = ("checker", component)
    checker = spec._cache.get(key)
    if checker is None:
        checker = spec._cache[key] = SchemaChecker(spec, component)
    return checker
