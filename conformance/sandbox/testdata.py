"""The fixed test data of a fresh or re-initialised sandbox (A32).

Three private customers and one corporate customer with Norwegian names; NOK accounts whose BBANs carry a valid
MOD11 check digit and whose IBANs are derived from them (python-stdnum), one nearly empty account for the
lack-of-funds paths, one EUR account for SEPA payments, and card accounts with booked transactions. Sandbox amounts
are integers in minor units (øre, cent), as the interface's int32 amounts are.
"""
from __future__ import annotations

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
                         purpose: str) -> dict:
    ours = {"iban": on["iban"], "bban": on["bban"]}
    theirs = {"iban": counterpart["iban"], "bban": counterpart["bban"]}
    debtor, creditor = (theirs, ours) if incoming else (ours, theirs)
    debtor_name, creditor_name = (counterpart["name"], on["owner"]) if incoming else (on["owner"], counterpart["name"])
    return {
        "amount": amount, "currency": "NOK", "valueDate": day, "bookingDate": day,
        "remittanceInformationUnstructured": text, "creditorName": creditor_name, "creditorAccount": creditor,
        "debtorName": debtor_name, "debtorAccount": debtor, "bankTransactionCode": "PMNT-ICDT-DMCT",
        "ultimateDebtor": debtor_name, "ultimateCreditor": creditor_name, "purposeCode": purpose,
    }


_AFTENPOSTEN_BBAN, _AFTENPOSTEN_IBAN = norwegian_account("9041860129")
_AFTENPOSTEN = {"name": "Aftenposten AS", "bban": _AFTENPOSTEN_BBAN, "iban": _AFTENPOSTEN_IBAN}
_EMPLOYER_BBAN, _EMPLOYER_IBAN = norwegian_account("7694050123")
_EMPLOYER = {"name": "Trondheim Energi AS", "bban": _EMPLOYER_BBAN, "iban": _EMPLOYER_IBAN}
_KARI_MAIN = {**ACCOUNTS[0], "owner": "Kari Nordmann"}

ACCOUNT_TRANSACTIONS = {  # bban -> transactions, in booking order
    ACCOUNTS[0]["bban"]: (
        _account_transaction(_KARI_MAIN, _EMPLOYER, 3_250_000, "2026-06-12", "Lønn juni 2026", True, "SALA"),
        _account_transaction(_KARI_MAIN, _AFTENPOSTEN, 39_900, "2026-06-15", "Avis juni", False, "OTHR"),
    ),
}
