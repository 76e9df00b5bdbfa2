"""Payment status responses: what a rejection for lack of funds looks like (A7, A24)."""
from __future__ import annotations

from . import Example, Issue, rule

REJECTED = "getPaymentStatus 200 rejectedNoFunds"


def _lack_of_funds(ctx) -> dict:
    """{transactionStatus, code} of a payment rejected for lack of funds (the spec's x-lack-of-funds)."""
    return ctx.spec.schema("PaymentStatusResponse")["properties"]["fundsAvailable"]["x-lack-of-funds"]


@rule(
    "funds-unavailable-rejected",
    name="Lack of funds is a rejection with PAYMENT_FAILED",
    ref="States and transitions",
    targets=["PaymentStatusResponse"],
    direction="response",
    code=None,
    status=None,
    assumptions=["A7", "A24"],
    good=Example("payment-status", base=REJECTED),
    bad=Example("payment-status", base=REJECTED, patch=(("/transactionStatus", "PDNG"),), pointer="/transactionStatus"),
)
def funds_unavailable_rejected(status, ctx, at):
    """A payment rejected for lack of funds is flagged by fundsAvailable in its status response
    (release 1.14.2). fundsAvailable false goes with transactionStatus RJCT and a tppMessage
    PAYMENT_FAILED saying why: insufficient funds yield a proper error, never a silent flag."""
    if not isinstance(status, dict) or status.get("fundsAvailable") is not False:
        return
    expected = _lack_of_funds(ctx)
    actual = status.get("transactionStatus")
    # a status outside the code set is the schema's finding, not a second one here
    if actual in ctx.spec.code_set("TransactionStatusBulk") and actual != expected["transactionStatus"]:
        yield Issue("/transactionStatus", f"fundsAvailable is false, so the payment is {expected['transactionStatus']}, not {actual}")
    messages = status.get("tppMessages", [])
    codes = ctx.spec.code_set("MessageCode")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and m.get("code") in codes for m in messages):
        return  # malformed messages or codes outside the set are the schema's finding
    if expected["code"] not in {m["code"] for m in messages}:
        yield Issue("/fundsAvailable", f"fundsAvailable is false without a tppMessage {expected['code']} saying why")
