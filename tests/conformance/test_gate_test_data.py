"""A32, the bank's own data: the gate finds what it needs in what the target gives (its listing with the switches
on, account objects, creation answers, transactions) and in the bank's fixed data set (conform --test-data, the
sandbox's own format); where the data lacks an account the gate creates one if it can. Every "not exercised" says the
true reason: a test per reason with a target whose data exists but is listed only on request (exercised), and one
where it does not exist (not exercised, with that reason)."""
from __future__ import annotations

import json

import pytest
import yaml

from conformance.gate.model import NO_TEST_DATA, SUITES
from conformance.gate.runner import RunOptions, run, selected
from conformance.gate.session import Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import testdata
from validator.context import Profile
from gate_helpers import serve

ON_REQUEST = {"withAccounts": False, "withAgreements": False}   # the listing's defaults of a bank (the document's open)


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(url: str, checks: tuple[str, ...], identities: Identities, *, test_data=None, profile_file=None,
         suites=("semantic", "stateful")):
    return run(RunOptions(url, suites, identities=identities, max_examples=1, checks=checks,
                          test_data=str(test_data) if test_data else None,
                          profile_path=str(profile_file) if profile_file else None))


def describe(result) -> str:
    return "\n".join(f"{f.check} [{f.operation}] {f.rule} ({f.ref}): {f.message} (expected {f.expected}, actual "
                     f"{f.actual})" for f in result.findings) or "(no findings)"


def not_exercised(result) -> dict[str, str]:
    return {o.check: o.reason for o in result.outcomes if o.status == "not-exercised"}


def written(tmp_path, data: dict, name: str = "bank.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def other_bank() -> dict:
    """Another bank's sandbox data: none of our customers, numbers or accounts."""
    def account(owner: str, first_ten: str, currency: str, balance: int, name: str) -> dict:
        bban, iban = testdata.norwegian_account(first_ten)
        return {"customerNumber": owner, "accountName": name, "bban": bban, "iban": iban, "currency": currency,
                "product": name, "cashAccountType": "CACC", "creditLine": 0,
                "balances": [{"balanceType": "EXPECTED", "balanceAmount": {"amount": balance, "currency": currency}}]}

    def transaction(on: dict, owner: str, amount: int, day: str, text: str, incoming: bool) -> dict:
        ours = {"iban": on["iban"], "bban": on["bban"]}
        theirs = {"iban": "SE4550000000058398257466", "bban": "50000000058398257466"}
        debtor, creditor = (theirs, ours) if incoming else (ours, theirs)
        names = ("Svensk Handel AB", owner) if incoming else (owner, "Svensk Handel AB")
        return {"amount": amount, "currency": on["currency"], "valueDate": day, "bookingDate": day,
                "remittanceInformationUnstructured": text, "debtorName": names[0], "creditorName": names[1],
                "debtorAccount": debtor, "creditorAccount": creditor, "bankTransactionCode": "PMNT-ICDT-DMCT",
                "ultimateDebtor": names[0], "ultimateCreditor": names[1], "purposeCode": "OTHR"}

    sigrid, tor, vestland = "01017012345", "02028054321", "987654321"
    eur = account(sigrid, "6011052345", "EUR", 1_000_000, "Valutakonto")
    nok = account(sigrid, "6011052347", "NOK", 5_000_000, "Lønnskonto")
    tors = account(tor, "7012063456", "NOK", 900_000, "Brukskonto")
    return {
        "customers": [{"customerNumber": tor, "name": "Tor Fjellheim", "type": "PRIVATE"},
                      {"customerNumber": sigrid, "name": "Sigrid Lunde", "type": "PRIVATE"},
                      {"customerNumber": vestland, "name": "Vestland Fisk AS", "type": "CORPORATE"}],
        "accounts": [tors, eur, nok],
        "cardAccounts": [{"customerNumber": tor, "maskedPan": "4000xxxxxxxx0002", "currency": "NOK",
                          "name": "Tor Fjellheim", "product": "Visa Classic", "status": "ENABLED"}],
        "accountTransactions": {eur["bban"]: [transaction(eur, "Sigrid Lunde", 25_000, "2026-05-02", "Faktura 17",
                                                          True)],
                                nok["bban"]: [transaction(nok, "Sigrid Lunde", 80_000, "2026-05-03", "Husleie", False),
                                              transaction(nok, "Sigrid Lunde", 4_000_000, "2026-05-25", "Lønn", True)]},
    }


def test_the_gate_finds_the_test_data_of_another_sandbox(identities, tmp_path):
    data_file = tmp_path / "other-bank.json"
    data_file.write_text(json.dumps(other_bank()), encoding="utf-8")
    data = testdata.load(data_file)
    assert not {c["customerNumber"] for c in data.customers} & {c["customerNumber"] for c in testdata.CUSTOMERS}
    server = ReferenceServer(test_data=data).start()
    try:
        result = gate(server.url, ("stateful:lifecycle", "stateful:lack-of-funds", "stateful:basket-worst-case",
                                   "stateful:cancellation", "stateful:pagination", "semantic:valid-control"),
                      identities)
    finally:
        server.stop()
    assert not result.findings, describe(result)
    assert not [why for why in not_exercised(result).values() if why.startswith(NO_TEST_DATA)], not_exercised(result)
    assert {o.check for o in result.outcomes if o.status == "passed"} >= {
        "stateful:lifecycle", "stateful:lack-of-funds", "stateful:cancellation", "stateful:pagination"}


def on_request(bank: dict) -> dict:
    """The bank's data set, its customer listing giving accounts and agreements only on request."""
    return {**bank, "customerListing": ON_REQUEST}


def without(bank: dict, *, currency: str | None = None, cards: bool = False) -> dict:
    """The bank's data without its accounts in ``currency`` (and their transactions), or without card accounts."""
    bank = json.loads(json.dumps(bank))
    if currency:
        bank["accounts"] = [a for a in bank["accounts"] if a["currency"] != currency]
        bank["accountTransactions"] = {k: v for k, v in bank["accountTransactions"].items()
                                       if any(a["bban"] == k for a in bank["accounts"])}
    if cards:
        bank["cardAccounts"] = []
    return bank


def served(data: dict, tmp_path, profile=None) -> ReferenceServer:
    return ReferenceServer(test_data=testdata.load(written(tmp_path, data)), profile=profile).start()


def test_the_sandbox_lists_accounts_only_on_request_when_its_data_set_says_so(identities, tmp_path):
    from conformance.client import SignedClient

    server = served(on_request(other_bank()), tmp_path)
    try:
        with SignedClient(server.url, identities.tpp) as tpp:
            plain = tpp.call("listSandboxCustomers").json()
            asked = tpp.call("listSandboxCustomers", query={"withAccounts": "true", "withAgreements": "true"}).json()
    finally:
        server.stop()
    assert not any(c["accounts"] or c["cardAccounts"] or c["agreements"] for c in plain)
    assert sum(len(c["accounts"]) for c in asked) == 3 and sum(len(c["cardAccounts"]) for c in asked) == 1
    assert [len(c["agreements"]) for c in asked if c["customerType"] == "CORPORATE"] == [1]


NEEDS = ("stateful:lifecycle", "stateful:lack-of-funds", "stateful:pagination")


@pytest.mark.parametrize("with_test_data", [False, True], ids=["listing-and-transactions", "test-data"])
def test_data_listed_only_on_request_is_found(identities, tmp_path, with_test_data):
    """EUR and NOK accounts and a card account exist, listed only with withAccounts=true: every check needing them
    runs, whether their numbers come from their transactions or from --test-data."""
    bank = on_request(other_bank())
    server = served(bank, tmp_path)
    try:
        result = gate(server.url, NEEDS + ("stateful:read-back",), identities,
                      test_data=written(tmp_path, bank) if with_test_data else None)
    finally:
        server.stop()
    assert not result.findings, describe(result)
    assert not not_exercised(result)
    assert {o.check for o in result.outcomes if o.status == "passed"} == set(NEEDS) | {"stateful:read-back"}


def test_an_account_without_transactions_is_usable(identities, tmp_path):
    """Nothing booked anywhere: the accounts' numbers and currencies come from --test-data."""
    bank = {**on_request(other_bank()), "accountTransactions": {}}
    server = served(bank, tmp_path, profile=Profile.from_mapping({"absent-operations": NO_CREATION}))
    try:
        result = gate(server.url, NEEDS, identities, test_data=written(tmp_path, bank), profile_file=profile(tmp_path))
    finally:
        server.stop()
    assert not result.findings, describe(result)
    assert {o.check for o in result.outcomes if o.status == "passed"} == set(NEEDS)


NO_CREATION = ["createSandboxCustomer", "createSandboxAccount", "createSandboxCardAccount"]


def profile(tmp_path):
    path = tmp_path / "no-creation.yaml"
    path.write_text(yaml.safe_dump({"absent-operations": NO_CREATION}), encoding="utf-8")
    return path


@pytest.mark.parametrize("lacking, check, said", [
    (dict(currency="EUR"), "stateful:lifecycle", f"{NO_TEST_DATA} EUR account whose iban it shows"),
    (dict(currency="NOK"), "stateful:lack-of-funds", f"{NO_TEST_DATA} NOK account whose bban it shows"),
    (dict(cards=True), "stateful:pagination", f"{NO_TEST_DATA} card account"),
], ids=["EUR-account", "NOK-account", "card-account"])
def test_data_that_does_not_exist_is_not_exercised_with_that_reason(identities, tmp_path, lacking, check, said):
    """The data lacks it and the target cannot create it (its profile: no creation operations): that reason, and the
    other checks run."""
    bank = without(on_request(other_bank()), **lacking)
    server = served(bank, tmp_path, profile=Profile.from_mapping({"absent-operations": NO_CREATION}))
    try:
        result = gate(server.url, NEEDS, identities, profile_file=profile(tmp_path))
    finally:
        server.stop()
    assert not result.findings, describe(result)
    assert list(not_exercised(result)) == [check]
    assert not_exercised(result)[check].startswith(said), not_exercised(result)


def test_no_account_at_all_is_said_for_each_check_needing_one(identities, tmp_path):
    """Customers without any account or card account, and no creation operations: each check needing one says
    which, the transaction lists of stateful:read-back included."""
    bank = {**without(on_request(other_bank()), cards=True), "accounts": [], "accountTransactions": {}}
    server = served(bank, tmp_path, profile=Profile.from_mapping({"absent-operations": NO_CREATION}))
    try:
        result = gate(server.url, NEEDS + ("stateful:read-back",), identities, profile_file=profile(tmp_path))
    finally:
        server.stop()
    assert not result.findings, describe(result)
    reasons = {(o.check, o.operation): o.reason for o in result.outcomes if o.status == "not-exercised"}
    assert reasons == {
        ("stateful:lifecycle", "-"): f"{NO_TEST_DATA} EUR account whose iban it shows (in its listing, its "
                                     "transactions or --test-data), and the gate could not create one",
        ("stateful:lack-of-funds", "-"): f"{NO_TEST_DATA} NOK account whose bban it shows (in its listing, its "
                                         "transactions or --test-data), and the gate could not create one",
        ("stateful:pagination", "-"): f"{NO_TEST_DATA} card account",
        ("stateful:read-back", "listSandboxAccountTransactions"): f"{NO_TEST_DATA} account",
        ("stateful:read-back", "listSandboxCardTransactions"): f"{NO_TEST_DATA} card account"}, reasons


def test_where_the_data_lacks_an_account_the_gate_creates_its_own(identities, tmp_path):
    """No EUR account, no NOK account: the gate creates its own customer (a valid national identity number) and
    accounts, and the scenarios run on them; a second run with the same seed uses them again."""
    bank = without(without(on_request(other_bank()), currency="EUR"), currency="NOK")
    server = served(bank, tmp_path)
    from stdnum.no import fodselsnummer

    from conformance.client import SignedClient
    from conformance.gate.suites.data import OWN_CUSTOMER_NAME

    try:
        runs = [gate(server.url, NEEDS, identities) for _second in range(2)]   # the second finds them there (409)
        with SignedClient(server.url, identities.tpp) as tpp:
            listed = tpp.call("listSandboxCustomers", query={"withAccounts": "true"}).json()
    finally:
        server.stop()
    for result in runs:
        assert not result.findings, describe(result)
        assert {o.check for o in result.outcomes if o.status == "passed"} == set(NEEDS)
    own, = [c for c in listed if c["customerName"] == OWN_CUSTOMER_NAME]
    assert fodselsnummer.is_valid(own["customerNumber"]) and len(own["accounts"]) == 2


def refuse_listing(method, path, headers):
    """A gateway refusing this TPP the customer listing (403 CERTIFICATE_BLOCKED)."""
    if method == "GET" and path == "/v1/sandbox/customers":
        return 403, "application/json", json.dumps({"tppMessages": [{
            "category": "ERROR", "code": "CERTIFICATE_BLOCKED", "text": "this TPP may not list customers"}]}).encode(), {}
    return None


@pytest.mark.parametrize("creation", [True, False], ids=["creation", "no-creation"])
def test_a_refused_listing_is_said_as_such(identities, tmp_path, creation):
    """The gate's own data listing refused (403): what needs a listed id is "not exercised: the listing was refused
    (403 CERTIFICATE_BLOCKED)", never "the target's sandbox data has no ..."; a payer the gate can create still
    lets the payment scenarios run."""
    bank = on_request(other_bank())
    server = serve(refuse_listing, test_data=testdata.load(written(tmp_path, bank)),
                   profile=None if creation else Profile.from_mapping({"absent-operations": NO_CREATION}))
    try:
        result = gate(server.url, NEEDS, identities, profile_file=None if creation else profile(tmp_path))
    finally:
        server.stop()
    refused = "the listing was refused (403 CERTIFICATE_BLOCKED)"
    left = not_exercised(result)
    if creation:
        assert left == {"stateful:pagination": refused}, left
    else:
        assert left == {check: refused for check in NEEDS}, left


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(accounts=[{**d["accounts"][0], "currency": "EURO"}]), "accounts/0/currency"),
    (lambda d: d["accounts"].append({**d["accounts"][0], "customerNumber": "99999999999"}), "no customer 99999999999"),
    (lambda d: d["accountTransactions"].update({"12345678903": []}), "accountTransactions/12345678903"),
    (lambda d: d.pop("customers"), "customers and accounts"),
])
def test_an_unusable_test_data_file_is_refused_with_where(change, message, tmp_path):
    bank = other_bank()
    change(bank)
    data_file = tmp_path / "bad.json"
    data_file.write_text(json.dumps(bank), encoding="utf-8")
    with pytest.raises(testdata.DataSetError, match=message.replace("/", "/")):
        testdata.load(data_file)


def test_a_bank_listing_accounts_only_on_request_is_gated_whole_with_its_test_data(identities, tmp_path):
    """Issue 27, must show 2: the reference sandbox served with another data set whose customer listing gives accounts
    only on withAccounts=true, gated with that data set: every stateful check exercised, no finding."""
    bank = written(tmp_path, on_request(other_bank()))
    server = ReferenceServer(test_data=testdata.load(bank)).start()
    try:
        result = gate(server.url, (), identities, test_data=bank, suites=("stateful",))
    finally:
        server.stop()
    assert not result.findings, describe(result)
    assert {(o.check, o.status) for o in result.outcomes if o.status != "passed"} == set()
    assert {o.check for o in result.outcomes} == {c.id for c in selected(("stateful",))}


def test_conform_takes_the_test_data_and_serves_it_on_the_reference_target(tmp_path):
    from click.testing import CliRunner

    from conformance.gate.cli import conform

    bank = written(tmp_path, on_request(without(other_bank(), cards=True)))
    run_ = CliRunner().invoke(conform, ["--target", "reference", "--test-data", str(bank), "--suite", "stateful",
                                       "--check", "stateful:lifecycle,stateful:pagination", "-q"])
    # the sandbox served the file's data (no card account), the gate found its EUR account listed only on request
    assert run_.exit_code == 0, run_.output
    assert "stateful:pagination" in run_.output and "card account" in run_.output
    broken = written(tmp_path, {**other_bank(), "customerListing": {"withAccounts": "no"}}, "broken.json")
    refused = CliRunner().invoke(conform, ["--target", "reference", "--test-data", str(broken)])
    assert refused.exit_code == 2 and "customerListing" in refused.output
