"""The exchange judge on exchanges recorded from the reference sandbox: a faithful session has no findings; each
client defect is the client's finding and the sandbox's refusal agrees; each server defect (fault switches, answers
edited) is the server's finding with the answer expected and the one given; exchanges that are not operations of
the spec are skipped."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json

import pytest

from conformance.client import Identity
from conformance.exchange import ExchangeJudge, RecordedAnswer, RecordedRequest
from conformance.exchange.responses import ResponseKinds
from conformance.sandbox import faults as F
from exchange_recording import ORIGIN, recording
from sandbox.flows import BULK, REDIRECT, SEPA, SESSION, bulk_body, sca, sepa_body
from validator import Validator
from validator.context import Profile
from validator.spec import load_spec

TPP_A = Identity.generate("PSDNO-FSA-JUDGEA")
TPP_B = Identity.generate("PSDNO-FSA-JUDGEB")


def judged(rec, judge=None):
    judge = judge or ExchangeJudge()
    return [(request, answer, judge.judge(request, answer)) for request, answer in rec.exchanges]


def rules(judgements, party):
    return [(j.operation, f.rule) for _q, _a, j in judgements for f in j.findings if f.party == party]


def session(rec, tpp):
    """A TPP's ordinary session: creations, reads, an authorisation through the SCA page, a basket, a deletion."""
    created = tpp.call("createSepaCreditTransfer", body=sepa_body())
    pid = created.json()["paymentId"]
    where = {**SEPA, "paymentId": pid}
    tpp.call("getPaymentStatus", path=where)
    tpp.call("getPayment", path=where)
    bulk = tpp.call("createBulkPayment", body=bulk_body("250.00", "100.50"))
    other = tpp.call("createSepaCreditTransfer", body=sepa_body("17.00")).json()["paymentId"]
    basket = tpp.call("createSigningBasket", body={"paymentIds": [pid, other]}).json()["basketId"]
    tpp.call("getSigningBasket", path={"basketId": basket})
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    started = tpp.call("startSigningBasketAuthorisation", path={"basketId": basket},
                       headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}).json()
    sca(rec.browser(), started, "00000000")   # the PSU's browser; no customer has that number: SCA fails
    tpp.call("getPaymentStatus", path=where)
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    tpp.call("deletePayment", path={**BULK, "paymentId": bulk.json()["paymentId"]})
    return pid, basket


def test_a_faithful_session_has_no_findings_and_the_sca_page_is_skipped():
    rec = recording()
    session(rec, rec.client(TPP_A))
    results = judged(rec)
    assert len(results) == 14
    assert [f for _q, _a, j in results for f in j.findings] == []
    skipped = [j.skipped for _q, _a, j in results if j.skipped]
    assert skipped and all("SCA page" in why for why in skipped)
    assert all(j.operation for _q, _a, j in results if not j.skipped)
    assert {j.predicted for _q, a, j in results if not j.skipped} >= {(201, None), (200, None)}


def test_a_request_judged_years_later_is_judged_at_its_own_time():
    rec = recording()
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body(date="2026-07-02"))
    request, answer = rec.exchanges[0]
    assert ExchangeJudge().judge(request, answer).findings == ()
    later = dataclasses.replace(request, at=request.at + _dt.timedelta(days=800))
    found = {f.rule for f in ExchangeJudge().judge(later, answer).findings}
    assert {"date-stale", "execution-date-past"} & found or found, found  # judged by a clock 800 days on: stale


def test_client_defects_are_the_clients_and_the_sandbox_refusal_agrees():
    rec = recording()
    tpp = rec.client(TPP_A)
    tampered = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    tpp.send_prepared(dataclasses.replace(tampered, body=tampered.body.replace(b"125.00", b"925.00")))
    tpp.call("createSepaCreditTransfer", body=sepa_body("10.001"))
    unsigned = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    tpp.send_prepared(dataclasses.replace(unsigned, headers=[(n, v) for n, v in unsigned.headers
                                                             if n.lower() != "signature"]))
    results = judged(rec)
    assert [a.status for _q, a, _j in results] == [400, 400, 401]
    client = [[f.rule for f in j.client if f.severity == "error"] for _q, _a, j in results]
    assert "digest-mismatch" in client[0]
    assert "amount-minor-units" in client[1]
    assert "signature-missing" in client[2]
    assert rules(results, "server") == []
    assert [j.predicted for _q, _a, j in results] == [(400, "FORMAT_ERROR"), (400, "FORMAT_ERROR"),
                                                     (401, "SIGNATURE_MISSING")]


@pytest.mark.parametrize("fault, rule", [
    (F.MINOR_UNITS_IGNORED, "amount-minor-units"),
    (F.DIGEST_NOT_CHECKED, "digest-mismatch"),
])
def test_a_refused_request_accepted_is_the_servers(fault, rule):
    rec = recording(fault)
    tpp = rec.client(TPP_A)
    if fault == F.MINOR_UNITS_IGNORED:
        tpp.call("createSepaCreditTransfer", body=sepa_body("10.001"))
    else:
        sent = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
        tpp.send_prepared(dataclasses.replace(sent, body=sent.body.replace(b"125.00", b"925.00")))
    (_q, answer, judgement), = judged(rec)
    assert answer.status == 201
    server = judgement.server
    assert [f.rule for f in server] == [rule]
    assert server[0].expected == "400 FORMAT_ERROR" and server[0].actual == "201"
    assert "accepted" in server[0].message and server[0].ref == "A7"
    assert rule in [f.rule for f in judgement.client]


def test_a_valid_request_refused_is_the_servers():
    rec = recording(F.EMPTY_NAME_REFUSED)
    rec.client(TPP_A).call("createSepaCreditTransfer", body={**sepa_body(), "creditorName": ""})
    (_q, answer, judgement), = judged(rec)
    assert answer.status == 400 and judgement.client == ()
    assert [(f.rule, f.expected, f.actual) for f in judgement.server] == [
        ("valid-request-refused", "201 or a state refusal", "400 FORMAT_ERROR")]


def test_a_refusal_naming_another_place_is_the_servers():
    rec = recording(F.REFUSAL_PATH_ELSEWHERE)
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body("10.001"))
    (_q, _a, judgement), = judged(rec)
    assert [(f.rule, f.ref) for f in judgement.server] == [("amount-minor-units", "A6")]
    assert "/creditorName" in judgement.server[0].message


@pytest.mark.parametrize("fault, rule", [
    (F.CREATED_200, "status-undeclared"),
    (F.STATUS_LINK_UNRESOLVED, "link-unresolved"),
])
def test_answer_defects_of_a_creation(fault, rule):
    rec = recording(fault)
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body())
    (_q, _a, judgement), = judged(rec)
    assert rule in [f.rule for f in judgement.server], judgement
    assert judgement.client == ()


def test_a_status_response_without_its_status_is_the_servers():
    rec = recording(F.STATUS_MISSING)
    tpp = rec.client(TPP_A)
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    results = judged(rec)
    assert rules(results, "server") and all(op == "getPaymentStatus" for op, _r in rules(results, "server"))
    assert results[1][2].server[0].pointer.startswith("/body")


def test_an_edited_answer_content_type_5xx_and_wrong_status_for_unknown_id():
    rec = recording()
    tpp = rec.client(TPP_A)
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid + "x"})
    (created_q, created_a), (unknown_q, unknown_a) = rec.exchanges
    assert unknown_a.status == 404
    # an id no answer of the session issued: the refusal is explained, and it is the request's (the client's)
    (unknown,) = ExchangeJudge().judge(unknown_q, unknown_a).findings
    assert (unknown.party, unknown.rule, unknown.severity) == ("client", "resource-unknown-named", "error")
    text = dataclasses.replace(created_a, headers=(("content-type", "text/plain"),))
    assert [f.rule for f in ExchangeJudge().judge(created_q, text).server] == ["content-type"]
    failed = RecordedAnswer(500, (("content-type", "application/json"),),
                            b'{"tppMessages": [{"category": "ERROR", "code": "SYSTEM_ERROR"}]}')
    assert [(f.rule, f.expected, f.actual) for f in ExchangeJudge().judge(created_q, failed).server] == [
        ("server-error", "201", "500 SYSTEM_ERROR")]
    forbidden = dataclasses.replace(unknown_a, status=403)
    found = ExchangeJudge().judge(unknown_q, forbidden).server
    assert [(f.rule, f.expected) for f in found] == [("valid-request-refused", "404 RESOURCE_UNKNOWN")]
    limited = RecordedAnswer(429, (("Retry-After", "1"),), b"")   # a rate limit: state no request shows
    assert ExchangeJudge().judge(created_q, limited).server == ()


def test_the_product_refused_as_not_offered_names_the_profile_key():
    rec = recording()
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body())
    request, _answer = rec.exchanges[0]
    refused = RecordedAnswer(403, (("content-type", "application/json"),),
                             b'{"tppMessages": [{"category": "ERROR", "code": "PRODUCT_INVALID"}]}')
    found = ExchangeJudge().judge(request, refused).server
    assert [(f.rule, f.ref) for f in found] == [("product-not-offered", "A31")]
    offered_not = Profile.from_mapping({"products-not-offered": ["payments/sepa-credit-transfers"]})
    judgement = ExchangeJudge(profile=offered_not).judge(request, refused)
    assert judgement.server == () and judgement.predicted == (403, "PRODUCT_INVALID")


@pytest.mark.parametrize("where", [{"payment-service": "payments", "payment-product": "norwegian-domestic-credit-transfers"},
                                   {"payment-service": "bulk-payments", "payment-product": "sepa-credit-transfers"}])
def test_a_pair_the_interface_does_not_offer_is_product_unknown_as_the_sandbox_answers(where):
    """A payment's read, status, cancellation and authorisation paths under a payment-service x payment-product pair
    no creation path offers: the sandbox answers 404 PRODUCT_UNKNOWN, exactly what the judge predicts (A7), so the
    faithful answer has no finding; a bank serving it anyway is the server's product-unknown, its body judged by no
    other product's schema."""
    rec = recording()
    tpp = rec.client(TPP_A)
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    path = {**where, "paymentId": pid}
    started = {"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}
    tpp.call("getPayment", path=path)
    tpp.call("getPaymentStatus", path=path)
    tpp.call("startPaymentAuthorisation", path=path, headers=started)
    tpp.call("getPaymentAuthorisationStatus", path={**path, "authorisationId": "enc!!bm9uZQ"})
    tpp.call("deletePayment", path=path)
    results = judged(rec)[1:]
    assert [(a.status, json.loads(a.body)["tppMessages"][0]["code"]) for _q, a, _j in results] == \
        [(404, "PRODUCT_UNKNOWN")] * 5
    assert [(j.operation, j.predicted) for _q, _a, j in results] == [(None, (404, "PRODUCT_UNKNOWN"))] * 5
    assert [[f.rule for f in j.client] for _q, _a, j in results] == [["product-unknown"]] * 5
    assert rules(results, "server") == []
    request, _answer = results[0][:2]
    served = RecordedAnswer(200, (("content-type", "application/json"),),
                            b'{"creditorName": "Ola", "creditorAccount": {"bban": "12345678903"}}')
    found = ExchangeJudge().judge(request, served).server
    assert [(f.rule, f.expected) for f in found] == [("product-unknown", "404 PRODUCT_UNKNOWN")]


def test_a_payment_detail_failing_every_branch_is_worded_by_its_products_branch():
    """A4: a payment's detail is its initiation body plus its status; one failing every branch of the detail schema
    is judged by the branch of the path's payment-service x payment-product (DNB's periodic read: the periodic
    payment's members, not the bulk's `payments`). A body passing another product's branch is no schema finding
    (what the answer reads back is the lifecycle's business, A4)."""
    spec = load_spec()
    kinds = ResponseKinds(spec, Validator(spec=spec))
    periodic = {"startDate": "2030-01-15", "frequency": "Monthly", "debtorAccount": {"bban": "12255034918"},
                "instructedAmount": {"currency": "NOK", "amount": "0.01"}, "creditorAccount": {"bban": "60319542550"},
                "creditorName": "John Smith", "transactionStatus": "ACCP"}

    def required(service, product, body):
        path = f"/v1/{service}/{product}/P1"
        found = kinds.problems("GET", path, 200, "application/json", json.dumps(body).encode())
        return {p.pointer for p in found if p.rule == "schema-required"}

    assert required("periodic-payments", "norwegian-domestic-credit-transfers", periodic) == {
        "/body/creditorAddress", "/body/creditorAccount/currency", "/body/debtorAccount/currency"}
    assert "/body/payments" in required("bulk-payments", "norwegian-domestic-credit-transfers", periodic)
    assert "/body/creditorAccount/iban" in required("payments", "sepa-credit-transfers", periodic)
    sepa = {**sepa_body(), "transactionStatus": "RCVD"}
    assert kinds.problems("GET", "/v1/bulk-payments/norwegian-domestic-credit-transfers/P1", 200, "application/json",
                          json.dumps(sepa).encode()) == []


def test_a_link_to_a_pair_the_interface_does_not_offer_leads_to_no_operation():
    spec = load_spec()
    kinds = ResponseKinds(spec, Validator(spec=spec))
    status = {"transactionStatus": "RCVD", "_links": {"self": {"href": "/v1/payments/norwegian-domestic-credit-"
                                                                       "transfers/P1", "verbs": ["GET"]}}}
    found = kinds.link_problems("/v1/payments/sepa-credit-transfers/P1/status", {"paymentId": "P1"},
                                json.dumps(status).encode())
    assert [p.rule for p in found] == ["link-unresolved"]


def test_the_request_alone_gives_client_findings_and_the_prediction():
    rec = recording()
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body("10.001"))
    request, _answer = rec.exchanges[0]
    judgement = ExchangeJudge().judge(request, None)
    assert judgement.operation == "createSepaCreditTransfer" and judgement.predicted == (400, "FORMAT_ERROR")
    assert judgement.server == () and "amount-minor-units" in [f.rule for f in judgement.client]


def test_a_truncated_body_is_not_judged_by_its_body_rules():
    rec = recording(F.STATUS_MISSING)
    tpp = rec.client(TPP_A)
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    request, answer = rec.exchanges[1]
    assert ExchangeJudge().judge(request, answer).server
    cut = dataclasses.replace(answer, body=answer.body[:5], truncated=True)
    assert ExchangeJudge().judge(request, cut).server == ()


@pytest.mark.parametrize("target, origin, base, why", [
    ("/favicon.ico", ORIGIN, "", "not an operation"),
    ("/static/app.js", ORIGIN, "", "not an operation"),
    ("https://cdn.example.com/v1/payments/sepa-credit-transfers", None, "", "another origin"),
    ("/v1/payments/sepa-credit-transfers", "https://other.example", "", "another origin"),
    ("/v1/payments/sepa-credit-transfers", ORIGIN, "/psd2", "outside the base path"),
])
def test_exchanges_that_are_no_operation_of_the_spec_are_skipped(target, origin, base, why):
    judge = ExchangeJudge(base_path=base, origins=(ORIGIN,))
    request = RecordedRequest("GET", target, (("Host", "x"),), b"", _dt.datetime.now(_dt.timezone.utc), origin)
    judgement = judge.judge(request, RecordedAnswer(200, (("content-type", "text/html"),), b"<html></html>"))
    assert judgement.operation is None and judgement.findings == () and why in judgement.skipped


def test_a_base_path_and_an_absolute_target_are_judged_as_the_operation():
    rec = recording()
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body())
    request, answer = rec.exchanges[0]
    absolute = dataclasses.replace(request, target=ORIGIN + request.target, origin=None)
    judgement = ExchangeJudge(origins=(ORIGIN,)).judge(absolute, answer)
    assert judgement.operation == "createSepaCreditTransfer" and judgement.findings == ()
    unknown = dataclasses.replace(request, target="/v1/paymentz/sepa-credit-transfers")
    judgement = ExchangeJudge().judge(unknown, RecordedAnswer(201, answer.headers, answer.body))
    # a path the spec does not have is another API of the bank (account information, say): skipped, not judged
    assert judgement.operation is None and judgement.findings == ()
    assert "not an operation of the spec" in judgement.skipped
    # a method the spec's path does not take is still judged
    wrong_method = dataclasses.replace(request, method="PUT")
    judgement = ExchangeJudge().judge(wrong_method, RecordedAnswer(201, answer.headers, answer.body))
    assert judgement.skipped is None and "method-not-allowed" in [f.rule for f in judgement.client]
    assert [f.actual for f in judgement.server] == ["201"]


def test_a_resource_the_body_names_unknown_is_a_state_refusal_and_sca_needed_too():
    rec = recording()
    tpp = rec.client(TPP_A)
    account = {"customerNumber": "99999999999", "accountName": "Brukskonto", "bban": "12345678903",
               "iban": "NO7112345678903", "currency": "NOK"}
    tpp.call("createSandboxAccount", body=account)
    (request, answer), = rec.exchanges
    assert (answer.status, answer.code) == (400, "RESOURCE_UNKNOWN")
    judge = ExchangeJudge()
    (quoted,) = judge.judge(request, answer).findings   # a state refusal the session cannot explain: quoted
    assert (quoted.party, quoted.rule, quoted.severity) == ("client", "request-refused", "warning")
    assert "no sandbox customer with customerNumber 99999999999" in quoted.message
    elsewhere = dataclasses.replace(answer, status=403)   # an unknown resource the body names is 400 (A28, A15)
    assert "400 RESOURCE_UNKNOWN" in [f.expected for f in ExchangeJudge().judge(request, elsewhere).server]
    absent = dataclasses.replace(answer, status=404)   # a sandbox operation answered as not there (A15)
    assert "operation-absent" in [f.rule for f in ExchangeJudge().judge(request, absent).server]
    pid_request = rec.client(TPP_A)
    pid_request.call("createSepaCreditTransfer", body=sepa_body())
    create_q, _create_a = rec.exchanges[-1]
    sca = RecordedAnswer(401, (("content-type", "application/json"),), json.dumps(
        {"_links": {"scaRedirect": {"href": "https://sca.bank.example/authorize?s=1", "verbs": ["GET"]}}}).encode())
    assert ExchangeJudge().judge(create_q, sca).findings == ()
    bare = RecordedAnswer(401, (("content-type", "application/json"),), b'{"_links": {}}')
    assert "valid-request-refused" in [f.rule for f in ExchangeJudge().judge(create_q, bare).server]


def test_links_resolve_to_an_operation_whatever_its_method():
    from validator.request import resolve_path
    from validator.spec import load_spec

    spec = load_spec()
    assert resolve_path(spec, "/v1/payments/sepa-credit-transfers/abc/authorisations").operation.operation_id == \
        "startPaymentAuthorisation"
    status = resolve_path(spec, "/v1/payments/sepa-credit-transfers/abc/status")
    assert status.operation.operation_id == "getPaymentStatus" and status.path_values["paymentId"] == "abc"
    assert resolve_path(spec, "/v1/payments/sepa-credit-transfers/abc").operation.method == "GET"
    assert resolve_path(spec, "/v1/payments/sepa-credit-transfers/abc/state").operation is None


def test_the_wrong_status_or_code_for_the_error_per_a8_and_the_profile():
    rec = recording()
    tpp = rec.client(TPP_A)
    unsigned = tpp.prepare("createSepaCreditTransfer", body=sepa_body())
    tpp.send_prepared(dataclasses.replace(unsigned, headers=[(n, v) for n, v in unsigned.headers
                                                             if n.lower() != "signature"]))
    (request, answer), = rec.exchanges
    assert (answer.status, answer.code) == (401, "SIGNATURE_MISSING")
    assert ExchangeJudge().judge(request, answer).server == ()
    format_error = RecordedAnswer(400, (("content-type", "application/json"),),
                                  b'{"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR"}]}')
    found = ExchangeJudge().judge(request, format_error).server
    assert [(f.rule, f.ref, f.expected, f.actual) for f in found] == [
        ("signature-missing", "A8", "401 SIGNATURE_MISSING", "400 FORMAT_ERROR")]
    chosen = Profile.from_mapping({"rules": {"signature-missing": {"status": 400, "code": "FORMAT_ERROR"}}})
    assert ExchangeJudge(profile=chosen).judge(request, format_error).server == ()
    assert ExchangeJudge(profile=chosen).judge(request, answer).server[0].expected == "400 FORMAT_ERROR"
    invalid = RecordedAnswer(403, (("content-type", "application/json"),),
                             b'{"tppMessages": [{"category": "ERROR", "code": "PRODUCT_INVALID"}]}')
    assert [f.rule for f in ExchangeJudge().judge(request, invalid).server] == ["product-not-offered"]
    assert ExchangeJudge().judge(request, RecordedAnswer(429, (), b"")).server == ()   # the bank's rate limit


def test_a_link_naming_another_payment_after_good_links_of_the_same_shape():
    rec = recording()
    rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body())
    request, answer = rec.exchanges[0]
    judge = ExchangeJudge()
    assert judge.judge(request, answer).findings == ()   # its links are remembered as good shapes
    body = json.loads(answer.body)
    pid = body["paymentId"]
    body["_links"]["status"]["href"] = body["_links"]["status"]["href"].replace(pid, "enc!!someone-elses")
    edited = dataclasses.replace(answer, body=json.dumps(body).encode())
    found = judge.judge(request, edited).server
    assert [(f.rule, f.pointer) for f in found] == [("link-foreign-id", "/body/_links/status/href")]
