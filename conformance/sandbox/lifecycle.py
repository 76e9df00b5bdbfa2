"""The payment lifecycle as plain functions over a storage transaction (A2, A3-A5, A23-A31).

The whole state machine is in :data:`TRANSITIONS`: an event moves a payment from one status to another, and an
event not listed for a status is refused. The basket ranking (A2) is the spec's ``x-worst-case-ranking`` (or the
profile's), read by the validator's own ranking function. Nothing here knows HTTP.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import secrets
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from validator.context import OSLO, Profile
from validator.rules.baskets import ranking as basket_ranking
from validator.spec import Spec

from . import faults as F
from .clock import Clock
from .domain import (CANCELLATION_REFUSED, CONFLICT, INVALID, NOT_FOUND, PAYMENT_FAILED, UNKNOWN_REFERENCE, Refused,
                     SandboxData, account_reference, format_amount, full_reference, link, owns_reference, secret_id, to_minor)
from .storage import Tx

# event -> {from status: to status}. Creation makes RCVD (A23).
TRANSITIONS: dict[str, dict[str, str]] = {
    "sca-finalised": {"RCVD": "PDNG"},               # A24: the PSU authorised
    "sca-failed": {"RCVD": "RJCT"},                  # A24: unknown customer, not the debtor's owner, no funds
    "cancel": {"RCVD": "CANC"},                      # A27; the spec's x-cancellation of deletePayment rules
    "executed": {"PDNG": "ACSC"},                    # A25: every entry booked
    "executed-partly": {"PDNG": "PART"},             # A25: some entries of a bulk booked
    "rejected": {"PDNG": "RJCT"},                    # A25: no entry booked (funds)
}
AUTHORISABLE = frozenset(TRANSITIONS["sca-finalised"])
NOT_DUPLICATES = ("RJCT", "CANC")                    # A30: these do not block a logical duplicate
DUPLICATE_WINDOW = _dt.timedelta(hours=24)           # A29, A30
BATCH_OPERATION = "runSandboxBatch"  # its x-batch-run-times: the Europe/Oslo times of the runs (A25)
NEVER_EXECUTED = frozenset({"periodic-payments"})    # A25, A31
BASKET_SERVICES = frozenset({"payments"})
SCA_STARTED, SCA_FINALISED, SCA_FAILED = "started", "finalised", "failed"
BASKET_OPEN, BASKET_AUTHORISED, BASKET_DELETED = "open", "authorised", "deleted"
LACK_OF_FUNDS_TEXT = "Insufficient funds on the debtor account."


def _iso(instant: _dt.datetime) -> str:
    return instant.astimezone(_dt.timezone.utc).isoformat()


def entries(body: dict) -> list[dict]:
    """The credit transfers of a payment: a bulk's entries, or the payment itself."""
    return body["payments"] if isinstance(body.get("payments"), list) else [body]


def execution_date(body: dict) -> str | None:
    return body.get("requestedExecutionDate") or body.get("startDate")


def _bookable_amount(value: Any) -> bool:
    """A finite decimal whose integer part the books can hold (an exponent like 1e999999999 would take the
    conversion to minor units minutes and gigabytes)."""
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        number = Decimal(value)
    except ArithmeticError:
        return False
    return number.is_finite() and number.adjusted() < 40


def payment_path(row: dict) -> str:
    return f"/v1/{row['service']}/{row['product']}/{row['id']}"


def batch_times(spec: Spec, profile: Profile) -> tuple[_dt.time, ...]:
    """A25: the profile's batch-run times, else the spec's ``x-batch-run-times`` (Europe/Oslo wall clock)."""
    times = profile.batch_run_times or spec.operation(BATCH_OPERATION).raw["x-batch-run-times"]["times"]
    return tuple(sorted(t if isinstance(t, _dt.time) else _dt.time.fromisoformat(t) for t in times))


class Lifecycle:
    def __init__(self, spec: Spec, profile: Profile, clock: Clock, faults: F.ActiveFaults, data: SandboxData) -> None:
        self.spec, self.clock, self.faults, self.data = spec, clock, faults, data
        self.minor_units = spec.minor_units
        self.ranking = basket_ranking(SimpleNamespace(spec=spec, profile=profile))
        self.batch_times = batch_times(spec, profile)
        cancellation = spec.operation("deletePayment").raw["x-cancellation"]
        self.transitions = {**TRANSITIONS, "cancel": {s: cancellation["becomes"] for s in cancellation["cancellable"]}}
        self.refuse_duplicates = profile.logical_duplicates == "refused"   # A30 (profile: yes)
        self.one_basket_per_payment = profile.payment_baskets == "one"     # A34 (profile: yes)
        self.one_open_authorisation = profile.open_authorisations == "one"  # A35 (profile: yes)
        self.funds_at_sca = profile.lack_of_funds == "at-sca"  # A24 (profile: lack-of-funds): else the batch rejects

    # ---- transitions ----
    def _move(self, tx: Tx, row: dict, event: str, funds_available: bool | None = None, *,
              allowed: dict[str, str] | None = None) -> bool:
        target = (allowed or self.transitions[event]).get(row["status"])
        if target is None:
            return False
        tx.set_payment_status(row["id"], target, funds_available)
        row["status"], row["funds_available"] = target, funds_available
        return True

    # ---- payments ----
    def find_payment(self, tx: Tx, tpp: str, payment_id: str, service: str | None = None,
                     product: str | None = None) -> dict:
        """The TPP's payment; another TPP's does not exist for it (A28)."""
        row = tx.payment(payment_id)
        # a lookup by path falling back to the TPP's latest payment (a basket's ids are looked up without a path)
        if row is None and service is not None and F.UNKNOWN_ID_READABLE in self.faults:
            row = next((p for p in reversed(tx.payments_in_status("RCVD")) if p["tpp"] == tpp), None)
        owner_ok = row is not None and (row["tpp"] == tpp or F.FOREIGN_PAYMENT_READABLE in self.faults)
        if not owner_ok or (service and row["service"] != service) or (product and row["product"] != product):
            raise Refused(NOT_FOUND, f"no payment {payment_id} at this path")
        return row

    def fingerprint(self, service: str, product: str, body: dict) -> str:
        """What makes two payments logical duplicates (A30)."""
        transfers = [[full_reference(e.get("creditorAccount")),
                      str(to_minor(e["instructedAmount"]["amount"], e["instructedAmount"]["currency"], self.minor_units)),
                      e["instructedAmount"]["currency"],
                      e.get("remittanceInformationUnstructured"), e.get("remittanceInformationStructured"),
                      e.get("remittanceInformationStructuredArray")] for e in entries(body)]
        facts = [service, product, full_reference(body.get("debtorAccount")), transfers, execution_date(body)]
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()

    def new_payment_seq(self, tx: Tx) -> int:
        return tx.next_seq("payments")

    def bookable(self, body: Any) -> None:
        """What the sandbox's books cannot do without, whatever the profile switched off: an object whose credit
        transfers each carry a decimal amount and a currency. The request check refuses all of this on the default
        profile; a profile with those rules off (severity: off) leaves it to the sandbox, which then refuses what it
        cannot book with 400 FORMAT_ERROR naming the field, never a 500."""
        if not isinstance(body, dict):
            raise Refused(INVALID, "the body must be a JSON object for the sandbox to book it", "/")
        bulk = isinstance(body.get("payments"), list)
        for n, entry in enumerate(entries(body)):
            at = f"/payments/{n}" if bulk else ""
            amount = entry.get("instructedAmount") if isinstance(entry, dict) else None
            if not isinstance(amount, dict):
                raise Refused(INVALID, "the sandbox cannot book a credit transfer without an instructedAmount object",
                              f"{at}/instructedAmount")
            currency, value = amount.get("currency"), amount.get("amount")
            if not isinstance(currency, str) or not currency:
                raise Refused(INVALID, "the sandbox cannot book an amount without a currency",
                              f"{at}/instructedAmount/currency")
            if not _bookable_amount(value):
                raise Refused(INVALID, f"the sandbox cannot book the amount {str(value)[:40]!r}: not a decimal number",
                              f"{at}/instructedAmount/amount")

    def create_payment(self, tx: Tx, tpp: str, service: str, product: str, body_text: str, body: dict,
                       allow_duplicate: bool, seq: int | None = None) -> dict:
        self.bookable(body)
        now = self.clock.now()
        fingerprint = self.fingerprint(service, product, body)
        if not allow_duplicate and self.refuse_duplicates:
            earlier = tx.logical_duplicate(tpp, fingerprint, _iso(now - DUPLICATE_WINDOW), NOT_DUPLICATES)
            if earlier:
                raise Refused(CONFLICT, f"logical duplicate of payment {earlier['id']} (same accounts, amounts, date "
                              "and remittance within 24 hours); send allowLogicalDuplicate=true to create it")
        seq = seq or self.new_payment_seq(tx)
        row = {"id": secret_id(tx.secret(), f"PAY-{seq}"), "seq": seq, "tpp": tpp, "service": service, "product": product,
               "body": body_text, "status": "RCVD", "funds_available": None, "fingerprint": fingerprint,
               "created_at": _iso(now), "execution_date": execution_date(body)}
        tx.save_payment(row)
        return row

    def creation_response(self, row: dict) -> dict:
        path = payment_path(row)
        return {"paymentId": row["id"], "transactionStatus": row["status"],
                "_links": {"self": link(path, "GET", "DELETE"),
                           "status": link(path + ("/state" if F.STATUS_LINK_UNRESOLVED in self.faults else "/status"),
                                          "GET"),
                           "startAuthorisation": link(path + "/authorisations", "POST")}}

    def payment_status(self, row: dict) -> dict:
        out: dict[str, Any] = {"transactionStatus": row["status"]}
        if F.STATUS_MISSING in self.faults:
            del out["transactionStatus"]
        if row["funds_available"] is not None:
            out["fundsAvailable"] = bool(row["funds_available"])
        if row["funds_available"] == 0:
            out["tppMessages"] = [{"category": "ERROR", "code": "PAYMENT_FAILED", "text": LACK_OF_FUNDS_TEXT}]
        out["_links"] = {"self": link(payment_path(row), "GET")}
        return out

    def payment_detail(self, row: dict) -> dict:
        """The initiation body as created, amounts written with the currency's minor-unit digits, plus the status."""
        def normalise(node: Any) -> Any:
            if isinstance(node, dict):
                if isinstance(node.get("amount"), str) and isinstance(node.get("currency"), str):
                    try:
                        return {**node, "amount": format_amount(node["amount"], node["currency"], self.minor_units)}
                    except ArithmeticError:
                        return node
                return {k: normalise(v) for k, v in node.items()}
            if isinstance(node, list):
                return [normalise(v) for v in node]
            return node

        if F.DETAIL_AMOUNT_AS_SENT in self.faults:
            return {**json.loads(row["body"]), "transactionStatus": row["status"]}
        return {**normalise(json.loads(row["body"])), "transactionStatus": row["status"]}

    def cancel_payment(self, tx: Tx, row: dict) -> None:
        """A27: a RCVD payment is cancelled; any other status is a conflict (A5 for PDNG)."""
        allowed = self.transitions["cancel"]
        if F.PDNG_DELETION_ALLOWED in self.faults:
            allowed = {**allowed, "PDNG": "CANC"}
        if not self._move(tx, row, "cancel", allowed=allowed):
            why = ("it is pending execution (PDNG) after the PSU's authorisation" if row["status"] == "PDNG"
                   else f"its status is {row['status']}")
            raise Refused(CANCELLATION_REFUSED, f"payment {row['id']} cannot be deleted: {why}")

    # ---- baskets ----
    def find_basket(self, tx: Tx, tpp: str, basket_id: str) -> dict:
        row = tx.basket(basket_id)
        if row is None or row["tpp"] != tpp or row["state"] == BASKET_DELETED:
            raise Refused(NOT_FOUND, f"no signing basket {basket_id}")
        return row

    def basket_payments(self, tx: Tx, basket: dict) -> list[dict]:
        return tx.payments(basket["payment_ids"])

    def create_basket(self, tx: Tx, tpp: str, payment_ids: list[str]) -> dict:
        for i, pid in enumerate(payment_ids):
            try:
                self.find_payment(tx, tpp, pid)
            except Refused:
                raise Refused(UNKNOWN_REFERENCE, f"no payment {pid}", f"/paymentIds/{i}") from None
            holding = tx.basket_holding(tpp, pid, BASKET_DELETED) if self.one_basket_per_payment else None
            if holding:
                raise Refused(CONFLICT, f"payment {pid} is already in signing basket {holding['id']}", f"/paymentIds/{i}")
        seq = tx.next_seq("baskets")
        row = {"id": secret_id(tx.secret(), f"BSK-{seq}"), "seq": seq, "tpp": tpp, "payment_ids": list(payment_ids),
               "state": BASKET_OPEN, "created_at": _iso(self.clock.now())}
        tx.insert_basket(row)
        return row

    def basket_status(self, tx: Tx, basket: dict) -> str:
        """A2: the worst case over the basket's payments (the lowest rank of the ranking table)."""
        statuses = {p["status"] for p in self.basket_payments(tx, basket)}
        ranks = [i for i, (_value, members) in enumerate(self.ranking) if statuses & set(members)]
        chosen = max(ranks) if F.BASKET_BEST_CASE in self.faults else min(ranks)
        return self.ranking[chosen][0]

    def basket_links(self, basket: dict) -> dict:
        path = f"/v1/signing-baskets/{basket['id']}"
        return {"self": link(path, "GET", "DELETE"), "status": link(path + "/status", "GET"),
                "startAuthorisation": link(path + "/authorisations", "POST")}

    def delete_basket(self, tx: Tx, basket: dict) -> None:
        """A27: before its authorisation finalised a basket is deleted (its payments untouched), after it not."""
        if basket["state"] != BASKET_OPEN:
            raise Refused(CANCELLATION_REFUSED, f"signing basket {basket['id']} is authorised and cannot be deleted")
        tx.set_basket_state(basket["id"], BASKET_DELETED)

    # ---- authorisation (A23) and SCA (A24) ----
    def _authorisable(self, row: dict) -> None:
        if row["status"] == "RJCT" and row["funds_available"] == 0:
            raise Refused(PAYMENT_FAILED, f"payment {row['id']} was rejected for lack of funds")
        if row["status"] not in AUTHORISABLE:
            raise Refused(CONFLICT, f"payment {row['id']} is {row['status']}; only a received (RCVD) payment is authorised")

    def start_authorisation(self, tx: Tx, tpp: str, kind: str, subject: dict, redirect_uri: str, session_id: str) -> dict:
        if kind == "basket":
            if subject["state"] != BASKET_OPEN:
                raise Refused(CONFLICT, f"signing basket {subject['id']} is already authorised")
            for row in self.basket_payments(tx, subject):
                self._authorisable(row)
        else:
            self._authorisable(subject)
        open_one = tx.started_authorisation(kind, subject["id"], SCA_STARTED) if self.one_open_authorisation else None
        if open_one:  # A35, profile open-authorisations: one
            raise Refused(CONFLICT, f"authorisation {open_one['id']} of this {kind} is started and not completed; "
                          "one authorisation at a time")
        seq = tx.next_seq("authorisations")
        row = {"id": secret_id(tx.secret(), f"AUT-{seq}"), "seq": seq, "tpp": tpp, "subject_kind": kind,
               "subject_id": subject["id"], "token": secrets.token_urlsafe(24), "sca_status": SCA_STARTED,
               "redirect_uri": redirect_uri, "session_id": session_id, "created_at": _iso(self.clock.now())}
        tx.insert_authorisation(row)
        return row

    def find_authorisation(self, tx: Tx, tpp: str, subject_id: str, authorisation_id: str) -> dict:
        row = tx.authorisation(authorisation_id)
        if row is None or row["tpp"] != tpp or row["subject_id"] != subject_id:
            raise Refused(NOT_FOUND, f"no authorisation {authorisation_id}")
        return row

    def sca_payments(self, tx: Tx, authorisation: dict) -> list[dict]:
        if authorisation["subject_kind"] == "basket":
            return self.basket_payments(tx, tx.basket(authorisation["subject_id"]))
        return tx.payments([authorisation["subject_id"]])

    def authorisation_by_token(self, tx: Tx, token: str) -> dict:
        row = tx.authorisation_by_token(token)
        if row is None:
            raise Refused(NOT_FOUND, "this authorisation link is not known")
        return row

    def _funds_needed(self, tx: Tx, accounts: list[dict], payments: list[dict]) -> tuple[str | None, bool]:
        """(why the customer cannot authorise, whether it is for lack of funds)."""
        needed: dict[str, int] = {}
        by_id = {a["id"]: a for a in accounts}
        for p in payments:
            body = json.loads(p["body"])
            account = next((a for a in accounts if owns_reference(a, body.get("debtorAccount"))), None)
            if account is None:
                iban, bban = account_reference(body.get("debtorAccount"))
                return f"the customer does not own the debtor account {bban or iban}", False
            for e in entries(body):
                amount = e["instructedAmount"]
                if amount["currency"] != account["currency"]:
                    return f"the debtor account is in {account['currency']}, the payment in {amount['currency']}", False
                needed[account["id"]] = needed.get(account["id"], 0) + to_minor(amount["amount"], amount["currency"], self.minor_units)
        for account_id, amount in needed.items():
            a = by_id[account_id]
            if a["balance"] + a["credit_line"] < amount:
                return LACK_OF_FUNDS_TEXT, True
        return None, False

    def nothing_to_authorise(self, tx: Tx, authorisation: dict, payments: list[dict]) -> str | None:
        """A35: why completing the authorisation would move nothing -- its basket is no longer open, or a payment it
        covers left RCVD since the start (cancelled, or authorised by another authorisation) -- else None."""
        if authorisation["subject_kind"] == "basket":
            basket = tx.basket(authorisation["subject_id"])
            if basket is None or basket["state"] != BASKET_OPEN:
                return (f"signing basket {authorisation['subject_id']} is "
                        f"{basket['state'] if basket else 'gone'}; this authorisation authorised nothing")
        moved = [p for p in payments if p["status"] not in AUTHORISABLE]
        if moved:
            return "; ".join(f"payment {p['id']} is {p['status']}" for p in moved) + \
                "; this authorisation authorised nothing"
        return None

    def complete_sca(self, tx: Tx, authorisation: dict, customer_number: str) -> tuple[bool, str | None, str | None]:
        """The PSU's answer on the SCA page: (success, message on failure, opaque psu-id on success)."""
        if authorisation["sca_status"] != SCA_STARTED:
            raise Refused(CONFLICT, f"this authorisation is already {authorisation['sca_status']}")
        payments = self.sca_payments(tx, authorisation)
        stale = self.nothing_to_authorise(tx, authorisation, payments)
        if stale and F.SCA_SUCCESS_WITHOUT_EFFECT not in self.faults:  # A35: fails, and no payment moves
            tx.set_sca_status(authorisation["id"], SCA_FAILED)
            return False, stale, None
        customer = tx.customer_by_number(customer_number.strip())
        if customer is None:
            problem, no_funds = f"no sandbox customer has the customerNumber {customer_number.strip()!r}", False
        else:
            problem, no_funds = self._funds_needed(tx, tx.accounts_of(customer["customerNumber"]), payments)
            if no_funds and not self.funds_at_sca:
                problem = None  # lack-of-funds at-batch-run: the SCA finalises, the batch run rejects the payment
        if problem:
            tx.set_sca_status(authorisation["id"], SCA_FAILED)
            for p in payments:
                self._move(tx, p, "sca-failed", False if no_funds else None)
            return False, problem, None
        tx.set_sca_status(authorisation["id"], SCA_FINALISED)
        for p in payments:
            self._move(tx, p, "sca-finalised", True)
        if authorisation["subject_kind"] == "basket":
            tx.set_basket_state(authorisation["subject_id"], BASKET_AUTHORISED)
        return True, None, secret_id(tx.secret(), "PSU-" + customer["customerNumber"])

    # ---- batch runs (A25) ----
    def batch_run(self, tx: Tx, at: _dt.datetime) -> dict:
        day = at.astimezone(OSLO).date().isoformat()
        executed: list[str] = []
        rejected: list[str] = []
        for p in tx.payments_in_status("PDNG"):
            if p["service"] in NEVER_EXECUTED or (p["execution_date"] and p["execution_date"] > day):
                continue
            body = json.loads(p["body"])
            iban, bban = account_reference(body.get("debtorAccount"))
            debtor = tx.account_by_reference(iban, bban)
            booked = sum(self._book(tx, p, body, e, debtor, day) for e in entries(body))
            total = len(entries(body))
            event = "executed" if booked == total else "executed-partly" if booked else "rejected"
            self._move(tx, p, event, {"executed": True, "rejected": False}.get(event))  # PART: neither
            (executed if booked else rejected).append(p["id"])
        return {"executed": executed, "rejected": rejected}

    def _book(self, tx: Tx, payment: dict, body: dict, entry: dict, debtor: dict | None, day: str) -> bool:
        """Debit one credit transfer and post it on the debtor (and a sandbox creditor) account; False: no funds."""
        amount = entry["instructedAmount"]
        minor = to_minor(amount["amount"], amount["currency"], self.minor_units)
        if debtor is None:
            return False
        debtor = tx.account(debtor["id"])  # the balance as booked so far in this run
        if debtor["currency"] != amount["currency"] or debtor["balance"] + debtor["credit_line"] < minor:
            return False
        owner = tx.customer_by_number(debtor["customer_number"])
        debtor_name = entry.get("debtorName") or (owner["customerName"] if owner else "")
        structured = entry.get("remittanceInformationStructuredArray") or [entry.get("remittanceInformationStructured") or {}]
        remittance = entry.get("remittanceInformationUnstructured") or structured[0].get("reference") or ""
        record = {
            "amount": -minor, "currency": amount["currency"], "valueDate": day, "bookingDate": day,
            "remittanceInformationUnstructured": remittance, "creditorName": entry["creditorName"],
            "creditorAccount": full_reference(entry.get("creditorAccount")), "debtorName": debtor_name,
            "debtorAccount": {"iban": debtor["iban"] or "", "bban": debtor["bban"] or ""},
            "bankTransactionCode": "PMNT-ICDT-ESCT" if payment["product"] == "sepa-credit-transfers" else "PMNT-ICDT-DMCT",
            "ultimateDebtor": entry.get("ultimateDebtor") or debtor_name, "ultimateCreditor": entry["creditorName"],
            "purposeCode": entry.get("purposeCode") or "OTHR",
            "paymentId": payment["id"],  # A36: which payment booked it
            **({"endToEndId": entry["endToEndIdentification"]} if entry.get("endToEndIdentification") else {}),
        }
        # A36: signed from each account's side, the balance moved by exactly the amount listed
        tx.add_to_balance(debtor["id"], record["amount"])
        self.data.post_account_transaction(tx, debtor["id"], record)
        iban, bban = account_reference(entry.get("creditorAccount"))
        creditor = tx.account_by_reference(iban, bban)
        if creditor is not None and creditor["currency"] == amount["currency"]:
            credit = {**record, "amount": minor}
            tx.add_to_balance(creditor["id"], credit["amount"])
            self.data.post_account_transaction(tx, creditor["id"], credit)
        return True

    def _due_runs(self, last_text: str | None, now: _dt.datetime) -> list[_dt.datetime]:
        """The scheduled run instants (batch_times, Oslo) in (last, now]."""
        if last_text is None:
            return []
        last = _dt.datetime.fromisoformat(last_text)
        due = []
        day = last.astimezone(OSLO).date()
        while day <= now.astimezone(OSLO).date():
            due.extend(at for t in self.batch_times if last < (at := _dt.datetime.combine(day, t, tzinfo=OSLO)) <= now)
            day += _dt.timedelta(days=1)
        return due

    def _batch_clock(self, tx: Tx) -> tuple[str | None, bool]:
        """The instant of the last scheduled run performed on the clock's timeline (None: not started) and whether
        the clock is on another timeline than the one recorded (set back: the runs start again from its origin)."""
        if tx.meta("batch-timeline") == self.clock.timeline:
            return tx.meta("batch-clock"), False
        origin = self.clock.origin
        return (None if origin is None else _iso(origin)), True

    def catch_up_needed(self, tx: Tx) -> bool:
        """Whether :meth:`catch_up` would write: a scheduled run is due, the batch clock is not started or the clock
        is on a new timeline. Cheap (two meta reads), so a read-only request checks it and reads without the write
        lock when nothing is due."""
        last_text, moved = self._batch_clock(tx)
        return moved or last_text is None or bool(self._due_runs(last_text, self.clock.now()))

    def catch_up(self, tx: Tx) -> None:
        """Perform the scheduled runs (batch_times, Oslo) the sandbox clock has passed since the last one on its
        timeline (clock.py: a clock set back starts a new one, from the instant it was set to)."""
        now = self.clock.now()
        last_text, moved = self._batch_clock(tx)
        if moved:
            tx.set_meta("batch-timeline", self.clock.timeline)
        if last_text is None:
            tx.set_meta("batch-clock", _iso(now))
            return
        due = self._due_runs(last_text, now)
        for at in due:
            self.batch_run(tx, at)
        if due or moved:
            tx.set_meta("batch-clock", _iso(now))
