"""Single-rule mutations: a valid payload generated from the spec (:mod:`conformance.generate`) changed so that it
breaks exactly one rule of the validator's catalogue.

:data:`MUTATIONS` maps a rule id to the kinds it is tried on and the function that breaks it; :func:`mutate` draws a
valid payload and its mutant. The differential tests (tests/test_differential.py) prove each mutant breaks only its
rule; the conformance gate's semantic suite (:mod:`conformance.gate.suites.semantic`) sends the mutants to an
implementation and compares its answers with the validator's.
"""
from __future__ import annotations

import copy
import datetime as _dt
import string
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from hypothesis import reject
from hypothesis import strategies as st

from conformance.generate import covered_kinds, valid_payloads, valid_values
from validator.checks.accounts import make_iban, norwegian_bban_check_digit
from validator.checks.kid import kid_check_digit_mod10, kid_check_digit_mod11
from validator.context import DEFAULT_PROFILE
from validator.rules.amounts import split_amount
from validator.spec import as_tuple, load_spec

SPEC = load_spec()
KINDS = covered_kinds(SPEC)
REQUEST_KINDS = tuple(k for k in KINDS if SPEC.kind(k).is_request)

TEXT = "remittanceInformationUnstructured"
SINGLE = "remittanceInformationStructured"
ARRAY = "remittanceInformationStructuredArray"


def payloads(kind: str) -> st.SearchStrategy:
    return valid_payloads(kind, today=_KIND.today, spec=SPEC)


# ====================================================================== where things are in a payload
def _x_rules() -> frozenset[str]:
    found: set[str] = set()
    stack: list = [SPEC.schemas]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.update(as_tuple(node.get("x-rule")))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


X_RULES = _x_rules()
# (enclosing component, property) pairs whose value a semantic rule reads besides the schema:
# a length change there is also a bban-format or kid-invalid finding.
SEMANTIC_READS = {("AccountReferenceBban", "bban"), ("RemittanceStructured", "reference")}


@dataclass(frozen=True)
class Site:
    """One value of a payload with every schema that applies to it (through $ref and allOf)."""

    path: tuple
    value: Any
    keywords: dict
    tags: frozenset  # component names and x-rule tags at this place
    parent_tags: frozenset
    required: frozenset
    declared: frozenset
    open_map: bool

    @property
    def rule_owned(self) -> bool:
        return bool(self.tags & X_RULES)

    @property
    def name(self) -> Any:
        return self.path[-1] if self.path else None


_SCALARS = ("type", "enum", "const", "format", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems")


def iter_sites(schema: dict, value: Any, path: tuple = (), parent_tags: frozenset = frozenset()) -> Iterator[Site]:
    parts, tags, stack = [], set(), [schema]
    while stack:
        node = stack.pop()
        tags.update(as_tuple(node.get("x-rule")))
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            tags.add(name)
            stack.append(SPEC.schema(name))
        stack.extend(node.get("allOf", ()))
        parts.append(node)
    if any("anyOf" in p or "oneOf" in p for p in parts):
        return  # which branch applies is not known here
    keywords: dict = {}
    props: dict[str, list] = defaultdict(list)
    required: set = set()
    items, addl = [], []
    for part in parts:
        keywords.update({k: part[k] for k in _SCALARS if k in part})
        for name, sub in part.get("properties", {}).items():
            props[name].append(sub)
        required |= set(part.get("required", ()))
        if isinstance(part.get("items"), dict):
            items.append(part["items"])
        if isinstance(part.get("additionalProperties"), dict):
            addl.append(part["additionalProperties"])
    tags_f = frozenset(tags)
    yield Site(path, value, keywords, tags_f, parent_tags, frozenset(required), frozenset(props), bool(addl))
    if isinstance(value, dict):
        for key, sub in value.items():
            subs = props.get(key) or addl
            if subs:
                yield from iter_sites({"allOf": subs}, sub, path + (key,), tags_f)
    elif isinstance(value, list) and items:
        for i, sub in enumerate(value):
            yield from iter_sites({"allOf": items}, sub, path + (i,), tags_f)


def sites(kind: str, payload: Any, keep: Callable[[Site], bool]) -> list[Site]:
    root = {"$ref": "#/components/schemas/" + SPEC.kind(kind).schema_name}
    return [s for s in iter_sites(root, payload) if keep(s)]


def get_at(payload: Any, path: tuple) -> Any:
    for token in path:
        payload = payload[token]
    return payload


def set_at(payload: Any, path: tuple, value: Any) -> None:
    get_at(payload, path[:-1])[path[-1]] = value


def pick(data, candidates: list, label: str = "site"):
    if not candidates:
        reject()  # this payload has nothing to mutate; Hypothesis draws another
    return data.draw(st.sampled_from(candidates), label=label)


# ====================================================================== (b) mutations
@dataclass(frozen=True)
class Mutant:
    payload: Any
    context: dict | None = None


MutateFn = Callable[[Any, Any], Mutant]


def amount_sites(kind, p, tag="Amount"):
    return sites(kind, p, lambda s: tag in s.tags and isinstance(s.value, dict) and split_amount(s.value.get("amount")))


def _units(amount: dict) -> int:
    return SPEC.minor_units[amount["currency"]]


def m_amount_minor_units(p, data):
    amount = pick(data, _amounts(p)).value
    whole, fraction = split_amount(amount["amount"])
    units = _units(amount)
    amount["amount"] = f"{whole}.{(fraction + '0' * units)[:units]}1"
    return Mutant(p)


def _amounts(p, tag="Amount"):
    return amount_sites(_KIND.get(), p, tag)


def m_amount_grammar(p, data):
    amount = pick(data, _amounts(p)).value
    whole, fraction = split_amount(amount["amount"])
    amount["amount"] = f"{whole},{fraction or '50'}"
    return Mutant(p)


def m_amount_precision(p, data):
    amount = pick(data, _amounts(p)).value
    _, fraction = split_amount(amount["amount"])
    amount["amount"] = "1" + "0" * 13 + (f".{fraction}" if fraction else "")
    return Mutant(p)


def m_amount_positive(p, data):
    amount = pick(data, _amounts(p, "amount-positive")).value
    units = _units(amount)
    amount["amount"] = "0" + ("." + "0" * units if units and data.draw(st.booleans()) else "")
    return Mutant(p)


def m_response_amount_digits(p, data):
    amount = pick(data, _amounts(p)).value
    whole, fraction = split_amount(amount["amount"])
    units = _units(amount)
    amount["amount"] = whole + (f".{fraction[:-1]}" if units > 1 else "" if units == 1 else ".5")
    return Mutant(p)


def m_error_status_code(p, data):
    pairs = SPEC.schema("ErrorBody")["x-status-codes"]
    paired = {q["status"] for q in pairs if p["code"] in q["codes"]}
    p["status"] = data.draw(st.sampled_from(sorted({q["status"] for q in pairs} - paired)), label="status")
    return Mutant(p)


def _entries(p) -> list[dict]:
    entries = p.get("payments") if isinstance(p, dict) else None
    return entries if isinstance(entries, list) else []


def _remitters(p) -> list[dict]:
    """The objects carrying remittance: a bulk's entries, or the periodic payment itself."""
    return _entries(p) if isinstance(p, dict) and "payments" in p else [p]


def _draw_remittance(data) -> dict:
    return data.draw(valid_values("RemittanceStructured", kind="bulk-payment", today=_KIND.today, spec=SPEC))


def m_remittance_exclusive(p, data):
    entry = pick(data, _remitters(p), "entry")
    entry.setdefault(ARRAY, [_draw_remittance(data)])
    entry.setdefault(TEXT, "Faktura 88213")
    return Mutant(p)


def m_remittance_structured_deprecated(p, data):
    entry = pick(data, _remitters(p), "entry")
    entry.pop(TEXT, None)
    structured = entry.pop(ARRAY, None) or [_draw_remittance(data)]
    entry[SINGLE] = structured[0]
    return Mutant(p)


def m_kid_invalid(p, data):
    entry = pick(data, _remitters(p), "entry")
    digits = data.draw(st.text(string.digits, min_size=1, max_size=24), label="kid payload")
    wrong = sorted(set(string.digits) - {kid_check_digit_mod10(digits), kid_check_digit_mod11(digits)})
    reference = {"reference": digits + data.draw(st.sampled_from(wrong), label="check digit")}
    kid_type = data.draw(st.sampled_from(DEFAULT_PROFILE.kid_reference_types), label="referenceType")
    if kid_type is not None:
        reference["referenceType"] = kid_type
    entry.pop(TEXT, None)
    entry[ARRAY] = [reference]
    return Mutant(p)


def _ibans(p):
    return sites(_KIND.get(), p, lambda s: "Iban" in s.tags and isinstance(s.value, str))


def m_iban_invalid(p, data):
    site = pick(data, _ibans(p))
    check = int(site.value[2:4])
    set_at(p, site.path, f"{site.value[:2]}{check + 1 if check < 98 else check - 1:02d}{site.value[4:]}")
    return Mutant(p)


def m_iban_national_check(p, data):
    site = pick(data, _ibans(p))
    first10 = data.draw(st.text(string.digits, min_size=10, max_size=10), label="account")
    wrong = sorted(set(string.digits) - {norwegian_bban_check_digit(first10)})
    iban = make_iban("NO", first10 + data.draw(st.sampled_from(wrong), label="check digit"))
    if iban in {s.value for s in _ibans(p)}:
        reject()
    set_at(p, site.path, iban)
    return Mutant(p)


def _bbans(p):
    return sites(_KIND.get(), p, lambda s: "AccountReferenceBban" in s.tags and isinstance(s.value, dict))


def m_bban_format(p, data):
    account = pick(data, _bbans(p)).value
    bban = account["bban"]
    account["bban"] = data.draw(st.sampled_from([bban[:10], bban + "0", f"{bban[:4]}.{bban[4:6]}.{bban[6:]}"]))
    return Mutant(p)


def m_bban_check_digit(p, data):
    account = pick(data, _bbans(p)).value
    bban = account["bban"]
    wrong = sorted(set(string.digits) - {bban[10]})
    account["bban"] = bban[:10] + data.draw(st.sampled_from(wrong))
    return Mutant(p)


def m_same_debtor_creditor(p, data):
    debtor = p["debtorAccount"]
    key = "iban" if "iban" in debtor else "bban"
    target = pick(data, _entries(p), "entry") if "payments" in p else p
    target["creditorAccount"][key] = debtor[key]
    return Mutant(p)


def m_execution_date_past(p, data):
    days = data.draw(st.integers(1, 400), label="days before today")
    p["requestedExecutionDate"] = (_KIND.today - _dt.timedelta(days=days)).isoformat()
    return Mutant(p)


def m_card_date_future(p, data):
    entry = pick(data, p, "entry")
    name = data.draw(st.sampled_from(["bookingDate", "transactionDate"]))
    entry[name] = (_KIND.today + _dt.timedelta(days=data.draw(st.integers(1, 400)))).isoformat()
    return Mutant(p)


def m_booking_after_value(p, data):
    entry = pick(data, p, "entry")
    value = _dt.date.fromisoformat(entry["valueDate"])
    entry["bookingDate"] = (value + _dt.timedelta(days=data.draw(st.integers(1, 400)))).isoformat()
    return Mutant(p)


def _takes_months() -> list[str]:
    return list(SPEC.schema("PeriodicFrequency")["x-months-of-execution"]["required-with"])


def _months() -> list[str]:
    return list(SPEC.code_set("MonthOfExecution"))


def m_periodic_start_date_past(p, data):
    days = data.draw(st.integers(1, 400), label="days before today")
    p["startDate"] = (_KIND.today - _dt.timedelta(days=days)).isoformat()
    return Mutant(p)


def m_periodic_end_before_start(p, data):
    start = _dt.date.fromisoformat(p["startDate"])
    p["endDate"] = (start - _dt.timedelta(days=data.draw(st.integers(1, 400), label="days before start"))).isoformat()
    return Mutant(p)


def m_months_of_execution_frequency(p, data):
    if p["frequency"] in _takes_months():
        if data.draw(st.booleans(), label="empty instead of absent"):
            p["monthsOfExecution"] = []
        else:
            del p["monthsOfExecution"]
    else:
        p["monthsOfExecution"] = data.draw(st.lists(st.sampled_from(_months()), min_size=1, max_size=3, unique=True))
    return Mutant(p)


def m_months_of_execution_duplicate(p, data):
    p["frequency"] = data.draw(st.sampled_from(_takes_months()), label="frequency")
    months = p.get("monthsOfExecution") or [data.draw(st.sampled_from(_months()), label="month")]
    months.insert(data.draw(st.integers(0, len(months)), label="at"), data.draw(st.sampled_from(months), label="repeated"))
    p["monthsOfExecution"] = months
    return Mutant(p)


def m_funds_unavailable_rejected(p, data):
    lack = SPEC.schema("PaymentStatusResponse")["properties"]["fundsAvailable"]["x-lack-of-funds"]
    p["fundsAvailable"] = False
    others = [s for s in SPEC.code_set("TransactionStatusBulk") if s != lack["transactionStatus"]]
    p["transactionStatus"] = data.draw(st.sampled_from(others), label="status")
    return Mutant(p)


def _fresh_ids(taken, count: int) -> list[str]:
    out, i = [], 0
    while len(out) < count:
        candidate = f"enc!!mutant-{i}"
        if candidate not in taken:
            out.append(candidate)
        i += 1
    return out


def m_basket_size(p, data):
    ids = p["paymentIds"]
    limit = SPEC.schema("SigningBasketRequest")["properties"]["paymentIds"]["maxItems"]
    ids.extend(_fresh_ids(set(ids), limit + 1 - len(ids)))
    return Mutant(p)


def m_basket_duplicate_ids(p, data):
    ids = p["paymentIds"]
    if len(ids) == 1:
        ids.append(ids[0])
    else:
        i, j = data.draw(st.permutations(range(len(ids))))[:2]
        ids[j] = ids[i]
    return Mutant(p)


def _sepa_facts(status: str = "RCVD") -> dict:
    return {"service": "payments", "product": "sepa-credit-transfers", "transactionStatus": status}


def m_basket_reference_mix(p, data):
    ids = p["paymentIds"]
    payments = {pid: _sepa_facts() for pid in ids}
    culprit = pick(data, ids, "payment")
    payments[culprit] = {"service": data.draw(st.sampled_from(["bulk-payments", "periodic-payments"]))}
    return Mutant(p, {"payments": payments})


def m_basket_payment_unknown(p, data):
    ids = p["paymentIds"]
    unknown = pick(data, ids, "payment")
    payments = {pid: _sepa_facts() for pid in ids if pid != unknown}
    payments.update({pid: _sepa_facts() for pid in _fresh_ids(set(ids), 1)})
    return Mutant(p, {"payments": payments})


def m_basket_status_worst_case(p, data):
    ranking = SPEC.schema("TransactionStatusBasket")["x-worst-case-ranking"]
    rows = [r for r in ranking if r["basket"] != p["transactionStatus"]]
    row = data.draw(st.sampled_from(rows), label="worst case")
    status = data.draw(st.sampled_from(row["payments"]), label="payment status")
    return Mutant(p, {"payments": {"enc!!payment-1": _sepa_facts(status)}})


def m_unknown_property(p, data):
    def misspellings(site: Site) -> list[tuple[Site, str, str]]:
        out = []
        for name in sorted(site.declared):
            for i in range(len(name)):
                typo = name[:i] + name[i + 1:]  # one letter dropped, as in the vendor's 'referencType'
                if typo and typo not in site.declared and typo not in site.value:
                    out.append((site, typo, name))
                    break
        return out

    objects = sites(_KIND.get(), p, lambda s: isinstance(s.value, dict) and s.declared and not s.open_map)
    site, typo, name = pick(data, [c for s in objects for c in misspellings(s)], "misspelled key")
    site.value[typo] = copy.deepcopy(site.value.get(name, "x"))
    return Mutant(p)


def m_currency_product_mismatch(p, data):
    amount = pick(data, _amounts(p, "amount-positive")).value
    currency = data.draw(st.sampled_from([c for c in SPEC.code_set("CurrencyCode") if c != amount["currency"]]))
    whole, fraction = split_amount(amount["amount"])
    fraction = fraction[: SPEC.minor_units[currency]]
    if not (whole + fraction).strip("0"):
        whole, fraction = "1", ""
    amount.update(currency=currency, amount=whole + (f".{fraction}" if fraction else ""))
    return Mutant(p)


# ---- schema keyword mutations: generic over the sites of a payload
def _no_rule(site: Site) -> bool:
    return bool(site.path) and not site.rule_owned


def m_schema_required(p, data):
    found = sites(_KIND.get(), p, lambda s: isinstance(s.value, dict) and s.required & set(s.value))
    site = pick(data, found)
    del site.value[data.draw(st.sampled_from(sorted(site.required & set(site.value))), label="property")]
    return Mutant(p)


def m_schema_type(p, data):
    found = sites(_KIND.get(), p, lambda s: _no_rule(s) and "type" in s.keywords and "enum" not in s.keywords)
    site = pick(data, found)
    set_at(p, site.path, 4711 if site.keywords["type"] == "string" else "4711")
    return Mutant(p)


def _length_site(s: Site) -> bool:
    return (
        _no_rule(s)
        and isinstance(s.value, str)
        and "enum" not in s.keywords
        and ("maxLength" in s.keywords or s.keywords.get("minLength", 0) > 0)
        and not any((tag, s.name) in SEMANTIC_READS for tag in s.parent_tags)
    )


def m_schema_length(p, data):
    site = pick(data, sites(_KIND.get(), p, _length_site))
    options = []
    if "maxLength" in site.keywords:
        options.append("x" * (site.keywords["maxLength"] + 1))
    if site.keywords.get("minLength", 0) > 0:
        options.append("x" * (site.keywords["minLength"] - 1))
    set_at(p, site.path, data.draw(st.sampled_from(options)))
    return Mutant(p)


def _enum_site(s: Site) -> bool:
    # the instructed amount's currency is also read by currency-product-mismatch
    return _no_rule(s) and "enum" in s.keywords and isinstance(s.value, str) and not (
        "amount-positive" in s.parent_tags and s.name == "currency"
    )


def m_schema_enum(p, data):
    site = pick(data, sites(_KIND.get(), p, _enum_site))
    n = len(site.value) or 1
    value = next(c * n for c in "ZQXJ" if c * n not in site.keywords["enum"])
    set_at(p, site.path, value)
    return Mutant(p)


BAD_FORMATS = {"date": "2026-02-30", "date-time": "2026-02-30T10:00:00Z", "uuid": "not-a-uuid", "uri": "no scheme", "ipv4": "256.1.1.1", "ipv6": "::g"}


def m_schema_format(p, data):
    found = sites(_KIND.get(), p, lambda s: _no_rule(s) and isinstance(s.value, str) and s.keywords.get("format") in BAD_FORMATS)
    site = pick(data, found)
    set_at(p, site.path, BAD_FORMATS[site.keywords["format"]])
    return Mutant(p)


def m_schema_range(p, data):
    found = sites(_KIND.get(), p, lambda s: _no_rule(s) and isinstance(s.value, int) and ("maximum" in s.keywords or "minimum" in s.keywords))
    site = pick(data, found)
    options = [site.keywords[k] + d for k, d in (("maximum", 1), ("minimum", -1)) if k in site.keywords]
    set_at(p, site.path, data.draw(st.sampled_from(options)))
    return Mutant(p)


def m_schema_items(p, data):
    found = sites(_KIND.get(), p, lambda s: _no_rule(s) and isinstance(s.value, list) and s.keywords.get("minItems", 0) > 0)
    site = pick(data, found)
    del site.value[site.keywords["minItems"] - 1:]
    return Mutant(p)


class _CurrentKind:
    """The kind and day the running mutation works with (mutate functions take only the payload and data)."""

    value: str = ""
    today: _dt.date = _dt.date.fromisoformat(SPEC.example_today)

    def get(self) -> str:
        return self.value


_KIND = _CurrentKind()

SEPA, BULK, PERIODIC = "sepa-credit-transfer", "bulk-payment", "periodic-payment"
PAYMENTS = (SEPA, BULK)
SANDBOX = ("sandbox-customer", "sandbox-account", "sandbox-card-account", "card-transactions", "sandbox-account-transactions")
SCHEMA_KINDS = tuple(k for k in KINDS if k != "payment-detail")  # anyOf root: no branch-free sites

MUTATIONS: dict[str, tuple[tuple[str, ...], MutateFn]] = {
    # amounts
    "amount-grammar": (PAYMENTS + (PERIODIC,), m_amount_grammar),
    "amount-precision": (PAYMENTS + (PERIODIC,), m_amount_precision),
    "amount-minor-units": (PAYMENTS + (PERIODIC,), m_amount_minor_units),
    "amount-positive": (PAYMENTS + (PERIODIC,), m_amount_positive),
    "response-amount-digits": (("payment-response", "bulk-payment-response"), m_response_amount_digits),
    # remittance
    "remittance-exclusive": ((BULK, PERIODIC), m_remittance_exclusive),
    "deprecated-property": ((BULK, PERIODIC), m_remittance_structured_deprecated),
    "kid-invalid": ((BULK, PERIODIC), m_kid_invalid),
    # accounts
    "iban-invalid": ((SEPA, "sandbox-account"), m_iban_invalid),
    "iban-national-check": ((SEPA, "sandbox-account"), m_iban_national_check),
    "bban-format": ((BULK, PERIODIC), m_bban_format),
    "bban-check-digit": ((BULK, PERIODIC), m_bban_check_digit),
    "same-debtor-creditor": (PAYMENTS + (PERIODIC,), m_same_debtor_creditor),
    # dates
    "execution-date-past": (PAYMENTS, m_execution_date_past),
    "card-date-future": (("card-transactions",), m_card_date_future),
    "booking-after-value": (("sandbox-account-transactions",), m_booking_after_value),
    # periodic payments (A31)
    "periodic-start-date-past": ((PERIODIC,), m_periodic_start_date_past),
    "periodic-end-before-start": ((PERIODIC,), m_periodic_end_before_start),
    "months-of-execution-frequency": ((PERIODIC,), m_months_of_execution_frequency),
    "months-of-execution-duplicate": ((PERIODIC,), m_months_of_execution_duplicate),
    # baskets
    "basket-size": (("signing-basket",), m_basket_size),
    "basket-duplicate-ids": (("signing-basket",), m_basket_duplicate_ids),
    "basket-reference-mix": (("signing-basket",), m_basket_reference_mix),
    "basket-payment-unknown": (("signing-basket",), m_basket_payment_unknown),
    "basket-status-worst-case": (("signing-basket-response",), m_basket_status_worst_case),
    "funds-unavailable-rejected": (("payment-status",), m_funds_unavailable_rejected),
    # error bodies
    "error-status-code": (("error",), m_error_status_code),
    # properties
    "unknown-property": (REQUEST_KINDS, m_unknown_property),
    "currency-product-mismatch": (PAYMENTS + (PERIODIC,), m_currency_product_mismatch),
    # JSON Schema keywords
    "schema-required": (SCHEMA_KINDS, m_schema_required),
    "schema-type": (tuple(k for k in SCHEMA_KINDS if k not in ("signing-basket-status", "sca-status")), m_schema_type),  # their one property is an enum
    "schema-length": (PAYMENTS + ("signing-basket", "sandbox-customer", "sandbox-card-account", "signing-basket-response"), m_schema_length),
    "schema-enum": (PAYMENTS + SANDBOX[:4] + ("payment-status", "tpp-messages-error", "error"), m_schema_enum),
    "schema-format": (PAYMENTS + ("card-transactions", "sandbox-account-transactions"), m_schema_format),
    "schema-range": (("card-transactions", "sandbox-account-transactions"), m_schema_range),
    "schema-items": (("tpp-messages-error", "signing-basket-detail"), m_schema_items),
}

MUTATION_CASES = [(rule_id, kind) for rule_id, (kinds, _) in MUTATIONS.items() for kind in kinds]


def _substantial(payload: Any) -> bool:
    """A payload with something to mutate: a non-empty list, a bulk with entries."""
    if isinstance(payload, list):
        return bool(payload)
    return not (isinstance(payload, dict) and payload.get("payments") == [])


def mutate(rule_id: str, kind: str, data, *, today: _dt.date | None = None) -> tuple[Any, Mutant]:
    """A valid payload of ``kind`` (at ``today``, default the spec's example day) and its mutant breaking ``rule_id``."""
    _KIND.value = kind
    _KIND.today = today or _dt.date.fromisoformat(SPEC.example_today)
    original = data.draw(payloads(kind).filter(_substantial), label="valid payload")
    mutant = MUTATIONS[rule_id][1](copy.deepcopy(original), data)
    return original, mutant
