"""Dates: requested execution date (A13) and sandbox booking dates (A14)."""
from __future__ import annotations

import datetime as _dt

from . import Example, Issue, rule

SEPA = "createSepaCreditTransfer request rentToBerlin"
CARDS = "createSandboxCardTransactions request groceriesAndHotel"
ACCOUNT_TX = "createSandboxAccountTransactions request newspaper"


def as_date(value) -> _dt.date | None:
    if isinstance(value, str) and len(value) == 10:
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


@rule(
    "execution-date-past",
    name="Requested execution date not in the past",
    ref="Resources and their fields › Single SEPA credit transfer request",
    targets=["ExecutionDate"],
    code="EXECUTION_DATE_INVALID",
    assumptions=["A13"],
    good=Example("sepa-credit-transfer", base=SEPA),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/requestedExecutionDate", "2026-06-30"),), pointer="/requestedExecutionDate"),
)
def execution_date_past(value, ctx, at):
    """requestedExecutionDate must not be before today in Europe/Oslo, the bank's business day.
    "Today" comes from an injectable clock (--today, the context file or the profile) so results
    are reproducible."""
    day = as_date(value)
    if day is not None and day < ctx.today:
        # The section of the payment the date belongs to (SEPA or bulk).
        ref = ctx.spec.schema(ctx.kind.schema_name).get("x-document-ref")
        yield Issue("", f"{value} is before today ({ctx.today.isoformat()}, Europe/Oslo)", ref=ref)


@rule(
    "card-date-future",
    name="Card transaction dates not after today",
    ref="Endpoints › 6. Create sandbox card transactions",
    targets=["SandboxCardTransactionInput"],
    assumptions=["A14"],
    good=Example("card-transactions", base=CARDS),
    bad=Example("card-transactions", base=CARDS, patch=(("/1/bookingDate", "2026-07-02"),), pointer="/1/bookingDate"),
)
def card_date_future(entry, ctx, at):
    """Booking dates of created sandbox card transactions must be before the current time; card
    input has no value date, so bookingDate and transactionDate must not lie after today."""
    if not isinstance(entry, dict):
        return
    for name in ("bookingDate", "transactionDate"):
        day = as_date(entry.get(name))
        if day is not None and day > ctx.today:
            yield Issue(f"/{name}", f"{name} {entry[name]} lies after today ({ctx.today.isoformat()})")


@rule(
    "booking-after-value",
    name="Booking date not after value date",
    ref="Endpoints › 6. Create sandbox card transactions",
    targets=["SandboxAccountTransactionInput"],
    assumptions=["A14"],
    good=Example("sandbox-account-transactions", base=ACCOUNT_TX),
    bad=Example("sandbox-account-transactions", base=ACCOUNT_TX, patch=(("/0/bookingDate", "2026-06-13"),), pointer="/0/bookingDate"),
)
def booking_after_value(entry, ctx, at):
    """Where a transaction has a value date (sandbox account transaction creation), its booking
    date must not be after the value date."""
    if not isinstance(entry, dict):
        return
    booking, value = as_date(entry.get("bookingDate")), as_date(entry.get("valueDate"))
    if booking and value and booking > value:
        yield Issue("/bookingDate", f"bookingDate {entry['bookingDate']} is after valueDate {entry['valueDate']}")
