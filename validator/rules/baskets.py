"""Signing baskets: 1 to 10 distinct payments, no bulk or periodic payment, status = worst case."""
from __future__ import annotations

from ..findings import WARNING
from . import Example, Issue, rule

REF = "Resources and their fields › Signing basket"
BASKET = "createSigningBasket request twoSepaPayments"
BASKET_RESPONSE = "createSigningBasket 201 created"
IDS = ("enc!!Qk9LLVNFUEEtMjAyNi0wNy0wMS0wMDAx", "enc!!Qk9LLVNFUEEtMjAyNi0wNy0wMS0wMDAy")
MAX_PAYMENTS = 10  # also the spec's maxItems; the spec's value is what the schema enforces

SEPA_CONTEXT = {
    "payments": {
        IDS[0]: {"service": "payments", "product": "sepa-credit-transfers", "transactionStatus": "RCVD"},
        IDS[1]: {"service": "payments", "product": "sepa-credit-transfers", "transactionStatus": "RCVD"},
    }
}
MIXED_CONTEXT = {
    "payments": {
        IDS[0]: {"service": "payments", "product": "sepa-credit-transfers", "transactionStatus": "RCVD"},
        IDS[1]: {"service": "bulk-payments", "product": "norwegian-domestic-credit-transfers", "transactionStatus": "RCVD"},
    }
}


def _limits(ctx) -> tuple[int, int]:
    schema = ctx.spec.schema("SigningBasketRequest")["properties"]["paymentIds"]
    return schema.get("minItems", 1), schema.get("maxItems", MAX_PAYMENTS)


@rule(
    "basket-size",
    name="Signing basket holds 1 to 10 payments",
    ref="Limits",
    targets=["basket-size"],
    good=Example("signing-basket", base=BASKET),
    bad=Example("signing-basket", payload={"paymentIds": [f"enc!!UEFZLTAw{i:02d}" for i in range(11)]}, pointer="/paymentIds"),
)
def basket_size(ids, ctx, at):
    """A signing basket groups at least one and at most 10 already created payments."""
    if not isinstance(ids, list):
        yield Issue("", f"paymentIds must be an array of payment ids, got {type(ids).__name__}")
        return
    low, high = _limits(ctx)
    if len(ids) < low:
        yield Issue("", f"a signing basket needs at least {low} payment id")
    elif len(ids) > high:
        yield Issue("", f"a signing basket holds at most {high} payments, got {len(ids)}")


@rule(
    "basket-duplicate-ids",
    name="No payment twice in a basket",
    ref=REF,
    targets=["basket-duplicate-ids"],
    good=Example("signing-basket", base=BASKET),
    bad=Example("signing-basket", payload={"paymentIds": [IDS[0], IDS[1], IDS[0]]}, pointer="/paymentIds/2"),
)
def basket_duplicate_ids(ids, ctx, at):
    """Each payment appears once in a basket; a repeated id would be authorised twice."""
    if not isinstance(ids, list):
        return
    first: dict = {}
    for i, pid in enumerate(ids):
        if not isinstance(pid, str):
            continue
        if pid in first:
            yield Issue(f"/{i}", f"payment id {pid!r} is already at /paymentIds/{first[pid]}")
        else:
            first[pid] = i


@rule(
    "basket-reference-mix",
    name="No bulk or periodic payment in a basket",
    ref="Endpoints › 1. Create signing basket",
    targets=["SigningBasketRequest"],
    code="REFERENCE_MIX_INVALID",
    assumptions=["A7"],
    good=Example("signing-basket", base=BASKET, context=SEPA_CONTEXT),
    bad=Example("signing-basket", base=BASKET, context=MIXED_CONTEXT, pointer="/paymentIds/1"),
)
def basket_reference_mix(basket, ctx, at):
    """Bulk payments and periodic payments cannot be included in a signing basket: 400
    REFERENCE_MIX_INVALID (release 1.7.13). Which service a payment id belongs to comes from the
    context (--context)."""
    ids = basket.get("paymentIds") if isinstance(basket, dict) else None
    if not isinstance(ids, list):
        return
    for i, pid in enumerate(ids):
        facts = ctx.context.payments.get(pid) if isinstance(pid, str) else None
        if facts and facts.service in ("bulk-payments", "periodic-payments"):
            yield Issue(f"/paymentIds/{i}", f"payment {pid} is a {facts.service.replace('-payments', '')} payment; baskets take single payments only")


@rule(
    "basket-payment-unknown",
    name="Basket payment known to the context",
    ref="Endpoints › 1. Create signing basket",
    targets=["SigningBasketRequest"],
    severity=WARNING,
    good=Example("signing-basket", base=BASKET, context=SEPA_CONTEXT),
    bad=Example(
        "signing-basket",
        base=BASKET,
        context={"payments": {IDS[0]: SEPA_CONTEXT["payments"][IDS[0]]}},
        pointer="/paymentIds/1",
    ),
)
def basket_payment_unknown(basket, ctx, at):
    """The payments of a basket must exist; when a context lists payments, an id it does not know
    cannot be checked for its service and may not exist."""
    ids = basket.get("paymentIds") if isinstance(basket, dict) else None
    if not isinstance(ids, list) or not ctx.context.payments:
        return
    for i, pid in enumerate(ids):
        if isinstance(pid, str) and pid not in ctx.context.payments:
            yield Issue(f"/paymentIds/{i}", f"payment {pid} is not in the context; its service cannot be checked")


def ranking(ctx) -> list[tuple[str, tuple[str, ...]]]:
    if ctx.profile.basket_status_ranking:
        return list(ctx.profile.basket_status_ranking)
    spec_ranking = ctx.spec.schema("TransactionStatusBasket")["x-worst-case-ranking"]
    return [(r["basket"], tuple(r["payments"])) for r in spec_ranking]


def worst_case(statuses, ctx) -> tuple[str, str] | None:
    """(basket status, the payment status that decided it), or None when no status is ranked."""
    order = ranking(ctx)
    rank = {status: (i, basket) for i, (basket, members) in enumerate(order) for status in members}
    ranked = [(rank[s][0], rank[s][1], s) for s in statuses if s in rank]
    if not ranked:
        return None
    _, basket, decided_by = min(ranked)
    return basket, decided_by


@rule(
    "basket-status-worst-case",
    name="Basket status is the worst case of its payments",
    ref="States and transitions",
    targets=["SigningBasketResponse", "SigningBasket", "SigningBasketStatusResponse"],
    direction="response",
    code=None,
    status=None,
    assumptions=["A2"],
    good=Example("signing-basket-response", base=BASKET_RESPONSE, context=SEPA_CONTEXT),
    bad=Example(
        "signing-basket-response",
        base=BASKET_RESPONSE,
        context={"payments": {IDS[0]: {"service": "payments", "transactionStatus": "RJCT"}, IDS[1]: SEPA_CONTEXT["payments"][IDS[1]]}},
        pointer="/transactionStatus",
    ),
)
def basket_status_worst_case(basket, ctx, at):
    """A basket is not atomic: its single status reports the worst case of its payments. Payment
    statuses rank, worst first, RJCT (RJCT, CANC) < RCVD < PATC (PDNG, PART) < ACTC (ACTC, ACCP,
    ACSP, ACSC, ACWC, ACWP). The payments' statuses come from the context."""
    if not isinstance(basket, dict) or not ctx.context.payments:
        return
    ids = basket.get("payments")
    members = ids if isinstance(ids, list) else list(ctx.context.payments)
    statuses = {}
    for pid in members:
        facts = ctx.context.payments.get(pid) if isinstance(pid, str) else None
        if facts and facts.transaction_status:
            statuses[pid] = facts.transaction_status
    expected = worst_case(statuses.values(), ctx)
    actual = basket.get("transactionStatus")
    if expected and isinstance(actual, str) and actual != expected[0]:
        culprit = next(pid for pid, s in statuses.items() if s == expected[1])
        yield Issue(
            "/transactionStatus",
            f"basket status {actual} is not the worst case of its payments: {expected[0]} (payment {culprit} is {expected[1]})",
        )
