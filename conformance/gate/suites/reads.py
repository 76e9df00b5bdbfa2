"""Reads judged for what they carry, not only for their shape: a payment reads back as the payment created (A4), its
amounts with exactly the currency's minor-unit digits on every read (A9: the status and detail reads of every
product and the sandbox's transaction lists, each answer judged by the validator's response kinds as it arrives),
and an id nobody issued reads as nothing (404 RESOURCE_UNKNOWN, A28, A7) -- the latter without any setup, so it is
judged even where creating something fails. A part whose setup failed is "not exercised: setup failed (why)", never
an error or a finding about something else.
"""
from __future__ import annotations

import base64
from decimal import Decimal, InvalidOperation
from typing import Any

from ..model import NO_TEST_DATA, SETUP_FAILED, Expected, NotExercised, check, reason, said
from ..session import Exchange, Session
from .data import BULK, MAX_ACCOUNTS_READ, PERIODIC, SEPA, WHERE, bulk_body, sandbox_resources, sepa_body

CREATED = (200, 201)  # a 200 creation is the creation suites' finding; here the payment exists either way
NOT_THERE = Expected((404,), ("RESOURCE_UNKNOWN",), "an id nobody issued does not exist (A28, A7)")
# The fields a read-back payment must carry as created (A4): what makes it this payment.
ENTRY_FIELDS = ("creditorName",)
ACCOUNT_FIELDS = ("creditorAccount", "debtorAccount")


def _json(exchange: Exchange) -> Any:
    return exchange.json()


def not_exercised(session: Session, operation: str, why: str) -> None:
    """A part of the check is not exercised (a finding already recorded for an answer there stays)."""
    outcome = session.outcome(operation)
    if outcome.status == "passed":
        outcome.status, outcome.reason = "not-exercised", why


def setup_failed(session: Session, operation: str, exchange: Exchange) -> None:
    """A setup step failed: the part of the check that needs it is not exercised."""
    not_exercised(session, operation, reason(SETUP_FAILED, f"{operation} answered {exchange.answer.describe()}"))


def available(session: Session, operation: str, path: dict | None = None) -> bool:
    """Whether the profile says the target has the operation (and offers its product); else that part is not
    exercised, for the profile's reason (A15, A25, A31)."""
    missing = session.unavailable(operation, path)
    if missing:
        not_exercised(session, operation, missing)
    return not missing


def _create(session: Session, client, operation: str, body: dict) -> str | None:
    if not available(session, operation):
        return None
    exchange = session.call(client, operation, body=body, query={"allowLogicalDuplicate": "true"})
    pid = exchange.object().get("paymentId") if exchange.answer.status in CREATED else None
    if not isinstance(pid, str) or not pid:
        setup_failed(session, operation, exchange)
        return None
    return pid


# ---------------------------------------------------------------- read back as created (A4, A9)
def _amount(value: Any) -> tuple[Decimal, Any] | None:
    if not isinstance(value, dict):
        return None
    try:
        return Decimal(str(value.get("amount"))), value.get("currency")
    except InvalidOperation:
        return None


def _account(value: Any) -> tuple[Any, Any]:
    return (value.get("iban"), value.get("bban")) if isinstance(value, dict) else (None, None)


def differences(sent: dict, read: Any) -> list[str]:
    """Where a detail read differs from the initiation body sent: amounts (by value and currency), accounts (iban,
    bban) and creditor names, of the payment and of each bulk entry, in order."""
    if not isinstance(read, dict):
        return ["the detail is not a JSON object"]
    found = []

    def entry(prefix: str, mine: dict, theirs: Any) -> None:
        theirs = theirs if isinstance(theirs, dict) else {}
        if "instructedAmount" in mine and _amount(mine["instructedAmount"]) != _amount(theirs.get("instructedAmount")):
            found.append(f"{prefix}/instructedAmount {said(theirs.get('instructedAmount'))}, created as "
                         f"{said(mine['instructedAmount'])}")
        for name in ACCOUNT_FIELDS:
            if name in mine and _account(mine[name]) != _account(theirs.get(name)):
                found.append(f"{prefix}/{name} {said(theirs.get(name))}, created as {said(mine[name])}")
        for name in ENTRY_FIELDS:
            if name in mine and mine[name] != theirs.get(name):
                found.append(f"{prefix}/{name} {said(theirs.get(name))}, created as {said(mine[name])}")

    entry("", sent, read)
    if isinstance(sent.get("payments"), list):
        theirs = read.get("payments") if isinstance(read.get("payments"), list) else []
        if len(theirs) != len(sent["payments"]):
            found.append(f"/payments holds {len(theirs)} entries, created with {len(sent['payments'])}")
        for i, mine in enumerate(sent["payments"]):
            entry(f"/payments/{i}", mine, theirs[i] if i < len(theirs) else None)
    return found


def short(amount: str) -> str:
    """An amount without its trailing zero fraction digits ("250.00" -> "250", "49.50" -> "49.5"), as a TPP may send
    it (A9). Written out in full here: Hypothesis draws string constants from loaded modules, and amounts with fewer
    digits than their currency's minor units must not become what the schema suite generates."""
    whole, _dot, fraction = amount.partition(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def _periodic_body(session: Session, amount: str) -> dict:
    entry = bulk_body(amount)
    return {**entry["payments"][0], "debtorAccount": entry["debtorAccount"],
            "startDate": session.today().isoformat(), "frequency": "Monthly"}


@check("stateful:read-back", suite="stateful", refs=("A4", "A9", "A31", "Endpoints"),
       title="a payment reads back as created (amounts, accounts, names) with exactly its currency's minor-unit "
             "digits, on the status and detail reads of every product and in the transaction lists")
def read_back_everywhere(session: Session) -> None:
    tpp = session.client()
    # A9: a target whose profile says amount-digits: exact refuses the shortened forms; it gets them in full
    sent = short if session.profile.amount_digits != "exact" else str
    # Amounts with fewer digits than their currency's minor units, as a TPP may send them (A9); two payments of
    # each product, so a read answering another stored payment has one to answer.
    plans = [("createSepaCreditTransfer", sepa_body(sent("49.50"), text=f"read-back {session.seed} a")),
             ("createSepaCreditTransfer", sepa_body(sent("49.60"), text=f"read-back {session.seed} b")),
             ("createBulkPayment", bulk_body(sent("250.00"), sent("12.50"), text=f"read-back {session.seed}")),
             ("createBulkPayment", bulk_body(sent("251.00"), text=f"read-back {session.seed}")),
             ("createPeriodicPayment", _periodic_body(session, sent("75.00"))),
             ("createPeriodicPayment", _periodic_body(session, sent("76.00")))]
    created = []
    for operation, body in plans:
        pid = _create(session, tpp, operation, body)
        if pid:
            created.append((pid, WHERE[operation], body))
    if not created:
        raise NotExercised(reason(SETUP_FAILED, "no payment could be created (see the creations' outcomes)"))
    for pid, where, body in created:
        session.call(tpp, "getPaymentStatus", path={**where, "paymentId": pid})
        read_back(session, session.call(tpp, "getPayment", path={**where, "paymentId": pid}), pid, body)
    _transaction_lists(session, tpp)


READ_BACK = "payment-read-back"   # rules.py: every check reading a payment it created judges the read by it


def read_back(session: Session, detail: Exchange, pid: str, body: dict) -> bool:
    """A payment's detail read just after its creation with ``body``: 200 and the payment as created (A4), every
    difference named. The same rule and expectation whichever check reads it (the read-back, the concurrent
    creations, the lifecycle): one defect, one finding. True when it reads back as created."""
    if detail.answer.status != 200:
        session.disagree(detail, rule=READ_BACK, ref="A4", expected="200 the payment as created",
                         message=f"reading payment {pid} just created answered {detail.answer.describe()}")
        return False
    wrong = differences(body, _json(detail))
    if wrong:
        session.disagree(detail, rule=READ_BACK, ref="A4", expected="200 the payment as created",
                         message=f"payment {pid} reads back as another payment: " + "; ".join(wrong))
    return not wrong


def _transaction_lists(session: Session, tpp) -> None:
    """The sandbox's transaction lists (their amounts judged as they arrive); a target without them: not exercised."""
    if not available(session, "listSandboxCustomers"):
        return
    resources = sandbox_resources(session)
    accounts = [a for c in resources.customers for a in c.accounts][:MAX_ACCOUNTS_READ]
    cards = [a for c in resources.customers for a in c.card_accounts][:MAX_ACCOUNTS_READ]
    for operation, name, what, ids, query in (
            ("listSandboxAccountTransactions", "mockAccountId", "account", accounts, {}),
            ("listSandboxCardTransactions", "mockCardAccountId", "card account", cards, {"bookingStatus": "both"})):
        if not ids:
            not_exercised(session, operation, resources.refused or reason(NO_TEST_DATA, what))
        elif available(session, operation):
            for one in ids:
                session.call(tpp, operation, path={name: one}, query=query)


# ---------------------------------------------------------------- ids nobody issued (A28)
def never_issued(session: Session, what: str) -> str:
    """An id of the target's own opaque kind that no answer of this run issued."""
    n = 0
    while True:
        value = "enc!!" + base64.urlsafe_b64encode(f"obvalidate-never-{what}-{session.seed}-{n}".encode()).decode()
        if value not in session._issued:
            return value
        n += 1


@check("stateful:unknown-ids", suite="stateful", refs=("A28", "A7"),
       title="payments, baskets and authorisations nobody created read as 404 RESOURCE_UNKNOWN (status, detail, "
             "basket, authorisation)")
def unknown_ids(session: Session) -> None:
    tpp = session.client()
    # A payment of this TPP first (setup): the reads below run whether or not it could be created; with it, a target
    # that falls back to a payment it holds for an id it does not know has one to fall back to.
    pid = _create(session, tpp, "createSepaCreditTransfer", sepa_body("18.50", text=f"unknown ids {session.seed}"))
    payment, basket, authorisation = (never_issued(session, w) for w in ("payment", "basket", "authorisation"))
    reads = [("getPayment", {**where, "paymentId": payment}) for where in (SEPA, BULK, PERIODIC)]
    reads += [("getPaymentStatus", {**where, "paymentId": payment}) for where in (SEPA, BULK, PERIODIC)]
    reads += [("getPaymentAuthorisationStatus", {**SEPA, "paymentId": payment, "authorisationId": authorisation}),
              ("getSigningBasket", {"basketId": basket}), ("getSigningBasketStatus", {"basketId": basket}),
              ("getSigningBasketAuthorisationStatus", {"basketId": basket, "authorisationId": authorisation})]
    for operation, path in reads:
        if available(session, operation, path):
            _expect_unknown(session, tpp, operation, path, "an id nobody issued")
    if pid:  # an authorisation nobody started, of a payment that exists
        _expect_unknown(session, tpp, "getPaymentAuthorisationStatus",
                        {**SEPA, "paymentId": pid, "authorisationId": authorisation},
                        "an authorisation nobody started of a payment that exists")


RESOURCE_UNKNOWN = "resource-unknown"   # rules.py


def _expect_unknown(session: Session, client, operation: str, path: dict, what: str) -> None:
    exchange = session.call(client, operation, path=path, refusal_expected=True)
    session.expect(exchange, NOT_THERE, rule=RESOURCE_UNKNOWN, ref="A28, A7",
                   message=f"{operation} of {what} ({', '.join(f'{k}={v}' for k, v in path.items() if 'Id' in k)}) "
                           f"answered {exchange.answer.describe()}")
