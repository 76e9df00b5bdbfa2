"""The test data the suites use, found in what the target gives (A32): customers, their accounts and card accounts
(listSandboxCustomers, with withAccounts and withAgreements sent: their defaults are open), the numbers and currencies
of accounts from the listing, the run's --test-data (the bank's fixed set), creation answers or their transactions;
where the data lacks an account a scenario needs, one the gate creates (A15). What a check needs and the target's data
lacks makes that check "not exercised: the target's sandbox data has no ..."; a refused listing, "not exercised: the
listing was refused (status code)"; a target without the sandbox operations, "not exercised" too."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

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
    """A sandbox account as the target's own data shows it: its id (None when only its number is known: a --test-data
    account), its owner's customerNumber, and its number and currency (the listing, a creation answer, --test-data or
    its transactions reveal them)."""

    id: str | None
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
    """The target's test data as it shows it (A32: found, not assumed): customers with their accounts and card
    accounts from its listing; accounts whose number and currency are known (``known``: the listing's account
    objects, the run's --test-data, accounts the gate created), the others' learnt from their transactions when a
    check needs them. ``refused``: why the listing could not be used (then only --test-data's accounts are known)."""

    customers: tuple[Customer, ...]
    known: list[Account] = field(default_factory=list)
    learnt: dict[str, Account | None] = field(default_factory=dict)   # account id -> what its transactions show
    refused: str | None = None

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
        if found is None and member == "accounts":   # else one the gate created (payer)
            found = next((a.id for a in self.known if a.id), None)
        if found is None:
            raise NotExercised(self.refused or reason(NO_TEST_DATA, what))
        return found

    def accounts_of(self, number: str) -> tuple[str, ...]:
        listed = next((c.accounts for c in self.customers if c.number == number), ())
        return tuple(dict.fromkeys(listed + tuple(a.id for a in self.known if a.owner == number and a.id)))

    def stranger(self, owner: str) -> str:
        """A customerNumber that does not own ``owner``'s accounts: another customer (an unknown number fails the SCA
        the same way, A24)."""
        numbers = [c.number for c in self.customers] + [a.owner for a in self.known]
        return next((n for n in numbers if n != owner), "00000000000")

    def payer(self, session: Session, currency: str, form: str) -> Account:
        """An account in ``currency`` whose number (``form``: iban or bban) the target's data shows, with its owner
        (who authorises, A24): a known one, else one whose transactions show it, else one the gate creates where the
        target has the sandbox creation operations."""
        fits = lambda a: a is not None and a.currency == currency and bool(getattr(a, form))  # noqa: E731
        found = next((a for a in self.known if fits(a)), None) or self._learnt(session, fits)
        if found is not None:
            return found
        created = _create_payer(session, currency)
        if created is not None:
            self.known.append(created)
            return created
        raise NotExercised(self.refused if self.refused and not self.known else
                           reason(NO_TEST_DATA, f"{currency} account whose {form} it shows (in its listing, its "
                                  "transactions or --test-data), and the gate could not create one"))

    def _learnt(self, session: Session, fits) -> Account | None:
        """The first listed account ``fits`` accepts as its transactions show it (the first MAX_ACCOUNTS_READ read)."""
        known = {a.id for a in self.known}
        for c in self.customers:
            for account_id in c.accounts:
                if account_id in known:
                    continue
                if account_id not in self.learnt and len(self.learnt) < MAX_ACCOUNTS_READ:
                    self.learnt[account_id] = _learn(session, c, account_id)
                if fits(self.learnt.get(account_id)):
                    return self.learnt[account_id]
        return None


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


def _shown(value: Any, owner: str) -> Account | None:
    """An account as an answer shows it (a listing's account object, a creation answer): its id, number and currency,
    when it shows a number and a currency."""
    if not isinstance(value, dict):
        return None
    number = {k: value.get(k) if isinstance(value.get(k), str) and value.get(k) else None for k in ("iban", "bban")}
    currency = value.get("currency")
    if not any(number.values()) or not isinstance(currency, str):
        return None
    resource = value.get("resourceId")
    return Account(resource if isinstance(resource, str) and resource else None, owner, number["iban"],
                   number["bban"], currency)


def _stated(data: testdata.DataSet | None) -> list[Account]:
    """The accounts of the run's --test-data (the bank's fixed set as it states it): numbers and currencies, no ids."""
    if data is None:
        return []
    return [Account(None, a["customerNumber"], a.get("iban") or None, a.get("bban") or None, a.get("currency"))
            for a in data.accounts]


# The gate's own customer and accounts, where the target's data lacks what a scenario needs and it has the sandbox
# creation operations (A15): a valid national identity number, each currency's account a valid Norwegian number.
OWN_CUSTOMER_NAME = "Obvalidate Testkunde"
OWN_BALANCE = 100_000_000   # minor units: far more than any scenario pays, far less than LACK_OF_FUNDS_AMOUNT


def own_customer_number(seed: int) -> str:
    """A valid Norwegian national identity number (fødselsnummer) of the gate's own customer, from the seed: the same
    seed, the same customer (a later run finds it there, 409 CONFLICT, and uses it)."""
    from stdnum.no import fodselsnummer

    for n in range(seed % 400, seed % 400 + 400):
        base = f"0101{70 + n % 30:02d}{400 + n % 100:03d}"  # born 1 Jan 1970-1999, individual number 400-499
        first = fodselsnummer.calc_check_digit1(base)
        if first == "10":
            continue
        second = fodselsnummer.calc_check_digit2(base + first)
        if second != "10" and fodselsnummer.is_valid(base + first + second):
            return base + first + second
    raise ValueError("no national identity number found")   # pragma: no cover - 400 candidates, one in 11 fail


def _create_payer(session: Session, currency: str) -> Account | None:
    """The gate's own customer and an account of it in ``currency``, created through the sandbox creation operations
    (an existing one, 409 CONFLICT, is the gate's from an earlier run); None when the target has no such operations
    or refuses them."""
    for operation in ("createSandboxCustomer", "createSandboxAccount"):
        if session.unavailable(operation):
            return None
    tpp = session.client()
    number = own_customer_number(session.seed)
    customer = session.call(tpp, "createSandboxCustomer",
                            body={"customerNumber": number, "name": OWN_CUSTOMER_NAME, "type": "PRIVATE"})
    if customer.answer.status not in (201, 409):
        return None
    first_ten = f"6{session.seed % 1000:03d}{sum(map(ord, currency)):03d}"
    for n in range(10):
        try:
            bban, iban = testdata.norwegian_account(f"{first_ten}{n:03d}")
        except ValueError:
            continue
        break
    else:   # pragma: no cover - one number in eleven has no check digit
        return None
    body = {"customerNumber": number, "accountName": f"Obvalidate {currency}", "bban": bban, "iban": iban,
            "currency": currency, "product": "Brukskonto", "cashAccountType": "CACC", "creditLine": 0,
            "balances": [{"balanceType": "EXPECTED", "balanceAmount": {"amount": OWN_BALANCE, "currency": currency}}]}
    account = session.call(tpp, "createSandboxAccount", body=body)
    created = Account(None, number, iban, bban, currency)
    if account.answer.status == 409:   # the gate's own from an earlier run
        return created
    shown = _shown(account.json(), number) if account.answer.status == 201 else None
    # the account created, as its answer shows it (a mock's canned example account is not one the gate can pay from)
    if shown is not None and (shown.iban, shown.bban, shown.currency) == (iban, bban, currency):
        return shown
    return None


LISTING_SWITCHES = {"withAccounts": "true", "withAgreements": "true"}  # their defaults are open: asked for, always


def sandbox_resources(session: Session) -> Resources:
    """The target's customers, accounts and card accounts (listSandboxCustomers with its switches on), with the
    accounts of the run's --test-data, found once per run. A listing refused (or absent, or unreadable) is what a
    check needing a listed id says; --test-data's accounts and the gate's own are still used."""
    cached = getattr(session, "_resources", None)
    if cached is not None:
        return cached
    exchange, refused = None, None
    try:
        exchange = session.require(session.client(), "listSandboxCustomers", query=LISTING_SWITCHES)
    except NotExercised as absent:   # what needs an account says so, unless --test-data or a creation gives one
        refused = str(absent)
    if exchange is not None and exchange.decoded.why_not:
        # an answer the gate cannot read: what needs the test data says why, not "none"
        refused = f"the target's test data could not be read: {exchange.decoded.why_not}"
    elif exchange is not None and exchange.answer.status != 200:
        refused = f"the listing was refused ({exchange.answer.describe()})"
    listed = exchange.json() if exchange is not None and not refused else []
    customers, shown = [], []
    for c in listed if isinstance(listed, list) else []:
        if not isinstance(c, dict) or not isinstance(c.get("customerNumber"), str):
            continue
        ids = [[a if isinstance(a, str) else (a or {}).get("resourceId") for a in c.get(m) or [] if a]
               for m in ("accounts", "cardAccounts")]
        shown += [a for a in (_shown(item, c["customerNumber"]) for item in c.get("accounts") or []) if a]
        customers.append(Customer(c["customerNumber"], str(c.get("customerName") or ""), str(c.get("customerType") or ""),
                                  tuple(i for i in ids[0] if isinstance(i, str)),
                                  tuple(i for i in ids[1] if isinstance(i, str))))
    resources = Resources(tuple(customers), shown + _stated(session.test_data), refused=refused)
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
