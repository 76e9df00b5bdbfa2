"""The edges of the contract, derived from the spec and the validator's catalogue (no hand list of fields).

Each request kind starts from its richest spec example (an execution date the validator finds past is moved to
today). The kind's schema is walked along that payload; every place gets the edges its schema keywords call for
(``maxLength``/``minLength``, ``enum``, ``minimum``/``maximum`` and int32, ``format: date``, ``minItems``/
``maxItems``), and the edges of every catalogue rule that targets it (a rule's ``targets`` name the component or the
spec's ``x-rule`` tag it reads: amounts, IBAN, BBAN, KID, execution date, remittance, basket). Request headers get
the edges of the header rules whose parameter the operation declares (X-PSU-IDENTITY). One edge = one field set to
one boundary value in an otherwise valid request, so its verdict is about that boundary alone.
"""
from __future__ import annotations

import copy
import datetime as _dt
import itertools
import string
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from validator.checks.accounts import make_iban, norwegian_bban_check_digit
from validator.checks.identity import norwegian_identity_control_digits
from validator.checks.kid import MAX_LENGTH as KID_MAX, MIN_LENGTH as KID_MIN
from validator.checks.kid import kid_check_digit_mod10, kid_check_digit_mod11
from validator.context import OSLO
from validator.request.headers import PSU_IDENTITY_HEADER
from validator.rules import Rule, catalogue
from validator.rules.examples import set_pointer
from validator.spec import Spec, as_tuple

INT32 = (-(2**31), 2**31 - 1)
ENUM_SHOWN = 8  # an enum this small is listed whole; a larger one by its ends and its non-current members


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

    @property
    def group(self) -> str:
        return f"{self.rule} · {self.field}"


@dataclass
class Place:
    """One value of a payload with every schema keyword that applies to it (through $ref and allOf)."""

    path: tuple
    keywords: dict
    tags: frozenset          # component names and x-rule tags
    owner: str               # Component.property for a reader
    section: str
    rule_tags: tuple = ()  # the spec's x-rule tags here, in the spec's order

    @property
    def pointer(self) -> str:
        return "/" + "/".join(str(p) for p in self.path) if self.path else ""


_KEYWORDS = ("type", "enum", "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems",
             "maxItems", "x-not-current-iso", "x-expected-currency")


class Walker:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def places(self, kind: str, payload: Any) -> list[Place]:
        root = self.spec.kind(kind).schema_name
        return list(self._walk({"$ref": "#/components/schemas/" + root}, payload, (), root, ""))

    def _walk(self, schema: dict, value: Any, path: tuple, owner: str, section: str) -> Iterator[Place]:
        parts, tags, stack = [], set(), [schema]
        rule_tags: dict = {}
        while stack:
            node = stack.pop()
            rule_tags.update(dict.fromkeys(as_tuple(node.get("x-rule"))))
            section = node.get("x-document-ref", section)
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[1]
                tags.add(name)
                stack.append(self.spec.schema(name))
            stack.extend(node.get("allOf", ()))
            parts.append(node)
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
        yield Place(path, keywords, frozenset(tags | set(rule_tags)), owner, section, tuple(rule_tags))
        if isinstance(value, dict):
            here = component or owner.split(".")[0]
            for key, sub in value.items():
                if key in props:
                    yield from self._walk({"allOf": props[key]}, sub, path + (key,), f"{here}.{key}", section)
        elif isinstance(value, list) and value and items:
            yield from self._walk({"allOf": items}, value[0], path + (0,), owner + "[]", section)


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


def _repaired(payload: Any, kind: str, validator, today: _dt.date) -> Any:
    """The example with execution dates the validator finds past moved to today; None when still invalid."""
    for _ in range(3):
        errors = [f for f in validator.validate(payload, kind).findings if f.severity == "error"]
        if not errors:
            return payload
        if any(f.rule != "execution-date-past" for f in errors):
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
        yield f"min−1: {low - 1} characters", "x" * (low - 1), "schema-length"
        yield f"min: {low} characters", "x" * low, "schema-length"
    if high is None:
        return
    yield f"max: {high} characters", "x" * high, "schema-length"
    yield f"max+1: {high + 1} characters", "x" * (high + 1), "schema-length"
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
        yield f"member {member!r}", member, "schema-enum"
    for label, codes in not_current.items():
        for code in codes:
            yield f"member {code!r} ({label})", code, "schema-enum"
    sample = members[0] if len(members) > ENUM_SHOWN else members[-1]
    for label, value in (("lower case", sample.lower()), ("upper case", sample.upper()),
                         ("leading space", " " + sample), ("trailing space", sample + " "),
                         ("trailing newline", sample + "\n"), ("empty", "")):
        if value not in members:
            yield f"near-miss, {label}: {value!r}", value, "schema-enum"
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
        yield f"minimum−1: {low - 1}", low - 1, "schema-range"
        yield f"minimum: {low}", low, "schema-range"
    if high is not None:
        yield f"maximum: {high}", high, "schema-range"
        yield f"maximum+1: {high + 1}", high + 1, "schema-range"


def items_edges(place: Place, value: list) -> Iterator[tuple[str, Any, str]]:
    k = place.keywords
    low, high = k.get("minItems"), k.get("maxItems")
    sizes = []
    if low is not None:
        sizes += [("minItems−1", low - 1), ("minItems", low)] if low > 0 else [("minItems", low)]
    if high is not None:
        sizes += [("maxItems", high), ("maxItems+1", high + 1)]
    for label, n in sizes:
        if n >= 0:
            yield f"{label}: {n} items", _resized(value, n), "schema-items"


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
    yield f"29 February of a leap year ({leap})", f"{leap}-02-29", "schema-format"
    yield f"29 February of a leap year in the past ({past_leap})", f"{past_leap}-02-29", "schema-format"
    common = next(y for y in itertools.count(today.year) if not _is_leap(y))
    yield f"29 February of a common year ({common})", f"{common}-02-29", "schema-format"


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


# ---------------------------------------------------------------------------------------------- rule edges
RuleEdges = Callable[["Deriver", Place, Any], Iterator[tuple[str, Any, str]]]
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
        yield f"{cls}: {integer_digits} integer digits", amount("9" * integer_digits + frac(digits)), "amount-precision"
        yield (f"{cls}: {integer_digits + 1} integer digits", amount("1" + "0" * integer_digits + frac(digits)),
               "amount-precision")
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
    yield f"valid ({value})", value, "iban-invalid"
    for digits, label in variants.items():
        if digits != value[2:4]:
            yield f"{label}: {value[:2]}{digits}{value[4:]}", value[:2] + digits + value[4:], "iban-invalid"
    spaced = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
    yield f"print format with spaces: {spaced!r}", spaced, "iban-invalid"
    yield "lower case", value.lower(), "iban-invalid"
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
    for label, text, rule in (("valid", bban, "bban-check-digit"),
                              ("MOD11 check digit off by one", bban[:10] + wrong, "bban-check-digit"),
                              ("no valid MOD11 check digit exists (remainder 10)", no_check + "0", "bban-check-digit"),
                              ("10 digits", bban[:10], "bban-format"), ("12 digits", bban + "0", "bban-format"),
                              ("with dots", f"{bban[:4]}.{bban[4:6]}.{bban[6:]}", "bban-format")):
        yield f"{label}: {text}", {**value, "bban": text}, rule


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
    for label, n in ((f"min−1: {KID_MIN - 1} character", KID_MIN - 1), (f"min: {KID_MIN} characters", KID_MIN),
                     (f"max: {KID_MAX} characters", KID_MAX), (f"max+1: {KID_MAX + 1} characters", KID_MAX + 1)):
        body = ("9" * (n - 1))
        text = body + kid_check_digit_mod10(body) if n > 1 else "0"
        yield f"{label}: {text}", kid(text), "kid-invalid"


@rule_edges("execution-date-past")
def _execution_date_edges(d: "Deriver", place: Place, value: Any) -> Iterator[tuple[str, Any, str]]:
    """The midnight edge: Europe/Oslo's day changes one or two hours before UTC's."""
    midnight = _dt.datetime.combine(d.today, _dt.time(0, 0), OSLO).astimezone(_dt.timezone.utc)
    yesterday = (d.today - _dt.timedelta(days=1)).isoformat()
    before = midnight - _dt.timedelta(seconds=1)
    yield (f"yesterday's date 1 s before midnight in Oslo ({before:%Y-%m-%dT%H:%M:%SZ})", yesterday,
           f"@{before.isoformat()}")
    yield f"yesterday's date at midnight in Oslo ({midnight:%Y-%m-%dT%H:%M:%SZ}, still {yesterday} in UTC)", \
        yesterday, f"@{midnight.isoformat()}"


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
    """Every edge of the request kinds of a spec, at a day in Europe/Oslo."""

    def __init__(self, spec: Spec, validator, today: _dt.date) -> None:
        self.spec = spec
        self.today = today
        self.validator = validator
        self.rules: dict[str, Rule] = catalogue()
        self.bases = base_payloads(spec, validator, today)
        self.walker = Walker(spec)

    def properties(self, component: str) -> dict:
        out: dict = {}
        schema = self.spec.schema(component)
        for part in [schema, *[self.spec.resolve(p["$ref"]) if "$ref" in p else p for p in schema.get("allOf", ())]]:
            out.update(part.get("properties", {}))
        return out

    def edges(self, kinds: tuple[str, ...] | None = None) -> list[Edge]:
        out: list[Edge] = []
        for kind, (operation, base) in self.bases.items():
            if kinds and kind not in kinds:
                continue
            for place in self.walker.places(kind, base):
                out.extend(self._place_edges(kind, base, place))
            out.extend(self._header_edges(kind, operation, base))
        return _unique(out)

    def _value(self, base: Any, path: tuple) -> Any:
        for token in path:
            base = base[token]
        return base

    def _place_edges(self, kind: str, base: Any, place: Place) -> Iterator[Edge]:
        value = self._value(base, place.path)
        k = place.keywords
        generated: list[tuple[str, Any, str]] = []
        typ = k.get("type")
        if typ == "string" and "enum" in k:
            generated += enum_edges(self.spec, place)
        elif typ == "string" and "pattern" not in k and "format" not in k and ("maxLength" in k or k.get("minLength")):
            generated += length_edges(place)
        elif typ == "string" and k.get("format") == "date":
            generated += date_edges(place, self.today)
        elif typ == "integer":
            generated += integer_edges(place)
        elif typ == "array":
            generated += items_edges(place, value)
        if place.rule_tags:  # a keyword the spec gives to a rule (x-rule) is that rule's edge
            generated = [(label, v, place.rule_tags[0]) for label, v, _ in generated]
        direction = self.spec.kind(kind).direction
        for rule in self.rules.values():
            fn = RULE_EDGES.get(rule.id)
            if fn and rule.applies_to(kind, direction) and set(rule.targets) & place.tags:
                generated += [(label, v, rid) for label, v, rid in fn(self, place, value)]
        seen_at_place: set = set()
        for label, new, rule_id in generated:
            if (label, rule_id) in seen_at_place:
                continue
            seen_at_place.add((label, rule_id))
            rule = self.rules.get(rule_id)
            section = place.section or (rule.ref if rule else "")
            at, context, only = None, None, ""
            if isinstance(rule_id, str) and rule_id.startswith("@"):
                at, rule_id, only = rule_id[1:], "execution-date-past", "the validator judges it at a given instant"
                rule = self.rules[rule_id]
            if isinstance(new, tuple) and len(new) == 2 and isinstance(new[1], dict) and "payments" in new[1]:
                new, context = new
                only = "needs payments of these services on the target"
            body = _with(base, place.path, new) if place.path else new
            yield Edge(rule_id, place.owner, section or (rule.ref if rule else ""), label, kind, body,
                       place.pointer, at=at, context=context, only_validator=only)

    def _header_edges(self, kind: str, operation: str, base: Any) -> Iterator[Edge]:
        op = self.spec.operation(operation)
        for param in op.header_parameters:
            if param.key != PSU_IDENTITY_HEADER:
                continue
            rule = self.rules["psu-identity-invalid"]
            section = param.raw.get("x-document-ref", rule.ref)
            for label, number in nin_edges(self.today):
                yield Edge(rule.id, param.name, section, f"{label}: {number}", kind, base,
                           headers=((param.name, number),))


def _unique(edges: list[Edge]) -> list[Edge]:
    seen, out = set(), []
    for e in edges:
        key = (e.rule, e.field, e.edge, e.kind, e.headers)  # a field met twice (debtor, creditor): its first place
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
