"""Periodic payments (A31): the schedule's dates and the months of a MonthlyVariable payment."""
from __future__ import annotations

from . import REMOVE, Example, Issue, rule
from .dates import as_date

REF = "Errors › Further stated error behaviour"
MONTHLY = "createPeriodicPayment request monthlyRent"
VARIABLE = "createPeriodicPayment request kindergartenExceptJuly"
MONTHS = "monthsOfExecution"


def _months_required_with(ctx) -> tuple[str, ...]:
    """The frequencies that take monthsOfExecution (the spec's PeriodicFrequency)."""
    return tuple(ctx.spec.schema("PeriodicFrequency")["x-months-of-execution"]["required-with"])


@rule(
    "periodic-start-date-past",
    name="Periodic payment starts today or later",
    ref=REF,
    targets=["PeriodicPaymentRequest"],
    code="EXECUTION_DATE_INVALID",
    assumptions=["A7", "A13", "A31"],
    good=Example("periodic-payment", base=MONTHLY, patch=(("/startDate", "2026-07-01"),)),
    bad=Example("periodic-payment", base=MONTHLY, patch=(("/startDate", "2026-06-30"),), pointer="/startDate"),
)
def periodic_start_date_past(payment, ctx, at):
    """A periodic payment's startDate is its first execution day: like a requested execution date it
    must not be before today in Europe/Oslo (answered 400 EXECUTION_DATE_INVALID). "Today" comes
    from the injectable clock (--today, the context file or the profile)."""
    start = as_date(payment.get("startDate")) if isinstance(payment, dict) else None
    if start is not None and start < ctx.today:
        yield Issue("/startDate", f"startDate {payment['startDate']} is before today ({ctx.today.isoformat()}, Europe/Oslo)")


@rule(
    "periodic-end-before-start",
    name="Periodic payment ends on or after its start",
    ref=REF,
    targets=["PeriodicPaymentRequest"],
    assumptions=["A31"],
    good=Example("periodic-payment", base=MONTHLY, patch=(("/endDate", "2026-08-01"),)),
    bad=Example("periodic-payment", base=MONTHLY, patch=(("/endDate", "2026-07-31"),), pointer="/endDate"),
)
def periodic_end_before_start(payment, ctx, at):
    """endDate, the last day a periodic payment may execute, must not be before its startDate; a
    schedule that ends before it begins never pays anything."""
    if not isinstance(payment, dict):
        return
    start, end = as_date(payment.get("startDate")), as_date(payment.get("endDate"))
    if start and end and end < start:
        yield Issue("/endDate", f"endDate {payment['endDate']} is before startDate {payment['startDate']}")


@rule(
    "months-of-execution-frequency",
    name="monthsOfExecution exactly with MonthlyVariable",
    ref=REF,
    targets=["PeriodicPaymentRequest"],
    assumptions=["A31"],
    good=Example("periodic-payment", base=VARIABLE),
    bad=Example("periodic-payment", base=VARIABLE, patch=(("/" + MONTHS, REMOVE),), pointer="/" + MONTHS),
)
def months_of_execution_frequency(payment, ctx, at):
    """monthsOfExecution names the months a MonthlyVariable periodic payment executes in (release
    1.18.0): it is required, and not empty, with frequency MonthlyVariable, and not allowed with any
    other frequency, whose months follow from the frequency itself."""
    if not isinstance(payment, dict):
        return
    frequency = payment.get("frequency")
    if not isinstance(frequency, str):
        return  # the schema reports a missing or mistyped frequency
    months = payment.get(MONTHS)
    if frequency in _months_required_with(ctx):
        if months is None or months == []:
            state = "absent" if months is None else "empty"
            yield Issue("/" + MONTHS, f"frequency {frequency} needs {MONTHS} (the months it executes in); it is {state}")
    elif MONTHS in payment:
        wanted = " or ".join(_months_required_with(ctx))
        yield Issue("/" + MONTHS, f"{MONTHS} is only allowed with frequency {wanted}, not {frequency}")


@rule(
    "months-of-execution-duplicate",
    name="No month twice in monthsOfExecution",
    ref=REF,
    targets=["months-of-execution-duplicate"],
    assumptions=["A31"],
    good=Example("periodic-payment", base=VARIABLE),
    bad=Example("periodic-payment", base=VARIABLE, patch=(("/" + MONTHS + "/1", "1"),), pointer="/" + MONTHS + "/1"),
)
def months_of_execution_duplicate(months, ctx, at):
    """A MonthlyVariable periodic payment whose month identifiers contain duplicates is rejected
    (release 1.18.1): each month is named once, in an array."""
    if not isinstance(months, list):
        yield Issue("", f"{MONTHS} must be an array of month identifiers such as [\"1\", \"7\"], got {type(months).__name__}")
        return
    first: dict = {}
    for i, month in enumerate(months):
        if not isinstance(month, str):
            continue  # the schema reports a mistyped month
        if month in first:
            yield Issue(f"/{i}", f"month {month!r} is already at /{MONTHS}/{first[month]}")
        else:
            first[month] = i
