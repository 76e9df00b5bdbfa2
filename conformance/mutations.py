"""Single-rule mutations: a valid payload generated from the spec (:mod:`conformance.generate`) changed so that it
breaks exactly one rule of the validator's catalogue.

:data:`MUTATIONS` maps a rule id to the kinds it is tried on and the function that breaks it; :func:`mutate` draws a
valid payload and its mutant. The differential tests (tests/test_differential.py) prove each mutant breaks only its
rule; the conformance gate's semantic suite (:mod:`conformance.gate.suites.semantic`) sends the mutants to an
implementation and compares its answers with the validator's.
"""
from __future__ import annotations

import base64
import copy
import dataclasses
import datetime as _dt
import hashlib
import json
import string
import uuid
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from urllib.parse import parse_qsl, urlencode

from hypothesis import reject
from hypothesis import strategies as st

from conformance.generate import covered_kinds, valid_payloads, valid_values
from validator.checks.accounts import make_iban, norwegian_bban_check_digit
from validator.checks.identity import norwegian_identity_control_digits
from validator.checks.kid import kid_check_digit_mod10, kid_check_digit_mod11
from validator.context import DEFAULT_PROFILE
from validator.jsonload import DEFAULT_MAX_DEPTH
from validator.request.build import sample_value
from validator.request.headers import (CORPORATE_CONTEXT, CORPORATE_ID_HEADER, LIST_HEADERS, MAX_HEADER_LENGTH,
                                       PSU_IDENTITY_HEADER, SIGNATURE_CONTEXT_HEADER)
from validator.request.parameters import inline_refs, owned_by_verifier, parameter_validator, schema_problem
from validator.request.query import DATE_RANGE as QUERY_DATE_RANGE
from validator.rules.amounts import split_amount
from validator.signing import PROFILE_SIGNED_HEADERS, SignableRequest, sign_request
from validator.spec import as_tuple, load_spec

SPEC = load_spec()
KINDS = covered_kinds(SPEC)
REQUEST_KINDS = tuple(k for k in KINDS if SPEC.kind(k).is_request)

TEXT = "remittanceInformationUnstructured"
SINGLE = "remittanceInformationStructured"
ARRAY = "remittanceInformationStructuredArray"


def payloads(kind: str) -> st.SearchStrategy:
    return valid_payloads(kind, today=_KIND.today, spec=SPEC, realistic=_KIND.realistic)


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


_SCALARS = ("type", "enum", "const", "format", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems",
            "maxItems")


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
    realistic: bool = False  # the valid payloads away from the boundaries (conformance.generate)

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


def mutate(rule_id: str, kind: str, data, *, today: _dt.date | None = None,
           realistic: bool = False) -> tuple[Any, Mutant]:
    """A valid payload of ``kind`` (at ``today``, default the spec's example day; ``realistic``: away from the
    boundaries) and its mutant breaking ``rule_id``."""
    _KIND.value = kind
    _KIND.today = today or _dt.date.fromisoformat(SPEC.example_today)
    _KIND.realistic = realistic
    original = data.draw(payloads(kind).filter(_substantial), label="valid payload")
    mutant = MUTATIONS[rule_id][1](copy.deepcopy(original), data)
    return original, mutant


# ====================================================================== request mutations: headers, query, path, body
# The rules of the request kind (validator/rules/request_rules.py and the signature rules of A8) broken in an HTTP
# request that is otherwise valid. A request mutation works on a :class:`Draft` (the request before it is signed)
# at one *site* (the header, query parameter or method it breaks) the operation offers; the differential tests prove
# each site breaks only its rule, the semantic suite of the conformance gate sends one request per site and draw.
@dataclass
class Draft:
    """One request before signing. ``after`` changes the signed request (a header's new value from its signed one;
    None removes it): what a verifier must refuse although the TPP signed something else. A Digest the draft
    carries is signed as it is (not recomputed over the body)."""

    operation: str
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    body: bytes
    after: list[tuple[str, Callable[[str | None], str | None]]] = dataclasses.field(default_factory=list)

    @property
    def target(self) -> str:
        return self.path + ("?" + urlencode(self.query) if self.query else "")

    def header(self, name: str) -> str | None:
        return next((v for n, v in self.headers if n.lower() == name.lower()), None)

    def set_header(self, name: str, value: str | None) -> None:
        kept = [(n, v) for n, v in self.headers if n.lower() != name.lower()]
        self.headers = kept + ([(name, value)] if value is not None else [])

    def set_query(self, name: str, value: str | None) -> None:
        self.query = [(n, v) for n, v in self.query if n != name] + ([(name, value)] if value is not None else [])


@dataclass(frozen=True)
class RequestMutation:
    """Where an operation offers the rule to be broken (empty: it does not apply there), and how."""

    sites: Callable[[Any], list]          # Operation -> sites
    apply: Callable[[Draft, Any, Any], None]  # (draft, site, data)


# The header header-oversized fills (A33): optional, unsigned, free text (the PSU's browser) with no negotiation meaning.
OVERSIZED_HEADER = "psu-user-agent"


def _headers_of(op) -> list:
    return [p for p in op.header_parameters if not owned_by_verifier(p)]


def _schema_check(p, value: str) -> str | None:
    drop = ("pattern",) if p.raw.get("x-code-set") else ()
    return schema_problem(parameter_validator(SPEC, p, drop=drop), value)


def _bad_value(p) -> str | None:
    """A sendable value the parameter's schema refuses (its format, enumeration, pattern, range or length)."""
    schema = inline_refs(SPEC, p.schema)
    candidates = [BAD_FORMATS.get(schema.get("format", "")),
                  *(str(schema[k] + d) for k, d in (("minimum", -1), ("maximum", 1)) if k in schema), "ZQXJ", "x", ""]
    return next((c for c in candidates if c is not None and _schema_check(p, c)), None)


def _valid_value(p) -> str:
    return sample_value(SPEC, p.schema)


def _code_list_headers(op) -> list:
    return [p for p in _headers_of(op) if p.raw.get("x-code-set")]


def _code_list(p) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The code set's names, its aliases, and the names an operation requires (x-required-on), per operation."""
    schema = SPEC.schema(p.raw["x-code-set"])
    return tuple(schema.get("enum", ())), tuple(schema.get("x-aliases") or ()), schema.get("x-required-on") or {}


def _header_required_sites(op) -> list:
    return [p.name for p in _headers_of(op) if p.required]


def _header_format_sites(op) -> list:
    return [(p.name, bad) for p in _headers_of(op) if (bad := _bad_value(p)) is not None]


def _psu_identity_sites(op) -> list:
    return [p.name for p in _headers_of(op) if p.key == PSU_IDENTITY_HEADER]


def synthetic_identity_number(data) -> str:
    """A valid synthetic test national identity number (month + 80, A16) with right control digits."""
    return identity_number(data, month_offset=80)


def identity_number(data, *, month_offset: int = 0) -> str:
    """A valid national identity number (a birth number; month + 80: a synthetic test number, A16) with right
    control digits."""
    month = data.draw(st.integers(1, 12), label="month") + month_offset
    birth = f"{data.draw(st.integers(1, 28), label='day'):02d}{month:02d}" \
            f"{data.draw(st.integers(0, 99), label='year'):02d}"
    individual = data.draw(st.integers(0, 499), label="individual number")
    # about one individual number in three has no control digits: the next one that has (1900s, 000-499)
    for n in (individual + i for i in range(500)):
        first9 = f"{birth}{n % 500:03d}"
        control = norwegian_identity_control_digits(first9)
        if control:
            return first9 + control
    raise AssertionError(f"no individual number has control digits for {birth}")


def m_psu_identity_invalid(d: Draft, name, data) -> None:
    number = synthetic_identity_number(data)
    wrong = data.draw(st.sampled_from([c for c in string.digits if c != number[-1]]), label="wrong control digit")
    d.set_header(name, number[:-1] + wrong)


def _redirect_target_sites(op) -> list:
    return [p.name for p in _headers_of(op) if p.raw.get("x-redirect-target")]


# A37: TPP-Redirect-URI values a browser would follow to somewhere other than the TPP over https: script and
# local-file schemes, and plain http to a host that is not the PSU's own machine. Each is a URI (header-format
# passes), so only the redirect target is wrong.
UNSAFE_REDIRECTS = ("javascript:alert(document.domain)", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg",
                    "vbscript:msgbox(1)", "file:///etc/passwd", "http://tpp.example.no/callback?state=1",
                    "ftp://tpp.example.no/callback", "https:callback")


def m_redirect_target_unsafe(d: Draft, name, data) -> None:
    d.set_header(name, data.draw(st.sampled_from(UNSAFE_REDIRECTS), label="redirect target"))


def _unknown_name(data, taken) -> str:
    name = "obvalidate-" + data.draw(st.text(string.ascii_lowercase, min_size=3, max_size=10), label="name")
    if name in taken:
        reject()
    return name


def accept_fix_alias(d: Draft, name, data) -> None:
    """The header ``name`` (a code list) with an alias of a published name (``longer-names``, A18) besides the names
    the operation requires: accepted by our decision, a target may know only the published names."""
    p = next(p for p in SPEC.operation(d.operation).header_parameters if p.name == name)
    _known, aliases, required_on = _code_list(p)
    needed = list(as_tuple(required_on.get(d.operation)))
    d.set_header(name, ", ".join(needed + [data.draw(st.sampled_from(aliases), label=f"{name} alias")]))


def m_accept_fix_unknown(d: Draft, name, data) -> None:
    p = next(p for p in SPEC.operation(d.operation).header_parameters if p.name == name)
    known, aliases, _ = _code_list(p)
    current = d.header(name) or ""
    d.set_header(name, ", ".join(filter(None, [current, _unknown_name(data, set(known) | set(aliases))])))


def _accept_fix_required_sites(op) -> list:
    return [p.name for p in _code_list_headers(op) if _code_list(p)[2].get(op.operation_id)]


def m_accept_fix_required(d: Draft, name, data) -> None:
    p = next(p for p in SPEC.operation(d.operation).header_parameters if p.name == name)
    known, _, required_on = _code_list(p)
    others = [n for n in known if n not in as_tuple(required_on[d.operation])]
    d.set_header(name, ", ".join(data.draw(st.lists(st.sampled_from(others), min_size=1, unique=True), label="names")))


def _corporate_sites(op) -> list:
    keys = {p.key for p in op.header_parameters}
    return ["corporate"] if {CORPORATE_ID_HEADER, SIGNATURE_CONTEXT_HEADER} <= keys else []


def _parameter(op, key: str):
    return next(p for p in op.header_parameters if p.key == key)


def m_corporate_id_required(d: Draft, _site, data) -> None:
    op = SPEC.operation(d.operation)
    d.set_header(_parameter(op, SIGNATURE_CONTEXT_HEADER).name, CORPORATE_CONTEXT)
    d.set_header(_parameter(op, CORPORATE_ID_HEADER).name, None)


def _not_accepted_sites(op) -> list:
    """Headers the interface knows that this operation does not take: the operation's content headers marked
    accepted: false, and other operations' parameters (not the verifier's, not Host)."""
    own = {p.key for p in op.header_parameters}
    found = {name: "application/json" for name, meta in op.content_headers.items()
             if (meta or {}).get("accepted", True) is False}
    for other in SPEC.operations.values():
        for p in _headers_of(other):
            if p.key not in own and p.key != "host" and p.name not in found:
                found[p.name] = _valid_value(p)
    return sorted(found.items())


def _duplicate_sites(op) -> list:
    """Single-valued headers the request carries that are not signed (a repeated signed header is the verifier's)."""
    return [p.name for p in _headers_of(op) if p.required and p.key != "host" and not p.raw.get("x-code-set")
            and p.key not in LIST_HEADERS and p.key not in PROFILE_SIGNED_HEADERS]


def m_header_duplicate(d: Draft, name, data) -> None:
    d.headers.append((name.lower(), d.header(name)))  # the same value again: only the repetition is wrong


def _query_parameters(op) -> list:
    return list(op.query_parameters)


def _query_format_sites(op) -> list:
    return [(p.name, bad) for p in _query_parameters(op) if (bad := _bad_value(p)) is not None]


def m_query_duplicate(d: Draft, name, data) -> None:
    p = next(p for p in _query_parameters(SPEC.operation(d.operation)) if p.name == name)
    value = dict(d.query).get(name) or _valid_value(p)
    d.set_query(name, value)
    d.query.append((name, value))


def _date_order_sites(op) -> list:
    names = {p.name for p in _query_parameters(op)}
    return ["window"] if set(QUERY_DATE_RANGE) <= names else []


def m_query_date_order(d: Draft, _site, data) -> None:
    start = _KIND.today - _dt.timedelta(days=data.draw(st.integers(0, 400), label="days back"))
    end = start - _dt.timedelta(days=data.draw(st.integers(1, 60), label="window"))
    d.set_query(QUERY_DATE_RANGE[0], start.isoformat())
    d.set_query(QUERY_DATE_RANGE[1], end.isoformat())


def m_query_unknown(d: Draft, _site, data) -> None:
    names = {p.name for p in _query_parameters(SPEC.operation(d.operation))}
    d.query.append((_unknown_name(data, names), "true"))


def _path_segment(data) -> str:
    return "obvalidate-" + data.draw(st.text(string.ascii_lowercase, min_size=2, max_size=8), label="segment")


def m_path_unknown(d: Draft, _site, data) -> None:
    d.path += "/" + _path_segment(data) + "/" + _path_segment(data)


def _product_sites(op) -> list:
    products = SPEC.code_set("PaymentProduct") if "PaymentProduct" in SPEC.schemas else ()
    return [op.path.rsplit("/", 1)[1]] if op.method == "POST" and op.path.rsplit("/", 1)[-1] in products else []


def m_product_unknown(d: Draft, product, data) -> None:
    d.path = d.path[: -len(product)] + data.draw(st.sampled_from(["instant-", "cross-border-", "target-2-"]),
                                                 label="prefix") + product


HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _method_sites(op) -> list:
    taken = {m.upper() for m in SPEC.document["paths"][op.path] if m.upper() in HTTP_METHODS}
    return [m for m in HTTP_METHODS if m not in taken]


def _set_method(d: Draft, method, data) -> None:
    d.method = method


def _remove_header(d: Draft, name, data) -> None:
    d.set_header(name, None)


def _set_header_site(d: Draft, site, data) -> None:
    d.set_header(*site)


def _set_query_site(d: Draft, site, data) -> None:
    d.set_query(*site)


def _remove_query(d: Draft, name, data) -> None:
    d.set_query(name, None)


def m_recommended_format(d: Draft, name, data) -> None:
    # still unique per request (A29 replays compare X-Request-ID), only not a UUID
    d.set_header(name, "obvalidate-" + uuid.uuid4().hex)


def _recommended_sites(op) -> list:
    return [p.name for p in _headers_of(op) if p.schema.get("x-recommended-format")]


def _one(predicate: Callable[[Any], bool]) -> Callable[[Any], list]:
    return lambda op: ["request"] if predicate(op) else []


def _body_remove(d: Draft, _site, data) -> None:
    d.body = b""
    d.set_header("Content-Type", None)  # no body, nothing to describe


def _body_add(d: Draft, _site, data) -> None:
    d.body = b'{"obvalidate":true}'
    d.set_header("Content-Type", "application/json")  # every body the gate sends says what it is (A33)


def _object_body(op) -> list:
    return ["body"] if op.request_schema_ref and SPEC.schema(op.request_schema_ref.rsplit("/", 1)[1]).get("type") == "object" else []


def m_json_duplicate_key(d: Draft, _site, data) -> None:
    """The body's first member written twice (the same name and value: only the repetition is wrong)."""
    value = json.loads(d.body)
    name = next(iter(value))
    d.body = b"{" + json.dumps(name).encode() + b":" + json.dumps(value[name]).encode() + b"," + d.body.lstrip()[1:]


def m_json_syntax(d: Draft, _site, data) -> None:
    text = d.body.decode()
    cut = data.draw(st.integers(1, min(8, len(text) - 1)), label="characters cut")
    d.body = text[:-cut].encode()  # the closing bracket gone: not well-formed (still UTF-8)


def m_json_encoding(d: Draft, _site, data) -> None:
    d.body = data.draw(st.sampled_from([b"\xef\xbb\xbf" + d.body, d.body.decode().encode("utf-16")]), label="encoding")


def m_json_binary(d: Draft, _site, data) -> None:
    d.body = b"\x1f\x8b\x08\x00" + bytes(data.draw(st.binary(min_size=4, max_size=16), label="gzip bytes"))


def m_json_too_deep(d: Draft, _site, data) -> None:
    depth = DEFAULT_MAX_DEPTH + data.draw(st.integers(1, 8), label="levels too deep")
    d.body = b"[" * depth + b"]" * depth


def m_json_empty(d: Draft, _site, data) -> None:
    d.body = data.draw(st.sampled_from([b" ", b"\n", b"\r\n", b"\t "]), label="white space")


def _after(name: str, value: Callable[[str | None], str | None]) -> Callable[[Draft, Any, Any], None]:
    def apply(d: Draft, _site, data) -> None:
        d.after.append((name, value))
    return apply


def _digest(value: Callable[[bytes], str]) -> Callable[[Draft, Any, Any], None]:
    def apply(d: Draft, _site, data) -> None:
        d.set_header("Digest", value(d.body))
    return apply


def _signed(op) -> bool:
    return any(owned_by_verifier(p) for p in op.header_parameters)


def _with_digest(op) -> bool:
    return any(p.key == "digest" for p in op.header_parameters)


REQUEST_MUTATIONS: dict[str, RequestMutation] = {
    "path-unknown": RequestMutation(_one(lambda op: True), m_path_unknown),
    "product-unknown": RequestMutation(_product_sites, m_product_unknown),
    "method-not-allowed": RequestMutation(_method_sites, _set_method),
    "header-required": RequestMutation(_header_required_sites, _remove_header),
    "header-format": RequestMutation(_header_format_sites, _set_header_site),
    "header-recommended-format": RequestMutation(_recommended_sites, m_recommended_format),
    "psu-identity-invalid": RequestMutation(_psu_identity_sites, m_psu_identity_invalid),
    "accept-fix-unknown": RequestMutation(lambda op: [p.name for p in _code_list_headers(op)], m_accept_fix_unknown),
    "redirect-target-unsafe": RequestMutation(_redirect_target_sites, m_redirect_target_unsafe),
    "accept-fix-required": RequestMutation(_accept_fix_required_sites, m_accept_fix_required),
    "corporate-id-required": RequestMutation(_corporate_sites, m_corporate_id_required),
    "header-not-accepted": RequestMutation(_not_accepted_sites, _set_header_site),
    "header-duplicate": RequestMutation(_duplicate_sites, m_header_duplicate),
    "query-unknown": RequestMutation(_one(lambda op: True), m_query_unknown),
    "query-duplicate": RequestMutation(lambda op: [p.name for p in _query_parameters(op)], m_query_duplicate),
    "query-format": RequestMutation(_query_format_sites, _set_query_site),
    "query-required": RequestMutation(lambda op: [p.name for p in _query_parameters(op) if p.required], _remove_query),
    "query-date-order": RequestMutation(_date_order_sites, m_query_date_order),
    "body-required": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), _body_remove),
    "body-not-accepted": RequestMutation(_one(lambda op: not op.request_schema_ref), _body_add),
    # the body's bytes (input decoding), signed as sent
    "json-duplicate-key": RequestMutation(_object_body, m_json_duplicate_key),
    "json-syntax": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), m_json_syntax),
    "json-encoding": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), m_json_encoding),
    "json-binary": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), m_json_binary),
    "json-too-deep": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), m_json_too_deep),
    "json-empty": RequestMutation(_one(lambda op: bool(op.request_schema_ref)), m_json_empty),
    # A8, after signing
    "signature-malformed": RequestMutation(_one(_signed), _after("Signature", lambda signed: signed + ',headers="date"')),  # a parameter twice
    "digest-malformed": RequestMutation(_one(_with_digest), _digest(lambda body: "SHA-256")),
    "digest-algorithm": RequestMutation(_one(_with_digest), _digest(
        lambda body: "MD5=" + base64.b64encode(hashlib.md5(body).digest()).decode("ascii"))),
    "certificate-invalid": RequestMutation(_one(_signed), _after("TPP-Signature-Certificate", lambda _signed: "not*base64!")),
    # in a header without negotiation meaning (free text a server only logs): an over-long Accept-Charset may draw a
    # 406 for the charset, not the length; an operation without such a header offers no site
    "header-oversized": RequestMutation(lambda op: [p.name for p in _headers_of(op) if p.key == OVERSIZED_HEADER],
                                        lambda d, name, data: d.set_header(name, "A" * (MAX_HEADER_LENGTH + 1))),
}

# Rules of the request kind no HTTP request to a target can break alone, and why (clause coverage).
REQUEST_LEFT_OUT = {
    "request-malformed": "an HTTP client sends a readable request line and framing; an unreadable envelope is the "
                         "validator's input, never a request a target receives",
    "header-malformed": "control characters and folded lines in a header are refused by the HTTP client (h11) "
                        "before sending, and by the target's HTTP server before the implementation",
    "signature-header-injection": "a CR/LF in a header value cannot be sent over HTTP/1.1 (the client refuses it)",
    "digest-unverifiable": "only a request envelope whose body is a JSON value, not its bytes, leaves the Digest "
                           "unverifiable; over HTTP the bytes sent are known",
    "json-too-large": "a body over the validator's input limit (50 MiB) per case is beyond a gate's budget; a "
                      "target's own body limit may be lower (the reference sandbox refuses over 5 MiB)",
    "json-non-finite": "the validator goes on checking a NaN or Infinity against the schema where it stands, so a "
                       "request with one breaks a schema rule too; no request breaks it alone",
    "kind-ambiguous": "the validator's own input: over HTTP the operation names the body's kind",
    "kind-undetected": "the validator's own input: over HTTP the operation names the body's kind",
    "findings-limited": "the validator's own output limit, not an answer of a target",
    "date-malformed": "the Date is a signed header (A8): a malformed Date also breaks the signature, so no request "
                      "breaks this rule alone (the security suite's stale-date check sends a Date outside the window)",
    "certificate-key-weak": "a weak key (EC, RSA under 2048 bits) cannot make the rsa-sha256 signature of a valid "
                            "request with this signer; not sent",
    "certificate-not-yet-valid": "needs a certificate whose validity starts after the run's clock; the security "
                                 "suite's expired-certificate check covers the validity window",
    "product-not-offered": "raised only where the implementer's profile lists a product under products-not-offered "
                           "(A31): stateful:products-offered sends each product's operations by the profile",
    "content-type-not-json": "a warning (A33), yet HTTP lets a server refuse a media type it does not take with 415 "
                             "(RFC 9110 section 15.5.16): no answer to it could be judged, so none is sent",
}


def draft_of(operation: str, method: str, target: str, headers, body: bytes) -> Draft:
    path, _, query = target.partition("?")
    return Draft(operation, method, path, parse_qsl(query, keep_blank_values=True), list(headers), body)


def mutate_request(rule_id: str, draft: Draft, site: Any, data) -> Draft:
    """``draft`` (a valid request) changed at ``site`` so that it breaks ``rule_id``."""
    REQUEST_MUTATIONS[rule_id].apply(draft, site, data)
    return draft


def signed_draft(draft: Draft, key, certificate, *, date: _dt.datetime,
                 also: tuple[str, ...] = ()) -> tuple[str, str, list[tuple[str, str]], bytes]:
    """Method, target, headers and body of ``draft`` signed over the exact bytes sent (Digest where the operation
    takes one), then changed by its ``after`` list."""
    with_digest = _with_digest(SPEC.operation(draft.operation)) and draft.header("Digest") is None
    signable = SignableRequest(draft.method, draft.target, draft.headers, draft.body if with_digest else None)
    headers = list(sign_request(signable, key, certificate, date=date, also=also).headers)
    for name, change in draft.after:
        value = change(next((v for n, v in headers if n.lower() == name.lower()), None))
        kept = [(n, v) for n, v in headers if n.lower() != name.lower()]
        headers = kept + ([(name, value)] if value is not None else [])
    return draft.method, draft.target, headers, draft.body


# The operations request mutations are sent to, with the kind of their body (None: no body). Their answers depend on
# the request alone, with the fixed test data (A32) for the sandbox accounts and a payment the target holds for the
# basket.
REQUEST_OPERATIONS = {
    "createSepaCreditTransfer": SEPA,
    "createBulkPayment": BULK,
    "createSigningBasket": "signing-basket",
    "createSandboxCardTransactions": "card-transactions",
    "createSandboxAccountTransactions": "sandbox-account-transactions",
    "listSandboxCardTransactions": None,
    "listSandboxAccountTransactions": None,
}
REQUEST_MUTATION_CASES = [(rule_id, operation, site) for rule_id, mutation in REQUEST_MUTATIONS.items()
                          for operation in REQUEST_OPERATIONS for site in mutation.sites(SPEC.operation(operation))]


def valid_optional_headers(draft: Draft, data) -> None:
    """Controls for the header rules: optional headers of the operation with values valid under every reading drawn
    — a national identity number, published x-accept-fix names (not their aliases: a target treating unknown names
    as errors may refuse one, A18; :func:`accept_fix_alias` is a case of its own), a corporate PSU with its
    PSU-Corporate-ID (A7) — which a target must accept."""
    op = SPEC.operation(draft.operation)
    for p in _headers_of(op):
        if p.raw.get("x-code-set"):
            known, _aliases, required_on = _code_list(p)
            names = data.draw(st.lists(st.sampled_from(known), min_size=1, unique=True), label=p.name)
            needed = [n for n in as_tuple(required_on.get(op.operation_id)) if n not in names]
            draft.set_header(p.name, ", ".join(needed + names))
            continue
        if p.required or p.key == "host" or draft.header(p.name) is not None:
            continue
        if not data.draw(st.booleans(), label=f"send {p.name}"):
            continue
        if p.key == PSU_IDENTITY_HEADER:
            value = identity_number(data)  # a synthetic one is the psu-identity-invalid check's control (A16)
        elif p.key == SIGNATURE_CONTEXT_HEADER and CORPORATE_ID_HEADER in {q.key for q in op.header_parameters}:
            value = data.draw(st.sampled_from(SPEC.code_set(p.schema["$ref"].rsplit("/", 1)[1])), label=p.name)
            if value == CORPORATE_CONTEXT:
                corporate = _parameter(op, CORPORATE_ID_HEADER)
                draft.set_header(corporate.name, _valid_value(corporate))
        else:
            value = _valid_value(p)
        draft.set_header(p.name, value)
