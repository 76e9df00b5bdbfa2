"""The fixed test data of a fresh or re-initialised sandbox (A32).

Three private customers and one corporate customer with Norwegian names; NOK accounts whose BBANs carry a valid
MOD11 check digit and whose IBANs are derived from them (python-stdnum), one nearly empty account for the
lack-of-funds paths, one EUR account for SEPA payments, and card accounts with booked transactions. Sandbox amounts
are integers in minor units (øre, cent), as the interface's int32 amounts are.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from stdnum.no import kontonr


def norwegian_account(first_ten: str) -> tuple[str, str]:
    """(BBAN, IBAN) for the first ten digits of a Norwegian account number: the MOD11 check digit appended."""
    for digit in "0123456789":
        bban = first_ten + digit
        if kontonr.is_valid(bban):
            return bban, kontonr.to_iban(bban)
    raise ValueError(f"{first_ten} has no MOD11 check digit (remainder 10); choose another number")


def _account(number: str, name: str, first_ten: str, currency: str, balance: int, product: str,
             credit_line: int = 0) -> dict:
    bban, iban = norwegian_account(first_ten)
    return {
        "customerNumber": number, "accountName": name, "bban": bban, "iban": iban, "currency": currency,
        "product": product, "cashAccountType": "CACC", "creditLine": credit_line,
        "balances": [{"balanceType": "EXPECTED", "balanceAmount": {"amount": balance, "currency": currency}}],
    }


KARI, OLA, INGRID, FJORDKRAFT = "13039319955", "24068712346", "05119034561", "918273645"

CUSTOMERS = (
    {"customerNumber": KARI, "name": "Kari Nordmann", "type": "PRIVATE"},
    {"customerNumber": OLA, "name": "Ola Nordmann", "type": "PRIVATE"},
    {"customerNumber": INGRID, "name": "Ingrid Bakken Haugen", "type": "PRIVATE"},
    {"customerNumber": FJORDKRAFT, "name": "Fjordkraft Regnskap AS", "type": "CORPORATE"},
)

ACCOUNTS = (
    _account(KARI, "Brukskonto", "1254791907", "NOK", 2_500_000, "Brukskonto"),
    _account(KARI, "Sparekonto", "1254791911", "NOK", 15_000_000, "Høyrentekonto"),
    _account(KARI, "Euro-konto", "8601111794", "EUR", 300_000, "Valutakonto EUR"),
    _account(OLA, "Brukskonto", "1503398259", "NOK", 1_200_000, "Brukskonto", credit_line=500_000),
    _account(INGRID, "Nesten tom", "9710051234", "NOK", 5_000, "Brukskonto"),       # 50,00 NOK: lack of funds
    _account(FJORDKRAFT, "Driftskonto", "3000876232", "NOK", 98_000_000, "Bedriftskonto"),
)
NEARLY_EMPTY = ACCOUNTS[4]
EUR_ACCOUNT = ACCOUNTS[2]

CARD_ACCOUNTS = (
    {"customerNumber": KARI, "maskedPan": "4925xxxxxxxx1234", "currency": "NOK",
     "creditLimit": {"amount": 5_000_000, "currency": "NOK"},
     "balances": [{"balanceType": "EXPECTED", "balanceAmount": {"amount": 0, "currency": "NOK"}}],
     "name": "Kari Nordmann", "product": "Mastercard Gold", "status": "ENABLED"},
    {"customerNumber": FJORDKRAFT, "maskedPan": "5412xxxxxxxx9876", "currency": "NOK",
     "creditLimit": {"amount": 20_000_000, "currency": "NOK"},
     "name": "Fjordkraft Regnskap AS", "product": "Visa Business", "status": "ENABLED"},
)


def _card_transaction(tid: str, booked: str, when: str, amount: int, original: tuple[str, int], mcc: str,
                      details: str, pan: str, city: str, country: str) -> dict:
    return {
        "cardTransactionId": tid, "terminalId": "T-" + tid[-4:], "bookingDate": booked, "transactionDate": when,
        "transactionAmount": {"currency": "NOK", "amount": amount},
        "originalAmount": {"currency": original[0], "amount": original[1]},
        "merchantCategoryCode": mcc, "markupFee": {"currency": "NOK", "amount": 0}, "markupFeePercentage": "0",
        "cardAcceptorId": "8821" + tid[-4:], "cardAcceptorAddress": {"city": city, "country": country},
        "maskedPan": pan, "transactionDetails": details, "invoiced": "false",
        "proprietaryBankTransactionCode": "PURCHASE",
    }


CARD_TRANSACTIONS = {  # maskedPan -> booked transactions
    "4925xxxxxxxx1234": (
        _card_transaction("CT-2026-06-0001", "2026-06-20", "2026-06-19", 45_990, ("NOK", 45_990), "5411",
                          "REMA 1000 Storgata", "4925xxxxxxxx1234", "Oslo", "NO"),
        _card_transaction("CT-2026-06-0002", "2026-06-22", "2026-06-21", 120_450, ("EUR", 10_400), "7011",
                          "Hotel Adlon Berlin", "4925xxxxxxxx1234", "Berlin", "DE"),
    ),
    "5412xxxxxxxx9876": (
        _card_transaction("CT-2026-06-0103", "2026-06-18", "2026-06-18", 289_000, ("NOK", 289_000), "5732",
                          "Elkjøp Lørenskog", "5412xxxxxxxx9876", "Lørenskog", "NO"),
    ),
}


def _account_transaction(on: dict, counterpart: dict, amount: int, day: str, text: str, incoming: bool,
                         purpose: str, currency: str = "NOK") -> dict:
    ours = {"iban": on["iban"], "bban": on["bban"]}
    theirs = {"iban": counterpart["iban"], "bban": counterpart["bban"]}
    debtor, creditor = (theirs, ours) if incoming else (ours, theirs)
    debtor_name, creditor_name = (counterpart["name"], on["owner"]) if incoming else (on["owner"], counterpart["name"])
    return {  # A36: the amount signed from the account's side, negative a debit
        "amount": amount if incoming else -amount, "currency": currency, "valueDate": day, "bookingDate": day,
        "remittanceInformationUnstructured": text, "creditorName": creditor_name, "creditorAccount": creditor,
        "debtorName": debtor_name, "debtorAccount": debtor, "bankTransactionCode": "PMNT-ICDT-DMCT",
        "ultimateDebtor": debtor_name, "ultimateCreditor": creditor_name, "purposeCode": purpose,
    }


_AFTENPOSTEN_BBAN, _AFTENPOSTEN_IBAN = norwegian_account("9041860129")
_AFTENPOSTEN = {"name": "Aftenposten AS", "bban": _AFTENPOSTEN_BBAN, "iban": _AFTENPOSTEN_IBAN}
_EMPLOYER_BBAN, _EMPLOYER_IBAN = norwegian_account("7694050123")
_EMPLOYER = {"name": "Trondheim Energi AS", "bban": _EMPLOYER_BBAN, "iban": _EMPLOYER_IBAN}
_KARI_MAIN = {**ACCOUNTS[0], "owner": "Kari Nordmann"}
_KARI_EUR = {**EUR_ACCOUNT, "owner": "Kari Nordmann"}
_LANDLORD_IBAN = "DE89370400440532013000"
_LANDLORD = {"name": "Ingrid Hansen Immobilien GmbH", "iban": _LANDLORD_IBAN, "bban": _LANDLORD_IBAN[4:]}

ACCOUNT_TRANSACTIONS = {  # bban -> transactions, in booking order
    ACCOUNTS[0]["bban"]: (
        _account_transaction(_KARI_MAIN, _EMPLOYER, 3_250_000, "2026-06-12", "Lønn juni 2026", True, "SALA"),
        _account_transaction(_KARI_MAIN, _AFTENPOSTEN, 39_900, "2026-06-15", "Avis juni", False, "OTHR"),
    ),
    # The EUR account's own transactions: what lets a tester (and the gate) see the account's number and currency
    # through the interface (A32), since the customer list names accounts by id only.
    EUR_ACCOUNT["bban"]: (
        _account_transaction(_KARI_EUR, _LANDLORD, 120_000, "2026-06-01", "Miete Juni 2026", False, "RENT", "EUR"),
        _account_transaction(_KARI_EUR, _LANDLORD, 15_000, "2026-06-10", "Kaution Rückzahlung", True, "OTHR", "EUR"),
    ),
}


# ---------------------------------------------------------------- a test data set (A32), ours or the tester's own
@dataclass(frozen=True)
class DataSet:
    """What a fresh or re-initialised sandbox holds: customers, accounts, card accounts and their transactions, each
    in the shape of the sandbox creation requests (A15). ``DEFAULT`` is the fixed set above; ``load`` reads another
    (``obvalidate sandbox serve --test-data FILE``), so the gate can be shown to find what it needs in any data."""

    customers: tuple[dict, ...]
    accounts: tuple[dict, ...]
    card_accounts: tuple[dict, ...] = ()
    card_transactions: Mapping[str, tuple[dict, ...]] = field(default_factory=dict)     # maskedPan -> booked
    account_transactions: Mapping[str, tuple[dict, ...]] = field(default_factory=dict)  # bban -> in booking order
    # What the customer listing gives when its switches are not sent (withAccounts, withAgreements): the document
    # leaves their defaults open; ours is true, a bank may answer accounts and agreements only on request.
    listing_defaults: Mapping[str, bool] = field(default_factory=lambda: dict(LISTING_DEFAULTS))


LISTING_DEFAULTS = {"withAccounts": True, "withAgreements": True}
DEFAULT = DataSet(CUSTOMERS, ACCOUNTS, CARD_ACCOUNTS, CARD_TRANSACTIONS, ACCOUNT_TRANSACTIONS)
# file member -> (DataSet field, validator kind of each item, keyed by)
_MEMBERS = {"customers": ("customers", "sandbox-customer", None), "accounts": ("accounts", "sandbox-account", None),
            "cardAccounts": ("card_accounts", "sandbox-card-account", None),
            "cardTransactions": ("card_transactions", "card-transactions", "maskedPan"),
            "accountTransactions": ("account_transactions", "sandbox-account-transactions", "bban")}
LISTING = "customerListing"   # the file member of the listing's defaults: {"withAccounts": false, ...}


class DataSetError(ValueError):
    """A test data file that cannot be used (the command line says why and exits 2)."""


def load(path: str | Path) -> DataSet:
    """A test data set from a JSON file: ``{"customers": [...], "accounts": [...], "cardAccounts": [...],
    "cardTransactions": {maskedPan: [...]}, "accountTransactions": {bban: [...]}}``, each item as its sandbox creation
    request (checked by the validator: the first error is the message). Accounts and card accounts name an existing
    customer; transactions an existing card account or account. An optional ``"customerListing": {"withAccounts":
    false, "withAgreements": false}`` states what the customer listing gives without its switches."""
    from validator import Validator

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataSetError(f"cannot read the test data {path}: {exc}") from None
    if not isinstance(data, dict) or set(data) - set(_MEMBERS) - {LISTING} or not {"customers", "accounts"} <= set(data):
        raise DataSetError(f"{path}: an object with customers and accounts (and optionally cardAccounts, "
                           f"cardTransactions, accountTransactions, {LISTING}) is expected")
    listing = data.get(LISTING, {})
    if not isinstance(listing, dict) or set(listing) - set(LISTING_DEFAULTS) \
            or any(not isinstance(v, bool) for v in listing.values()):
        raise DataSetError(f"{path}: {LISTING} must be an object of withAccounts and withAgreements, each true or "
                           "false (what the customer listing gives when the switch is not sent)")
    validator = Validator()
    values: dict[str, Any] = {}
    for member, (name, kind, keyed) in _MEMBERS.items():
        given = data.get(member, {} if keyed else [])
        if not isinstance(given, dict if keyed else list):
            raise DataSetError(f"{path}: {member} must be {'an object of arrays' if keyed else 'an array'}")
        # an item is checked as its creation request: a whole array of transactions, one customer, account, card
        for where, checked in (given.items() if keyed else enumerate(given)):
            report = validator.validate(checked, kind)
            if report.errors:
                first = report.errors[0]
                raise DataSetError(f"{path}: {member}/{where}{first.pointer}: {first.message}")
        values[name] = {k: tuple(v) for k, v in given.items()} if keyed else tuple(given)
    numbers = {c["customerNumber"] for c in values["customers"]}
    for member, name in (("accounts", "accounts"), ("cardAccounts", "card_accounts")):
        for i, item in enumerate(values[name]):
            if item["customerNumber"] not in numbers:
                raise DataSetError(f"{path}: {member}/{i}/customerNumber: no customer {item['customerNumber']}")
    for member, name, holders, key in (("accountTransactions", "account_transactions", "accounts", "bban"),
                                       ("cardTransactions", "card_transactions", "card_accounts", "maskedPan")):
        known = {item.get(key) for item in values[holders]}
        for unknown in sorted(set(values[name]) - known):
            raise DataSetError(f"{path}: {member}/{unknown}: no {holders.replace('_', ' ')[:-1]} with {key} {unknown}")
    return DataSet(**values, listing_defaults={**LISTING_DEFAULTS, **listing})
