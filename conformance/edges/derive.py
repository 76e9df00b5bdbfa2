"""The edges of the contract, derived from the spec and the validator's catalogue (no hand list of fields).

Each request kind starts from its richest spec example (an execution date the validator finds past is moved to
today). The kind's schema is walked along that payload (into an optional single-value field it leaves out, which the
field's edges add; an array's first item, and of its later items what the first lacks); every place gets the edges
its schema keywords call for (``maxLength``/``minLength``, ``enum``, ``minimum``/``maximum`` and int32,
``format: date``, ``minItems``/``maxItems``), and the edges of every catalogue rule that targets it (a rule's ``targets`` name the component or the
spec's ``x-rule`` tag it reads: amounts, IBAN, BBAN, KID, execution date, remittance, basket). Request headers get
the edges of the header rules whose parameter the operation declares (X-PSU-IDENTITY). One edge = one field set to
one boundary value in an otherwise valid request, so its verdict is about that boundary alone: the validator
verifies it (:meth:`Deriver.edges`). An edge that breaks another rule than the one it is listed under is listed under
the rule it breaks when it breaks one (a well-formed date in the past breaks the execution-date rule, not the date
format), and left out when it breaks several (``Deriver.left_out``). A currency member is sent with an amount its
minor units allow, so it probes the currency alone.

An edge at a limit names it (:class:`Limit`: the keyword, its value, outside or just inside). Per limit of a field,
the first edge outside that the validator refuses and the first inside that it accepts make a :class:`Boundary`
(:meth:`Deriver.boundaries`; a query parameter's, from the same keyword edges: :meth:`Deriver.query_boundaries`):
the list the conformance gate breaks every run (``negative:boundaries``), the edges this report sends.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import itertools
import string
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from validator.checks.accounts import make_iban, norwegian_bban_check_digit
from validator.checks.identity import norwegian_identity_control_digits
from validator.checks.kid import MAX_LENGTH as KID_MAX, MIN_LENGTH as KID_MIN
from validator.checks.kid import kid_check_digit_mod10, kid_check_digit_mod11
from validator.context import OSLO, Context, today_in_oslo
from validator.findings import ERROR
from validator.request.build import sample_value
from validator.request.parameters import inline_refs
from validator.request.headers import PSU_IDENTITY_HEADER
from validator.rules import Rule, catalogue
from validator.rules.examples import set_pointer
from validator.spec import Spec, as_tuple

INT32 = (-(2**31), 2**31 - 1)
# Why an edge judged at an instant is not sent: a request cannot set the target's clock.
AT_AN_INSTANT = "judged at an instant of the clock (around Oslo's midnight) a request cannot set on the target"
ENUM_SHOWN = 8  # an enum this small is listed whole; a larger one by its ends and its non-current members


@dataclass(frozen=True)
class Limit:
    """The schema limit an edge sits at: the keyword, its value, and the side -- just outside (max+1, min−1, the first
    value outside a range, a value outside an enum, a date that does not exist) or just inside (the limit itself, a
    member, a date that exists)."""

    keyword: str             # maxLength, minLength, maximum, minimum, maxItems, minItems, enum, format
    value: Any               # the keyword's value (the enum: None; format: its name)
    outside: bool


@dataclass(frozen=True)
class Edge:
    """One boundary of the contract, as a request to send: a valid request with one thing set to the edge value."""

    rule: str                # the catalogue rule (or JSON Schema keyword rule) the edge probes
    field: str               # where: Component.property (or the header name)
    section: str             # the document section
    edge: str                # what the edge is, for a reader ("max+1: 71 characters")
    kind: str
    body: Any
    pointer: str = ""        # JSON pointer of the changed value in the body
    headers: tuple[tuple[str, str], ...] = ()
    at: str | None = None    # the instant the validator judges at (the midnight edge); None: the run's clock
    context: dict | None = None  # the payments a basket refers to (validator context)
    only_validator: str = ""  # why this edge is not sent to a target (it needs a clock or payments it cannot set)
    source: str = "derived"
    assumptions: tuple[str, ...] = ()  # the decisions (A<n>) behind the verdict: the rule's and the field's
    input: Any = None        # the value the edge sets (the members it changes, when several), for a reader
    limit: Limit | None = None  # the schema limit the edge sits at, when it is a boundary of one (Deriver.boundaries)
    query: tuple[tuple[str, str], ...] = ()  # a query parameter's edge: the whole query (Deriver.query_boundaries)

    @property
    def group(self) -> str:
        return f"{self.rule} · {self.field}"


@dataclass(frozen=True)
class Boundary:
    """One limit of one field of a request kind, as the conformance gate breaks it: the edge just outside (a valid
    request with only that field moved past the limit, which the validator refuses) and the edge just inside (the
    limit itself, which the validator accepts)."""

    outside: Edge
    inside: Edge
    operation: str           # where it is sent (the kind's creation; the query's operation)

    @property
    def kind(self) -> str:
        return self.outside.kind

    @property
    def pointer(self) -> str:
        return self.outside.pointer

    @property
    def keyword(self) -> str:
        return self.outside.limit.keyword if self.outside.limit else ""

    @property
    def limit(self) -> Any:
        return self.outside.limit.value if self.outside.limit else None


@dataclass
class Place:
    """One value of a payload with every schema keyword that applies to it (through $ref and allOf)."""

    path: tuple
    keywords: dict
    tags: frozenset          # component names and x-rule tags
    owner: str               # Component.property for a reader
    section: str
    rule_tags: tuple = ()  # the spec's x-rule tags here, in the spec's order
    assumptions: tuple = ()  # the spec's x-assumption entries here (the field's and its components')
    unique_item: bool = False  # an item of an array with uniqueItems

    @property
    def pointer(self) -> str:
        return "/" + "/".join(str(p) for p in self.path) if self.path else ""


_KEYWORDS = ("type", "enum", "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems",
             "maxItems", "uniqueItems", "x-not-current-iso", "x-expected-currency")


class Walker:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        # the sections of the request kinds' own schemas: a component several requests share (ExecutionDate) may
        # cite one request's section, which is wrong for a field of another request
        self.request_sections = {self.spec.schema(k.schema_name).get("x-document-ref") for k in spec.kinds.values()
                                 if k.is_request} - {None}

    def places(self, kind: str, payload: Any) -> list[Place]:
        root = self.spec.kind(kind).schema_name
        return list(self._walk({"$ref": "#/components/schemas/" + root}, payload, (), root, ""))

    def _walk(self, schema: dict, value: Any, path: tuple, owner: str, section: str,
              unique_item: bool = False) -> Iterator[Place]:
        parts, tags, stack = [], {}, [(schema, 0)]  # tags: the component names in the order met (a dict)
        rule_tags: dict = {}
        assumptions: dict = {}
        sections: list[tuple[int, str]] = []  # (depth, x-document-ref) in the order met
        while stack:
            node, depth = stack.pop()
            rule_tags.update(dict.fromkeys(as_tuple(node.get("x-rule"))))
            assumptions.update(dict.fromkeys(as_tuple(node.get("x-assumption"))))
            if "x-document-ref" in node:
                sections.append((depth, node["x-document-ref"]))
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[1]
                tags[name] = None
                stack.append((self.spec.schema(name), depth + 1))
            stack.extend((part, depth + 1) for part in node.get("allOf", ()))
            parts.append(node)
        # the innermost section (the last met: the component's own), unless the field's own (the outermost) names
        # one request and the component another: a bulk's requestedExecutionDate is the bulk request's, though its
        # ExecutionDate component cites the SEPA request
        if sections:
            outermost = min(sections, key=lambda s: s[0])[1]
            section = sections[-1][1]
            if {outermost, section} <= self.request_sections and outermost != section:
                section = outermost
        if any("anyOf" in p or "oneOf" in p for p in parts):
            return
        keywords: dict = {}
        props: dict[str, list] = {}
        items: list = []
        component = next((t for t in tags if t[0].isupper()), None)
        for part in reversed(parts):
            keywords.update({k: part[k] for k in _KEYWORDS if k in part})
            for name, sub in part.get("properties", {}).items():
                props.setdefault(name, []).append(sub)
            if isinstance(part.get("items"), dict):
                items.append(part["items"])
        yield Place(path, keywords, frozenset(set(tags) | set(rule_tags)), owner, section, tuple(rule_tags),
                    tuple(assumptions), unique_item)
        if isinstance(value, dict):
            here = component or owner.split(".")[0]
            for key, sub in value.items():
                if key in props:
                    yield from self._walk({"allOf": props[key]}, sub, path + (key,), f"{here}.{key}", section)
            for key in props.keys() - value.keys():  # an optional leaf the payload leaves out: its edges add it
                if self._leaf(props[key]):
                    yield from self._walk({"allOf": props[key]}, None, path + (key,), f"{here}.{key}", section)
        elif isinstance(value, list) and value and items:
            # the first item whole; of the others, what the first lacks (a card transaction with a currency exchange)
            seen: set[tuple] = set()
            for index, item in enumerate(value):
                for place in self._walk({"allOf": items}, item, path + (index,), owner + "[]", section,
                                        bool(keywords.get("uniqueItems"))):
                    below = place.path[len(path) + 1:]
                    if below not in seen:
                        seen.add(below)
                        yield place


    def _leaf(self, schemas: list) -> bool:
        """A schema of a single value (no object or array): its edges need no members or items around them."""
        stack = list(schemas)
        while stack:
            node = stack.pop()
            if "$ref" in node:
                stack.append(self.spec.schema(node["$ref"].rsplit("/", 1)[1]))
                continue
            if node.get("type") in ("object", "array") or "properties" in node or "items" in node \
                    or "anyOf" in node or "oneOf" in node:
                return False
            stack.extend(node.get("allOf", ()))
        return True


# ---------------------------------------------------------------------------------------------- base payloads
def base_payloads(spec: Spec, validator, today: _dt.date) -> dict[str, tuple[str, Any]]:
    """kind -> (creation operation, its richest spec request example, valid at ``today``)."""
    out: dict[str, tuple[str, Any]] = {}
    for location, schema, value in spec.iter_examples():
        operation, _, rest = location.partition(" request example ")
        if not rest:
            continue
        name = schema.get("$ref", "").rsplit("/", 1)[-1]
        kind = next((k for k, kk in spec.kinds.items() if kk.schema_name == name), None)
        if kind is None:
            continue
        payload = _repaired(copy.deepcopy(value), kind, validator, today)
        if payload is None:
            continue
        if kind not in out or _size(payload) > _size(out[kind][1]):
            out[kind] = (operation, payload)
    return out


# The rules of a date the spec's examples wrote before the run's day (an execution date, a standing order's start):
# such a date is moved to today.
PAST_DATE_RULES = frozenset({"execution-date-past", "periodic-start-date-past"})


def _repaired(payload: Any, kind: str, validator, today: _dt.date) -> Any:
    """The example with dates the validator finds past moved to today; None when still invalid."""
    for _ in range(3):
        errors = [f for f in validator.validate(payload, kind).findings if f.severity == "error"]
        if not errors:
            return payload
        if any(f.rule not in PAST_DATE_RULES for f in errors):
            return None
        for f in errors:
            set_pointer(payload, f.pointer, today.isoformat())
    return None


def _size(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_size(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_size(v) for v in value)
    return 1


def _with(payload: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(payload)
    node = out
    for token in path[:-1]:
        node = node[token]
    if value is _REMOVE:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return out


_REMOVE = object()


# ---------------------------------------------------------------------------------------------- keyword edges
def text_of(length: int, unit: str) -> str:
    """``length`` characters (code points) built from ``unit`` repeated, cut to the exact length."""
    return (unit * (length // max(len(unit), 1) + 1))[:length]


# Characters at the limit: (label, unit). Counted in code points, as JSON Schema counts.
UNICODE_AT_LIMIT = (
    ("2-byte UTF-8 (ø)", "ø"),
    ("3-byte UTF-8 (€)", "€"),
    ("emoji (4-byte UTF-8)", "\U0001F600"),
    ("combining marks (e + U+0301)", "e\u0301"),
    ("right-to-left (Hebrew)", "שלום"),
)


def length_edges(place: Place) -> Iterator[tuple[str, Any, str]]:
    k = place.keywords
    low, high = k.get("minLength", 0), k.get("maxLength")
    if low > 0:
        yield f"min−1: {low - 1} characters", "x" * (low - 1), "schema-length", Limit("minLength", low, True)
        yield f"min: {low} characters", "x" * low, "schema-length", Limit("minLength", low, False)
    if high is None:
        return
    yield f"max: {high} characters", "x" * high, "schema-length", Limit("maxLength", high, False)
    yield f"max+1: {high + 1} characters", "x" * (high + 1), "schema-length", Limit("maxLength", high, True)
    for label, unit in UNICODE_AT_LIMIT:
        yield f"max: {high} characters, {label}", text_of(high, unit), "schema-length"
    graphemes = "e\u0301" * high
    yield f"{high} letters with combining marks ({2 * high} code points)", graphemes, "schema-length"


def enum_edges(spec: Spec, place: Place) -> Iterator[tuple[str, Any, str]]:
    members = list(place.keywords["enum"])
    if not all(isinstance(m, str) for m in members):
        return
    not_current = place.keywords.get("x-not-current-iso", {})
    shown = members if len(members) <= ENUM_SHOWN else list(dict.fromkeys([members[0], members[-1]]))
    for member in shown:
        yield f"member {member!r}", member, "schema-enum", Limit("enum", None, False)
    for label, codes in not_current.items():
        for code in codes:
            yield f"member {code!r} ({label})", code, "schema-enum"
    if all(m.isdigit() for m in members):  # a number written as text ("1" to "31"): its neighbours and a zero pad
        numbers = sorted(int(m) for m in members)
        for label, value in (("below the first", str(numbers[0] - 1)), ("after the last", str(numbers[-1] + 1)),
                             ("leading zero", f"0{numbers[0]}")):
            if value not in members:
                yield f"near-miss, {label}: {value!r}", value, "schema-enum", Limit("enum", None, True)
    sample = members[0] if len(members) > ENUM_SHOWN else members[-1]
    for label, value in (("lower case", sample.lower()), ("upper case", sample.upper()),
                         ("leading space", " " + sample), ("trailing space", sample + " "),
                         ("trailing newline", sample + "\n"), ("empty", "")):
        if value not in members:
            yield f"near-miss, {label}: {value!r}", value, "schema-enum", Limit("enum", None, True)
    if "CurrencyCode" in place.tags:
        yield from _iso_currencies_outside(members)


def _iso_currencies_outside(members: list[str]) -> Iterator[tuple[str, Any, str]]:
    """Current ISO 4217 codes the interface's set leaves out (pycountry's table)."""
    import pycountry

    outside = sorted({c.alpha_3 for c in pycountry.currencies} - set(members))
    for code in outside[:3]:
        yield f"near-miss, current ISO 4217 code outside the set: {code!r}", code, "schema-enum"


def integer_edges(place: Place) -> Iterator[tuple[str, Any, str]]:
    k = place.keywords
    low, high = k.get("minimum"), k.get("maximum")
    if k.get("format") == "int32":
        low = INT32[0] if low is None else low
        high = INT32[1] if high is None else high
    if low is not None:
        yield f"minimum−1: {low - 1}", low - 1, "schema-range", Limit("minimum", low, True)
        yield f"minimum: {low}", low, "schema-range", Limit("minimum", low, False)
    if high is not None:
        yield f"maximum: {high}", high, "schema-range", Limit("maximum", high, False)
        yield f"maximum+1: {high + 1}", high + 1, "schema-range", Limit("maximum", high, True)


def items_edges(place: Place, value: list) -> Iterator[tuple[str, Any, str]]:
    k = place.keywords
    low, high = k.get("minItems"), k.get("maxItems")
    sizes = []
    if low is not None:
        sizes += [("minItems−1", low - 1, Limit("minItems", low, True)), ("minItems", low, Limit("minItems", low, False))]
    if high is not None:
        sizes += [("maxItems", high, Limit("maxItems", high, False)), ("maxItems+1", high + 1, Limit("maxItems", high, True))]
    for label, n, limit in sizes:
        if n >= 0:
            yield f"{label}: {n} items", _resized(value, n), "schema-items", limit


def _resized(value: list, n: int) -> list:
    if not value:
        return []
    out = []
    for i in range(n):
        item = copy.deepcopy(value[i % len(value)])
        if isinstance(item, str) and i >= len(value):
            item = f"{item[:-4]}{i:04d}"[-max(len(item), 8):]  # distinct ids (a duplicate is another rule)
        out.append(item)
    return out


def date_edges(place: Place, today: _dt.date) -> Iterator[tuple[str, Any, str]]:
    day = _dt.timedelta(days=1)
    for label, value in (("today", today), ("yesterday", today - day), ("tomorrow", today + day)):
        yield f"{label} ({value.isoformat()}, Europe/Oslo)", value.isoformat(), "schema-format"
    leap = next(y for y in itertools.count(today.year) if _is_leap(y) and _dt.date(y, 2, 29) >= today)
    past_leap = next(y for y in itertools.count(today.year, -1) if _is_leap(y) and _dt.date(y, 2, 29) < today)
    inside = Limit("format", "date", False)
    yield f"29 February of a leap year ({leap})", f"{leap}-02-29", "schema-format", inside
    yield f"29 February of a leap year in the past ({past_leap})", f"{past_leap}-02-29", "schema-format", inside
    common = next(y for y in itertools.count(today.year) if not _is_leap(y))
    yield f"29 February of a common year ({common})", f"{common}-02-29", "schema-format", Limit("format", "date", True)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


# ---------------------------------------------------------------------------------------------- rule edges
# A rule's edges: (label, value at the place, rule id or "rule@instant"[, what the edge is about, for a rule that
# reads a whole object: the pointer below the place ("/startDate") or a tuple of member names]).
RuleEdges = Callable[["Deriver", Place, Any], Iterator[tuple]]
RULE_EDGES: dict[str, RuleEdges] = {}


def rule_edges(*rule_ids: str) -> Callable[[RuleEdges], RuleEdges]:
    """Register the edges of catalogue rules: generated wherever the spec puts a rule's target."""

    def register(fn: RuleEdges) -> RuleEdges:
        for rule_id in rule_ids:
            RULE_EDGES[rule_id] = fn
        return fn

    return register


@rule_edges("amount-minor-units")
def _amount_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """Per minor-unit class of the currency table (0, 2, 3 digits): at the limit, one digit over, zero, the
    smallest amount, 13 vs 14 integer digits, leading zeros."""
    if not isinstance(value, dict):
        return
    text = d.spec.resolve(d.spec.schema("Amount")["properties"]["amount"]["$ref"])
    integer_digits = text["x-precision"] - text["x-scale"]
    units = d.spec.minor_units
    classes = sorted(set(units.values()))
    own = value.get("currency")
    for digits in classes:
        currency = own if units.get(own) == digits else next(c for c in d.spec.code_set("CurrencyCode")
                                                             if units.get(c) == digits)
        rule = "amount-minor-units"

        def amount(text: str, cur: str = currency) -> dict:
            return {**value, "amount": text, "currency": cur}

        frac = lambda n: ("." + "5" * n) if n else ""  # noqa: E731
        cls = f"{currency} ({digits} minor units)"
        yield f"{cls}: at the limit", amount("1" + frac(digits)), rule
        yield f"{cls}: one digit over", amount("1" + frac(digits + 1)), rule
        yield f"{cls}: trailing zero over the limit", amount("1" + frac(digits) + ("0" if digits else ".0")), rule
        yield f"{cls}: zero", amount("0" + ("." + "0" * digits if digits else "")), "amount-positive"
        yield f"{cls}: smallest amount", amount("0." + "0" * (digits - 1) + "1" if digits else "1"), "amount-positive"
        # the pattern's integer digits: a boundary where only the amount moves (the request's own currency)
        at = (Limit("pattern", f"{integer_digits} integer digits", False),) if currency == own else ()
        yield (f"{cls}: {integer_digits} integer digits", amount("9" * integer_digits + frac(digits)),
               "amount-precision", *at)
        yield (f"{cls}: {integer_digits + 1} integer digits", amount("1" + "0" * integer_digits + frac(digits)),
               "amount-precision", *(dataclasses.replace(a, outside=True) for a in at))
        yield f"{cls}: leading zeros", amount("007" + frac(digits)), "amount-grammar"
    for label, text in (("comma separator", "1,50"), ("plus sign", "+1.50"), ("minus sign", "-1.50"),
                        ("exponent", "1.5e2"), ("leading space", " 1.50"), ("no fraction after point", "1."),
                        ("no integer part", ".50"), ("thousands separator", "1 000.00"), ("empty", "")):
        yield f"grammar near-miss, {label}: {text!r}", {**value, "amount": text}, "amount-grammar"


@rule_edges("iban-invalid")
def _iban_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """Check digits off by one and 00/01/99, print format, lower case, one character more; a Norwegian IBAN whose
    account number fails MOD11 (iban-national-check)."""
    if not isinstance(value, str) or len(value) < 5:
        return
    check = int(value[2:4]) if value[2:4].isdigit() else 0
    variants = {f"{check + 1:02d}" if check < 98 else "97": "check digits +1",
                f"{check - 1:02d}" if check > 2 else "98": "check digits −1", "00": "check digits 00",
                "01": "check digits 01", "99": "check digits 99"}
    pattern = Limit("pattern", "IBAN", False)
    yield f"valid ({value})", value, "iban-invalid", pattern
    for digits, label in variants.items():
        if digits != value[2:4]:
            yield f"{label}: {value[:2]}{digits}{value[4:]}", value[:2] + digits + value[4:], "iban-invalid"
    spaced = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
    yield f"print format with spaces: {spaced!r}", spaced, "iban-invalid"
    yield "lower case", value.lower(), "iban-invalid", dataclasses.replace(pattern, outside=True)
    yield "one character more", value + "0", "iban-invalid"
    first10 = _bban_first10(has_check_digit=True)
    bad = first10 + str((int(norwegian_bban_check_digit(first10)) + 1) % 10)
    yield f"Norwegian IBAN, account number failing MOD11 ({make_iban('NO', bad)})", make_iban("NO", bad), \
        "iban-national-check"


def _bban_first10(*, has_check_digit: bool) -> str:
    """The first ten digits of the first Norwegian account number from 1203.00.0000 on with (or without: remainder
    10) a MOD11 check digit."""
    for n in itertools.count(1203_00_0000):
        first10 = f"{n:010d}"
        if (norwegian_bban_check_digit(first10) is not None) == has_check_digit:
            return first10
    raise AssertionError("unreachable")


@rule_edges("bban-format", "bban-check-digit")
def _bban_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """MOD11 check digit wrong, an account number with no valid check digit (remainder 10), 10/12 digits, dots."""
    if not isinstance(value, dict) or not isinstance(value.get("bban"), str) or len(value["bban"]) != 11:
        return
    bban = value["bban"]
    wrong = str((int(bban[10]) + 1) % 10)
    no_check = _bban_first10(has_check_digit=False)
    inside, outside = Limit("pattern", "11 digits", False), Limit("pattern", "11 digits", True)
    for label, text, rule, *limit in (("valid", bban, "bban-check-digit", inside),
                                      ("MOD11 check digit off by one", bban[:10] + wrong, "bban-check-digit"),
                                      ("no valid MOD11 check digit exists (remainder 10)", no_check + "0",
                                       "bban-check-digit"),
                                      ("10 digits", bban[:10], "bban-format"),
                                      ("12 digits", bban + "0", "bban-format", outside),
                                      ("with dots", f"{bban[:4]}.{bban[4:6]}.{bban[6:]}", "bban-format")):
        yield f"{label}: {text}", {**value, "bban": text}, rule, "/bban", *limit


@rule_edges("kid-invalid")
def _kid_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """MOD10 and MOD11 check digits, MOD11's '-', a wrong check digit, lengths at and over the KID limits."""
    if not isinstance(value, dict) or "reference" not in value:
        return
    base = {k: v for k, v in value.items() if k in ("reference", "referenceType")}

    def kid(text: str) -> dict:
        return {**base, "reference": text}

    payload = next(p for p in (f"12345678{n:02d}" for n in range(100))
                   if kid_check_digit_mod10(p) != kid_check_digit_mod11(p) and kid_check_digit_mod11(p) != "-")
    dash = next(p for p in (f"{n:06d}" for n in itertools.count(1)) if kid_check_digit_mod11(p) == "-")
    mod10, mod11 = kid_check_digit_mod10(payload), kid_check_digit_mod11(payload)
    wrong = next(c for c in string.digits if c not in (mod10, mod11))
    yield f"MOD10 check digit: {payload + mod10}", kid(payload + mod10), "kid-invalid"
    yield f"MOD11 check digit: {payload + mod11}", kid(payload + mod11), "kid-invalid"
    yield f"MOD11 check digit '-': {dash}-", kid(dash + "-"), "kid-invalid"
    yield f"wrong check digit: {payload + wrong}", kid(payload + wrong), "kid-invalid"
    for label, n, limit in ((f"min−1: {KID_MIN - 1} character", KID_MIN - 1, Limit("KID length", KID_MIN, True)),
                            (f"min: {KID_MIN} characters", KID_MIN, Limit("KID length", KID_MIN, False)),
                            (f"max: {KID_MAX} characters", KID_MAX, Limit("KID length", KID_MAX, False)),
                            (f"max+1: {KID_MAX + 1} characters", KID_MAX + 1, Limit("KID length", KID_MAX, True))):
        body = ("9" * (n - 1))
        text = body + kid_check_digit_mod10(body) if n > 1 else "0"
        yield f"{label}: {text}", kid(text), "kid-invalid", "/reference", limit


@rule_edges("execution-date-past")
def _execution_date_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """The midnight edge: Europe/Oslo's day changes one or two hours before UTC's."""
    for label, value, at in midnight_edges(d.today):
        yield label, value, f"execution-date-past@{at}"


def midnight_edges(today: _dt.date) -> Iterator[tuple[str, str, str]]:
    """One date around the midnight that begins ``today`` in Oslo: 1 s before, it is that day's own date (still
    today there); at midnight, it is yesterday's (while UTC's day has not changed yet). The third member is the
    instant (ISO 8601) the validator judges at."""
    midnight = _dt.datetime.combine(today, _dt.time(0, 0), OSLO).astimezone(_dt.timezone.utc)
    day = (today - _dt.timedelta(days=1)).isoformat()
    before = midnight - _dt.timedelta(seconds=1)
    yield (f"today's date {day}, 1 s before midnight in Oslo ({before:%Y-%m-%dT%H:%M:%SZ})", day,
           before.isoformat())
    yield (f"yesterday's date {day}, at midnight in Oslo ({midnight:%Y-%m-%dT%H:%M:%SZ}, still {day} in UTC)", day,
           midnight.isoformat())


@rule_edges("remittance-exclusive", "deprecated-property")
def _remittance_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """Every combination of the remittance properties the schema declares (structured, its deprecated single
    form, unstructured)."""
    if not isinstance(value, dict) or "BulkEntry" not in place.tags:
        return
    props = d.properties("BulkEntry")
    names = [n for n in props if n.startswith("remittanceInformation")]
    kid = {"reference": "12345678903"}
    sample = {n: ([kid] if props[n].get("type") == "array" or "Array" in n else
                  kid if "Structured" in n else "Faktura 88213") for n in names}
    stripped = {k: v for k, v in value.items() if k not in names}
    for size in range(len(names) + 1):
        for combo in itertools.combinations(names, size):
            label = " + ".join(n.removeprefix("remittanceInformation") for n in combo) or "none"
            rule = "deprecated-property" if any(props[n].get("deprecated") for n in combo) and size == 1 \
                else "remittance-exclusive"
            yield label, {**stripped, **{n: copy.deepcopy(sample[n]) for n in combo}}, rule


@rule_edges("basket-reference-mix")
def _basket_mix_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """Baskets of payments of each service, alone and mixed (the payments' facts given as validator context)."""
    if not isinstance(value, dict) or not isinstance(value.get("paymentIds"), list):
        return
    services = ("payments", "bulk-payments", "periodic-payments")
    ids = value["paymentIds"][:2] or ["enc!!payment-1"]
    if len(ids) < 2:
        ids = [ids[0], ids[0] + "-2"]
    for first, second in itertools.combinations_with_replacement(services, 2):
        facts = {ids[0]: {"service": first}, ids[1]: {"service": second}}
        yield f"{first} + {second}", ({**value, "paymentIds": ids}, {"payments": facts}), "basket-reference-mix"


# ---------------------------------------------------------------------------------------------- periodic payments
@rule_edges("periodic-start-date-past")
def _periodic_start_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """The first execution day: today, yesterday and around Oslo's midnight, judged as an execution date (A13)."""
    if not isinstance(value, dict) or "startDate" not in value:
        return
    rule = "periodic-start-date-past"
    day = _dt.timedelta(days=1)
    for label, start in (("today", d.today), ("yesterday", d.today - day), ("tomorrow", d.today + day)):
        yield f"startDate {label} ({start.isoformat()}, Europe/Oslo)", _schedule(value, start.isoformat()), rule, \
            "/startDate"
    for label, start, at in midnight_edges(d.today):
        yield f"startDate {label}", _schedule(value, start), f"{rule}@{at}", "/startDate"


def _schedule(value: dict, start: str, **changes: Any) -> dict:
    """The periodic payment starting ``start`` (an endDate before it dropped: that is another rule)."""
    out = {**value, "startDate": start, **changes}
    if isinstance(out.get("endDate"), str) and out["endDate"] < start:
        out.pop("endDate")
    return out


@rule_edges("periodic-end-before-start")
def _periodic_end_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """The last execution day against the first: the same day, one day before, one after, none (until cancelled)."""
    if not isinstance(value, dict) or not isinstance(value.get("startDate"), str):
        return
    start = _dt.date.fromisoformat(value["startDate"])
    day = _dt.timedelta(days=1)
    rule = "periodic-end-before-start"
    for label, end in (("the startDate", start), ("the day before startDate", start - day),
                       ("the day after startDate", start + day)):
        yield f"endDate {label} ({end.isoformat()})", {**value, "endDate": end.isoformat()}, rule, "/endDate"
    yield "no endDate (until cancelled)", {k: v for k, v in value.items() if k != "endDate"}, rule, "/endDate"


@rule_edges("months-of-execution-frequency")
def _periodic_frequency_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """Every frequency with and without monthsOfExecution, and an empty list: the months go with the frequencies
    the spec names (PeriodicFrequency's x-months-of-execution), and only with them."""
    if not isinstance(value, dict) or "frequency" not in value:
        return
    frequency = d.spec.schema("PeriodicFrequency")
    takes_months = set(frequency["x-months-of-execution"]["required-with"])
    months = value.get("monthsOfExecution") or ["1", "7"]
    without = {k: v for k, v in value.items() if k != "monthsOfExecution"}
    rule = "months-of-execution-frequency"
    members = ("frequency", "monthsOfExecution")
    for member in frequency["enum"]:
        if member in takes_months:
            yield (f"{member} with monthsOfExecution", {**without, "frequency": member, "monthsOfExecution": months},
                   rule, members)
            yield f"{member} without monthsOfExecution", {**without, "frequency": member}, rule, members
            yield (f"{member} with an empty monthsOfExecution",
                   {**without, "frequency": member, "monthsOfExecution": []}, rule, members)
        else:
            yield f"{member} without monthsOfExecution", {**without, "frequency": member}, rule, members
            yield (f"{member} with monthsOfExecution", {**without, "frequency": member, "monthsOfExecution": months},
                   rule, members)


@rule_edges("months-of-execution-duplicate")
def _months_duplicate_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """One month, all twelve, a month twice (release 1.18.1)."""
    if not isinstance(value, list):
        return
    members = list(d.spec.schema("MonthOfExecution")["enum"])
    rule = "months-of-execution-duplicate"
    yield f"one month: {members[:1]}", members[:1], rule
    yield f"all {len(members)} months", members, rule
    yield f"a month twice: {[members[0], members[0]]}", [members[0], members[0]], rule
    yield f"a month twice, apart: {[members[0], members[1], members[0]]}", [members[0], members[1], members[0]], rule


# ---------------------------------------------------------------------------------------------- batch runs
def datetime_edges(today: _dt.date, times: tuple[str, ...]) -> Iterator[tuple[str, Any, str]]:
    """Instants of the batch runs (A25, their HH:MM in Europe/Oslo): each run today with Oslo's offset and the same
    instant in UTC, a second before the first run, Oslo's midnight, the noon run on a summer-time day (+02:00),
    and the forms RFC 3339 refuses (no offset, a date alone, 24:00)."""
    def oslo(day: _dt.date, hh_mm: str) -> _dt.datetime:
        return _dt.datetime.combine(day, _dt.time.fromisoformat(hh_mm), OSLO)

    for hh_mm in times:
        at = oslo(today, hh_mm)
        yield f"the {hh_mm} run in Oslo, Oslo's offset: {at.isoformat()}", at.isoformat(), "schema-format"
        utc = at.astimezone(_dt.timezone.utc)
        yield f"the {hh_mm} run in Oslo, in UTC: {utc:%Y-%m-%dT%H:%M:%SZ}", f"{utc:%Y-%m-%dT%H:%M:%SZ}", "schema-format"
    if times:
        before = oslo(today, times[0]) - _dt.timedelta(seconds=1)
        yield f"1 s before the first run ({times[0]}): {before.isoformat()}", before.isoformat(), "schema-format"
    midnight = oslo(today, "00:00")
    yield f"midnight in Oslo: {midnight.isoformat()}", midnight.isoformat(), "schema-format"
    summer = next(_dt.date(y, 7, 1) for y in itertools.count(today.year) if _dt.date(y, 7, 1) >= today)
    noon = oslo(summer, "12:00")
    yield f"the 12:00 run on a summer-time day: {noon.isoformat()}", noon.isoformat(), "schema-format"
    plain = f"{today.isoformat()}T12:00:00"
    for label, text in (("no offset", plain), ("a date alone", today.isoformat()),
                        ("24:00", f"{today.isoformat()}T24:00:00+01:00"),
                        ("a space for T", plain.replace("T", " ") + "Z")):
        yield f"near-miss, {label}: {text!r}", text, "schema-format"


def nin_edges(today: _dt.date) -> Iterator[tuple[str, str]]:
    """National identity numbers: birth, D-, H- and synthetic test numbers, 29 February, check digits, length."""

    def number(day: int, month: int, year2: int, individual: int = 123) -> str:
        for ind in range(individual, individual + 200):
            first9 = f"{day:02d}{month:02d}{year2:02d}{ind:03d}"
            control = norwegian_identity_control_digits(first9)
            if control:
                return first9 + control
        raise AssertionError("no control digits found")

    birth = number(13, 3, 93)
    yield "birth number", birth
    yield "D-number (day + 40)", number(53, 3, 93)
    yield "H-number (month + 40)", number(13, 43, 93)
    yield "synthetic test number (month + 80)", number(13, 83, 93)
    yield "born 29 February 1996 (leap year)", number(29, 2, 96)
    first9 = "290297123"
    control = norwegian_identity_control_digits(first9) or "00"
    yield "born 29 February 1997 (common year)", first9 + control
    yield "first control digit off by one", birth[:9] + str((int(birth[9]) + 1) % 10) + birth[10]
    yield "second control digit off by one", birth[:10] + str((int(birth[10]) + 1) % 10)
    yield "10 digits", birth[:10]
    yield "12 digits", birth + "0"


# ---------------------------------------------------------------------------------------------- the deriver
class Deriver:
    """Every edge of the request kinds of a spec, at a day in Europe/Oslo; each verified by the validator to break
    no rule but the one it is listed under (``left_out``: the edges that break several, with their rules)."""

    def __init__(self, spec: Spec, validator, today: _dt.date,
                 request_check: Callable[[Edge, str], set[str]] | None = None) -> None:
        self.spec = spec
        self.today = today
        self.validator = validator
        # the rules a whole request breaks (edge, operation): how a header edge is verified (without it, it is not)
        self.request_check = request_check
        self.rules: dict[str, Rule] = catalogue()
        self.bases = base_payloads(spec, validator, today)
        self.walker = Walker(spec)
        self.left_out: list[tuple[Edge, tuple[str, ...]]] = []

    def properties(self, component: str) -> dict:
        out: dict = {}
        schema = self.spec.schema(component)
        for part in [schema, *[self.spec.resolve(p["$ref"]) if "$ref" in p else p for p in schema.get("allOf", ())]]:
            out.update(part.get("properties", {}))
        return out

    def edges(self, kinds: tuple[str, ...] | None = None, *, every_place: bool = False) -> list[Edge]:
        """The verified edges of ``kinds``; a field met at several places of a request (a component's: the debtor's
        and the creditor's account currency) at its first place only, unless ``every_place``."""
        out: list[Edge] = []
        self.left_out = []
        for kind, (operation, base) in self.bases.items():
            if kinds and kind not in kinds:
                continue
            for place in self.walker.places(kind, base):
                out.extend(self._place_edges(kind, operation, base, place))
            out.extend(self._header_edges(kind, operation, base))
        verified = [e for e in map(self._verified, out) if e is not None]
        return verified if every_place else _unique(verified)

    def boundaries(self, kinds: tuple[str, ...] | None = None) -> list[Boundary]:
        """Every limit of every field the edges reach (length, range, items, enum, date format, pattern), at every
        place of the request (the debtor's and the creditor's account currency), once each: the first edge outside
        it the validator refuses and the first inside it the validator accepts, both sendable (no instant, no
        payments of the target). The list the conformance gate breaks every run (negative:boundaries); the edges
        are the same the edge-case report sends."""
        groups: dict[tuple, dict[bool, Edge]] = {}
        for edge in self.edges(kinds, every_place=True):
            if edge.limit is None or edge.only_validator or edge.headers:
                continue
            key = (edge.kind, edge.pointer, edge.limit.keyword, edge.limit.value)
            sides = groups.setdefault(key, {})
            if edge.limit.outside not in sides and bool(self.breaks(edge)) == edge.limit.outside:
                sides[edge.limit.outside] = edge
        return [Boundary(sides[True], sides[False], self.bases[sides[True].kind][0]) for sides in groups.values()
                if len(sides) == 2]

    def breaks(self, edge: Edge) -> set[str]:
        """The rules the validator finds broken (errors) in the edge's body, at its instant, with its context."""
        validator = self.validator
        if edge.at or edge.context:
            validator = copy.copy(validator)
            if edge.at:
                validator.now = _dt.datetime.fromisoformat(edge.at)
                validator.today, validator.today_given = today_in_oslo(validator.now), False
            if edge.context:
                validator.context = Context.from_mapping(edge.context)
        return {f.rule for f in validator.validate(edge.body, edge.kind).findings if f.severity == ERROR}

    def _verified(self, edge: Edge) -> Edge | None:
        """The edge as listed under the rule it breaks: kept when it breaks none or its own; one that breaks one other
        rule instead is that rule's (yesterday as an execution date is the execution-date rule's, not the date
        format's; a 10-digit X-PSU-IDENTITY the header format's); one breaking several is left out."""
        if edge.headers:
            if self.request_check is None:
                return edge
            broken = self.request_check(edge, self.bases[edge.kind][0])
        else:
            broken = self.breaks(edge)
        if broken <= {edge.rule}:
            return edge
        if len(broken) == 1 and edge.rule not in broken:
            rule = self.rules[next(iter(broken))]
            return dataclasses.replace(edge, rule=rule.id,
                                       assumptions=tuple(dict.fromkeys([*rule.assumptions, *edge.assumptions])))
        self.left_out.append((edge, tuple(sorted(broken))))
        return None

    def _value(self, base: Any, path: tuple) -> Any:
        """The value at ``path``; None where the payload leaves an optional leaf out."""
        for token in path:
            if isinstance(base, dict) and token not in base:
                return None
            base = base[token]
        return base

    def keyword_edges(self, operation: str, place: Place, value: Any) -> list[tuple]:
        """The edges the schema keywords of a place call for (a body field's or a query parameter's)."""
        k = place.keywords
        typ = k.get("type")
        if typ == "string" and "enum" in k:
            return list(enum_edges(self.spec, place))
        if typ == "string" and "pattern" not in k and "format" not in k and ("maxLength" in k or k.get("minLength")):
            return list(length_edges(place))
        if typ == "string" and k.get("format") == "date":
            return list(date_edges(place, self.today))
        if typ == "string" and k.get("format") == "date-time" and "x-batch-run-times" in self.spec.operation(
                operation).raw:
            return list(datetime_edges(self.today, self.batch_times()))
        if typ == "integer":
            return list(integer_edges(place))
        if typ == "array":
            return list(items_edges(place, value))
        return []

    def query_base(self, operation: str) -> dict[str, str]:
        """A valid query of ``operation``: its required parameters with their sample values."""
        return {p.name: sample_value(self.spec, p.schema) for p in self.spec.operation(operation).query_parameters
                if p.required}

    def query_boundaries(self, operation: str, breaks: Callable[[dict[str, str]], set[str]]) -> list[Boundary]:
        """The limits of ``operation``'s query parameters, from the edges a body field with the same keywords gets:
        each edge the operation's valid query (its required parameters' sample values) with one parameter set;
        ``breaks(query)``: the rules a request of the operation with that query breaks (the whole-request check)."""
        op = self.spec.operation(operation)
        base = self.query_base(operation)
        out = []
        for parameter in op.query_parameters:
            schema = inline_refs(self.spec, parameter.schema)
            section = parameter.raw.get("x-document-ref") or schema.get("x-document-ref") or op.document_ref or ""
            place = Place((), {k: schema[k] for k in _KEYWORDS if k in schema}, frozenset(), parameter.name, section)
            groups: dict[tuple, dict[bool, Edge]] = {}
            for label, value, _rule, *focus in self.keyword_edges(operation, place, None):
                limit = next((f for f in focus if isinstance(f, Limit)), None)
                sides = groups.setdefault((limit.keyword, limit.value), {}) if limit else {}
                if limit is None or limit.outside in sides:
                    continue
                query = {**base, parameter.name: str(value)}
                broken = breaks(query)
                if bool(broken) == limit.outside:
                    sides[limit.outside] = Edge(min(broken) if broken else "query-format", parameter.name, section,
                                                label, "", None, f"/query/{parameter.name}", input=str(value),
                                                limit=limit, query=tuple(query.items()))
            out += [Boundary(sides[True], sides[False], operation) for sides in groups.values() if len(sides) == 2]
        return out

    def _place_edges(self, kind: str, operation: str, base: Any, place: Place) -> Iterator[Edge]:
        value = self._value(base, place.path)
        generated = self.keyword_edges(operation, place, value)
        if place.rule_tags:  # a keyword the spec gives to a rule (x-rule) is that rule's edge
            generated = [(label, v, place.rule_tags[0], *rest) for label, v, _, *rest in generated]
        direction = self.spec.kind(kind).direction
        for rule in self.rules.values():
            fn = RULE_EDGES.get(rule.id)
            if fn and rule.applies_to(kind, direction) and set(rule.targets) & place.tags:
                generated += fn(self, place, value)
        seen_at_place: set = set()
        for label, new, rule_at, *focus in generated:
            limit = next((f for f in focus if isinstance(f, Limit)), None)
            focus = [f for f in focus if not isinstance(f, Limit)]
            if (label, rule_at) in seen_at_place:
                continue
            seen_at_place.add((label, rule_at))
            rule_id, _, at = rule_at.partition("@")  # "rule@instant": judged at that instant
            rule = self.rules.get(rule_id)
            section = place.section or (rule.ref if rule else "")
            context, only = None, AT_AN_INSTANT if at else ""
            if isinstance(new, tuple) and len(new) == 2 and isinstance(new[1], dict) and "payments" in new[1]:
                new, context = new
                only = "needs payments of these services on the target"
            body = self._fitted(_with(base, place.path, new) if place.path else new, place, new)
            if focus and isinstance(focus[0], tuple):  # the members the edge is about, as its rule names them
                pointer = place.pointer
                shown = {name: _at(body, f"{pointer}/{name}") for name in focus[0]}
            elif focus:  # the member the edge is about
                pointer = place.pointer + focus[0]
                shown = _at(body, pointer)
            else:
                pointer, shown = _changed(base, body, place.path)
            # the field's decisions with its rule's (the request's own, at its root, are about the whole kind)
            assumptions = tuple(dict.fromkeys([*(rule.assumptions if rule else ()),
                                               *(place.assumptions if place.path else ())]))
            yield Edge(rule_id, place.owner, section or (rule.ref if rule else ""), label, kind, body,
                       pointer, at=at or None, context=context, only_validator=only, assumptions=assumptions,
                       input=shown, limit=limit)

    def batch_times(self) -> tuple[str, ...]:
        """The batch runs' HH:MM in Europe/Oslo: the profile's, else the spec's (A25)."""
        profile = getattr(self.validator, "profile", None)
        return tuple(getattr(profile, "batch_run_times", None) or self.spec.batch_run_times[1])

    def _fitted(self, body: Any, place: Place, new: Any) -> Any:
        """The body with what goes with the new value, so the edge probes that value alone: a currency with an
        amount its minor units allow; a frequency that takes no monthsOfExecution without them (A31); an item of an
        array of unique items without its other copies."""
        parent = self._value(body, place.path[:-1]) if place.path else None
        if "CurrencyCode" in place.tags and isinstance(parent, dict) and isinstance(parent.get("amount"), str):
            digits = self.spec.minor_units.get(new) if isinstance(new, str) else None
            if digits is not None:
                parent["amount"] = "1" + ("." + "0" * digits if digits else "")
        if "PeriodicFrequency" in place.tags and isinstance(parent, dict):
            takes = self.spec.schema("PeriodicFrequency")["x-months-of-execution"]["required-with"]
            if new not in takes:
                parent.pop("monthsOfExecution", None)
        if place.unique_item and isinstance(parent, list):
            index = place.path[-1]
            parent[:] = [item for i, item in enumerate(parent) if i == index or item != new]
        return body

    def _header_edges(self, kind: str, operation: str, base: Any) -> Iterator[Edge]:
        op = self.spec.operation(operation)
        for param in op.header_parameters:
            if param.key != PSU_IDENTITY_HEADER:
                continue
            rule = self.rules["psu-identity-invalid"]
            section = param.raw.get("x-document-ref", rule.ref)
            assumptions = tuple(dict.fromkeys([*rule.assumptions, *as_tuple(param.raw.get("x-assumption"))]))
            for label, number in nin_edges(self.today):
                yield Edge(rule.id, param.name, section, f"{label}: {number}", kind, base,
                           headers=((param.name, number),), assumptions=assumptions, input={param.name: number})


def _changed(base: Any, body: Any, path: tuple) -> tuple[str, Any]:
    """The JSON pointer and value to show for an edge at ``path``: the value there; at the request's root (a rule
    reading the whole request), the one member changed, or the members changed."""
    if path:
        node = body
        for token in path:
            node = node[token]
        return _pointer(path), node
    if not (isinstance(base, dict) and isinstance(body, dict)):
        return "", body
    differing = [k for k in dict.fromkeys([*base, *body]) if base.get(k, _REMOVE) != body.get(k, _REMOVE)]
    if len(differing) == 1:
        return "/" + differing[0], body.get(differing[0], "(absent)")
    return "", {k: body.get(k, "(absent)") for k in differing}


def _at(body: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``body``, or a note that it is absent."""
    node = body
    for token in pointer.split("/")[1:]:
        try:
            node = node[int(token)] if isinstance(node, list) else node[token]
        except (KeyError, IndexError, ValueError, TypeError):
            return "(absent)"
    return node


def _pointer(path: tuple) -> str:
    return "/" + "/".join(str(p) for p in path) if path else ""


def _unique(edges: list[Edge]) -> list[Edge]:
    seen, out = set(), []
    for e in edges:
        key = (e.rule, e.field, e.edge, e.kind, e.headers)  # a field met twice (debtor, creditor): its first place
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
