"""The payment lifecycle over HTTP with signed requests: 201 RCVD → authorisation (A23) → SCA page (A24) → PDNG →
batch runs (A25) → ACSC with the debtor debited and booked transactions posted; lack of funds; cancellation (A27);
baskets (A1, A2); X-Request-ID replay (A29) and logical duplicates (A30); periodic payments (A31)."""
from __future__ import annotations

import datetime as _dt

from conftest import in_days
from flows import (BULK, EMPTY, EUR, KARI_NOK, PERIODIC, REDIRECT, SEPA, SESSION, authorise, batch, bulk_body,
                   create, sca, sepa, sepa_body, start, status)

from conformance.sandbox import testdata

KARI = testdata.KARI


def _balance(sandbox, account: dict) -> int:
    with sandbox.store.transaction() as tx:
        return tx.account_by_reference(None, account["bban"])["balance"]


def _account_id(sandbox, account: dict) -> str:
    with sandbox.store.transaction() as tx:
        return tx.account_by_reference(None, account["bban"])["id"]


def test_whole_lifecycle_sepa(tpp, browser, sandbox):
    before = _balance(sandbox, EUR)
    pid = sepa(tpp, "125.50")
    assert status(tpp, pid)["transactionStatus"] == "RCVD"
    started = start(tpp, pid)
    assert started["scaStatus"] == "started"
    assert started["_links"]["scaRedirect"]["href"].startswith("http://127.0.0.1:")
    auth_path = {**SEPA, "paymentId": pid, "authorisationId": started["authorisationId"]}
    assert tpp.call("getPaymentAuthorisationStatus", path=auth_path).json() == {"scaStatus": "started"}

    answer = sca(browser, started, KARI)
    assert answer["tpp-session-id"] == [SESSION] and answer["psu-id"][0] and answer["state"] == ["4c1d"]
    assert tpp.call("getPaymentAuthorisationStatus", path=auth_path).json() == {"scaStatus": "finalised"}
    assert status(tpp, pid)["transactionStatus"] == "PDNG"

    r = tpp.call("deletePayment", path={**SEPA, "paymentId": pid})   # A5: PDNG cannot be deleted
    assert r.status_code == 409 and r.json()["tppMessages"][0]["code"] == "CONFLICT"

    run = batch(tpp)
    assert run == {"executed": [pid], "rejected": []}
    st = status(tpp, pid)
    assert st["transactionStatus"] == "ACSC" and st["fundsAvailable"] is True
    assert _balance(sandbox, EUR) == before - 12550
    listed = tpp.call("listSandboxAccountTransactions", path={"mockAccountId": _account_id(sandbox, EUR)}).json()
    posted = [t for t in listed if t["amount"] == -12550]   # A36: a debit of the listed account
    assert len(posted) == 1 and posted[0]["debtorAccount"]["iban"] == EUR["iban"] and posted[0]["paymentId"] == pid
    assert posted[0]["bookingDate"] == sandbox.clock.today().isoformat()
    again = tpp.call("listSandboxAccountTransactions", path={"mockAccountId": _account_id(sandbox, EUR)}).json()
    assert [t["id"] for t in again] == [t["id"] for t in listed]   # stable transaction ids (1.18.0)
    assert tpp.call("getPayment", path={**SEPA, "paymentId": pid}).json()["transactionStatus"] == "ACSC"


def test_bulk_between_sandbox_accounts_credits_the_creditor(tpp, browser, sandbox):
    ola = testdata.ACCOUNTS[3]
    debtor_before, creditor_before = _balance(sandbox, KARI_NOK), _balance(sandbox, ola)
    pid = create(tpp, "createBulkPayment", bulk_body("100", "250.50", creditor=ola["bban"]))
    authorise(tpp, browser, pid, KARI, BULK)
    assert batch(tpp)["executed"] == [pid]
    assert status(tpp, pid, BULK)["transactionStatus"] == "ACSC"
    assert _balance(sandbox, KARI_NOK) == debtor_before - 35050
    assert _balance(sandbox, ola) == creditor_before + 35050
    credited = tpp.call("listSandboxAccountTransactions", path={"mockAccountId": _account_id(sandbox, ola)}).json()
    assert sorted(t["amount"] for t in credited) == [10000, 25050]


def test_lack_of_funds_at_sca_rejects_with_funds_flag(tpp, browser):
    pid = create(tpp, "createBulkPayment", bulk_body("100.00", debtor=EMPTY))
    answer = authorise(tpp, browser, pid, testdata.INGRID, BULK)
    assert "psu-id" not in answer and "funds" in answer["message"][0].lower()
    st = status(tpp, pid, BULK)
    assert st["transactionStatus"] == "RJCT" and st["fundsAvailable"] is False
    assert st["tppMessages"][0]["code"] == "PAYMENT_FAILED"
    r = tpp.call("startPaymentAuthorisation", path={**BULK, "paymentId": pid})   # A23: 400 PAYMENT_FAILED, never 500
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "PAYMENT_FAILED"


def test_sca_of_a_customer_who_does_not_own_the_debtor_account_fails(tpp, browser):
    pid = sepa(tpp)
    answer = authorise(tpp, browser, pid, testdata.OLA)
    assert "does not own" in answer["message"][0]
    st = status(tpp, pid)
    assert st["transactionStatus"] == "RJCT" and "fundsAvailable" not in st
    r = tpp.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid})
    assert r.status_code == 409 and r.json()["tppMessages"][0]["code"] == "CONFLICT"


def test_unknown_customer_number_fails_and_page_is_used_up(tpp, browser):
    started = start(tpp, sepa(tpp))
    assert "message" in sca(browser, started, "00000000000")
    page = browser.get(started["_links"]["scaRedirect"]["href"])
    assert "failed" in page.text and "<form" not in page.text
    assert browser.get("/sca/not-a-token").status_code == 404


def test_batch_run_rejects_when_funds_ran_out_and_bulk_ends_part(tpp, browser, sandbox):
    # Ingrid has 50.00 NOK: each payment alone is covered at SCA, the batch books them in creation order.
    single = create(tpp, "createBulkPayment", bulk_body("30.00", debtor=EMPTY))
    both = create(tpp, "createBulkPayment", bulk_body("10.00", "15.00", debtor=EMPTY))
    last = create(tpp, "createBulkPayment", bulk_body("40.00", debtor=EMPTY))
    for pid in (single, both, last):
        authorise(tpp, browser, pid, testdata.INGRID, BULK)
    run = batch(tpp)
    assert run == {"executed": [single, both], "rejected": [last]}
    assert status(tpp, single, BULK)["transactionStatus"] == "ACSC"
    assert status(tpp, both, BULK)["transactionStatus"] == "PART"       # 10.00 booked, 15.00 not: 10.00 left
    rejected = status(tpp, last, BULK)
    assert rejected["transactionStatus"] == "RJCT" and rejected["fundsAvailable"] is False
    assert _balance(sandbox, EMPTY) == 5000 - 3000 - 1000


def test_batch_waits_for_the_requested_execution_date_and_runs_on_schedule(tpp, browser, sandbox):
    later = sepa(tpp, date=in_days(sandbox, 2))
    now = sepa(tpp, "10")
    for pid in (later, now):
        authorise(tpp, browser, pid, KARI)
    sandbox.clock.set("2026-07-01T10:05:00Z")        # 12:05 Oslo: the 12:00 run has happened
    assert status(tpp, now)["transactionStatus"] == "ACSC"
    assert status(tpp, later)["transactionStatus"] == "PDNG"
    sandbox.clock.set("2026-07-03T04:01:00Z")        # 06:01 Oslo two days later
    assert status(tpp, later)["transactionStatus"] == "ACSC"


def test_batch_run_at_an_instant(tpp, browser, sandbox):
    pid = sepa(tpp, date=in_days(sandbox, 1))
    authorise(tpp, browser, pid, KARI)
    assert batch(tpp)["executed"] == []
    assert batch(tpp, (_dt.datetime.fromisoformat("2026-07-02T09:00:00+02:00")).isoformat())["executed"] == [pid]


def test_cancellation(tpp):
    pid = sepa(tpp)
    where = {**SEPA, "paymentId": pid}
    assert tpp.call("deletePayment", path=where).status_code == 204
    assert status(tpp, pid)["transactionStatus"] == "CANC"         # A27: the id stays valid
    r = tpp.call("deletePayment", path=where)
    assert r.status_code == 409 and r.json()["tppMessages"][0]["code"] == "CONFLICT"
    r = tpp.call("startPaymentAuthorisation", path=where)
    assert r.status_code == 409


def test_basket_authorised_in_one_sca(tpp, browser, sandbox):
    ids = [sepa(tpp, amount) for amount in ("10.00", "20.00", "30.00")]
    r = tpp.call("createSigningBasket", body={"paymentIds": ids})
    assert r.status_code == 201 and r.json()["transactionStatus"] == "RCVD"
    basket = r.json()["basketId"]
    r = tpp.call("startSigningBasketAuthorisation", path={"basketId": basket},
                 headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION})
    assert r.status_code == 201
    page = browser.get(r.json()["_links"]["scaRedirect"]["href"]).text
    assert "signing basket" in page and all(a in page for a in ("10.00", "20.00", "30.00"))
    answer = sca(browser, r.json(), KARI)
    assert answer["tpp-session-id"] == [SESSION]
    assert [status(tpp, pid)["transactionStatus"] for pid in ids] == ["PDNG"] * 3
    assert tpp.call("getSigningBasketStatus", path={"basketId": basket}).json() == {"transactionStatus": "PATC"}
    auth = {"basketId": basket, "authorisationId": r.json()["authorisationId"]}
    assert tpp.call("getSigningBasketAuthorisationStatus", path=auth).json() == {"scaStatus": "finalised"}
    r = tpp.call("deleteSigningBasket", path={"basketId": basket})    # A27: after authorisation
    assert r.status_code == 409
    batch(tpp)
    detail = tpp.call("getSigningBasket", path={"basketId": basket}).json()
    assert detail["payments"] == ids and detail["transactionStatus"] == "ACTC"


def test_basket_status_is_the_worst_case(tpp, browser):
    done, waiting = sepa(tpp, "1.00"), sepa(tpp, "2.00")
    authorise(tpp, browser, done, KARI)
    basket = tpp.call("createSigningBasket", body={"paymentIds": [done, waiting]}).json()
    assert basket["transactionStatus"] == "RCVD"
    tpp.call("deletePayment", path={**SEPA, "paymentId": waiting})
    assert tpp.call("getSigningBasketStatus", path={"basketId": basket["basketId"]}).json()["transactionStatus"] == "RJCT"


def test_basket_errors(tpp):
    ids = [sepa(tpp, f"{i + 1}.00") for i in range(11)]
    r = tpp.call("createSigningBasket", body={"paymentIds": ids})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "FORMAT_ERROR"
    bulk = create(tpp, "createBulkPayment", bulk_body("5"))
    r = tpp.call("createSigningBasket", body={"paymentIds": [ids[0], bulk]})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "REFERENCE_MIX_INVALID"
    assert r.json()["tppMessages"][0]["path"] == "/paymentIds/1"
    r = tpp.call("createSigningBasket", body={"paymentIds": [ids[0], "enc!!bm90LWEtcGF5bWVudA"]})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "RESOURCE_UNKNOWN"
    r = tpp.call("createSigningBasket", body={"paymentIds": ids[:2]}, headers={"x-accept-fix": None})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "HTTP_HEADER_REQUIRED"


def test_basket_deleted_before_authorisation(tpp):
    ids = [sepa(tpp, "1.00"), sepa(tpp, "2.00")]
    basket = tpp.call("createSigningBasket", body={"paymentIds": ids}).json()["basketId"]
    assert tpp.call("deleteSigningBasket", path={"basketId": basket}).status_code == 204
    for op in ("getSigningBasket", "getSigningBasketStatus", "deleteSigningBasket"):
        r = tpp.call(op, path={"basketId": basket})
        assert r.status_code == 404 and r.json()["tppMessages"][0]["code"] == "RESOURCE_UNKNOWN"
    assert [status(tpp, pid)["transactionStatus"] for pid in ids] == ["RCVD", "RCVD"]   # payments untouched


def test_request_id_replay_and_conflict(tpp, sandbox):
    body = sepa_body("77.00")
    headers = {"X-Request-ID": "0d8f6a8e-1b2c-4d3e-8f9a-0b1c2d3e4f50"}
    first = tpp.call("createSepaCreditTransfer", body=body, headers=headers)
    again = tpp.call("createSepaCreditTransfer", body=body, headers=headers)
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    with sandbox.store.transaction() as tx:
        assert tx.payment_count() == 1
    other = tpp.call("createSepaCreditTransfer", body=sepa_body("78.00"), headers=headers)
    assert other.status_code == 409 and other.json()["tppMessages"][0]["code"] == "CONFLICT"


def test_logical_duplicate(tpp):
    first = sepa(tpp, "55.00")
    r = tpp.call("createSepaCreditTransfer", body=sepa_body("55.00"))
    assert r.status_code == 409 and first in r.json()["tppMessages"][0]["text"]
    r = tpp.call("createSepaCreditTransfer", body=sepa_body("55.00"), query={"allowLogicalDuplicate": "true"})
    assert r.status_code == 201
    tpp.call("deletePayment", path={**SEPA, "paymentId": first})
    tpp.call("deletePayment", path={**SEPA, "paymentId": r.json()["paymentId"]})
    assert tpp.call("createSepaCreditTransfer", body=sepa_body("55.00")).status_code == 201   # CANC ones do not count


def periodic_body(sandbox, **extra) -> dict:
    return {"instructedAmount": {"amount": "1500.00", "currency": "NOK"}, "creditorName": "Ola Nordmann",
            "creditorAccount": {"bban": testdata.ACCOUNTS[3]["bban"], "currency": "NOK"},
            "creditorAddress": {"townName": "Oslo", "country": "NO"}, "remittanceInformationUnstructured": "Husleie",
            "debtorAccount": {"bban": KARI_NOK["bban"], "currency": "NOK"},
            "startDate": in_days(sandbox, 0), "frequency": "Monthly", **extra}


def test_periodic_payment_is_authorised_but_never_executed_by_batch(tpp, browser, sandbox):
    pid = create(tpp, "createPeriodicPayment", periodic_body(sandbox, dayOfExecution="1"))
    authorise(tpp, browser, pid, KARI, PERIODIC)
    assert status(tpp, pid, PERIODIC)["transactionStatus"] == "PDNG"
    assert batch(tpp) == {"executed": [], "rejected": []}
    assert tpp.call("getPayment", path={**PERIODIC, "paymentId": pid}).json()["frequency"] == "Monthly"


MONTHS_TWICE = {"frequency": "MonthlyVariable", "monthsOfExecution": ["1", "6", "1"]}


def test_periodic_months_of_execution_twice(tpp, sandbox):
    r = tpp.call("createPeriodicPayment", body=periodic_body(sandbox, **MONTHS_TWICE))
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "FORMAT_ERROR"


def test_periodic_start_date_in_the_past(tpp, sandbox):
    r = tpp.call("createPeriodicPayment", body=periodic_body(sandbox, startDate=in_days(sandbox, -1)))
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "EXECUTION_DATE_INVALID"


def test_profile_choices(server, sandbox, tpp, browser):
    """The profile's A5/A27 refusal, A25 batch times and A30 duplicates are what the sandbox does."""
    from validator.context import Profile

    from conformance.sandbox import Sandbox

    profile = Profile.from_mapping({"cancellation-refused": {"status": 400, "code": "FORMAT_ERROR"},
                                    "batch-run-times": ["10:45"], "logical-duplicates": "allowed"})
    server.app.state.sandbox = Sandbox.create(profile=profile, clock=sandbox.clock)
    first = sepa(tpp, "5.00")
    assert tpp.call("createSepaCreditTransfer", body=sepa_body("5.00")).status_code == 201   # duplicates allowed
    authorise(tpp, browser, first, KARI)
    r = tpp.call("deletePayment", path={**SEPA, "paymentId": first})
    assert r.status_code == 400 and r.json()["tppMessages"][0]["code"] == "FORMAT_ERROR"
    sandbox.clock.set("2026-07-01T08:46:00Z")        # 10:46 Oslo: the profile's only run has happened
    assert status(tpp, first)["transactionStatus"] == "ACSC"
