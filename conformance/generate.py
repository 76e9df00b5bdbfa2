"""Hypothesis strategies of *valid* payloads, compiled from spec/openapi.yaml.

Two layers:

1. A compiler from the JSON Schema subset the spec uses to Hypothesis strategies: ``type`` (object,
   array, string, integer, number, boolean), ``properties`` + ``required`` (optional properties are
   drawn sometimes, deprecated optional ones never), ``additionalProperties`` schemas (small maps),
   ``enum`` / ``const``, ``minLength`` / ``maxLength``, ``pattern``, ``format`` (date, date-time,
   uuid, uri, ipv4, ipv6), ``items`` with ``minItems`` / ``maxItems`` / ``uniqueItems``,
   ``minimum`` / ``maximum``, ``allOf`` (object parts merged, later parts refining earlier ones),
   ``anyOf`` / ``oneOf`` (one branch) and ``$ref`` to components.

2. Semantic overrides keyed by component name, so that a generated payload passes the validator's
   semantic rules as well as the schema, i.e. produces no finding at all (error or warning):

   ``Amount``
       a currency of the CurrencyCode set; fraction digits at most the currency's ``x-minor-units``
       in a request, exactly that many in a response; integer digits within ``x-precision`` -
       ``x-scale`` of AmountString; greater than zero in a request. A component with
       ``x-expected-currency`` (SEPA: EUR, bulk entry: NOK) gets its amounts in that currency.
   ``Iban``
       a registry-valid IBAN (mod-97 via ``make_iban``) of a few countries whose BBAN structure is
       read from the registry the validator uses; Norwegian ones with a valid MOD11 account number.
   ``AccountReferenceBban``
       11 digits with a valid MOD11 check digit.
   ``RemittanceStructured``
       a KID with a MOD10 or MOD11 check digit (referenceType absent or one the profile treats as
       KID), or a CINV reference with an issuer.
   ``BulkEntry``
       structured (list form) xor unstructured remittance, never the deprecated single object.
   ``BulkPaymentRequest`` / ``SepaCreditTransferRequest``
       creditor accounts differ from the debtor account.
   ``ExecutionDate``
       today ... today + 365 days.
   ``PeriodicPaymentRequest``
       startDate today ... today + 365 days, endDate not before it; monthsOfExecution (distinct
       months) exactly with the frequencies the spec's PeriodicFrequency says take it (A31);
       creditor account differs from the debtor account.
   ``PaymentStatusResponse``
       fundsAvailable false only with the status and tppMessage code of ``x-lack-of-funds``.
   ``SandboxCardTransactionInput``
       its dates not after today.
   ``SandboxAccountTransactionInput``
       bookingDate not after valueDate.
   ``ErrorBody``
       status and code one of the pairs in its ``x-status-codes``.

Nothing here copies a code set, a limit or the minor-unit table: they are read from the spec.

``realistic=True`` draws what a TPP sends, away from the boundaries the full range reaches first (Hypothesis starts
from the simplest value: an empty creditorName, a bulk with no payments): free text non-empty, of letters, digits
and a few marks, never at its maxLength; numbers from 1 where their range allows; arrays of 1 to 3 items; a payment's
account references in its instructed currency. The conformance gate starts every "break exactly
one rule" case from such a payload, so that a target refusing a boundary value cannot pass that refusal off as its
answer to the rule under test; its valid controls are such payloads too, and the boundary values are a case of their own,
where such a refusal is reported as what it is.

Usage::

    from conformance.generate import valid_payloads
    strategy = valid_payloads("bulk-payment", today=date(2026, 7, 1))

``valid_values(component, kind=..., today=...)`` gives the strategy of one component schema as it
occurs in a kind (request and response amounts differ), for building or repairing payloads.
"""
from __future__ import annotations

import copy
import datetime as _dt
import functools
import re
import string
from typing import Any, Callable

from hypothesis import strategies as st

from validator.checks.accounts import iban_length, make_iban, norwegian_bban_check_digit
from validator.checks.kid import MAX_LENGTH as KID_MAX_LENGTH
from validator.checks.kid import MIN_LENGTH as KID_MIN_LENGTH
from validator.checks.kid import kid_check_digit_mod10, kid_check_digit_mod11
from validator.context import DEFAULT_PROFILE
from validator.locate import SCHEMA_PREFIX
from validator.spec import Spec, SpecError, load_spec

__all__ = ["IBAN_COUNTRIES", "SpecStrategies", "covered_kinds", "valid_payloads", "valid_values"]

# Countries whose IBANs are generated. Their BBAN structure comes from the IBAN registry the
# validator uses (python-stdnum); only Norway has a national check digit among them (MOD11), which
# the generator satisfies.
IBAN_COUNTRIES = ("NO", "DE", "FI", "SE", "DK", "NL", "FR", "GB")

# Sizes are kept small so that a payload validates in well under a millisecond.
MAX_ITEMS = 3  # arrays without a tighter maxItems
MAX_BULK_ENTRIES = 5
REALISTIC_MAX_ITEMS = 3  # arrays of a realistic payload: 1 to 3 items (a bulk's payments too)
REALISTIC_TEXT = string.ascii_letters + string.digits + "ÆØÅæøå -.,'"
MAX_MAP_ENTRIES = 2  # additionalProperties maps
MAX_FREE_TEXT = 12  # strings without a maxLength
EXECUTION_DAYS_AHEAD = 365
PERIODIC_DAYS_LONG = 730  # the longest schedule generated (endDate - startDate)
# A reference type that is not a KID (ISO 20022 "commercial invoice"); it comes with an issuer.
NON_KID_REFERENCE_TYPE = "CINV"

_STRUCT_PART = re.compile(r"([1-9][0-9]*)!([nac])")
_STRUCT_ALPHABET = {"n": string.digits, "a": string.ascii_uppercase, "c": string.ascii_uppercase + string.digits}
_MIN_DAY = _dt.date(1900, 1, 1)
_MAX_DAY = _dt.date(2100, 12, 31)
_OFFSETS = tuple(_dt.timezone(_dt.timedelta(minutes=m)) for m in (0, 60, 120, -300, 330, 345, -720, 840))


def _iso(day: _dt.date) -> str:
    return day.isoformat()


def _component_name(ref: str) -> str:
    if not ref.startswith(SCHEMA_PREFIX):
        raise SpecError(f"only component schema references are compiled, got {ref!r}")
    return ref[len(SCHEMA_PREFIX):]


def _ecma_anchored(pattern: str) -> str:
    """Python's ``$`` also matches before a final newline; ECMA-262's (JSON Schema's) does not."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + r"\Z"
    return pattern


class SpecStrategies:
    """Strategies of valid values for the schemas of one spec, in one kind's direction."""

    def __init__(self, spec: Spec, *, today: _dt.date, response: bool, realistic: bool = False):
        self.spec = spec
        self.today = today
        self.response = response
        self.realistic = realistic
        self._components: dict[str, st.SearchStrategy] = {}
        # component name -> builder of its strategy (the semantic overrides)
        self.overrides: dict[str, Callable[[], st.SearchStrategy]] = {
            "Amount": self.amount,
            "Iban": self.iban,
            "AccountReferenceBban": self.account_reference_bban,
            "RemittanceStructured": self.remittance_structured,
            "ExecutionDate": self.execution_date,
            "BulkEntry": self.bulk_entry,
            "BulkPaymentRequest": self.bulk_payment_request,
            "SepaCreditTransferRequest": self.sepa_credit_transfer_request,
            "PeriodicPaymentRequest": self.periodic_payment_request,
            "PaymentStatusResponse": self.payment_status_response,
            "SandboxCardTransactionInput": self.sandbox_card_transaction_input,
            "SandboxAccountTransactionInput": self.sandbox_account_transaction_input,
            "ErrorBody": self.error_body,
        }

    # ------------------------------------------------------------------ the compiler
    def component(self, name: str) -> st.SearchStrategy:
        """The strategy of a component schema (its semantic override when it has one)."""
        if name not in self._components:
            builder = self.overrides.get(name)
            self._components[name] = builder() if builder else self.schema(self.spec.schema(name))
        return self._components[name]

    def schema(self, schema: dict, *, expected_currency: str | None = None) -> st.SearchStrategy:
        """The strategy of an (inline) schema."""
        if not isinstance(schema, dict):
            raise SpecError(f"cannot compile schema {schema!r}")
        ref = schema.get("$ref")
        if ref is not None:
            name = _component_name(ref)
            if name == "Amount" and expected_currency:
                return self.amount(currency=expected_currency)
            return self.component(name)  # siblings of $ref in the spec are annotations only
        if "allOf" in schema:
            return self._all_of(schema)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return st.one_of([self.schema(s) for s in schema[key]])
        if "const" in schema:
            return st.just(schema["const"])
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self.schema({**schema, "type": k}) for k in kind])
        if kind == "object" or (kind is None and ("properties" in schema or "additionalProperties" in schema)):
            return self.object(schema, expected_currency=expected_currency)
        if kind == "array":
            return self.array(schema)
        if kind == "string":
            return self.string(schema)
        if kind == "integer":
            low, high = schema.get("minimum", -(10**6)), schema.get("maximum", 10**6)
            return st.integers(max(low, 1) if self.realistic and high >= 1 else low, high)
        if kind == "number":
            low, high = schema.get("minimum"), schema.get("maximum")
            if self.realistic and (high is None or high >= 1):
                return st.integers(max(low or 1, 1), high if high is not None else 10**6)
            return st.one_of(
                st.integers(low if low is not None else -(10**6), high if high is not None else 10**6),
                st.floats(low, high, allow_nan=False, allow_infinity=False),
            )
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        raise SpecError(f"cannot compile schema without a known type: {sorted(schema)}")

    def object(
        self,
        schema: dict,
        *,
        overrides: dict[str, st.SearchStrategy] | None = None,
        expected_currency: str | None = None,
    ) -> st.SearchStrategy:
        """Required properties always, optional ones sometimes (deprecated ones never), plus a small
        map of extra keys when additionalProperties is a schema. ``overrides`` replaces the
        strategies of named properties."""
        overrides = overrides or {}
        expected_currency = schema.get("x-expected-currency", expected_currency)
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        missing = required - set(props)
        if missing and not isinstance(schema.get("additionalProperties"), dict):
            raise SpecError(f"required properties without a schema: {sorted(missing)}")

        def prop(name: str) -> st.SearchStrategy:
            if name in overrides:
                return overrides[name]
            return self.schema(props[name], expected_currency=expected_currency)

        fixed = {name: prop(name) for name in props if name in required}
        optional = {
            name: prop(name) for name in props if name not in required and not props[name].get("deprecated")
        }
        base = st.fixed_dictionaries(fixed, optional=optional)
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            value = self.schema(addl)
            keys = st.text(REALISTIC_TEXT.strip(" -.,'"), min_size=1, max_size=10) if self.realistic else st.text(min_size=1, max_size=10)
            extra_keys = keys.filter(lambda k: k not in props)
            extra = st.dictionaries(extra_keys, value, max_size=MAX_MAP_ENTRIES)
            for name in missing:  # required but only declared through additionalProperties
                fixed[name] = value
            base = st.fixed_dictionaries(fixed, optional=optional)
            return st.tuples(extra, base).map(lambda pair: {**pair[0], **pair[1]})
        return base

    def array(self, schema: dict, *, max_items: int | None = None) -> st.SearchStrategy:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", max(low, max_items or MAX_ITEMS))
        if self.realistic:
            low, high = max(low, 1), max(max(low, 1), min(high, REALISTIC_MAX_ITEMS))
        items = self.schema(schema.get("items", {"type": "string"}))
        if schema.get("uniqueItems"):
            # Python equality is JSON equality for the item types the spec uses (strings, objects).
            return st.lists(items, min_size=low, max_size=high, unique_by=_json_key)
        return st.lists(items, min_size=low, max_size=high)

    def string(self, schema: dict) -> st.SearchStrategy:
        fmt = schema.get("format")
        if fmt is not None:
            return self._format(fmt)
        if "pattern" in schema:
            strategy = st.from_regex(_ecma_anchored(schema["pattern"]), fullmatch=True)
            low, high = schema.get("minLength", 0), schema.get("maxLength")
            return strategy.filter(lambda s: len(s) >= low and (high is None or len(s) <= high))
        low = schema.get("minLength", 0)
        high = schema.get("maxLength")
        if self.realistic:
            return self._realistic_text(low, high)
        if high is None:
            return st.text(min_size=low, max_size=max(low, MAX_FREE_TEXT))
        short = st.text(min_size=low, max_size=min(high, low + MAX_FREE_TEXT))
        return st.one_of(short, st.text(min_size=high, max_size=high))  # the limit itself too

    @staticmethod
    def _realistic_text(low: int, high: int | None) -> st.SearchStrategy:
        """Free text as people write it: non-empty, no blank at either end, below its maxLength."""
        low = max(low, 1)
        if high is None:
            top = low + MAX_FREE_TEXT
        else:
            top = min(high - 1, low + MAX_FREE_TEXT) if high > low else high
        return (st.text(REALISTIC_TEXT, min_size=low, max_size=max(low, top)).map(str.strip)
                .filter(lambda text: len(text) >= low))

    def _format(self, fmt: str) -> st.SearchStrategy:
        if fmt == "date":
            return st.dates(_MIN_DAY, _MAX_DAY).map(_iso)
        if fmt == "date-time":
            moments = st.datetimes(
                _dt.datetime(1970, 1, 1), _dt.datetime(2100, 12, 31), timezones=st.sampled_from(_OFFSETS)
            )
            return st.one_of(
                moments.map(lambda m: m.isoformat()),
                moments.map(lambda m: m.astimezone(_dt.timezone.utc).replace(tzinfo=None).isoformat() + "Z"),
            )
        if fmt == "uuid":
            return st.uuids().map(str)
        if fmt == "uri":
            segment = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8)
            return st.builds(
                lambda scheme, host, path: f"{scheme}://{host}.example/{path}",
                st.sampled_from(["https", "http"]),
                segment,
                segment,
            )
        if fmt == "ipv4":
            return st.ip_addresses(v=4).map(str)
        if fmt == "ipv6":
            return st.ip_addresses(v=6).map(str)
        raise SpecError(f"no strategy for string format {fmt!r}")

    def _all_of(self, schema: dict) -> st.SearchStrategy:
        """Object parts merged in order, a later part refining an earlier one (an enum for a plain
        string): a property required by any part is drawn by every inline part declaring it, and
        an optional property a refining part declares but did not draw is dropped."""
        raw_parts = list(schema["allOf"])
        rest = {k: v for k, v in schema.items() if k != "allOf" and not k.startswith("x-")}
        if rest.get("properties") or rest.get("required"):
            raw_parts.append({"type": "object", **rest})
        resolved = [self.spec.resolve(p["$ref"]) if "$ref" in p else p for p in raw_parts]
        if not all(r.get("type") == "object" or "properties" in r or "required" in r for r in resolved):
            raise SpecError("allOf is only compiled for object parts")
        required = set().union(*(r.get("required", ()) for r in resolved))
        strategies, declared = [], []
        for raw, res in zip(raw_parts, resolved):
            if "$ref" in raw:
                strategies.append(self.schema(raw))
            else:
                props = res.get("properties", {})
                forced = sorted(set(res.get("required", ())) | (required & set(props)))
                strategies.append(self.object({**res, "required": forced}))
            declared.append(set(res.get("properties", {})))

        def merge(values: tuple) -> dict:
            out: dict = {}
            for value, names in zip(values, declared):
                for name in names - set(value) - required:
                    out.pop(name, None)
                out.update(value)
            return out

        return st.tuples(*strategies).map(merge)

    # ------------------------------------------------------------------ semantic overrides
    def amount(self, currency: str | None = None) -> st.SearchStrategy:
        """``{"amount", "currency"}`` with the currency's minor-unit digits (A9, A10)."""
        amount_schema = self.spec.schema("Amount")
        text = self.spec.resolve(amount_schema["properties"]["amount"]["$ref"])
        integer_digits = text["x-precision"] - text["x-scale"]
        units = self.spec.minor_units
        currencies = [c for c in self.spec.code_set("CurrencyCode") if c in units]
        currency_strategy = st.just(currency) if currency else st.sampled_from(currencies)
        response, realistic = self.response, self.realistic

        @st.composite
        def build(draw, cur: str) -> dict:
            digits = units[cur]
            # a response, and a realistic request (what a TPP sends, valid under either A9 reading: at most or
            # exactly the minor units), carry every minor-unit digit; the full range of a request draws fewer too
            fraction_length = digits if response or realistic else draw(st.integers(0, digits))
            whole = draw(st.one_of(st.integers(0, 999), st.integers(0, 10**integer_digits - 1)))
            fraction = draw(st.text(string.digits, min_size=fraction_length, max_size=fraction_length))
            if not response and whole == 0 and not fraction.strip("0"):
                # an instructed amount is greater than zero
                if fraction:
                    fraction = fraction[:-1] + "1"
                else:
                    whole = 1
            value = str(whole) + ("." + fraction if fraction else "")
            return {"amount": value, "currency": cur}

        return currency_strategy.flatmap(build)

    def iban(self) -> st.SearchStrategy:
        """A valid IBAN of one of IBAN_COUNTRIES (registry structure, mod-97, national check)."""
        return st.sampled_from(IBAN_COUNTRIES).flatmap(self.iban_of)

    def iban_of(self, country: str) -> st.SearchStrategy:
        if country == "NO":
            return self.norwegian_bban().map(lambda bban: make_iban("NO", bban))
        parts = _bban_structure(country)
        bban = st.tuples(*(st.text(_STRUCT_ALPHABET[k], min_size=n, max_size=n) for n, k in parts))
        return bban.map(lambda pieces: make_iban(country, "".join(pieces)))

    @staticmethod
    def norwegian_bban() -> st.SearchStrategy:
        """11 digits whose last is the MOD11 check digit of the first ten."""
        first10 = st.text(string.digits, min_size=10, max_size=10)
        return first10.filter(lambda d: norwegian_bban_check_digit(d) is not None).map(
            lambda d: d + norwegian_bban_check_digit(d)
        )

    def account_reference_bban(self) -> st.SearchStrategy:
        schema = self.spec.schema("AccountReferenceBban")
        return self.object(schema, overrides={"bban": self.norwegian_bban()})

    @staticmethod
    def kid() -> st.SearchStrategy:
        """A KID: digits with a MOD10 (Luhn) or MOD11 check digit (MOD11's 10 written '-')."""
        payload = st.text(string.digits, min_size=KID_MIN_LENGTH - 1, max_size=KID_MAX_LENGTH - 1)
        check = st.sampled_from([kid_check_digit_mod10, kid_check_digit_mod11])
        return st.tuples(payload, check).map(lambda pair: pair[0] + pair[1](pair[0]))

    def remittance_structured(self) -> st.SearchStrategy:
        schema = self.spec.schema("RemittanceStructured")
        props = schema["properties"]
        kid_types = [t for t in DEFAULT_PROFILE.kid_reference_types]
        if NON_KID_REFERENCE_TYPE in kid_types:
            raise SpecError(f"{NON_KID_REFERENCE_TYPE} is a KID reference type in the default profile")

        def kid_entry(pair: tuple) -> dict:
            reference, reference_type = pair
            return {"reference": reference} if reference_type is None else {"reference": reference, "referenceType": reference_type}

        kid = st.tuples(self.kid(), st.sampled_from(kid_types)).map(kid_entry)
        other = st.fixed_dictionaries(
            {
                "reference": self.schema(props["reference"]),
                "referenceType": st.just(NON_KID_REFERENCE_TYPE),
                "referenceIssuer": self.schema(props["referenceIssuer"]),
            }
        )
        return st.one_of(kid, other)

    def execution_date(self) -> st.SearchStrategy:
        """Not before today (A13), at most a year ahead."""
        return st.dates(self.today, self.today + _dt.timedelta(days=EXECUTION_DAYS_AHEAD)).map(_iso)

    def bulk_entry(self) -> st.SearchStrategy:
        """Structured remittance (list form) or unstructured, never both (A20)."""
        schema = self.spec.schema("BulkEntry")
        text, array = "remittanceInformationUnstructured", "remittanceInformationStructuredArray"

        def exclusive(pair: tuple) -> dict:
            entry, keep_text = pair
            if text in entry and array in entry:
                del entry[array if keep_text else text]
            return entry

        return st.tuples(self.object(schema), st.booleans()).map(exclusive)

    def bulk_payment_request(self) -> st.SearchStrategy:
        schema = self.spec.schema("BulkPaymentRequest")
        payments = self.array(schema["properties"]["payments"], max_items=MAX_BULK_ENTRIES)
        return self._accounts(self.object(schema, overrides={"payments": payments}).filter(_distinct_accounts))

    def sepa_credit_transfer_request(self) -> st.SearchStrategy:
        return self._accounts(self.object(self.spec.schema("SepaCreditTransferRequest")).filter(_distinct_accounts))

    def _accounts(self, payments: st.SearchStrategy) -> st.SearchStrategy:
        """Realistic: every account reference in the payment's own currency (a bank may refuse a euro transfer from
        an account it holds in another); the full range keeps any currency of the set."""
        return payments.map(_accounts_in_payment_currency) if self.realistic else payments

    def periodic_payment_request(self) -> st.SearchStrategy:
        """A schedule that starts today or later and ends on or after its start; monthsOfExecution
        with the frequencies that take it (distinct months), absent otherwise (A31)."""
        schema = self.spec.schema("PeriodicPaymentRequest")
        schedule = next(part for part in schema["allOf"] if "$ref" not in part)["properties"]
        takes_months = set(self.spec.schema("PeriodicFrequency")["x-months-of-execution"]["required-with"])
        months = st.lists(self.schema(schedule["monthsOfExecution"]["items"]), min_size=1, max_size=MAX_ITEMS, unique=True)
        starts = st.dates(self.today, self.today + _dt.timedelta(days=EXECUTION_DAYS_AHEAD))

        @st.composite
        def build(draw) -> dict:
            payment = draw(self._all_of(schema))
            start = draw(starts)
            payment["startDate"] = _iso(start)
            if "endDate" in payment:
                payment["endDate"] = _iso(draw(st.dates(start, start + _dt.timedelta(days=PERIODIC_DAYS_LONG))))
            if payment["frequency"] in takes_months:
                payment["monthsOfExecution"] = draw(months)
            else:
                payment.pop("monthsOfExecution", None)
            return payment

        return self._accounts(build().filter(_distinct_accounts))

    def payment_status_response(self) -> st.SearchStrategy:
        """A status response whose fundsAvailable false comes with RJCT and PAYMENT_FAILED (A24)."""
        schema = self.spec.schema("PaymentStatusResponse")
        lack = schema["properties"]["fundsAvailable"]["x-lack-of-funds"]

        def consistent(status: dict) -> dict:
            if status.get("fundsAvailable") is False:
                status["transactionStatus"] = lack["transactionStatus"]
                messages = status.setdefault("tppMessages", [])
                if all(m.get("code") != lack["code"] for m in messages):
                    messages.append({"category": "ERROR", "code": lack["code"]})
            return status

        return self.object(schema).map(consistent)

    def sandbox_card_transaction_input(self) -> st.SearchStrategy:
        """Card input dates (the properties of date format) not after today (A14)."""
        schema = self.spec.schema("SandboxCardTransactionInput")
        past = st.dates(_MIN_DAY, self.today).map(_iso)
        dated = {name for name, sub in schema["properties"].items() if self._is_date(sub)}
        return self.object(schema, overrides={name: past for name in dated})

    def sandbox_account_transaction_input(self) -> st.SearchStrategy:
        """bookingDate not after valueDate (A14)."""
        schema = self.spec.schema("SandboxAccountTransactionInput")

        def ordered(entry: dict) -> dict:
            booking, value = entry.get("bookingDate"), entry.get("valueDate")
            if booking and value and booking > value:  # ISO dates order as text
                entry["bookingDate"], entry["valueDate"] = value, booking
            return entry

        return self.object(schema).map(ordered)

    def error_body(self) -> st.SearchStrategy:
        """status and code a pair of the spec's x-status-codes (the Errors table, A7, A8)."""
        schema = self.spec.schema("ErrorBody")
        pairs = [(p["status"], code) for p in schema["x-status-codes"] for code in p["codes"]]

        def paired(pair_and_body: tuple) -> dict:
            (status, code), body = pair_and_body
            return {**body, "status": status, "code": code}

        return st.tuples(st.sampled_from(pairs), self.object(schema)).map(paired)

    def _is_date(self, schema: dict) -> bool:
        resolved = self.spec.resolve(schema["$ref"]) if "$ref" in schema else schema
        return resolved.get("format") == "date"


def _accounts_in_payment_currency(payment: dict) -> dict:
    """A copy of a payment whose account references (debtor, creditors) carry its instructed currency."""
    payment = copy.deepcopy(payment)
    entries = [payment, *(e for e in payment.get("payments", ()) if isinstance(e, dict))]
    amounts = [e.get("instructedAmount") for e in entries]
    currency = next((a["currency"] for a in amounts if isinstance(a, dict) and isinstance(a.get("currency"), str)),
                    None)
    for account in [payment.get("debtorAccount"), *(e.get("creditorAccount") for e in entries)]:
        if currency and isinstance(account, dict) and "currency" in account:
            account["currency"] = currency
    return payment


def _distinct_accounts(payment: dict) -> bool:
    """No creditor account equal to the debtor account (the same-debtor-creditor warning)."""

    def account_id(account: Any) -> Any:
        return account.get("iban", account.get("bban")) if isinstance(account, dict) else None

    debtor = account_id(payment.get("debtorAccount"))
    creditors = [account_id(e.get("creditorAccount")) for e in payment.get("payments", ())]
    if "creditorAccount" in payment:
        creditors.append(account_id(payment["creditorAccount"]))
    return debtor not in creditors


def _json_key(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


@functools.lru_cache(maxsize=None)
def _bban_structure(country: str) -> tuple[tuple[int, str], ...]:
    """(length, n|a|c) parts of a country's BBAN, from the IBAN registry the validator uses."""
    from stdnum import numdb

    info = numdb.get("iban").info(country)
    props = info[0][1] if info and info[0][0] == country else {}
    parts = tuple((int(n), k) for n, k in _STRUCT_PART.findall(props.get("bban", "")))
    if not parts or 4 + sum(n for n, _ in parts) != iban_length(country):
        raise SpecError(f"no usable IBAN registry structure for {country}")
    return parts


@functools.lru_cache(maxsize=64)
def _strategies(spec_id: int, today: _dt.date, response: bool, realistic: bool) -> SpecStrategies:
    return SpecStrategies(_SPECS[spec_id], today=today, response=response, realistic=realistic)


_SPECS: dict[int, Spec] = {}


def _for(spec: Spec | None, today: _dt.date | str, response: bool, realistic: bool = False) -> SpecStrategies:
    spec = spec or load_spec()
    _SPECS[id(spec)] = spec
    day = _dt.date.fromisoformat(today) if isinstance(today, str) else today
    return _strategies(id(spec), day, response, realistic)


def valid_payloads(kind: str, *, today: _dt.date | str, spec: Spec | None = None,
                   realistic: bool = False) -> st.SearchStrategy:
    """Payloads of ``kind`` that the validator accepts without any finding at ``today`` (``realistic``: away from
    the boundaries, see the module's documentation)."""
    spec = spec or load_spec()
    k = spec.kind(kind)
    return _for(spec, today, not k.is_request, realistic).component(k.schema_name)


def valid_values(component: str, *, kind: str, today: _dt.date | str, spec: Spec | None = None,
                 realistic: bool = False) -> st.SearchStrategy:
    """Valid values of one component schema as it occurs in ``kind`` (for building payloads)."""
    spec = spec or load_spec()
    return _for(spec, today, not spec.kind(kind).is_request, realistic).component(component)


def covered_kinds(spec: Spec | None = None) -> tuple[str, ...]:
    """Every kind of the spec (the compiler handles all of them)."""
    return tuple((spec or load_spec()).kinds)
