"""Payment creation, reading and the request check (the validator's) over HTTP: happy paths and each documented
or decided error with its status, code and error body (A6, A7, A8, A16, A28)."""
from __future__ import annotations

import datetime as _dt
import json

import pytest
from conftest import in_days
from flows import BULK, SEPA, bulk_body, create, sepa, sepa_body, status

from conformance.client import Identity, SignedClient
from conformance.sandbox import testdata


def _codes(r) -> list[str]:
    body = r.json()
    return [m["code"] for m in body["tppMessages"]] if "tppMessages" in body else [body["code"]]


def test_sepa_created_read_and_detail_amounts_have_minor_unit_digits(tpp):
    pid = sepa(tpp, "49.5")
    r = tpp.call("createSepaCreditTransfer", body=sepa_body("49.5"), query={"allowLogicalDuplicate": "true"})
    assert r.status_code == 201 and r.json()["_links"]["startAuthorisation"]["verbs"] == ["POST"]
    detail = tpp.call("getPayment", path={**SEPA, "paymentId": pid}).json()
    assert detail["instructedAmount"] == {"amount": "49.50", "currency": "EUR"}
    assert detail["transactionStatus"] == "RCVD"


def test_bulk_created_and_spec_examples_accepted(tpp):
    assert tpp.call("createBulkPayment").status_code == 201            # the spec's own example
    assert tpp.call("createSepaCreditTransfer").status_code == 201
    pid = create(tpp, "createBulkPayment", bulk_body("1", "2.50"))
    assert status(tpp, pid, BULK)["transactionStatus"] == "RCVD"


@pytest.mark.parametrize("operation, body, headers, query, status_code, code", [
    ("createSepaCreditTransfer", sepa_body("100.001"), {}, None, 400, "FORMAT_ERROR"),
    ("createSepaCreditTransfer", sepa_body("0"), {}, None, 400, "FORMAT_ERROR"),
    ("createSepaCreditTransfer", sepa_body(), {"PSU-ID": "kari"}, None, 400, "FORMAT_ERROR"),
    ("createSepaCreditTransfer", sepa_body(), {"TPP-Redirect-URI": None}, None, 400, "HTTP_HEADER_REQUIRED"),
    ("createSepaCreditTransfer", sepa_body(), {"PSU-Context": "CORPORATE"}, None, 400, "HTTP_HEADER_REQUIRED"),
    ("createSepaCreditTransfer", sepa_body(), {}, {"allowLogicalDuplicate": "yes"}, 400, "FORMAT_ERROR"),
    ("createSepaCreditTransfer", "{not json", {}, None, 400, "FORMAT_ERROR"),
    ("createBulkPayment", bulk_body("10.001"), {}, None, 400, "FORMAT_ERROR"),
])
def test_request_errors(tpp, operation, body, headers, query, status_code, code):
    r = tpp.call(operation, body=body, headers=headers, query=query)
    assert r.status_code == status_code, r.text
    assert _codes(r)[0] == code


def test_execution_date_in_the_past(tpp, sandbox):
    r = tpp.call("createSepaCreditTransfer", body=sepa_body(date=in_days(sandbox, -1)))
    assert r.status_code == 400 and _codes(r) == ["EXECUTION_DATE_INVALID"]
    assert r.json()["tppMessages"][0]["path"] == "/requestedExecutionDate"
    assert tpp.call("createSepaCreditTransfer", body=sepa_body(date=in_days(sandbox, 0))).status_code == 201


def test_bulk_errors_use_the_documents_error_body(tpp):
    body = bulk_body("10")
    body["payments"][0].pop("remittanceInformationUnstructured")
    body["payments"][0]["remittanceInformationStructuredArray"] = [{"reference": "12345678901"}]
    r = tpp.call("createBulkPayment", body=body)
    assert r.status_code == 400
    error = r.json()
    assert error["code"] == "KID_INVALID" and error["status"] == 400 and error["system"] == "bulk-payments"
    assert "/payments/0/remittanceInformationStructuredArray/0/reference" in error["message"]
    prepared = tpp.prepare("createBulkPayment")
    prepared.headers = [(n, v) for n, v in prepared.headers if n != "Signature"]
    r = tpp.send_prepared(prepared)
    assert r.status_code == 401 and r.json()["code"] == "SIGNATURE_MISSING"


def test_unknown_product_and_path(tpp):
    r = tpp.send("POST", "/v1/payments/instant-sepa-credit-transfers", body=json.dumps(sepa_body()))
    assert r.status_code == 404 and _codes(r) == ["PRODUCT_UNKNOWN"]
    r = tpp.send("GET", "/v1/nothing-here")
    assert r.status_code == 404 and _codes(r) == ["RESOURCE_UNKNOWN"]
    r = tpp.call("getPaymentStatus", path={**SEPA, "paymentId": "enc!!bm8"})
    assert r.status_code == 404 and _codes(r) == ["RESOURCE_UNKNOWN"]


def test_payment_read_under_another_product_is_unknown(tpp):
    pid = sepa(tpp)
    r = tpp.call("getPaymentStatus", path={**BULK, "paymentId": pid})
    assert r.status_code == 404


def test_signature_failures(tpp, sandbox):
    prepared = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    prepared.body = prepared.body.replace(b"125.00", b"925.00")          # tampered after signing
    r = tpp.send_prepared(prepared)
    assert r.status_code == 400 and _codes(r) == ["FORMAT_ERROR"] and "Digest" in r.text
    prepared = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    prepared.headers = [(n, "3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3d" if n == "PSU-ID" else v) for n, v in prepared.headers]
    r = tpp.send_prepared(prepared)                                      # a signed header changed
    assert r.status_code == 401 and _codes(r) == ["SIGNATURE_INVALID"]
    r = tpp.call("createSepaCreditTransfer", body=sepa_body(), sign=False)
    assert r.status_code == 401 and "SIGNATURE_MISSING" in _codes(r)


def test_certificate_expired_and_date_window(server, sandbox, checker):
    old = Identity.generate("PSDNO-FSA-OLD", not_before=_dt.datetime(2019, 1, 1, tzinfo=_dt.timezone.utc),
                            not_after=_dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc))
    with SignedClient(server.url, old, clock=sandbox.clock.now, event_hooks={"response": [checker]}) as client:
        r = client.call("listSandboxCustomers")
        assert r.status_code == 401 and _codes(r) == ["CERTIFICATE_EXPIRED"]
    late = Identity.generate("PSDNO-FSA-LATE")
    skewed = lambda: sandbox.clock.now() - _dt.timedelta(hours=1)    # noqa: E731
    with SignedClient(server.url, late, clock=skewed, event_hooks={"response": [checker]}) as client:
        r = client.call("listSandboxCustomers")
        assert r.status_code == 401 and _codes(r) == ["SIGNATURE_INVALID"]


def test_method_not_allowed(tpp):
    r = tpp.send("PUT", "/v1/signing-baskets", body="{}")
    assert r.status_code == 405 and _codes(r) == ["BAD_REQUEST"]


def test_ownership_other_tpp_sees_nothing(tpp, other_tpp, browser):
    """A28: TPP B cannot read, cancel, authorise or basket TPP A's payment, nor see A's basket."""
    pid = sepa(tpp)
    where = {**SEPA, "paymentId": pid}
    for op in ("getPayment", "getPaymentStatus", "deletePayment", "startPaymentAuthorisation"):
        r = other_tpp.call(op, path=where)
        assert r.status_code == 404 and _codes(r) == ["RESOURCE_UNKNOWN"], op
    r = other_tpp.call("createSigningBasket", body={"paymentIds": [pid]})
    assert r.status_code == 400 and _codes(r) == ["RESOURCE_UNKNOWN"]
    basket = tpp.call("createSigningBasket", body={"paymentIds": [pid]}).json()["basketId"]
    for op in ("getSigningBasket", "getSigningBasketStatus", "deleteSigningBasket", "startSigningBasketAuthorisation"):
        assert other_tpp.call(op, path={"basketId": basket}).status_code == 404, op
    started = tpp.call("startPaymentAuthorisation", path=where).json()
    r = other_tpp.call("getPaymentAuthorisationStatus", path={**where, "authorisationId": started["authorisationId"]})
    assert r.status_code == 404
    assert status(tpp, pid)["transactionStatus"] == "RCVD"             # nothing B did changed A's payment
    r = tpp.call("getPaymentAuthorisationStatus", path={**where, "authorisationId": started["authorisationId"]})
    assert r.json() == {"scaStatus": "started"}


def test_authorisation_needs_redirect_headers(tpp):
    pid = sepa(tpp)
    r = tpp.call("startPaymentAuthorisation", path={**SEPA, "paymentId": pid}, headers={"TPP-Redirect-URI": None})
    assert r.status_code == 400 and _codes(r) == ["HTTP_HEADER_REQUIRED"]


def test_every_operation_of_the_spec_answers_its_success(tpp, browser, sandbox, checker):
    """A tour: each operation of spec/openapi.yaml once, signed, with its documented or decided success status."""
    from flows import PERIODIC, REDIRECT, SESSION, authorise

    seen: dict[str, int] = {}

    def call(op: str, **kw):
        r = tpp.call(op, **kw)
        seen[op] = r.status_code
        return r

    pid = call("createSepaCreditTransfer", body=sepa_body("12.00")).json()["paymentId"]
    bulk = call("createBulkPayment", body=bulk_body("3")).json()["paymentId"]
    periodic = call("createPeriodicPayment").json()["paymentId"]
    where = {**SEPA, "paymentId": pid}
    call("getPayment", path=where)
    call("getPaymentStatus", path={**BULK, "paymentId": bulk})
    started = call("startPaymentAuthorisation", path={**PERIODIC, "paymentId": periodic},
                   headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}).json()
    call("getPaymentAuthorisationStatus", path={**PERIODIC, "paymentId": periodic, "authorisationId": started["authorisationId"]})
    other = sepa(tpp, "13.00")
    basket = call("createSigningBasket", body={"paymentIds": [pid, other]}).json()["basketId"]
    call("getSigningBasket", path={"basketId": basket})
    call("getSigningBasketStatus", path={"basketId": basket})
    started = call("startSigningBasketAuthorisation", path={"basketId": basket}).json()
    call("getSigningBasketAuthorisationStatus", path={"basketId": basket, "authorisationId": started["authorisationId"]})
    call("deleteSigningBasket", path={"basketId": basket})
    call("deletePayment", path={**BULK, "paymentId": bulk})
    authorise(tpp, browser, pid, testdata.KARI)
    call("runSandboxBatch", body={"at": "2026-07-01T12:00:00+02:00"})
    customer = call("createSandboxCustomer", body={"customerNumber": "31125461118", "name": "Per Hansen", "type": "PRIVATE"}).json()
    call("listSandboxCustomers", query={"withAccounts": "true"})
    bban, iban = testdata.norwegian_account("1206123457")
    account = call("createSandboxAccount", body={"customerNumber": "31125461118", "accountName": "Konto",
                                                 "bban": bban, "iban": iban, "currency": "NOK"}).json()
    card = call("createSandboxCardAccount", body={"customerNumber": "31125461118", "maskedPan": "4925xxxxxxxx0001",
                                                  "currency": "NOK"}).json()
    example = tpp.spec.operation("createSandboxAccountTransactions").raw["requestBody"]["content"]["application/json"]
    item = {**next(iter(example["examples"].values()))["value"][0], "debtorAccount": {"iban": iban, "bban": bban}}
    call("createSandboxAccountTransactions", path={"mockAccountId": account["resourceId"]}, body=[item])
    call("listSandboxAccountTransactions", path={"mockAccountId": account["resourceId"]}, query={"limit": "10"})
    call("createSandboxCardTransactions", path={"mockCardAccountId": card["resourceId"]})
    call("listSandboxCardTransactions", path={"mockCardAccountId": card["resourceId"]})
    call("deleteSandboxCustomer", path={"customerId": customer["customerId"]})
    call("initializeSandbox")
    success = {op_id: {int(s) for s in op.responses if s.startswith("2")} for op_id, op in tpp.spec.operations.items()}
    assert set(seen) == set(success), f"not toured: {sorted(set(success) - set(seen))}"
    assert {op: s for op, s in seen.items() if s not in success[op]} == {}
    assert checker.checked >= len(success) and checker.problems == []   # each answer passed its response kind


def test_oversized_body_and_defects_answer_in_the_error_body(tpp, sandbox, monkeypatch):
    from conformance.sandbox import app as sandbox_app

    r = tpp.call("createSepaCreditTransfer", body=b"{" + b" " * (sandbox_app.MAX_BODY_BYTES + 1) + b"}")
    assert r.status_code == 400 and _codes(r) == ["FORMAT_ERROR"]

    def broken(*_args, **_kw):
        raise RuntimeError("defect")

    monkeypatch.setattr(sandbox.lifecycle, "create_payment", broken)
    r = tpp.call("createSepaCreditTransfer", body=sepa_body())
    assert r.status_code == 500 and _codes(r) == ["SYSTEM_ERROR"]
    r = tpp.call("createBulkPayment", body=bulk_body("1"))
    assert r.status_code == 500 and r.json()["code"] == "SYSTEM_ERROR"
