"""The test data the suites use, found in the target's own listings (A32): customers, their accounts and card accounts
(listSandboxCustomers), the numbers and currencies of accounts from their transactions. What a check needs and the
target's data lacks makes that check "not exercised: the target's sandbox data has no ..."; a target without the
sandbox operations makes them "not exercised" too."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from conformance.sandbox import testdata

from ..model import NO_TEST_DATA, Expected, NotExercised, reason
from ..session import Session

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
BULK = {"payment-service": "bulk-payments", "payment-product": "norwegian-domestic-credit-transfers"}
PERIODIC = {"payment-service": "periodic-payments", "payment-product": "norwegian-domestic-credit-transfers"}
WHERE = {"createSepaCreditTransfer": SEPA, "createBulkPayment": BULK, "createPeriodicPayment": PERIODIC}
REDIRECT = "https://tpp.example.no/callback?state=obvalidate"
SESSION_ID = "6f0c2d1e-5b7a-4c3d-9e8f-1a2b3c4d5e6f"
# Accounts of creations that need no sandbox account (A26: the debtor account is checked at SCA only); the scenarios
# that authorise take theirs from the target's own data (Resources.payer).
EUR_ACCOUNT, KARI_NOK = testdata.EUR_ACCOUNT, testdata.ACCOUNTS[0]
CREDITOR_IBAN = "DE89370400440532013000"
CREDITOR_BBAN = testdata.ACCOUNTS[3]["bban"]  # a valid Norwegian account number as creditor
# A28: a paymentId that is not this TPP's payment (another TPP's, or none at all) in a basket.
UNKNOWN_REFERENCE = Expected((400,), ("RESOURCE_UNKNOWN",), "a basket's paymentId that is not this TPP's payment (A28)")


MAX_ACCOUNTS_READ = 30  # accounts whose transactions are read to learn their numbers (a large sandbox: the first)
# Far above any test account's balance and credit line: a payment of it lacks funds on whichever account (A24).
LACK_OF_FUNDS_AMOUNT = "99999999.00"


@dataclass(frozen=True)
class Account:
    """A sandbox account as the target's own data shows it: its id, its owner's customerNumber, and the number and
    currency its transactions reveal (the customer list names accounts by id only)."""

    id: str
    owner: str
    iban: str | None = None
    bban: str | None = None
    currency: str | None = None

    def as_debtor(self) -> dict:
        """As the debtor of sepa_body / bulk_body."""
        return {"iban": self.iban, "bban": self.bban}


@dataclass(frozen=True)
class Customer:
    number: str
    name: str
    type: str
    accounts: tuple[str, ...]
    card_accounts: tuple[str, ...]


@dataclass
class Resources:
    """The target's test data as its listings show it (A32: found, not assumed): customers with their accounts and
    card accounts; account numbers and currencies learnt from the accounts' transactions when a check needs them."""

    customers: tuple[Customer, ...]
    learnt: dict[str, Account | None] = field(default_factory=dict)   # account id -> what its transactions show

    @property
    def account(self) -> str:
        """An account id of the target's data (the first listed)."""
        return self._first("accounts", "account")

    @property
    def card_account(self) -> str:
        """A card account id of the target's data (the first listed)."""
        return self._first("card_accounts", "card account")

    def _first(self, member: str, what: str) -> str:
        found = next((ids[0] for c in self.customers if (ids := getattr(c, member))), None)
        if found is None:
            raise NotExercised(reason(NO_TEST_DATA, what))
        return found

    def accounts_of(self, number: str) -> tuple[str, ...]:
        return next((c.accounts for c in self.customers if c.number == number), ())

    def stranger(self, owner: str) -> str:
        """A customerNumber that does not own ``owner``'s accounts: another listed customer (an unknown number fails
        the SCA the same way, A24)."""
        return next((c.number for c in self.customers if c.number != owner), "00000000000")

    def payer(self, session: Session, currency: str, form: str) -> Account:
        """An account in ``currency`` whose number (``form``: iban or bban) the target's data shows, with its owner
        (who authorises, A24)."""
        for c in self.customers:
            for account_id in c.accounts:
                if account_id not in self.learnt and len(self.learnt) < MAX_ACCOUNTS_READ:
                    self.learnt[account_id] = _learn(session, c, account_id)
                found = self.learnt.get(account_id)
                if found is not None and found.currency == currency and getattr(found, form):
                    return found
        raise NotExercised(reason(NO_TEST_DATA, f"{currency} account whose {form} its transactions show"))


def _learn(session: Session, customer: Customer, account_id: str) -> Account | None:
    """An account's own number and currency from its transactions: the account reference that carries the owner's
    name most often (else the one on every transaction), and the one currency of those transactions. Transactions
    other checks created there (any accounts, any names) do not mislead it."""
    listed = session.call(session.client(), "listSandboxAccountTransactions", path={"mockAccountId": account_id})
    items = listed.json() if listed.answer.status == 200 else None
    if not isinstance(items, list) or not items:
        return None
    items = [t for t in items if isinstance(t, dict)]
    named: Counter = Counter()
    currencies: dict[tuple, set] = {}
    every: list[set] = []
    for t in items:
        refs = set()
        for side, name in (("debtorAccount", "debtorName"), ("creditorAccount", "creditorName")):
            ref = t.get(side) if isinstance(t.get(side), dict) else {}
            key = (ref.get("iban") or None, ref.get("bban") or None)
            if key == (None, None):
                continue
            refs.add(key)
            currencies.setdefault(key, set()).add(t.get("currency"))
            if customer.name and t.get(name) == customer.name:
                named[key] += 1
        every.append(refs)
    ranked = named.most_common(2)
    if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
        own = ranked[0][0]
    else:
        common = set.intersection(*every) if every else set()
        if len(common) != 1:
            return None
        own, = common
    if len(currencies[own]) != 1 or not isinstance(next(iter(currencies[own])), str):
        return None
    iban, bban = own
    return Account(account_id, customer.number, iban, bban, next(iter(currencies[own])))


def sandbox_resources(session: Session) -> Resources:
    """The target's customers, accounts and card accounts (listSandboxCustomers), found once per run."""
    cached = getattr(session, "_resources", None)
    if cached is not None:
        return cached
    exchange = session.require(session.client(), "listSandboxCustomers")
    if exchange.decoded.why_not:   # an answer the gate cannot read: what needs the test data says why, not "none"
        raise NotExercised(f"the target's test data could not be read: {exchange.decoded.why_not}")
    listed = exchange.json() if exchange.answer.status == 200 else []
    customers = []
    for c in listed if isinstance(listed, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("customerNumber"), str):
            continue
        ids = [[a if isinstance(a, str) else (a or {}).get("resourceId") for a in c.get(m) or [] if a]
               for m in ("accounts", "cardAccounts")]
        customers.append(Customer(c["customerNumber"], str(c.get("customerName") or ""), str(c.get("customerType") or ""),
                                  tuple(i for i in ids[0] if isinstance(i, str)),
                                  tuple(i for i in ids[1] if isinstance(i, str))))
    if not customers:
        raise NotExercised(reason(NO_TEST_DATA, "customer"))
    resources = Resources(tuple(customers))
    session._resources = resources
    return resources


def sepa_body(amount: str = "125.00", *, debtor: dict = EUR_ACCOUNT, creditor: str = CREDITOR_IBAN,
              text: str = "Faktura obvalidate", date: str | None = None) -> dict:
    """A SEPA credit transfer from ``debtor`` (by default an account of our fixed data: a creation needs no sandbox
    account, A26); the sandbox tests build theirs here too."""
    body = {"instructedAmount": {"amount": amount, "currency": "EUR"}, "creditorName": "Ingrid Hansen Immobilien GmbH",
            "creditorAccount": {"iban": creditor, "currency": "EUR"},
            "debtorAccount": {"iban": debtor["iban"], "currency": "EUR"}, "remittanceInformationUnstructured": text}
    if date:
        body["requestedExecutionDate"] = date
    return body


def bulk_body(*amounts: str, debtor: dict = KARI_NOK, creditor: str = CREDITOR_BBAN, text: str = "Betaling",
              date: str | None = None) -> dict:
    """A bulk of Norwegian domestic transfers, one entry per amount, from ``debtor`` (as sepa_body)."""
    body = {"debtorAccount": {"bban": debtor["bban"], "currency": "NOK"}, "payments": [
        {"instructedAmount": {"amount": a, "currency": "NOK"}, "creditorName": "Ola Nordmann",
         "creditorAccount": {"bban": creditor, "currency": "NOK"},
         "creditorAddress": {"townName": "Oslo", "country": "NO"}, "remittanceInformationUnstructured": f"{text} {i}"}
        for i, a in enumerate(amounts)]}
    if date:
        body["requestedExecutionDate"] = date
    return body


# What stands in for the target's test data in a request judged but not sent (the validator never looks them up):
# the edge-case report without a target, the gate's derivation of the query parameters' boundaries.
PLACEHOLDERS = Resources((Customer("customer-number", "", "", ("account-id",), ("card-account-id",)),))
