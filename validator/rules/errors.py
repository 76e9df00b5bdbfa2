"""Error bodies: the status a bulk error body states goes with its code (Errors table, A7, A8)."""
from __future__ import annotations

from ..schema import short_value
from . import Example, Issue, rule

BULK_FORMAT_ERROR = "createBulkPayment 400 formatError"


@rule(
    "error-status-code",
    name="Error body status goes with its code",
    ref="Errors › Responses of the bulk payment operation",
    targets=["ErrorBody"],
    direction="response",
    code=None,
    status=None,
    assumptions=["A7", "A8"],
    good=Example("error", base=BULK_FORMAT_ERROR),
    bad=Example("error", base=BULK_FORMAT_ERROR, patch=(("/status", 404),), pointer="/status"),
)
def error_status_code(body, ctx, at):
    """The bulk operation's error body carries the HTTP status and the code together; the Errors table pairs
    them (400 FORMAT_ERROR, 403 PRODUCT_INVALID, 404 RESOURCE_UNKNOWN, 500 SYSTEM_ERROR) and the decisions add
    the codes of the other failures (A7, A8). The pairs are the spec's data (ErrorBody x-status-codes)."""
    if not isinstance(body, dict):
        return
    status, code = body.get("status"), body.get("code")
    if code not in ctx.spec.code_set("MessageCode") or isinstance(status, bool) or not isinstance(status, (int, float)):
        return  # the schema reports a missing, mistyped or unknown member
    pairs = ctx.spec.schema(at.target)["x-status-codes"]
    statuses = sorted({p["status"] for p in pairs if code in p["codes"]})
    if statuses and status not in statuses:
        expected = " or ".join(str(s) for s in statuses)
        yield Issue("/status", f"status {_number(status)} does not go with code {code}, which is answered with {expected}")
    elif not statuses:
        codes = sorted({c for p in pairs if p["status"] == status for c in p["codes"]})
        allowed = f"status {_number(status)} goes with {', '.join(codes)}" if codes else (
            f"the bulk operation answers no status {_number(status)} with an error body")
        yield Issue("/code", f"code {code} is not one of the bulk operation's error codes; {allowed}")


def _number(value: int | float) -> str:
    # An int may be hundreds of digits long (no float holds it); a float may be infinite.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return short_value(value)
