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
import itertools
import json
import ipaddress
import re
from typing import Any, Iterator
from urllib.parse import urlsplit

import jsonschema_rs

from .findings import escape_pointer_token
from .locate import SCHEMA_PREFIX, iter_values
from .records import record
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


@record
class SchemaIssue:
    rule: str
    pointer: str
    message: str
    ref: str | None


# ---- formats: one definition for python-jsonschema, matching what the compiled engine accepts ----
# Plain functions (the name -> check table is below); the python-jsonschema checker is built lazily:
# importing jsonschema costs ~80 ms, and a valid payload never needs it. The patterns here are compiled on first
# use (re keeps what it compiled), not at import: a command's start does without them.
_DATE = r"(?a)^\d{4}-\d{2}-\d{2}$"
_DATE_TIME = r"(?a)^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
_UUID = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.match(_DATE, value):
        return False
    _dt.date.fromisoformat(value)
    return True


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not re.match(_DATE_TIME, value):
        return False
    text = value.upper().replace("Z", "+00:00")
    if text[17:19] == "60":  # RFC 3339 allows a leap second, as the compiled engine does
        text = text[:17] + "59" + text[19:]
    _dt.datetime.fromisoformat(text)
    return True


def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or bool(re.match(_UUID, value))


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
    if re.search(_URI_SPACE_OR_CONTROL, value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme) and re.match(_URI_SCHEME, parts.scheme) is not None


# White space (str.isspace: ASCII and Unicode separators) or a C0 control: never inside a URI.
_URI_SPACE_OR_CONTROL = r"[\s\x00-\x1f]"  # \s: exactly what str.isspace() accepts
_URI_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*\Z"


FORMAT_CHECKS = {
    "date": _is_date,
    "date-time": _is_date_time,
    "uuid": _is_uuid,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "uri": _is_uri,
}


# Beyond the findings limit, the python engine counts at most this many more errors (it is slow).
_COUNT_BEYOND_LIMIT = 10_000

_UNESCAPED_DOLLAR = r"(?<!\\)\$"


@functools.lru_cache(maxsize=256)
def _ecma_pattern(pattern: str) -> re.Pattern:
    # ECMA-262 '$' matches only at the very end; Python's also before a final newline.
    return re.compile(re.sub(_UNESCAPED_DOLLAR, r"\\Z", pattern))


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
    """Compiled checking of one component schema.

    ``uniqueItems`` is checked here, not by the compiled engine: it compares NaN and infinities
    pairwise (30,000 NaN ids: seconds, uninterruptible), where hashing takes linear time. The compiled
    engine's messages never quote values (``mask``): quoting a value costs its size for every error
    above it, so deep inputs would cost their size times their depth."""

    def __init__(self, spec: Spec, component: str, *, schema: dict | None = None, root_ref: str | None = None):
        """``schema``: the bundled schema to check instead of the component's own (the same shape);
        ``root_ref``: the document section of issues whose schema names none, instead of the component's."""
        from .locate import build_layout

        self.component = component
        self.schema = schema or bundled_schema(spec, component)
        self._checked = _without_unique_items(self.schema)
        self._unique = build_layout(spec, component).unique_arrays
        self._compiled = None
        self._compiled_many = None
        self._detail_validator = None
        self.root_ref = root_ref or spec.schema(component).get("x-document-ref")
        self._root_type, self._root_required = _root_demands(spec, spec.schema(component))
        # The root's own `required` names (its schema as checked) and, compiled on first use, the schema without
        # them: see _one_member_missing
        root = self.schema["components"]["schemas"].get(component) if self.schema.get("$ref") == SCHEMA_PREFIX + component else None
        own = root.get("required") if isinstance(root, dict) else None
        self._own_required = (root, tuple(own), frozenset(own)) if type(own) is list and all(type(n) is str for n in own) else None
        self._without_own_required = None

    @property
    def _fast(self):
        # Compiled on first use: kind detection rules most kinds out by their root alone (a CLI
        # start checking one payload would otherwise compile every kind's schema).
        if self._compiled is None:
            self._compiled = jsonschema_rs.validator_for(self._checked, validate_formats=True, mask="…")
        return self._compiled

    def all_valid(self, payloads: list) -> bool:
        """Whether every one of ``payloads`` is valid: one compiled call for many small payloads (the entries
        of a streamed array) instead of one each."""
        if self._compiled_many is None:
            many = {"$schema": DRAFT, "type": "array", "items": {"$ref": SCHEMA_PREFIX + self.component},
                    "components": self._checked["components"]}
            self._compiled_many = jsonschema_rs.validator_for(many, validate_formats=True, mask="…")
        try:
            valid = self._compiled_many.is_valid(payloads)
        except (ValueError, OverflowError, TypeError):
            return False
        return valid and not (self._unique and any(True for p in payloads for _ in self._repeated_items(p)))

    def _surely_invalid(self, payload: Any) -> bool:
        """The payload's top level already breaks the schema: wrong type or a required property absent."""
        if self._root_type == "object":
            return type(payload) is not dict or not self._root_required <= payload.keys()
        return self._root_type == "array" and type(payload) is not list

    @property
    def _detail(self):
        if self._detail_validator is None:
            self._detail_validator = detail_validator_class()(self._checked, format_checker=format_checker())
        return self._detail_validator

    def is_valid(self, payload: Any) -> bool:
        if self._surely_invalid(payload):
            return False
        try:
            valid = self._fast.is_valid(payload)
        except (ValueError, OverflowError, TypeError):
            # Values the compiled engine cannot take (e.g. integers beyond 64 bits): decide slowly.
            valid = not any(True for _ in self._detail.iter_errors(payload))
        return valid and not (self._unique and any(True for _ in self._repeated_items(payload)))

    def issues(self, payload: Any) -> Iterator[SchemaIssue]:
        if self.is_valid(payload):
            return
        yield from self.detailed_issues(payload)

    def limited_issues(self, payload: Any, limit: int, *, valid: bool | None = None) -> tuple[list[SchemaIssue], int]:
        """At most ``limit`` issues, and how many more there are (counted, not worded); ``valid``: what
        :meth:`is_valid` answered for this payload, when the caller asked it already."""
        if self.is_valid(payload) if valid is None else valid:
            return [], 0
        return self._issues(payload, limit)

    def compiled_issues(self, payload: Any, limit: int) -> tuple[list[SchemaIssue], int] | None:
        """What :meth:`limited_issues` answers when the compiled engine alone decides it and finds at most
        ``limit`` errors: (issues, errors found); None when the python engine would decide or errors are left
        over (the answer for a whole document then depends on the document, not on this part of it)."""
        try:
            if not self._surely_invalid(payload) and self._fast.is_valid(payload):
                if not (self._unique and any(True for _ in self._repeated_items(payload))):
                    return [], 0
        except (ValueError, OverflowError, TypeError):
            return None
        return self._issues(payload, limit, compiled_only=True)

    def detailed_issues(self, payload: Any) -> Iterator[SchemaIssue]:
        yield from self._issues(payload, None)[0]

    def _issues(self, payload: Any, limit: int | None, compiled_only: bool = False):
        """(issues, errors beyond the limit); with ``compiled_only``, (issues, errors found) when the compiled
        engine alone decides and finds no more than ``limit``, else None."""
        omitted = 0
        own = self._own_required  # one of the root's own required members missing? (no call for a payload without)
        missing = own is not None and limit != 0 and type(payload) is dict and not payload.keys() >= own[2]
        errors = self._one_member_missing(payload) if missing else None
        if errors is not None:
            raw = errors
        else:
            try:
                found = self._fast.iter_errors(payload)
                raw = list(found if limit is None else itertools.islice(found, limit))
                omitted = sum(1 for _ in found)  # the rest is counted, never worded
            except (ValueError, OverflowError, TypeError):
                raw = None  # values the compiled engine cannot take (integers beyond 64 bits)
            errors = self._resolved(payload, raw) if raw is not None else None
        if compiled_only and (errors is None or omitted):
            return None
        if errors is None:  # alternatives (anyOf): python-jsonschema picks the closest branch
            errors = self._detail.iter_errors(payload)
            if limit is not None:
                errors = itertools.islice(errors, limit if raw is not None else limit + _COUNT_BEYOND_LIMIT)
        issues: list[SchemaIssue] = []
        for error in errors:
            if limit is not None and len(issues) >= limit:
                omitted += 1
                continue
            issues.extend(self._convert(error))
        for pointer, schema in self._repeated_items(payload):
            if not schema.get("x-rule"):  # a semantic rule owns it and words its finding
                issues.append(SchemaIssue("schema-items", pointer, "items must be unique", schema.get("x-document-ref") or self.root_ref))
        return _one_problem_per_value(issues), len(raw) if compiled_only else omitted

    def _one_member_missing(self, payload: Any) -> list[_Error] | None:
        """The compiled engine's one error, resolved, when all it finds is one of the root's own `required` members
        missing (a line without `creditorName`); None otherwise. Its errors are those of the schema without that
        keyword and that keyword's, one per missing name: when the schema without it finds nothing (one call that
        converts nothing), the error is known without listing errors, which converts the payload for the compiled
        engine and each error's instance (the whole payload) back."""
        own = self._own_required
        if own is None or type(payload) is not dict or payload.keys() >= own[2]:  # none of them missing
            return None
        schema, names, _every = own
        missing = [name for name in names if name not in payload]
        if len(missing) != 1:
            return None
        if self._without_own_required is None:
            checked = self._checked
            root = {k: v for k, v in checked["components"]["schemas"][self.component].items() if k != "required"}
            relaxed = {**checked, "components": {**checked["components"], "schemas": {**checked["components"]["schemas"], self.component: root}}}
            self._without_own_required = jsonschema_rs.validator_for(relaxed, validate_formats=True, mask="…")
        try:
            if not self._without_own_required.is_valid(payload):
                return None
        except (ValueError, OverflowError, TypeError):
            return None
        name = missing[0]
        return [_Error("required", schema["required"], payload, schema,
                       f"{json.dumps(name, ensure_ascii=False)} is a required property", [], missing=name)]

    def _repeated_items(self, payload: Any) -> Iterator[tuple[str, dict]]:
        """(pointer, schema) of each array under ``uniqueItems`` that repeats an item; linear time."""
        for pattern, schema in self._unique:
            for pointer, value in iter_values(payload, pattern):
                if type(value) is list and len(value) > 1 and not _all_distinct(value):
                    yield pointer, schema

    def _compiled_errors(self, payload: Any) -> list[_Error] | None:
        """The compiled engine's errors with the failing subschema resolved (None: the python engine
        must decide)."""
        try:
            raw = list(self._fast.iter_errors(payload))
        except (ValueError, OverflowError, TypeError):
            return None
        return self._resolved(payload, raw)

    def _resolved(self, payload: Any, raw: list) -> list[_Error] | None:
        """Compiled-engine errors with the failing subschema resolved: a 10,000-entry bulk with one bad
        entry costs milliseconds, not a second of python-jsonschema. None when the python engine must
        decide (it picks the closest anyOf branch)."""
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


def _root_demands(spec: Spec, schema: dict) -> tuple[str | None, frozenset[str]]:
    """The JSON type a schema's root must have ("object", "array" or None) and the properties it
    requires, following `$ref` and `allOf` (alternatives demand nothing for sure)."""
    kinds: set[str] = set()
    required: set[str] = set()
    todo = [schema]
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX):
            todo.append(spec.schema(ref[len(SCHEMA_PREFIX):]))
        if node.get("type") in ("object", "array"):
            kinds.add(node["type"])
        required.update(r for r in node.get("required", ()) if isinstance(r, str))
        todo.extend(node.get("allOf", ()))
    root_type = kinds.pop() if len(kinds) == 1 else None
    return root_type, frozenset(required) if root_type == "object" else frozenset()


def _without_unique_items(node: Any) -> Any:
    """The schema without ``uniqueItems`` keywords (the checker tests uniqueness itself)."""
    if isinstance(node, dict):
        return {k: _without_unique_items(v) for k, v in node.items() if k != "uniqueItems"}
    if isinstance(node, list):
        return [_without_unique_items(v) for v in node]
    return node


def _identity(value: Any) -> Any:
    """A hashable stand-in equal exactly when JSON Schema calls two values equal (1 and 1.0 are
    equal; true and 1 are not; object member order does not count)."""
    t = type(value)
    if t is bool:
        return (bool, value)
    if t is list:
        return (list, tuple(_identity(v) for v in value))
    if t is dict:
        return (dict, frozenset((k, _identity(v)) for k, v in value.items()))
    return value


def _all_distinct(items: list) -> bool:
    try:
        return len({_identity(v) for v in items}) == len(items)
    except (TypeError, RecursionError):  # unhashable oddities of the object API; deep values
        return True


def _one_problem_per_value(issues: list[SchemaIssue]) -> list[SchemaIssue]:
    """A value of the wrong type is one problem, not also an enum or length problem; a code outside
    its set is one problem, not also a length or pattern problem. One issue per pointer and rule: a value
    two subschemas judge alike (a `_links` entry is a Link by `additionalProperties` in one `allOf` branch
    and by `properties` in the other) breaks one constraint, not two; the first worded is kept."""
    if len(issues) < 2:  # one issue is its value's one problem (most invalid lines)
        return issues
    typed = {i.pointer for i in issues if i.rule == "schema-type"}
    coded = {i.pointer for i in issues if i.rule == "schema-enum"}
    seen: set[tuple[str, str]] = set()
    kept = []
    for i in issues:
        if i.pointer in typed and i.rule in ("schema-enum", "schema-length", "schema-format", "schema-range"):
            continue
        if i.pointer in coded and i.rule in ("schema-length", "schema-pattern"):
            continue
        if (i.pointer, i.rule) in seen:
            continue
        seen.add((i.pointer, i.rule))
        kept.append(i)
    return kept


def _walk(node: Any, tokens) -> Any:
    for token in tokens:
        try:
            node = node[token]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


@record
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
    """A value for a message: strings in double quotes as JSON writes them, long ones cut. Only the
    start of a value is written out: a message costs the same for a huge or deep value."""
    text = '"' + value[:limit] + '"' if isinstance(value, str) else _preview(value, limit + 1)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _preview(value: Any, budget: int) -> str:
    """repr of ``value``, stopped once ``budget`` characters are written (each nesting level
    spends one, so the depth it goes to is bounded too)."""
    if budget <= 0:
        return "…"
    if isinstance(value, (list, dict)):
        budget -= 1
        parts: list[str] = []
        size = 0
        items = value.items() if isinstance(value, dict) else value
        for item in items:
            if size > budget:
                break
            text = f"{_preview(item[0], budget - size)}: {_preview(item[1], budget - size)}" if isinstance(value, dict) else _preview(item, budget - size)
            parts.append(text)
            size += len(text) + 2
        open_, close = ("{", "}") if isinstance(value, dict) else ("[", "]")
        return open_ + ", ".join(parts) + close
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * budget:
        return "a very long integer"  # repr would cost quadratic time (and Python refuses beyond 4,300 digits)
    text = repr(value)
    return text


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
        members = expected if type(expected) is list else list(expected)  # the schema's own list: not copied
        where = f"the {title.lower()} set" if title else "the allowed values"
        if len(members) <= 6:
            return f"{_short(value)} is not one of {', '.join(json.dumps(m, ensure_ascii=False) for m in members)}"
        close = _close_match(value, expected)
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
    enum = _enum(members)
    upper = value.upper()
    if upper in (enum.texts if enum.texts is not None else members):
        return upper
    if len(upper) == 3 and upper.isalpha():  # an ISO 3166 alpha-3 code where alpha-2 is wanted ("NOR")
        import pycountry

        country = pycountry.countries.get(alpha_3=upper)
        if country is not None and country.alpha_2 in members:
            return country.alpha_2
    if len(value) > 64:
        return _closest(value, enum.names, 0.75)
    near = enum.near
    if value not in near:
        if len(near) >= _NEAR_KEPT:
            near.clear()
        near[value] = _closest(value, enum.names, 0.75)
    return near[value]


class _Enum:
    """What wording an enum's errors reads of its members, once per enum: the members as text (an enum of strings,
    all the spec's, as it is), as a set when they are all strings, and the closest member of values met."""

    __slots__ = ("members", "names", "texts", "near")

    def __init__(self, members: list):
        self.members = members  # kept: its id is not reused while it is remembered
        strings = set(map(type, members)) == {str}
        self.names = tuple(members) if strings else tuple(str(m) for m in members)
        self.texts = frozenset(members) if strings else None
        self.near: dict[str, str | None] = {}


def _enum(members: list) -> _Enum:
    """The enum's :class:`_Enum`, remembered per enum (the schema's own list, a few dozen at most): a batch with a
    thousand unknown codes of one set would otherwise write out and search its members a thousand times."""
    known = _ENUMS.get(id(members))
    if known is None or known.members is not members:
        if len(_ENUMS) >= _ENUMS_KEPT:
            _ENUMS.clear()
        known = _ENUMS[id(members)] = _Enum(members)
    return known


_ENUMS: dict[int, _Enum] = {}
_ENUMS_KEPT = 64
_NEAR_KEPT = 512  # closest members remembered per enum (short values only, as closest() does)


def closest(word: str, candidates: tuple[str, ...], cutoff: float) -> str | None:
    """The candidate most like ``word`` ("did you mean"), or None. A misspelling tends to repeat (one
    template, ten thousand entries): answers for short words are remembered, a few hundred at most."""
    if len(word) > 64:
        return _closest(word, candidates, cutoff)
    return _closest_cached(word, candidates, cutoff)


def _closest(word: str, candidates: tuple[str, ...], cutoff: float) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
    return found[0] if found else None


_closest_cached = functools.lru_cache(maxsize=512)(_closest)


# Keywords of an object schema that judge each member apart from the others, and of an array schema that judge
# its entries one by one (``items``) or by their number: a schema with only these lets a long array be checked
# entry by entry, the rest of the document with as many nulls standing in for the entries.
_MEMBERWISE = frozenset({"type", "required", "properties", "additionalProperties", "minProperties", "maxProperties",
                         "title", "description", "deprecated", "$comment", "example", "examples"})
_ENTRYWISE = frozenset({"type", "items", "minItems", "maxItems", "title", "description", "deprecated", "$comment",
                        "example", "examples"})


@record
class StreamPlan:
    """How a component whose top level holds a long array is checked one entry at a time (see :func:`stream_plan`)."""

    key: str  # the member holding the array
    top: SchemaChecker  # the component with the array's items unchecked: give it ``[None] * entries`` there
    entries: SchemaChecker  # one entry (its issues' pointers relative to the entry)


def _only(schema: dict, keywords: frozenset[str]) -> bool:
    return all(k in keywords or k.startswith("x-") for k in schema)


def stream_plan(spec: Spec, component: str) -> StreamPlan | None:
    """The plan for checking ``component`` entry by entry: its schema is an object whose keywords judge members
    apart and one of whose properties is an array of a component judged entry by entry; None otherwise.
    Built once per spec and component."""
    key = ("stream", component)
    if key in spec._cache:
        return spec._cache[key]
    plan = None
    schema = spec.schema(component)
    if schema.get("type") == "object" and _only(schema, _MEMBERWISE):
        for name, sub in (schema.get("properties") or {}).items():
            items = sub.get("items") if isinstance(sub, dict) else None
            ref = items.get("$ref") if isinstance(items, dict) else None
            if (sub.get("type") == "array" and _only(sub, _ENTRYWISE) and isinstance(ref, str)
                    and ref.startswith(SCHEMA_PREFIX) and _only(items, frozenset({"$ref", "description"}))):
                top = bundled_schema(spec, component)
                root = {**schema, "properties": {**schema["properties"], name: {k: v for k, v in sub.items() if k != "items"}}}
                top["components"] = {"schemas": {**top["components"]["schemas"], component: root}}
                whole = SchemaChecker(spec, component, schema=top)
                plan = StreamPlan(name, whole, SchemaChecker(spec, ref[len(SCHEMA_PREFIX):], root_ref=whole.root_ref))
                break
    spec._cache[key] = plan
    return plan


def checker_for(spec: Spec, component: str) -> SchemaChecker:
    """The compiled checker of a component schema; built once per spec and component."""
    key = ("checker", component)
    checker = spec._cache.get(key)
    if checker is None:
        checker = spec._cache[key] = SchemaChecker(spec, component)
    return checker
