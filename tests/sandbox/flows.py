"""Steps the sandbox tests share: payments from the fixed test data, authorisation through the SCA page."""
from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from conformance.gate.suites import data as payment_bodies
from conformance.gate.suites.stateful import hidden_fields
from conformance.sandbox import testdata
from conformance.sandbox.sca import FIELD

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
BULK = {"payment-service": "bulk-payments", "payment-product": "norwegian-domestic-credit-transfers"}
PERIODIC = {"payment-service": "periodic-payments", "payment-product": "norwegian-domestic-credit-transfers"}
REDIRECT = "https://tpp.example.no/callback?state=4c1d"
SESSION = "6f0c2d1e-5b7a-4c3d-9e8f-1a2b3c4d5e6f"
EUR = testdata.EUR_ACCOUNT
KARI_NOK = testdata.ACCOUNTS[0]
EMPTY = testdata.NEARLY_EMPTY


def sepa_body(amount: str = "125.00", *, debtor: dict = EUR, creditor: str = "DE89370400440532013000",
              text: str = "Faktura 2026-118", date: str | None = None) -> dict:
    return payment_bodies.sepa_body(amount, debtor=debtor, creditor=creditor, text=text, date=date)


def bulk_body(*amounts: str, debtor: dict = KARI_NOK, creditor: str = "15033982590", date: str | None = None) -> dict:
    return payment_bodies.bulk_body(*amounts, debtor=debtor, creditor=creditor, date=date)


def create(client, operation: str, body: dict, **options) -> str:
    r = client.call(operation, body=body, **options)
    assert r.status_code == 201, r.text
    assert r.json()["transactionStatus"] == "RCVD"
    return r.json()["paymentId"]


def sepa(client, amount: str = "125.00", **kw) -> str:
    return create(client, "createSepaCreditTransfer", sepa_body(amount, **kw))


def status(client, pid: str, where: dict = SEPA) -> dict:
    r = client.call("getPaymentStatus", path={**where, "paymentId": pid})
    assert r.status_code == 200, r.text
    return r.json()


def start(client, pid: str, where: dict = SEPA) -> dict:
    r = client.call("startPaymentAuthorisation", path={**where, "paymentId": pid},
                    headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION})
    assert r.status_code == 201, r.text
    return r.json()


def sca(browser, started: dict, customer_number: str) -> dict[str, list[str]]:
    """The PSU's browser on the SCA page: read the form, submit the customerNumber, follow nothing.
    Returns the query of the 303 Location (the TPP-Redirect-URI with psu-id / tpp-session-id or message)."""
    page_url = started["_links"]["scaRedirect"]["href"]
    page = browser.get(page_url)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f'name="{FIELD}"' in page.text and 'method="post"' in page.text
    action = page.text.split('action="', 1)[1].split('"', 1)[0]
    form = urlencode([*hidden_fields(page.text), (FIELD, customer_number)])  # as a browser: the anti-CSRF token
    answer = browser.post(action, content=form.encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT.split("?")[0])
    return parse_qs(urlsplit(location).query)


def authorise(client, browser, pid: str, customer_number: str, where: dict = SEPA) -> dict[str, list[str]]:
    return sca(browser, start(client, pid, where), customer_number)


def batch(client, at: str | None = None) -> dict:
    r = client.call("runSandboxBatch", body={"at": at} if at else None)
    assert r.status_code == 200, r.text
    return r.json()
