"""Where things are: for each kind, the JSON locations of every component schema and ``x-rule`` tag.

The spec is walked once per kind (properties, items, additionalProperties, allOf/anyOf/oneOf,
``$ref``), giving path patterns such as ``("payments", ITEMS, "instructedAmount")``. Rules target
component names or tags; the engine finds their values in a payload by following those patterns,
so a rule never walks a payload itself and never names a field path.

:func:`compile_visit` merges a kind's patterns into one tree, walked once per payload: only the
places some rule reads are visited, whatever the size of the rest.
"""
from __future__ import annotations

from typing import Any

from .findings import escape_pointer_token
from .records import record
from .spec import Spec, as_tuple

ITEMS = object()  # every element of an array
VALUES = object()  # every value of a map (additionalProperties)
SCHEMA_PREFIX = "#/components/schemas/"


@record
class ObjectShape:
    """Declared properties of an object schema at one location (for the unknown-property rule)."""

    properties: frozenset[str]
    open_map: bool  # additionalProperties is a schema: any key is a declared one
    deprecated: tuple[tuple[str, str], ...] = ()  # (property, its description) marked deprecated: true

    @property
    def sorted_properties(self) -> tuple[str, ...]:
        return tuple(sorted(self.properties))


@record
class KindLayout:
    # tag (component name or x-rule id) -> path patterns
    locations: dict[str, tuple[tuple, ...]]
    # path pattern -> declared shape of the object there
    objects: dict[tuple, ObjectShape]
    # path patterns of arrays whose items must be unique (uniqueItems), with the schema there
    unique_arrays: tuple[tuple[tuple, dict], ...] = ()


def build_layout(spec: Spec, root_component: str) -> KindLayout:
    locations: dict[str, list[tuple]] = {}
    objects: dict[tuple, tuple[set[str], bool]] = {}
    deprecated: dict[tuple, dict[str, str]] = {}
    unique: dict[tuple, dict] = {}

    def add(tag: str, path: tuple) -> None:
        paths = locations.setdefault(tag, [])
        if path not in paths:
            paths.append(path)

    def walk(schema: Any, path: tuple, stack: tuple[str, ...]) -> None:
        if not isinstance(schema, dict):
            return
        for tag in as_tuple(schema.get("x-rule")):
            add(tag, path)
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(SCHEMA_PREFIX):
            name = ref[len(SCHEMA_PREFIX):]
            add(name, path)
            if name not in stack:  # the spec has no recursion; guard anyway
                walk(spec.schema(name), path, stack + (name,))
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in schema.get(key, ()):
                walk(sub, path, stack)
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        if props is not None or isinstance(addl, dict):
            declared, open_map = objects.get(path, (set(), False))
            declared |= set(props or ())
            objects[path] = (declared, open_map or isinstance(addl, dict))
        for name, sub in (props or {}).items():
            if isinstance(sub, dict) and sub.get("deprecated") is True:
                deprecated.setdefault(path, {})[name] = " ".join(str(sub.get("description", "")).split())
            walk(sub, path + (name,), stack)
        if isinstance(addl, dict):
            walk(addl, path + (VALUES,), stack)
        if schema.get("uniqueItems") is True:
            unique.setdefault(path, schema)
        items = schema.get("items")
        if isinstance(items, dict):
            walk(items, path + (ITEMS,), stack)

    add(root_component, ())
    walk(spec.schema(root_component), (), (root_component,))
    return KindLayout(
        locations={tag: tuple(paths) for tag, paths in locations.items()},
        objects={p: ObjectShape(frozenset(d), o, tuple(sorted(deprecated.get(p, {}).items()))) for p, (d, o) in objects.items()},
        unique_arrays=tuple(unique.items()),
    )


_ESCAPED: dict[str, str] = {}  # property names of the spec only


def _escaped(token: str) -> str:
    found = _ESCAPED.get(token)
    if found is None:
        found = _ESCAPED[token] = "/" + escape_pointer_token(token)
    return found


def encode_pattern(pattern: tuple) -> tuple:
    """A path pattern as plain data (a property name as itself, 0 for every item, 1 for every map value): how the
    generated rule passes (validator/compiled.py) name their places."""
    return tuple(0 if step is ITEMS else 1 if step is VALUES else step for step in pattern)


def iter_values(payload: Any, pattern: tuple, prefix: str = "") -> list[tuple[str, Any]]:
    """(pointer, value) for every place in ``payload`` matching ``pattern``; absent places are skipped.

    Breadth-first over the pattern's steps: a 10,000-entry bulk costs one list per step, not a
    generator frame per value.
    """
    current = [(prefix, payload)]
    for step in pattern:
        found: list[tuple[str, Any]] = []
        if step is ITEMS:
            for pointer, value in current:
                if type(value) is list:
                    found.extend((f"{pointer}/{i}", item) for i, item in enumerate(value))
        elif step is VALUES:
            for pointer, value in current:
                if type(value) is dict:
                    # map keys come from the input: escaped each time, never cached (memory stays bounded)
                    found.extend((pointer + "/" + escape_pointer_token(k), item) for k, item in value.items())
        else:
            token = _escaped(step)
            for pointer, value in current:
                if type(value) is dict and step in value:
                    found.append((pointer + token, value[step]))
        if not found:
            return found
        current = found
    return current


class Visit:
    """One place of a compiled visit: what runs on the value found there, and where to go on.

    ``calls`` is whatever the caller attached to the pattern ending here; ``members`` are
    (property name, escaped pointer token, next place)."""

    __slots__ = ("calls", "members", "items", "values", "accept")

    def __init__(self, calls: list, members: list, items: Visit | None = None, values: Visit | None = None):
        self.calls = calls
        self.members = members
        self.items = items
        self.values = values
        # For an array's items: ``accept(value, ctx)`` True when no rule finds anything in the item (the payload
        # engine's compiled pass of the place), so the walk skips it; None: always walked.
        self.accept = None


def compile_visit(patterns: dict[tuple, list]) -> Visit:
    """One tree from path patterns (each with its calls): a payload is then walked once, along the
    places some pattern names, instead of once per pattern."""
    root = Visit([], [])
    for pattern, calls in patterns.items():
        node = root
        for step in pattern:
            if step is ITEMS:
                node.items = node.items or Visit([], [])
                node = node.items
            elif step is VALUES:
                node.values = node.values or Visit([], [])
                node = node.values
            else:
                child = next((c for name, _t, c in node.members if name == step), None)
                if child is None:
                    child = Visit([], [])
                    node.members.append((step, "/" + escape_pointer_token(step), child))
                node = child
        node.calls.extend(calls)
    return root
