"""Which kind of payload a person meant, when they did not say (no ``--kind``).

Detection reads the top level of the payload against each kind's declared and required
properties (every ``allOf`` merged, every ``anyOf``/``oneOf`` branch a separate shape):

1. Kinds whose shape the payload's keys fit exactly — no undeclared key, no required one
   missing — are the candidates; among them the ones whose schema the payload satisfies win,
   then request kinds before response kinds (a file given on its own is more often a request
   being written than a response being read). One left: detected. Several: ambiguous.
2. No kind fits exactly: an undeclared key that is a near miss of a declared one ("did you
   mean", the same test the unknown-property finding uses) counts as that property. The kind
   with the fewest problems (undeclared keys + missing required properties) wins, then the one
   with most keys matched, then requests first. With no problem left (only typos) the kind is
   detected; otherwise it is a guess, and the message names the runner-up. When even the best
   kind has fewer properties matched than problems, no kind is meant: kind-undetected.

A payload never passes as a kind it does not really fit: a kind whose shape leaves any top-level
key undeclared is never chosen while another kind declares every key (an invalid payment status
response is not a valid ``sca-redirect`` body with an extra member).

Both steps read only the top-level keys and, one level down, which required members an object has (and, when
several kinds fit exactly, the schema): what they decide is remembered per key set, in bounded caches, so a
batch whose lines share a few key sets compares names with difflib a few times, not once per line.
"""
from __future__ import annotations

from typing import Any

from .schema import checker_for
from .records import record
from .spec import Kind, Spec
from .suggest import closest


@record
class Detection:
    kind: str | None
    candidates: tuple[str, ...]
    message: str
    # False when the kind is a guess (no exact fit, or several): the engine then warns (kind-ambiguous).
    confident: bool = True


@record
class Shape:
    """One way a kind's top level can look."""

    properties: frozenset[str]
    required: frozenset[str]
    # (property, the properties an object there must have): one level down, so that an object
    # lacking what makes it that kind (`_links` without `scaRedirect`) does not fit exactly
    nested: frozenset[tuple[str, frozenset[str]]] = frozenset()

    def merged(self, other: "Shape") -> "Shape":
        return Shape(self.properties | other.properties, self.required | other.required, self.nested | other.nested)

    def fits(self, payload: dict, keys) -> bool:
        return keys <= self.properties and self.required <= keys and self.nested_complete(payload)

    def nested_complete(self, payload: dict) -> bool:
        """No nested object misses a required member: ``not nested_missing(payload)`` without counting them."""
        for name, required in self.nested:
            value = payload.get(name)
            if isinstance(value, dict) and not value.keys() >= required:
                return False
        return True

    def nested_missing(self, payload: dict) -> tuple[str, ...]:
        """The required members a nested object lacks, as ``name.member`` (sorted)."""
        return tuple(sorted(
            f"{name}.{member}"
            for name, required in self.nested
            if isinstance(value := payload.get(name), dict)
            for member in required - value.keys()
        ))


@record
class KindShapes:
    kind: Kind
    array: bool  # the payload is an array of objects of these shapes
    shapes: tuple[Shape, ...]


@record
class _Score:
    kind: str
    problems: int  # undeclared keys + missing required properties
    matched: int  # keys declared (exactly or as a near miss)
    request: bool
    missing: tuple[str, ...] = ()  # the required properties the payload lacks (nested ones as name.member)
    undeclared: tuple[str, ...] = ()  # its keys the kind does not declare (no near miss of a declared one)

    @property
    def order(self) -> tuple:
        return (self.problems, -self.matched, not self.request, self.kind)


def kind_shapes(spec: Spec) -> tuple[KindShapes, ...]:
    """Every kind's top-level shapes, request kinds first; computed once per spec (and remembered across processes:
    Spec.derived)."""
    cached = spec._cache.get("detect_shapes")
    if cached is None:
        rows = spec.derived("detect-shapes", lambda: _shape_rows(spec), __file__)
        cached = spec._cache["detect_shapes"] = tuple(
            KindShapes(spec.kind(name), array, tuple(Shape(*shape) for shape in shapes)) for name, array, shapes in rows)
    return cached


def _shape_rows(spec: Spec) -> tuple[tuple[str, bool, tuple[tuple[frozenset, frozenset, frozenset], ...]], ...]:
    """(kind, array, the fields of each of its shapes) of every kind, in kind_shapes order."""
    out = []
    for kind in sorted(spec.kinds.values(), key=lambda k: (not k.is_request, k.name)):
        schema = spec.deref(spec.schema(kind.schema_name))
        array = schema.get("type") == "array"
        shapes = dict.fromkeys(_shapes(spec, schema.get("items", {}) if array else schema))
        out.append((kind.name, array, tuple(tuple(shape) for shape in shapes)))
    return tuple(out)


def _indexed_shapes(spec: Spec) -> tuple[dict, tuple]:
    """({property name: (kind, shape) pairs of object kinds declaring it; None: every object pair},
    the pairs of array kinds), in kind_shapes order; computed once per spec."""
    cached = spec._cache.get("detect_index")
    if cached is None:
        pairs = [(e, s) for e in kind_shapes(spec) for s in e.shapes]
        by_name: dict = {None: tuple(p for p in pairs if not p[0].array)}
        for name in {n for e, s in pairs if not e.array for n in s.properties}:
            by_name[name] = tuple((e, s) for e, s in by_name[None] if name in s.properties)
        cached = spec._cache["detect_index"] = (by_name, tuple(p for p in pairs if p[0].array))
    return cached


def _shapes(spec: Spec, schema: Any, depth: int = 0, top: bool = True) -> list[Shape]:
    schema = spec.deref(schema)
    if not isinstance(schema, dict) or depth > 20:
        return [Shape(frozenset(), frozenset())]
    properties = schema.get("properties", {})
    nested = frozenset()
    if top:
        nested = frozenset(
            (name, frozenset.intersection(*(s.required for s in _shapes(spec, sub, depth + 1, top=False))))
            for name, sub in properties.items()
        )
    result = [Shape(frozenset(properties), frozenset(schema.get("required", ())), frozenset(n for n in nested if n[1]))]
    for part in schema.get("allOf", ()):
        result = [a.merged(b) for a in result for b in _shapes(spec, part, depth + 1, top)]
    branches = schema.get("anyOf") or schema.get("oneOf") or ()
    if branches:
        alternatives = [s for branch in branches for s in _shapes(spec, branch, depth + 1, top)]
        result = [a.merged(b) for a in result for b in alternatives]
    return result


def _top_keys(payload: Any, array: bool) -> set[str] | None:
    """The keys detection reads (of the first object for array kinds; none for an array without
    objects, which any array kind fits); None: the kind cannot fit."""
    if array:
        if not isinstance(payload, list):
            return None
        first = next((p for p in payload if isinstance(p, dict)), None)
        return set(first) if first is not None else set()
    return set(payload) if isinstance(payload, dict) else None


def _top_object(payload: Any, array: bool) -> dict:
    return next((p for p in payload if isinstance(p, dict)), {}) if array else payload


def detect_kind(spec: Spec, payload: Any) -> Detection:
    """The kind a payload is meant to be (see the module docstring)."""
    fitting = None
    if type(payload) is dict:  # most often the keys fit one shape of one kind: it is the one when its objects fit
        fitting = _fitting_keys(spec, frozenset(payload))
        if len(fitting) == 1:
            entry, shape = fitting[0]
            for name, required in shape.nested:  # Shape.nested_complete, without a call per payload
                value = payload.get(name)
                if isinstance(value, dict) and not value.keys() >= required:
                    break
            else:
                return _detected(spec, entry.kind.name)
    exact = _exact_fits(spec, payload, fitting)
    if len(exact) == 1:  # one kind fits: valid or not, it is the one (its checks come next)
        return _detected(spec, exact[0].kind.name)
    if exact:
        valid = [e for e in exact if checker_for(spec, e.kind.schema_name).is_valid(payload)]
        pool = valid or exact
        requests = [e for e in pool if e.kind.is_request]
        chosen = [e.kind.name for e in (requests or pool)]
        if len(chosen) == 1:
            return Detection(chosen[0], (chosen[0],), f"checked as {chosen[0]} (detected)")
        fits = f"fits {len(chosen)} kinds" if valid else f"fits no kind exactly and resembles {len(chosen)} equally"
        message = f"the payload {fits}: {', '.join(chosen)}; checked as {chosen[0]} (pass --kind to choose)"
        return Detection(chosen[0], tuple(chosen), message, confident=False)
    return _closest_kind(spec, payload)


def _closest_kind(spec: Spec, payload: Any) -> Detection:
    """Rule 2 of the module docstring (no kind fits exactly). Its answer depends on the payload's top-level keys
    and on which required members its objects one level down have, nothing else: remembered per such signature
    (a batch has a handful), bounded as the exact fits are."""
    array = isinstance(payload, list)
    keys = _top_keys(payload, array)
    if keys is None:  # neither an object nor an array: no kind can fit
        return _from_scores(spec, [])
    keys = frozenset(keys)
    top = _top_object(payload, array)
    nested = tuple((name, frozenset(value.keys() & members)) for name, members in _nested_members(spec)
                   if isinstance(value := top.get(name), dict))
    cache = spec._cache.get("detect_closest")
    if cache is None:
        cache = spec._cache["detect_closest"] = {}
    signature = (array, keys, nested)
    found = cache.get(signature)
    if found is None:
        found = _from_scores(spec, _scores(spec, payload))
        if _keep(cache, keys):
            cache[signature] = found
    return found


def _nested_members(spec: Spec) -> tuple[tuple[str, frozenset[str]], ...]:
    """(property, every member some shape requires of an object there), sorted: what detection reads one level
    down; computed once per spec."""
    cached = spec._cache.get("detect_nested")
    if cached is None:
        members: dict[str, set[str]] = {}
        for entry in kind_shapes(spec):
            for shape in entry.shapes:
                for name, required in shape.nested:
                    members.setdefault(name, set()).update(required)
        cached = spec._cache["detect_nested"] = tuple(sorted((n, frozenset(m)) for n, m in members.items()))
    return cached


def _from_scores(spec: Spec, scores: list[_Score]) -> Detection:
    scores = sorted(scores, key=lambda s: s.order)
    # Fewer properties recognised than wrong: no kind is meant (an unrelated document, not a payload).
    if not scores or scores[0].matched == 0 or scores[0].matched < scores[0].problems:
        names = ", ".join(sorted(spec.kinds))
        return Detection(None, (), f"cannot tell which kind of payload this is; pass --kind (one of {names})", confident=False)
    best, runner_up = scores[0], (scores[1] if len(scores) > 1 else None)
    tied = [s.kind for s in scores if s.order[:3] == best.order[:3]]
    if best.problems == 0 and len(tied) == 1:  # only misspelt names: the kind is clear
        return Detection(best.kind, (best.kind,), f"checked as {best.kind} (detected)")
    if len(tied) > 1:
        message = (
            f"the payload fits no kind exactly and resembles {len(tied)} equally: {', '.join(tied)}; "
            f"checked as {best.kind} (pass --kind to choose)"
        )
        return Detection(best.kind, tuple(tied), message, confident=False)
    problems = f"{best.problems} undeclared or missing propert{'y' if best.problems == 1 else 'ies'}: {_named(best)}"
    named = (best.kind, runner_up.kind) if runner_up is not None and runner_up.matched else (best.kind,)
    second = f"; runner-up {named[1]}" if len(named) > 1 else ""
    message = f"the payload fits no kind exactly; checked as {best.kind}, the closest ({problems}){second} (pass --kind to choose)"
    return Detection(best.kind, named, message, confident=False)


# At most this many property names are listed in a message (the count says how many there are).
NAMED_PROPERTIES = 8


def _named(score: _Score) -> str:
    """The missing and undeclared properties of ``score``, as a kind-ambiguous message names them."""
    parts = []
    for label, names in (("missing", score.missing), ("undeclared", score.undeclared)):
        if names:
            shown = ", ".join(names[:NAMED_PROPERTIES])
            more = f" and {len(names) - NAMED_PROPERTIES} more" if len(names) > NAMED_PROPERTIES else ""
            parts.append(f"{label} {shown}{more}")
    return "; ".join(parts)


def _exact_fits(spec: Spec, payload: Any, fitting: tuple | None = None) -> list[KindShapes]:
    """The kinds whose shape the payload fits exactly (rule 1 of the module docstring), in kind_shapes order;
    ``fitting``: what :func:`_fitting_keys` gave for its keys, when the caller asked already."""
    exact: list[KindShapes] = []
    if isinstance(payload, dict):
        for entry, shape in fitting if fitting is not None else _fitting_keys(spec, frozenset(payload)):
            if shape.nested_complete(payload):
                if not (exact and exact[-1] is entry):
                    exact.append(entry)
    elif isinstance(payload, list):
        items = _top_object(payload, True)
        for entry, shape in _indexed_shapes(spec)[1]:
            if not (exact and exact[-1] is entry) and (not items or shape.fits(items, items.keys())):
                exact.append(entry)
    return exact


def kind_by_keys(spec: Spec, payload: dict) -> str | None:
    """The kind of an object payload when its top-level members alone decide it (exactly one kind's shape fits:
    :func:`detect_kind` then reads no value but those of objects one level down), else None."""
    exact = _exact_fits(spec, payload)
    return exact[0].kind.name if len(exact) == 1 else None


# Top-level key sets remembered with the shapes they fit: a batch of payloads of one kind has a few key sets.
# Key sets come from the input: at most this many are kept, of at most FIT_CACHE_KEYS keys and
# FIT_CACHE_CHARACTERS characters of names each.
FIT_CACHE_SIZE, FIT_CACHE_KEYS, FIT_CACHE_CHARACTERS = 256, 64, 4096


def _keep(cache: dict, keys: frozenset) -> bool:
    """Whether a key set's answer may be remembered in ``cache`` (see FIT_CACHE_SIZE)."""
    return len(cache) < FIT_CACHE_SIZE and len(keys) <= FIT_CACHE_KEYS and sum(map(len, keys)) <= FIT_CACHE_CHARACTERS


def _fitting_keys(spec: Spec, keys: frozenset) -> tuple:
    """The (kind, shape) pairs whose declared and required properties an object with ``keys`` fits,
    in kind_shapes order (what is left to test is one level down, which depends on the values)."""
    cache = spec._cache.get("detect_fit")
    if cache is None:
        cache = spec._cache["detect_fit"] = {}
    found = cache.get(keys)
    if found is None:
        objects, _ = _indexed_shapes(spec)
        # Only shapes declaring one of the keys can fit (all of them when there is no key).
        pool = objects.get(next(iter(keys)), ()) if keys else objects[None]
        found = tuple((entry, shape) for entry, shape in pool if shape.required <= keys and keys <= shape.properties)
        if _keep(cache, keys):
            cache[keys] = found
    return found


def _detected(spec: Spec, kind: str) -> Detection:
    """The detection of a kind that fits alone: one per kind (a frozen value), not one per payload."""
    known = spec._cache.get("detected")
    if known is None:
        known = spec._cache["detected"] = {}
    found = known.get(kind)
    if found is None:
        found = known[kind] = Detection(kind, (kind,), f"checked as {kind} (detected)")
    return found


@record
class _KeyScore:
    """What the keys alone decide of a shape's score (the near misses included); what is missing one level down
    depends on the values and is added per payload."""

    matched: int  # keys declared (exactly or as a near miss)
    missing: tuple[str, ...]  # required properties neither present nor meant by a near miss (sorted)
    undeclared: tuple[str, ...]  # keys the shape does not declare and that are no near miss of one (sorted)


def _key_score(shape: Shape, keys: frozenset) -> _KeyScore:
    matched = keys & shape.properties
    unmatched_names = set(shape.properties - matched)
    undeclared: list[str] = []
    # Only keys the shape does not declare are compared: a key equal to a declared name is that name.
    for key in sorted(keys - shape.properties):
        near = closest(key, sorted(unmatched_names))
        if near is None:
            undeclared.append(key)
        else:
            unmatched_names.discard(near)
            matched = matched | {near}
    return _KeyScore(len(matched), tuple(sorted(shape.required - matched)), tuple(undeclared))


def _key_scores(spec: Spec, keys: frozenset, array: bool) -> tuple:
    """``((entry, ((shape, _KeyScore), ...)), ...)`` for every kind of ``array``'s sort (array kinds or object
    kinds), in kind_shapes order: the near-miss comparison (difflib, the costly part of a detection without an
    exact fit) once per key set. Bounded as the exact fits are (FIT_CACHE_SIZE); a key set beyond the bound is
    scored anew each time, with the same result."""
    cache = spec._cache.get("detect_key_scores")
    if cache is None:
        cache = spec._cache["detect_key_scores"] = {}
    found = cache.get((array, keys))
    if found is None:
        found = tuple((entry, tuple((shape, _key_score(shape, keys)) for shape in entry.shapes))
                      for entry in kind_shapes(spec) if entry.array == array)
        if _keep(cache, keys):
            cache[(array, keys)] = found
    return found


def _scores(spec: Spec, payload: Any) -> list[_Score]:
    """The best score of each kind the payload can be (object kinds for an object, array kinds for an array),
    in kind_shapes order."""
    array = isinstance(payload, list)
    keys = _top_keys(payload, array)
    if keys is None:  # neither an object nor an array: no kind can fit
        return []
    top = _top_object(payload, array)
    out = []
    for entry, shaped in _key_scores(spec, frozenset(keys), array):
        best: _Score | None = None
        for shape, part in shaped:
            missing = part.missing + shape.nested_missing(top)
            score = _Score(entry.kind.name, len(part.undeclared) + len(missing), part.matched, entry.kind.is_request,
                           missing, part.undeclared)
            if best is None or score.order < best.order:
                best = score
        if best is not None:  # a kind without shapes cannot be scored
            out.append(best)
    return out
