"""Every limit reached, not a sample: each length, range, items, enumeration, date-format and pattern limit of each
field of the creations whose answer depends on the request alone is broken at its boundary once per run, whatever
``--max-examples`` says (the schema mutations of the semantic suite pick one site per example, so a few examples
leave most fields untried: an off-by-one in a limit of a field no example picked went unnoticed).

The boundaries are the edge derivation's (:meth:`conformance.edges.derive.Deriver.boundaries`, the list behind
``obvalidate edge-cases``): per limit, the edge just outside it (max+1, min−1, the first value outside a range, a
value outside the enumeration, 29 February of a common year, a pattern broken by one character or digit) and the
edge just inside it (the limit itself, a member, 29 February of a leap year). Each is the operation's spec example
(the valid control, sent first: refused, its refusal is the finding and the boundaries are not sent) with that one
field moved, and the validator is the oracle: the outside value must be refused with the status and code its
finding names, the inside value accepted.
"""
from __future__ import annotations

from typing import Any

from conformance.edges.derive import Boundary, Deriver, Edge
from conformance.exchange.oracle import CODE_UNDECIDED
from validator import Validator

from conformance.mutations import REQUEST_OPERATIONS
from validator.findings import ERROR

from ..model import Expected, NotExercised, check
from ..session import Session
from . import semantic
from .data import PLACEHOLDERS

CHECK_ID = "negative:boundaries"
# request kind -> the creation its boundaries are sent to: the semantic suite's, and a standing order's creation,
# which checks the request only (A26, A31)
OPERATIONS = {**semantic.OPERATIONS, "periodic-payment": "createPeriodicPayment"}
# Kinds whose boundaries are not sent, and why (the semantic suite's reasons, and these).
LEFT_OUT = {**semantic.LEFT_OUT,
            "batch-run": "a batch run executes the target's pending payments: its answer depends on them, not on the "
                         "request alone (A25; the stateful suite runs it)"}


# The reads whose query parameters carry limits, answered by the request and the fixed test data alone.
QUERY_OPERATIONS = tuple(op for op, kind in REQUEST_OPERATIONS.items() if kind is None)
_DERIVED: dict[tuple, tuple[Deriver, list[Boundary]]] = {}  # (spec, profile, day) -> derived: once per process


def boundaries(session: Session) -> tuple[Deriver, list[Boundary]]:
    """The deriver and the boundaries sent: the body fields' of the kinds sent and the query parameters' of the
    reads, at the run's day in Oslo with the profile's validator (derived once per spec, profile and day in a
    process; a query judged with the placeholder test data, its path's ids being no limit of the query)."""
    today = session.today()
    key = (id(session.spec), repr(session.profile), today)
    if key not in _DERIVED:
        if len(_DERIVED) > 8:
            _DERIVED.clear()
        deriver = Deriver(session.spec, Validator(spec=session.spec, profile=session.profile, today=today), today)
        client = semantic._client(session)
        found = deriver.boundaries(tuple(OPERATIONS))
        for operation in QUERY_OPERATIONS:
            where = semantic._where(session, operation, PLACEHOLDERS)

            def breaks(query: dict[str, str], operation: str = operation, where: dict = where) -> set[str]:
                request = client.prepare(operation, query=query, **where)
                return {f.rule for f in session.findings_for(request) if f.severity == ERROR}

            found += deriver.query_boundaries(operation, breaks)
        _DERIVED[key] = (deriver, found)
    return _DERIVED[key]


def _control(session: Session, client, operation: str, where: dict, success: tuple[int, ...], body: Any,
             query: tuple[tuple[str, str], ...]) -> bool:
    """The valid request every boundary of ``operation`` is made from (the spec's example; a read's required query
    parameters), sent once. Refused, that refusal is the finding (the example may itself sit at a limit, such as a
    14-character bankTransactionCode) and the boundaries are not sent: each would be refused for it. True when it
    was accepted."""
    request = _prepared(client, operation, where, body, query)
    expected, errors = session.predict(request, success=success)
    if errors:   # the profile's choices make the example no valid control (a product not offered, its KID algorithm)
        raise NotExercised("the operation's valid control is not valid under the profile, so none of its boundaries "
                           "would be refused for its limit alone: " + "; ".join(f"{e.rule}: {e.message}" for e in errors))
    exchange = session.send(client, request, operation)
    session.expect(exchange, expected, rule=semantic.CONTROL, ref="Endpoints",
                   message=f"the valid control of {operation} every boundary of the operation is made from was "
                           f"refused ({semantic._refusal(exchange.response)}); its boundaries were not sent")
    # Sent on only when the target accepted it: a control refused under another reading (a difference, such as
    # another KID algorithm) would have every boundary refused for that reading, not for its limit.
    return 200 <= (exchange.answer.status or 0) < 300


def _prepared(client, operation: str, where: dict, body: Any, query: tuple[tuple[str, str], ...]):
    """A request of the operation: a creation with its body, a read with its query."""
    if query:
        return client.prepare(operation, query=dict(query), **where)
    return client.prepare(operation, body=body, **where)


def _send(session: Session, client, operation: str, where: dict, success: tuple[int, ...], boundary: Boundary,
          edge: Edge) -> None:
    request = _prepared(client, operation, where, edge.body, edge.query)
    exchange = session.send(client, request, operation)
    expected, errors = session.predict(request, success=success)
    if errors and all(e.rule in CODE_UNDECIDED for e in errors):
        expected = Expected(expected.statuses, (), f"{expected.why} (no code decided)")
    side = "outside" if edge is boundary.outside else "just inside"
    limit = f"{boundary.keyword} {boundary.limit}" if boundary.limit is not None else boundary.keyword
    session.expect(exchange, expected, rule=errors[0].rule if errors else edge.rule, ref=edge.section,
                   message=f"{edge.field} at {edge.pointer}, {side} its limit ({limit}): {edge.edge}: the validator "
                           f"expects {expected.describe()} ({expected.why}); the target answered "
                           f"{exchange.answer.describe()}")


def send_boundaries(session: Session, operation: str, chosen: list[Boundary] | None = None) -> int:
    """The control of ``operation`` and both sides of each of its boundaries (``chosen``: these only); the number
    of boundaries sent (none when the control was refused). Raises NotExercised when the target cannot be asked
    (the operation absent in the profile or not offered, no test data for its path)."""
    deriver, every = boundaries(session)
    chosen = [b for b in every if b.operation == operation] if chosen is None else chosen
    if not chosen:
        return 0
    client = semantic._client(session)
    where = semantic._where(session, operation)
    success = semantic._created(session, operation)
    kind = chosen[0].kind
    base = deriver.bases[kind][1] if kind else None
    control = tuple(deriver.query_base(operation).items()) if not kind else ()
    if not _control(session, client, operation, where, success, base, control):
        return 0
    for boundary in chosen:
        for edge in (boundary.outside, boundary.inside):
            _send(session, client, operation, where, success, boundary, edge)
    return len(chosen)


def run(session: Session) -> None:
    for operation in [*OPERATIONS.values(), *QUERY_OPERATIONS]:
        try:
            send_boundaries(session, operation)
        except NotExercised as why:
            outcome = session.outcome(operation)
            outcome.status, outcome.reason = "not-exercised", str(why)


check(CHECK_ID, suite="negative",
      title="every length, range, items, enumeration, date-format and pattern limit of each field of the creations "
            "answered by the request alone, once per run whatever --max-examples says: the value just outside "
            "refused with the validator's status and code, the value just inside accepted",
      refs=("Limits", "Errors", "A6", "A7"))(run)
