"""Sandbox data over HTTP (A15, A22, A32): customers, accounts, card accounts, their transactions, pagination."""
from __future__ import annotations

import pytest
from stdnum.no import kontonr

from conformance.sandbox import testdata


def _codes(r) -> list[str]:
    return [m["code"] for m in r.json()["tppMessages"]]


def _ids(sandbox, account: dict) -> str:
    with sandbox.store.transaction() as tx:
        return tx.account_by_reference(None, account["bban"])["id"]


def test_fixed_test_data(tpp):
    customers = tpp.call("listSandboxCustomers").json()
    kinds = [c["customerType"] for c in customers]
    assert kinds.count("PRIVATE") >= 3 and kinds.count("CORPORATE") >= 1
    assert all(c["accounts"] for c in customers)
    assert any(c["cardAccounts"] for c in customers)
    corporate = next(c for c in customers if c["customerType"] == "CORPORATE")
    assert corporate["agreements"] and corporate["agreements"][0]["_links"]["engagements"]
    for account in testdata.ACCOUNTS:
        assert kontonr.is_valid(account["bban"]) and account["iban"] == kontonr.to_iban(account["bban"])
    assert {a["currency"] for a in testdata.ACCOUNTS} == {"NOK", "EUR"}
    slim = tpp.call("listSandboxCustomers", query={"withAccounts": "false", "withAgreements": "false"}).json()
    assert all(c["accounts"] == [] and c["agreements"] == [] for c in slim)


def test_customer_create_conflict_delete(tpp):
    r = tpp.call("createSandboxCustomer", body={"customerNumber": "31125461118", "name": "Per Hansen", "type": "private"})
    assert r.status_code == 201 and r.json()["customerType"] == "PRIVATE"
    customer = r.json()["customerId"]
    r = tpp.call("createSandboxCustomer", body={"customerNumber": "31125461118", "name": "Per Hansen", "type": "PRIVATE"})
    assert r.status_code == 409 and _codes(r) == ["CONFLICT"]
    assert tpp.call("deleteSandboxCustomer", path={"customerId": customer}).status_code == 204
    r = tpp.call("deleteSandboxCustomer", path={"customerId": customer})
    assert r.status_code == 404 and _codes(r) == ["RESOURCE_UNKNOWN"]
    r = tpp.call("createSandboxCustomer", body={"customerNumber": "1", "name": "X"})
    assert r.status_code == 400 and _codes(r) == ["FORMAT_ERROR"]


def test_account_and_card_account_creation(tpp):
    number = testdata.OLA
    bban, iban = testdata.norwegian_account("1206123456")
    body = {"customerNumber": number, "accountName": "Feriekonto", "bban": bban, "iban": iban, "currency": "NOK",
            "creditLine": 0, "balances": [{"balanceType": "EXPECTED", "balanceAmount": {"amount": 12345, "currency": "NOK"}}]}
    r = tpp.call("createSandboxAccount", body=body)
    assert r.status_code == 201 and r.json()["resourceId"] and r.json()["balances"][0]["balanceAmount"]["amount"] == 12345
    r = tpp.call("createSandboxAccount", body=body)
    assert r.status_code == 409
    r = tpp.call("createSandboxAccount", body={**body, "customerNumber": "99999999999", "bban": "12061234572"})
    assert r.status_code == 400 and _codes(r) == ["RESOURCE_UNKNOWN"]
    r = tpp.call("createSandboxCardAccount")
    assert r.status_code == 201
    ola = next(c for c in tpp.call("listSandboxCustomers").json() if c["customerNumber"] == number)
    assert r.json()["resourceId"] not in ola["cardAccounts"]          # the example's customer is Kari
    assert r.json()["resourceId"] in next(c for c in tpp.call("listSandboxCustomers").json()
                                          if c["customerNumber"] == testdata.KARI)["cardAccounts"]


def test_account_transactions_created_listed_and_paginated(tpp, sandbox):
    account = _ids(sandbox, testdata.ACCOUNTS[3])
    other = testdata.ACCOUNTS[0]
    item = {"amount": 1500, "currency": "NOK", "valueDate": "2026-06-12", "bookingDate": "2026-06-12",
            "remittanceInformationUnstructured": "Avis", "creditorName": "Aftenposten AS",
            "creditorAccount": {"iban": "NO3090418601298", "bban": "90418601298"}, "debtorName": "Ola Nordmann",
            "debtorAccount": {"iban": testdata.ACCOUNTS[3]["iban"], "bban": testdata.ACCOUNTS[3]["bban"]},
            "bankTransactionCode": "PMNT-ICDT-DMCT", "ultimateDebtor": "Ola Nordmann", "ultimateCreditor": "Aftenposten AS",
            "purposeCode": "OTHR"}
    days = ["2026-06-10", "2026-06-11", "2026-06-12", "2026-06-13", "2026-06-14"]
    r = tpp.call("createSandboxAccountTransactions", path={"mockAccountId": account},
                 body=[{**item, "bookingDate": d, "valueDate": d, "amount": 100 + i} for i, d in enumerate(days)])
    assert r.status_code == 201 and len(r.json()) == 5 and len({t["id"] for t in r.json()}) == 5
    listing = lambda **q: tpp.call("listSandboxAccountTransactions", path={"mockAccountId": account}, query=q)  # noqa: E731
    assert [t["amount"] for t in listing().json()] == [100, 101, 102, 103, 104]
    assert [t["amount"] for t in listing(offset="1", limit="2").json()] == [101, 102]
    assert [t["amount"] for t in listing(fromDate="2026-06-11", toDate="2026-06-13").json()] == [101, 102, 103]
    assert [t["amount"] for t in listing(fromDate="2026-06-11", offset="2").json()] == [103, 104]
    assert listing(offset="9").json() == []
    for bad in ({"limit": "0"}, {"offset": "-1"}, {"fromDate": "2026-06-14", "toDate": "2026-06-10"}):
        r = listing(**bad)
        assert r.status_code == 400 and _codes(r) == ["FORMAT_ERROR"], bad
    # Errors 6: another sandbox account as debtor
    foreign = {**item, "debtorAccount": {"iban": other["iban"], "bban": other["bban"]}}
    r = tpp.call("createSandboxAccountTransactions", path={"mockAccountId": account}, body=[foreign])
    assert r.status_code == 400 and r.json()["tppMessages"][0]["path"] == "/0/debtorAccount"
    assert len(listing().json()) == 5
    r = tpp.call("listSandboxAccountTransactions", path={"mockAccountId": "enc!!bm9uZQ"})
    assert r.status_code == 404


def test_card_transactions(tpp, sandbox):
    customers = tpp.call("listSandboxCustomers").json()
    card = next(c for c in customers if c["customerNumber"] == testdata.KARI)["cardAccounts"][0]
    path = {"mockCardAccountId": card}
    listing = lambda **q: tpp.call("listSandboxCardTransactions", path=path, query=q)  # noqa: E731
    booked = listing(bookingStatus="booked").json()
    assert booked["cardAccount"]["maskedPan"] == "4925xxxxxxxx1234" and len(booked["cardTransactions"]["booked"]) == 2
    r = tpp.call("createSandboxCardTransactions", path=path)               # the spec example: two more
    assert r.status_code == 201 and len(r.json()["cardTransactions"]["booked"]) == 4
    assert len(listing(bookingStatus="both", offset="1", limit="2").json()["cardTransactions"]["booked"]) == 2
    assert listing(bookingStatus="pending").json()["cardTransactions"] == {"booked": [], "pending": []}
    assert [t["bookingDate"] for t in listing(bookingStatus="booked", fromDate="2026-06-21").json()["cardTransactions"]["booked"]] == ["2026-06-22", "2026-06-22"]
    r = tpp.call("listSandboxCardTransactions", path=path, query={})
    assert r.status_code == 400 and _codes(r) == ["QUERY_PARAMETER_REQUIRED"]
    future = tpp.spec.operation("createSandboxCardTransactions")
    assert future  # the future-date rule (A14) is the validator's; checked with a date after today:
    r = tpp.call("createSandboxCardTransactions", path=path, body=[{**testdata.CARD_TRANSACTIONS["4925xxxxxxxx1234"][0],
                                                                    "bookingDate": "2026-07-02"}])
    assert r.status_code == 400 and _codes(r) == ["FORMAT_ERROR"]
    r = tpp.call("listSandboxCardTransactions", path={"mockCardAccountId": "enc!!bm9uZQ"}, query={"bookingStatus": "booked"})
    assert r.status_code == 404


def test_initialize_resets(tpp):
    tpp.call("createSandboxCustomer", body={"customerNumber": "31125461118", "name": "Per Hansen", "type": "PRIVATE"})
    assert tpp.call("initializeSandbox").status_code == 204
    numbers = [c["customerNumber"] for c in tpp.call("listSandboxCustomers").json()]
    assert numbers == [c["customerNumber"] for c in testdata.CUSTOMERS]


@pytest.mark.parametrize("path", ["sandbox.db"])
def test_database_file_survives_a_restart(tmp_path, path):
    from conformance.sandbox import Sandbox

    db = str(tmp_path / path)
    first = Sandbox.create(db)
    with first.store.transaction() as tx:
        row = first.lifecycle.create_payment(tx, "PSDNO-FSA-X", "payments", "sepa-credit-transfers", "{}",
                                             {"instructedAmount": {"amount": "1", "currency": "EUR"},
                                              "debtorAccount": {"iban": "NO9386011117947"},
                                              "creditorAccount": {"iban": "DE89370400440532013000"}}, False)
    first.store.close()
    second = Sandbox.create(db)
    with second.store.transaction() as tx:
        assert tx.payment(row["id"])["status"] == "RCVD"
        assert tx.customer_by_number(testdata.KARI)          # not re-initialised
    assert second.store._conn.execute("PRAGMA journal_mode").fetchone()["journal_mode"] == "wal"
