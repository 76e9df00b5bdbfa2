"""Amounts: the text grammar, precision 18 / scale 5, minor-unit digits, greater than zero (A9)."""
from __future__ import annotations

import functools
import re

from . import Example, Issue, rule

_DIGITS = re.compile(r"^([0-9]+)(?:\.([0-9]+))?$")
INTEGER_DIGITS = 13  # precision 18 - scale 5
SCALE = 5
REF = "Resources and their fields › Amount"
SEPA = "createSepaCreditTransfer request rentToBerlin"
BULK = "createBulkPayment request invoicesWithKid"
SEPA_RESPONSE = "createSepaCreditTransfer 201 received"


def split_amount(value: object) -> tuple[str, str] | None:
    """(integer digits, fraction digits) of a well-formed amount text, else None."""
    if not isinstance(value, str):
        return None
    return _split_cached(value) if len(value) <= _CACHED_LENGTH else _split_text(value)


def _split_text(value: str) -> tuple[str, str] | None:
    m = _DIGITS.fullmatch(value)  # not .match: "$" would accept a final newline
    return (m.group(1), m.group(2) or "") if m else None


_CACHED_LENGTH = 64  # longer texts are not amounts; caching them would hold on to large inputs
_split_cached = functools.lru_cache(maxsize=256)(_split_text)  # four rules read each amount in turn


def _grammar_problem(value: str) -> str:
    if not value:
        return "the amount is empty"
    if value.strip() != value or " " in value:
        return f"{value!r} contains spaces; write digits with '.' as the only separator"
    if value[0] in "+-":
        return f"{value!r} has a sign; amounts are written without one"
    if "e" in value.lower():
        return f"{value!r} uses an exponent; write the decimal digits out"
    if "," in value:
        return f"{value!r} uses ','; the decimal separator is '.' and there are no thousands separators"
    if value.endswith(".") or value.startswith("."):
        return f"{value!r} needs digits on both sides of '.'"
    return f"{value!r} is not a decimal of digits with an optional '.' and fraction"


@rule(
    "amount-grammar",
    name="Amount is a decimal string",
    ref=REF,
    targets=["amount-grammar"],
    direction=None,
    assumptions=["A9"],
    good=Example("sepa-credit-transfer", base=SEPA),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "1 250,00"),), pointer="/instructedAmount/amount"),
)
def amount_grammar(value, ctx, at):
    """Amounts are JSON strings holding a decimal: digits, optionally '.' and fraction digits. No sign,
    no exponent, no spaces, no thousands separators (amounts are strings since release 1.7.6)."""
    if not isinstance(value, str):
        kind = "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__
        yield Issue("", f"the amount must be a JSON string such as \"150.00\", got {kind} {value!r}"[:200])
    elif split_amount(value) is None:
        yield Issue("", _grammar_problem(value)[:200])


@rule(
    "amount-precision",
    name="Amount within precision 18, scale 5",
    ref=REF,
    targets=["amount-precision"],
    direction=None,
    assumptions=["A9"],
    good=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "9999999999999.99"),)),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "12345678901234.00"),), pointer="/instructedAmount/amount"),
)
def amount_precision(value, ctx, at):
    """The contract's amount has precision 18 and scale 5: at most 13 integer digits and at most 5
    fraction digits."""
    parts = split_amount(value)
    if parts is None:
        return
    whole, fraction = parts
    if len(whole) > INTEGER_DIGITS:
        yield Issue("", f"{len(whole)} integer digits; at most {INTEGER_DIGITS} fit precision 18, scale 5")
    if len(fraction) > SCALE:
        yield Issue("", f"{len(fraction)} fraction digits; at most {SCALE} fit scale 5")


def _digits_for(amount, ctx):
    """(currency, minor units, fraction digits) when the amount and currency are well formed."""
    if not isinstance(amount, dict):
        return None
    currency = amount.get("currency")
    parts = split_amount(amount.get("amount"))
    units = ctx.minor_units.get(currency) if isinstance(currency, str) else None
    if parts is None or units is None:
        return None
    return currency, units, len(parts[1])


def _plural(n: int) -> str:
    return f"{n} fraction digit" + ("" if n == 1 else "s")


@rule(
    "amount-minor-units",
    name="Request amount digits follow the currency",
    ref=REF,
    targets=["Amount"],
    assumptions=["A9", "A10"],
    good=Example("bulk-payment", base=BULK, patch=(("/payments/1/instructedAmount", {"amount": "349.5", "currency": "NOK"}),)),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "1250.001"),), pointer="/instructedAmount/amount"),
)
def amount_minor_units(amount, ctx, at):
    """A request amount carries at most as many fraction digits as the currency's ISO 4217 minor
    units ("100" and "100.5" are fine for EUR, "100.001" is not; JPY takes none). An implementer
    profile may demand exactly that many (amount-digits: exact)."""
    found = _digits_for(amount, ctx)
    if found is None:
        return
    currency, units, digits = found
    if ctx.profile.amount_digits == "exact" and digits != units:
        yield Issue("/amount", f"{currency} amounts carry exactly {_plural(units)}, got {digits}")
    elif digits > units:
        if units == 0:
            yield Issue("/amount", f"{currency} has no minor unit: write a whole number, got {_plural(digits)}")
        else:
            yield Issue("/amount", f"{currency} allows at most {_plural(units)}, got {digits}")


@rule(
    "response-amount-digits",
    name="Response amount has exactly the minor-unit digits",
    ref=REF,
    targets=["Amount"],
    direction="response",
    code=None,
    status=None,
    assumptions=["A9", "A10"],
    good=Example("payment-response", base=SEPA_RESPONSE),
    bad=Example("payment-response", base=SEPA_RESPONSE, patch=(("/transactionFees/amount", "0"),), pointer="/transactionFees/amount"),
)
def response_amount_digits(amount, ctx, at):
    """Amounts the bank sends are serialised with exactly the currency's minor-unit digits
    (x-accept-fix amount-as-string: "amounts serialise as strings with the correct number of decimals")."""
    found = _digits_for(amount, ctx)
    if found is None:
        return
    currency, units, digits = found
    if digits != units:
        yield Issue("/amount", f"{currency} amounts carry exactly {_plural(units)}, got {digits}")


@rule(
    "amount-positive",
    name="Instructed amount greater than zero",
    ref=REF,
    targets=["amount-positive"],
    assumptions=["A9"],
    good=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "0.01"),)),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/instructedAmount/amount", "0.00"),), pointer="/instructedAmount/amount"),
)
def amount_positive(amount, ctx, at):
    """An instructed amount must be greater than zero: a payment of nothing is not a payment."""
    if not isinstance(amount, dict):
        return
    parts = split_amount(amount.get("amount"))
    if parts is not None and not (parts[0] + parts[1]).strip("0"):
        yield Issue("/amount", f"the instructed amount must be greater than zero, got {amount['amount']!r}")
