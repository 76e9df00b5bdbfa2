"""Sandbox data as plain functions over a storage transaction: customers, accounts, card accounts and their
transactions (A15, A22, A32). Nothing here knows HTTP: a refusal is a :class:`Refused` with a reason, and the
HTTP layer (app.py) turns reasons into statuses and codes.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from decimal import ROUND_DOWN, Decimal

from stdnum.no import kontonr

from . import faults as F
from . import testdata
from .storage import Tx

# Why a request is refused, independent of HTTP (app.REFUSALS maps each to a status and code).
NOT_FOUND = "not-found"                  # a resource in the path does not exist (for this TPP)
UNKNOWN_REFERENCE = "unknown-reference"  # a resource named in the body does not exist
CONFLICT = "conflict"                    # the resource's state does not allow the operation
CANCELLATION_REFUSED = "cancellation-refused"  # a DELETE the payment's or basket's state refuses (A5, A27)
PAYMENT_FAILED = "payment-failed"        # insufficient funds
INVALID = "invalid"                      # a value the request check cannot judge (needs the sandbox's state)


class Refused(Exception):
    def __init__(self, reason: str, text: str, path: str | None = None) -> None:
        super().__init__(text)
        self.reason, self.text, self.path = reason, text, path


def opaque_id(text: str) -> str:
    """An opaque resource id in the platform's style (``enc!!`` + URL-safe Base64)."""
    return "enc!!" + base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def secret_id(secret: bytes, text: str) -> str:
    """An id in the same style that reveals nothing and cannot be guessed: a keyed hash (HMAC-SHA256, 128 bits) of
    ``text`` under the database's secret. Payment, basket and authorisation ids and the psu-id (A24) are these, so a
    TPP can neither read a counter or a customer number back from them nor enumerate other ids."""
    digest = hmac.new(secret, text.encode("utf-8"), hashlib.sha256).digest()[:16]
    return "enc!!" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def link(href: str, *verbs: str) -> dict:
    return {"href": href, "verbs": list(verbs)}


# ---- amounts: decimal text in requests, integer minor units in the sandbox's books ----
def to_minor(amount: str, currency: str, minor_units: dict[str, int]) -> int:
    digits = minor_units.get(currency, 2)
    return int((Decimal(amount) * (10 ** digits)).to_integral_value(rounding=ROUND_DOWN))


def format_amount(amount: str, currency: str, minor_units: dict[str, int]) -> str:
    """A response amount with exactly the currency's minor-unit digits (A9)."""
    digits = minor_units.get(currency, 2)
    return str(Decimal(amount).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_DOWN))


def account_reference(ref: dict | None) -> tuple[str | None, str | None]:
    """(iban, bban) of an account reference."""
    ref = ref or {}
    return ref.get("iban"), ref.get("bban")


def full_reference(ref: dict | None) -> dict:
    """Both forms of an account number, as sandbox transaction records carry them."""
    iban, bban = account_reference(ref)
    if iban and not bban:
        bban = iban[4:]
    if bban and not iban and kontonr.is_valid(bban):
        iban = kontonr.to_iban(bban)
    return {"iban": iban or "", "bban": bban or ""}


def _entries(body: dict) -> list[dict]:
    """The credit transfers of a payment body: a bulk's payments, else the body itself."""
    payments = body.get("payments")
    return [e for e in payments if isinstance(e, dict)] if isinstance(payments, list) else [body]


def owns_reference(account: dict, ref: dict | None) -> bool:
    iban, bban = account_reference(ref)
    return bool((iban and iban == account["iban"]) or (bban and bban == account["bban"]))


class SandboxData:
    """The sandbox's test data operations."""

    def __init__(self, faults: F.ActiveFaults = F.NONE, data: testdata.DataSet = testdata.DEFAULT) -> None:
        self.faults = faults
        self.data = data

    # ---- fixed data (A32): ours, or the data set the sandbox was started with ----
    def initialize(self, tx: Tx, tpp: str | None = None) -> None:
        """A32 and A38: ``tpp``'s reset (None: the sandbox's own, at its start). With no other TPP's state in the
        sandbox all state is replaced with the fixed set; else only ``tpp``'s payments, baskets, authorisations and
        logged requests go, and the sandbox data returns to the fixed set where no other TPP depends on it."""
        if tpp is None or not tx.others_hold_state(tpp):
            tx.reset()
            self._restore_fixed(tx)
            tx.set_meta("initialized", "yes")
            return
        tx.remove_tpp_state(tpp)
        named = set()  # the accounts other TPPs' payments name: their bookings are in them, or are to come
        for text in tx.payment_bodies_not_of(tpp):
            body = json.loads(text)
            if not isinstance(body, dict):
                continue
            for ref in [body.get("debtorAccount"), *(e.get("creditorAccount") for e in _entries(body))]:
                named.update(v for v in account_reference(ref if isinstance(ref, dict) else None) if v)
        others = lambda owner: owner is not None and owner != tpp  # noqa: E731 - another TPP created it
        accounts, cards = tx.data_rows("accounts"), tx.data_rows("card_accounts")
        kept_accounts = {a["id"] for a in accounts if others(a["owner"]) or a["iban"] in named or a["bban"] in named}
        kept = ({c["customer_number"] for c in tx.data_rows("customers") if others(c["owner"])}
                | {a["customer_number"] for a in accounts if a["id"] in kept_accounts}
                | {c["customer_number"] for c in cards if others(c["owner"])})
        for customer in tx.data_rows("customers"):
            if customer["customer_number"] not in kept:
                tx.delete_customer(customer["id"], customer["customer_number"])
        for a in accounts:  # under a customer kept for another TPP: what the caller added and nobody needs
            if a["customer_number"] in kept and a["owner"] == tpp and a["id"] not in kept_accounts:
                tx.delete_account(a["id"])
        for card in cards:
            if card["customer_number"] in kept and card["owner"] == tpp:
                tx.delete_card_account(card["id"])
        self._restore_fixed(tx)

    def _restore_fixed(self, tx: Tx) -> None:
        """Each record of the fixed set that is not there, created (with the transactions of an account or card
        account created now); what is there is left as it is."""
        data = self.data
        for c in data.customers:
            if tx.customer_by_number(c["customerNumber"]) is None:
                self.create_customer(tx, c)
        created = set()
        for a in data.accounts:
            if tx.account_by_reference(a.get("iban"), a.get("bban")) is None and tx.customer_by_number(a["customerNumber"]):
                created.add(self.create_account(tx, a)["resourceId"])
        for card in data.card_accounts:
            if tx.card_account(opaque_id("CARD-" + card["maskedPan"])) is None:
                made = self.create_card_account(tx, card, key=card["maskedPan"])
                self.create_card_transactions(tx, made["resourceId"], list(data.card_transactions.get(card["maskedPan"], ())))
        for bban, items in data.account_transactions.items():
            account = tx.account_by_reference(None, bban)
            if account is None:
                raise Refused(NOT_FOUND, f"the test data has transactions for {bban}, which is none of its accounts")
            if account["id"] in created:
                self.create_account_transactions(tx, account["id"], list(items))

    # ---- customers ----
    def customer_view(self, tx: Tx, customer: dict, *, with_accounts: bool = True, with_agreements: bool = True) -> dict:
        number = customer["customerNumber"]
        out = dict(customer)
        out["agreements"] = customer["agreements"] if with_agreements else []
        out["accounts"] = [a["id"] for a in tx.accounts_of(number)] if with_accounts else []
        out["cardAccounts"] = tx.card_accounts_of(number) if with_accounts else []
        return out

    def create_customer(self, tx: Tx, body: dict, owner: str | None = None) -> dict:
        number = body["customerNumber"]
        if tx.customer_by_number(number):
            raise Refused(CONFLICT, f"a sandbox customer with customerNumber {number} exists", "/customerNumber")
        customer_id = opaque_id("CUST-" + number)
        kind = body["type"].upper()
        agreements = []
        if kind == "CORPORATE":  # a corporate customer acts under an agreement (PSU-Corporate-ID)
            agreement_id = opaque_id("AGR-" + number)
            agreements.append({
                "id": agreement_id, "name": f"Avtale {body['name']}", "engagements": [opaque_id("ENG-" + number)],
                "_links": {"self": link(f"/v1/sandbox/agreements/{agreement_id}", "GET"),
                           "engagements": link(f"/v1/sandbox/agreements/{agreement_id}/engagements", "GET")},
            })
        record = {"customerId": customer_id, "customerNumber": number, "customerType": kind,
                  "customerName": body["name"], "agreements": agreements,
                  "_links": {"self": link(f"/v1/sandbox/customers/{customer_id}", "GET", "DELETE")}}
        tx.insert_customer(customer_id, number, record, owner)
        return self.customer_view(tx, record)

    def delete_customer(self, tx: Tx, customer_id: str) -> None:
        customer = tx.customer(customer_id)
        if customer is None:
            raise Refused(NOT_FOUND, f"no sandbox customer {customer_id}")
        tx.delete_customer(customer_id, customer["customerNumber"])

    # ---- accounts ----
    def account_view(self, row: dict) -> dict:
        record = json.loads(row["record"])
        balances = record.get("balances") or [{"balanceType": "EXPECTED"}]
        record["balances"] = [{**b, "balanceAmount": {"amount": row["balance"], "currency": row["currency"]}} for b in balances[:1]]
        record["resourceId"] = row["id"]
        return record

    def create_account(self, tx: Tx, body: dict, owner: str | None = None) -> dict:
        if tx.customer_by_number(body["customerNumber"]) is None:
            raise Refused(UNKNOWN_REFERENCE, f"no sandbox customer with customerNumber {body['customerNumber']}", "/customerNumber")
        if tx.account_by_reference(body.get("iban"), body.get("bban")):
            raise Refused(CONFLICT, "a sandbox account with this iban or bban exists", "/bban")
        balances = body.get("balances") or []
        balance = balances[0]["balanceAmount"]["amount"] if balances else 0
        account_id = opaque_id("ACC-" + (body.get("bban") or body["iban"]))
        tx.insert_account(account_id, dict(body), balance, int(body.get("creditLine") or 0), owner)
        return self.account_view(tx.account(account_id))

    def create_card_account(self, tx: Tx, body: dict, *, key: str | None = None, owner: str | None = None) -> dict:
        if tx.customer_by_number(body["customerNumber"]) is None:
            raise Refused(UNKNOWN_REFERENCE, f"no sandbox customer with customerNumber {body['customerNumber']}", "/customerNumber")
        card_id = opaque_id("CARD-" + (key or secrets.token_hex(6)))
        if tx.card_account(card_id) is not None:
            card_id = opaque_id("CARD-" + secrets.token_hex(6))
        record = {**body, "resourceId": card_id}
        tx.insert_card_account(card_id, record, owner)
        return record

    # ---- transactions ----
    def post_account_transaction(self, tx: Tx, account_id: str, item: dict) -> dict:
        """Book one transaction on an account: a stable id and a self link (document 1.18.0)."""
        transaction_id = opaque_id(f"TRX-{tx.account_transaction_count() + 1:08d}")
        record = {"id": transaction_id, **item,
                  "_links": {"self": link(f"/v1/sandbox/accounts/{account_id}/transactions/{transaction_id}", "GET")}}
        tx.insert_account_transaction(transaction_id, account_id, record)
        return record

    def create_account_transactions(self, tx: Tx, account_id: str, items: list[dict]) -> list[dict]:
        row = tx.account(account_id)
        if row is None:
            raise Refused(NOT_FOUND, f"no sandbox account {account_id}")
        for i, item in enumerate(items):  # Errors 6: another account as debtor is refused
            iban, bban = account_reference(item.get("debtorAccount"))
            debtor = tx.account_by_reference(iban or None, bban or None)
            if debtor is not None and debtor["id"] != account_id:
                raise Refused(INVALID, f"the debtor account {bban or iban} is another sandbox account; a transaction "
                              "is created on the account it is drawn from", f"/{i}/debtorAccount")
        return [self.post_account_transaction(tx, account_id, item) for item in items]

    def paginate(self, items: list, offset: int | None, limit: int | None) -> list:
        """``offset`` transactions skipped, then at most ``limit`` returned (A22)."""
        start = offset or 0
        if offset is not None and F.PAGINATION_OFF_BY_ONE in self.faults:  # offset taken as 1-based
            start += 1
        return items[start:] if limit is None else items[start:start + limit]

    def list_account_transactions(self, tx: Tx, account_id: str, query: dict) -> list[dict]:
        if tx.account(account_id) is None:
            raise Refused(NOT_FOUND, f"no sandbox account {account_id}")
        found = tx.account_transactions(account_id, query.get("fromDate"), query.get("toDate"))
        return self.paginate(found, query.get("offset"), query.get("limit"))

    def card_transactions_view(self, card: dict, booked: list[dict]) -> dict:
        fields = ("cardTransactionId", "bookingDate", "transactionDate", "transactionAmount", "originalAmount",
                  "merchantCategoryCode")
        return {"cardAccount": {"maskedPan": card["maskedPan"]},
                "cardTransactions": {"booked": [{k: t[k] for k in fields} for t in booked], "pending": []}}

    def create_card_transactions(self, tx: Tx, card_id: str, items: list[dict]) -> dict:
        card = tx.card_account(card_id)
        if card is None:
            raise Refused(NOT_FOUND, f"no sandbox card account {card_id}")
        for item in items:
            tx.insert_card_transaction(card_id, item)
        return self.card_transactions_view(card, tx.card_transactions(card_id, None, None))

    def list_card_transactions(self, tx: Tx, card_id: str, query: dict) -> dict:
        card = tx.card_account(card_id)
        if card is None:
            raise Refused(NOT_FOUND, f"no sandbox card account {card_id}")
        booked: list[dict] = []
        if query.get("bookingStatus") in ("booked", "both"):  # every created card transaction is booked
            booked = self.paginate(tx.card_transactions(card_id, query.get("fromDate"), query.get("toDate")),
                                   query.get("offset"), query.get("limit"))
        return self.card_transactions_view(card, booked)

