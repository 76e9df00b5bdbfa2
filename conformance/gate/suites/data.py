"""The fixed test data of A32 as the suites use it: customers, their accounts and card accounts, found on the target
through the sandbox operations (a target without them makes the checks that need them "not exercised")."""
from __future__ import annotations

from dataclasses import dataclass

from conformance.sandbox import testdata

from ..model import Expected, NotExercised
from ..session import Session

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
BULK = {"payment-service": "bulk-payments", "payment-product": "norwegian-domestic-credit-transfers"}
PERIODIC = {"payment-service": "periodic-payments", "payment-product": "norwegian-domestic-credit-transfers"}
WHERE = {"createSepaCreditTransfer": SEPA, "createBulkPayment": BULK, "createPeriodicPayment": PERIODIC}
REDIRECT = "https://tpp.example.no/callback?state=obvalidate"
SESSION_ID = "6f0c2d1e-5b7a-4c3d-9e8f-1a2b3c4d5e6f"
KARI, INGRID = testdata.KARI, testdata.INGRID
EUR_ACCOUNT, KARI_NOK, NEARLY_EMPTY = testdata.EUR_ACCOUNT, testdata.ACCOUNTS[0], testdata.NEARLY_EMPTY
CREDITOR_IBAN = "DE89370400440532013000"
CREDITOR_BBAN = testdata.ACCOUNTS[3]["bban"]  # Ola's account: a creditor inside the sandbox
# A28: a paymentId that is not this TPP's payment (another TPP's, or none at all) in a basket.
UNKNOWN_REFERENCE = Expected((400,), ("RESOURCE_UNKNOWN",), "a basket's paymentId that is not this TPP's payment (A28)")


@dataclass(frozen=True)
class Resources:
    account: str          # Kari's accounts' ids, the first her NOK current account
    accounts: tuple[str, ...]
    card_account: str


def sandbox_resources(session: Session) -> Resources:
    """Kari's account and card account ids on the target (listSandboxCustomers), found once per run."""
    cached = getattr(session, "_resources", None)
    if cached is not None:
        return cached
    exchange = session.require(session.client(), "listSandboxCustomers")
    customers = exchange.response.json() if exchange.answer.status == 200 else []
    kari = next((c for c in customers if isinstance(c, dict) and c.get("customerNumber") == KARI), None)
    if not kari or not kari.get("accounts") or not kari.get("cardAccounts"):
        raise NotExercised("the target's sandbox data lacks the fixed test customer of A32 with accounts")
    ids = [a if isinstance(a, str) else a.get("resourceId") for a in kari["accounts"]]
    cards = [a if isinstance(a, str) else a.get("resourceId") for a in kari["cardAccounts"]]
    resources = Resources(ids[0], tuple(ids), cards[0])
    session._resources = resources
    return resources


def sepa_body(amount: str = "125.00", *, debtor: dict = EUR_ACCOUNT, creditor: str = CREDITOR_IBAN,
              text: str = "Faktura obvalidate", date: str | None = None) -> dict:
    """A SEPA credit transfer from a fixed-test-data account (A32); the sandbox tests build theirs here too."""
    body = {"instructedAmount": {"amount": amount, "currency": "EUR"}, "creditorName": "Ingrid Hansen Immobilien GmbH",
            "creditorAccount": {"iban": creditor, "currency": "EUR"},
            "debtorAccount": {"iban": debtor["iban"], "currency": "EUR"}, "remittanceInformationUnstructured": text}
    if date:
        body["requestedExecutionDate"] = date
    return body


def bulk_body(*amounts: str, debtor: dict = KARI_NOK, creditor: str = CREDITOR_BBAN, text: str = "Betaling",
              date: str | None = None) -> dict:
    """A bulk of Norwegian domestic transfers, one entry per amount, from a fixed-test-data account (A32)."""
    body = {"debtorAccount": {"bban": debtor["bban"], "currency": "NOK"}, "payments": [
        {"instructedAmount": {"amount": a, "currency": "NOK"}, "creditorName": "Ola Nordmann",
         "creditorAccount": {"bban": creditor, "currency": "NOK"},
         "creditorAddress": {"townName": "Oslo", "country": "NO"}, "remittanceInformationUnstructured": f"{text} {i}"}
        for i, a in enumerate(amounts)]}
    if date:
        body["requestedExecutionDate"] = date
    return body
