"""A TPP's own tests against the obvalidate reference sandbox (README "Testing your TPP client").

With obvalidate installed (``pip install obvalidate``, or ``pip install -e .`` of a checkout), pytest loads its plugin
and these tests run as they are::

    pytest examples/test_tpp_client.py
    pytest examples/test_tpp_client.py --ob-sandbox-now 2031-03-14T07:30:00Z   # the sandbox clock on another day

A TPP's suite calls its own client code where these tests call ``ob_client`` directly.
"""
from __future__ import annotations

import datetime as dt
import json
import uuid

import httpx

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.strategies import breaking, payloads, signed_requests
from validator.signing import SignableRequest, sign_request

SEPA = {"payment-service": "payments", "payment-product": "sepa-credit-transfers"}
KARI = "13039319955"              # Kari Nordmann, a customer of the sandbox's fixed test data (A32)
KARI_EUR = "NO9386011117947"      # her EUR account, the debtor below
LANDLORD = "DE89370400440532013000"
AUTHORISATION = {"TPP-Redirect-URI": "https://tpp.example.no/callback", "TPP-Session-ID": str(uuid.uuid4())}
# Hypothesis with function-scoped fixtures (a fresh client per test) and a live server: no deadline per example.
LIVE = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def status_of(client, payment_id: str) -> str:
    answer = client.call("getPaymentStatus", path={**SEPA, "paymentId": payment_id})
    assert answer.status_code == 200, answer.text
    return answer.json()["transactionStatus"]


def test_the_default_payment_is_valid_on_the_sandbox_day(ob_client):
    """SignedClient's default body: the spec's example, its execution date moved to the client's (sandbox's) day."""
    created = ob_client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"})
    assert created.status_code == 201, created.text
    assert created.json()["transactionStatus"] == "RCVD"


@LIVE
@given(data=st.data())
def test_every_valid_payment_is_created(ob_client, data):
    """Whole signed requests drawn from the spec: the sandbox accepts each one (201 RCVD)."""
    request = data.draw(signed_requests("createSepaCreditTransfer", ob_client,
                                        query={"allowLogicalDuplicate": "true"}))
    answer = ob_client.send_prepared(request)
    assert answer.status_code == 201, answer.text
    assert answer.json()["transactionStatus"] == "RCVD"


@LIVE
@given(broken=breaking("execution-date-past", "sepa-credit-transfer", today=dt.date(2031, 3, 14)))
@pytest.mark.ob_now("2031-03-14T10:00:00+01:00")
def test_a_payment_dated_yesterday_is_refused_as_the_bank_says(ob_client, broken):
    """A payload breaking exactly one rule is refused with the status and code the validator names."""
    answer = ob_client.call("createSepaCreditTransfer", body=broken.payload)
    assert (answer.status_code, answer.json()["tppMessages"][0]["code"]) == (broken.status, broken.code)


@settings(max_examples=5, deadline=None)
@given(body=payloads("sepa-credit-transfer", today=dt.date(2031, 3, 14)))
def test_generated_payloads_have_what_my_mapper_needs(body):
    """Payloads without a server: what a TPP's own mapping code must handle."""
    assert body["instructedAmount"]["currency"] == "EUR"
    assert body["debtorAccount"]["iban"] != body["creditorAccount"]["iban"]


@pytest.mark.ob_now("2031-03-14T08:30:00+01:00")  # a Friday, 08:30 in Oslo: before the 09:00 batch run
def test_a_payment_from_creation_to_its_booking(ob_sandbox, ob_client):
    """Create, start the authorisation, walk the SCA page as Kari, let the batch run execute it, read the booking."""
    today = ob_sandbox.today().isoformat()
    body = {"instructedAmount": {"amount": "125.50", "currency": "EUR"}, "creditorName": "Ingrid Hansen Immobilien",
            "creditorAccount": {"iban": LANDLORD, "currency": "EUR"},
            "debtorAccount": {"iban": KARI_EUR, "currency": "EUR"},
            "remittanceInformationUnstructured": f"Husleie {uuid.uuid4().hex[:8]}", "requestedExecutionDate": today}
    created = ob_client.call("createSepaCreditTransfer", body=body)
    assert created.status_code == 201, created.text
    payment_id = created.json()["paymentId"]

    started = ob_client.call("startPaymentAuthorisation", path={**SEPA, "paymentId": payment_id},
                             headers=AUTHORISATION)
    assert started.status_code == 201, started.text
    sca = ob_sandbox.authorise(started, KARI)        # the PSU's browser on the SCA page
    assert sca.succeeded, sca
    assert sca.query["tpp-session-id"] == [AUTHORISATION["TPP-Session-ID"]]
    assert status_of(ob_client, payment_id) == "PDNG"

    run = ob_client.call("runSandboxBatch", body={"at": "2031-03-14T09:00:00+01:00"})
    assert run.status_code == 200, run.text
    assert payment_id in run.json()["executed"]
    assert status_of(ob_client, payment_id) == "ACSC"

    customers = ob_client.call("listSandboxCustomers").json()
    [kari] = [c for c in customers if c["customerNumber"] == KARI]
    booked = [t for account in kari["accounts"]
              for t in ob_client.call("listSandboxAccountTransactions", path={"mockAccountId": account}).json()
              if t.get("paymentId") == payment_id]       # the booking names its payment (A36)
    assert len(booked) == 1, booked
    assert booked[0]["amount"] == -12550 and booked[0]["bookingDate"] == today   # a debit of Kari's account


@pytest.mark.ob_faults("created-200")
def test_my_client_notices_a_wrong_status(ob_client):
    """A fault switch: the sandbox answers a creation 200 instead of 201 (what a TPP's client must not take for 201)."""
    answer = ob_client.call("createSepaCreditTransfer", query={"allowLogicalDuplicate": "true"})
    assert answer.status_code == 200


class MyPaymentClient:
    """A client of the TPP's own making (httpx here; any HTTP library will do): it builds its requests and signs each
    with obvalidate's public signing function, as a TPP signs with its QSealC."""

    def __init__(self, base_url: str, key, certificate, clock) -> None:
        self.base_url, self.key, self.certificate, self.clock = base_url, key, certificate, clock

    def create_sepa_payment(self, payment: dict) -> httpx.Response:
        body = json.dumps(payment).encode("utf-8")
        headers = [("Content-Type", "application/json"), ("X-Request-ID", str(uuid.uuid4())),
                   ("x-accept-fix", "amount-as-string"), ("PSU-ID", str(uuid.uuid4())),
                   ("PSU-IP-Address", "192.0.2.17"), ("TPP-Session-ID", "my-session-1"),
                   ("TPP-Redirect-URI", "https://tpp.example.no/callback")]
        target = "/v1/payments/sepa-credit-transfers?allowLogicalDuplicate=true"
        # Date, Digest, TPP-Signature-Certificate and Signature (keyId, the profile's headers) over these exact bytes
        signed = sign_request(SignableRequest("POST", target, headers, body), self.key, self.certificate,
                              date=self.clock())
        return httpx.post(self.base_url + target, headers=signed.headers, content=body)


def test_my_own_client_signs_as_the_bank_wants(ob_sandbox, ob_identity):
    """ob_identity holds the key and certificate (ob_identity.key, .certificate; .key_id the keyId they sign with)."""
    client = MyPaymentClient(ob_sandbox.url, ob_identity.key, ob_identity.certificate, ob_sandbox.now)
    created = client.create_sepa_payment({
        "instructedAmount": {"amount": "42.00", "currency": "EUR"}, "creditorName": "Ingrid Hansen Immobilien",
        "creditorAccount": {"iban": LANDLORD, "currency": "EUR"},
        "debtorAccount": {"iban": KARI_EUR, "currency": "EUR"},
        "requestedExecutionDate": ob_sandbox.today().isoformat()})
    assert created.status_code == 201, created.text
    assert created.json()["transactionStatus"] == "RCVD"
