"""The sandbox says success only where something happened (issue 21, points 6 and 7).

A35: an authorisation completed after its payment left RCVD -- cancelled, or authorised by another authorisation --
fails: the redirect carries ``message`` (never ``psu-id``), the scaStatus is ``failed`` and no payment moves; the
profile's ``open-authorisations: one`` refuses a second start instead. A36: a booking is signed from each account's
side and names its payment, so a transfer from an account to itself lists a debit and a credit, and every account's
list reconciles with its balance."""
from __future__ import annotations

from flows import (BULK, EUR, KARI_NOK, SEPA, authorise, batch, bulk_body, create, sca, sepa, sepa_body, start,
                   status)

from conformance.sandbox import Sandbox, testdata
from validator.context import Profile

KARI = testdata.KARI


def _sca_status(tpp, pid: str, started: dict, where: dict = SEPA) -> str:
    path = {**where, "paymentId": pid, "authorisationId": started["authorisationId"]}
    return tpp.call("getPaymentAuthorisationStatus", path=path).json()["scaStatus"]


# ---------------------------------------------------------------- A35
def test_the_sca_of_a_cancelled_payment_fails_and_the_payment_stays_cancelled(tpp, browser):
    pid = sepa(tpp, "40.00")
    started = start(tpp, pid)
    assert tpp.call("deletePayment", path={**SEPA, "paymentId": pid}).status_code == 204
    shown = browser.get(started["_links"]["scaRedirect"]["href"]).text   # the PSU is told, and can go back
    assert "Nothing left to authorise" in shown and "CANC" in shown and "<form" in shown
    answer = sca(browser, started, KARI)   # the owner of the debtor account, with the funds
    assert "psu-id" not in answer and "tpp-session-id" not in answer
    assert "CANC" in answer["message"][0] and "authorised nothing" in answer["message"][0]
    assert _sca_status(tpp, pid, started) == "failed"
    assert status(tpp, pid)["transactionStatus"] == "CANC"
    page = browser.get(started["_links"]["scaRedirect"]["href"])   # used up: no form to submit again
    assert "failed" in page.text and "<form" not in page.text


def test_only_the_first_of_five_authorisations_moves_the_payment(tpp, browser):
    pid = sepa(tpp, "41.00")
    authorisations = [start(tpp, pid) for _ in range(5)]   # A35: each start of a RCVD payment answers 201
    first = sca(browser, authorisations[0], KARI)
    assert first["psu-id"][0] and status(tpp, pid)["transactionStatus"] == "PDNG"
    for later in authorisations[1:]:
        answer = sca(browser, later, KARI)
        assert "psu-id" not in answer and "PDNG" in answer["message"][0]
        assert _sca_status(tpp, pid, later) == "failed"
    assert _sca_status(tpp, pid, authorisations[0]) == "finalised"
    assert status(tpp, pid)["transactionStatus"] == "PDNG"   # not RJCT: the PSU did not fail to authenticate
    assert batch(tpp)["executed"] == [pid]


def test_a_later_authorisation_failing_does_not_reject_an_untouched_payment(tpp, browser):
    """The A35 failure is checked first and moves nothing, even for a customer who could not have authorised."""
    pid = sepa(tpp, "42.00")
    one, two = start(tpp, pid), start(tpp, pid)
    sca(browser, one, KARI)
    assert "message" in sca(browser, two, "00000000000")
    assert status(tpp, pid)["transactionStatus"] == "PDNG"


def test_a_basket_authorised_or_deleted_is_not_authorised_again(tpp, browser):
    pids = [sepa(tpp, "43.00"), sepa(tpp, "44.00")]
    basket_id = tpp.call("createSigningBasket", body={"paymentIds": pids}).json()["basketId"]
    path = {"basketId": basket_id}
    headers = {"TPP-Redirect-URI": "https://tpp.example.no/callback", "TPP-Session-ID":
               "6f0c2d1e-5b7a-4c3d-9e8f-1a2b3c4d5e6f"}
    one = tpp.call("startSigningBasketAuthorisation", path=path, headers=headers).json()
    two = tpp.call("startSigningBasketAuthorisation", path=path, headers=headers).json()
    assert "psu-id" in sca(browser, one, KARI)
    answer = sca(browser, two, KARI)
    assert "psu-id" not in answer and "authorised" in answer["message"][0]
    state = tpp.call("getSigningBasketAuthorisationStatus", path={**path, "authorisationId": two["authorisationId"]})
    assert state.json()["scaStatus"] == "failed"
    assert [status(tpp, p)["transactionStatus"] for p in pids] == ["PDNG", "PDNG"]

    # deleted before its authorisation was completed: the form fails, the payments stay RCVD
    waiting = [sepa(tpp, "45.00")]
    other = tpp.call("createSigningBasket", body={"paymentIds": waiting}).json()["basketId"]
    started = tpp.call("startSigningBasketAuthorisation", path={"basketId": other}, headers=headers).json()
    assert tpp.call("deleteSigningBasket", path={"basketId": other}).status_code == 204
    answer = sca(browser, started, KARI)
    assert "psu-id" not in answer and "deleted" in answer["message"][0]
    assert status(tpp, waiting[0])["transactionStatus"] == "RCVD"


def test_profile_one_open_authorisation_refuses_a_second_start(server, sandbox, tpp, browser):
    server.app.state.sandbox = Sandbox.create(profile=Profile.from_mapping({"open-authorisations": "one"}),
                                              clock=sandbox.clock)
    pid = sepa(tpp, "46.00")
    started = start(tpp, pid)
    second = tpp.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid},
                      headers={"TPP-Redirect-URI": "https://tpp.example.no/cb", "TPP-Session-ID": "6f0c2d1e-5b7a-4c3d"
                               "-9e8f-1a2b3c4d5e6f"})
    assert second.status_code == 409 and second.json()["tppMessages"][0]["code"] == "CONFLICT"
    assert started["authorisationId"] in second.json()["tppMessages"][0]["text"]
    assert "message" in sca(browser, started, "00000000000")   # that one failed: the payment is RJCT, A23 refuses
    assert tpp.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid}).status_code == 409


# ---------------------------------------------------------------- A36
def _account(sandbox, account: dict) -> dict:
    with sandbox.store.transaction() as tx:
        return tx.account_by_reference(None, account["bban"])


def _listed(tpp, sandbox, account: dict) -> list[dict]:
    r = tpp.call("listSandboxAccountTransactions", path={"mockAccountId": _account(sandbox, account)["id"]})
    assert r.status_code == 200
    return r.json()


def test_a_transfer_to_the_same_account_lists_a_debit_and_a_credit_of_its_payment(tpp, browser, sandbox):
    before = _account(sandbox, KARI_NOK)["balance"]
    pid = create(tpp, "createBulkPayment", bulk_body("40.00", creditor=KARI_NOK["bban"]))
    authorise(tpp, browser, pid, KARI, BULK)
    assert batch(tpp)["executed"] == [pid]
    booked = [t for t in _listed(tpp, sandbox, KARI_NOK) if t.get("paymentId") == pid]
    assert sorted(t["amount"] for t in booked) == [-4000, 4000]
    assert all(t["debtorAccount"] == t["creditorAccount"] for t in booked)
    assert len({t["id"] for t in booked}) == 2
    assert _account(sandbox, KARI_NOK)["balance"] == before


def test_each_account_list_reconciles_with_its_balance(tpp, browser, sandbox):
    """What payments book moves each balance by exactly the signed amounts they list: a SEPA payment out of the
    EUR account, a bulk from Kari to Ola, to herself and to an account outside the sandbox; the fixed test data's own
    debits are signed too."""
    accounts = (EUR, KARI_NOK, testdata.ACCOUNTS[3])
    before = {a["bban"]: (_account(sandbox, a)["balance"], {t["id"] for t in _listed(tpp, sandbox, a)})
              for a in accounts}
    assert any(t["amount"] < 0 for t in _listed(tpp, sandbox, KARI_NOK))   # the newspaper: a debit
    sepa_id = create(tpp, "createSepaCreditTransfer", {**sepa_body("12.34"), "endToEndIdentification": "A36-E2E-1"})
    bulk_id = create(tpp, "createBulkPayment", bulk_body("100.00", "7.50", creditor=testdata.ACCOUNTS[3]["bban"]))
    own_id = create(tpp, "createBulkPayment", bulk_body("3.00", creditor=KARI_NOK["bban"]))
    for pid, where in ((sepa_id, SEPA), (bulk_id, BULK), (own_id, BULK)):
        authorise(tpp, browser, pid, KARI, where)
    assert sorted(batch(tpp)["executed"]) == sorted([sepa_id, bulk_id, own_id])
    for account in accounts:
        balance, seen = before[account["bban"]]
        new = [t for t in _listed(tpp, sandbox, account) if t["id"] not in seen]
        assert new and all(t["paymentId"] in (sepa_id, bulk_id, own_id) for t in new)
        assert balance + sum(t["amount"] for t in new) == _account(sandbox, account)["balance"], account["bban"]
    eur = [t for t in _listed(tpp, sandbox, EUR) if t.get("paymentId") == sepa_id]
    assert [(t["amount"], t["endToEndId"]) for t in eur] == [(-1234, "A36-E2E-1")]
