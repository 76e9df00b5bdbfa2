"""The judge's session state: what earlier exchanges showed decides later ones -- a status going backwards, a
basket status no worst case of its payments gives (A2), an X-Request-ID replay answered with another payment (A29),
another TPP's payment visible (A28), a basket naming a bulk payment (A7) -- and the state stays bounded."""
from __future__ import annotations

import dataclasses
import json

from conformance.client import Identity
from conformance.exchange import ExchangeJudge, RecordedAnswer
from conformance.sandbox import faults as F
from exchange_recording import recording
from sandbox.flows import BULK, REDIRECT, SEPA, SESSION, bulk_body, sca, sepa_body
from validator.context import Profile

TPP_A = Identity.generate("PSDNO-FSA-LIFEA")
TPP_B = Identity.generate("PSDNO-FSA-LIFEB")


def server_rules(judge, exchanges):
    return [[f.rule for f in judge.judge(q, a).server] for q, a in exchanges]


def with_status(answer: RecordedAnswer, status: str) -> RecordedAnswer:
    body = json.loads(answer.body)
    body["transactionStatus"] = status
    return dataclasses.replace(answer, body=json.dumps(body).encode())


def failed_basket(rec, tpp):
    """Two payments in a basket whose SCA fails (no customer with that number): both RJCT (A24)."""
    first = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    second = tpp.call("createSepaCreditTransfer", body=sepa_body("17.00")).json()["paymentId"]
    basket = tpp.call("createSigningBasket", body={"paymentIds": [first, second]}).json()["basketId"]
    started = tpp.call("startSigningBasketAuthorisation", path={"basketId": basket},
                       headers={"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION}).json()
    sca(rec.browser(), started, "00000000")   # the PSU's browser; no customer has that number: SCA fails
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": first})
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    return first, basket


def test_a_basket_status_no_worst_case_gives_is_the_servers():
    rec = recording()
    failed_basket(rec, rec.client(TPP_A))
    *before, (payment_q, payment_a), (basket_q, basket_a) = rec.exchanges
    assert json.loads(payment_a.body)["transactionStatus"] == "RJCT"
    assert json.loads(basket_a.body)["transactionStatus"] == "RJCT"
    assert server_rules(ExchangeJudge(), rec.exchanges) == [[]] * len(rec.exchanges)
    judge = ExchangeJudge()
    for q, a in before + [(payment_q, payment_a)]:
        judge.judge(q, a)
    found = judge.judge(basket_q, with_status(basket_a, "PATC")).server
    assert [(f.rule, f.ref, f.expected, f.actual) for f in found] == [
        ("basket-status-worst-case", "A2", "RJCT", "200")]


def test_a_basket_status_is_not_judged_from_statuses_that_may_have_moved_on():
    rec = recording()
    tpp = rec.client(TPP_A)
    first = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    basket = tpp.call("createSigningBasket", body={"paymentIds": [first]}).json()["basketId"]
    tpp.call("getSigningBasketStatus", path={"basketId": basket})
    judge = ExchangeJudge()
    (q1, a1), (q2, a2), (q3, a3) = rec.exchanges
    judge.judge(q1, a1), judge.judge(q2, a2)
    assert judge.judge(q3, with_status(a3, "ACTC")).server == ()  # RCVD seen: it may be ACSC by now


def test_a_status_going_backwards_is_the_servers():
    rec = recording()
    tpp = rec.client(TPP_A)
    pid = tpp.call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    tpp.call("getPaymentStatus", path={**SEPA, "paymentId": pid})
    (q1, a1), (q2, a2), (q3, a3) = rec.exchanges
    assert server_rules(ExchangeJudge(), rec.exchanges) == [[], [], []]
    judge = ExchangeJudge()
    judge.judge(q1, a1)
    assert judge.judge(q2, with_status(a2, "PDNG")).server == ()   # RCVD -> PDNG (A24)
    found = judge.judge(q3, a3).server                              # PDNG -> RCVD: backwards
    assert [(f.rule, f.pointer) for f in found] == [("status-backwards", "/body/transactionStatus")]
    assert "PDNG" in found[0].message and "RCVD" in found[0].message
    other = ExchangeJudge()
    other.judge(q1, with_status(a1, "ACTC"))   # a status outside the decided transitions: not judged
    assert other.judge(q2, a2).server == ()


def test_a_replayed_request_id_answered_with_another_payment_is_the_servers():
    for faults, expected in (((), [[], []]), ((F.REQUEST_ID_REPLAY_DUPLICATES,), [[], ["request-id-replay"]])):
        rec = recording(*faults)
        tpp = rec.client(TPP_A)
        sent = tpp.prepare("createSepaCreditTransfer", body=sepa_body(), query={"allowLogicalDuplicate": "true"})
        tpp.send_prepared(sent)
        tpp.send_prepared(sent)
        assert server_rules(ExchangeJudge(), rec.exchanges) == expected, faults


def test_another_request_with_a_used_request_id_accepted_is_the_servers():
    rec = recording()
    tpp = rec.client(TPP_A)
    request_id = {"X-Request-ID": "0b9c53a4-4b1f-4d8e-9a55-3c1f0e2d7b61"}
    tpp.call("createSepaCreditTransfer", body=sepa_body(), headers=request_id)
    tpp.call("createSepaCreditTransfer", body=sepa_body("18.00"), headers=request_id)
    (q1, a1), (q2, a2) = rec.exchanges
    assert a2.status == 409 and server_rules(ExchangeJudge(), rec.exchanges) == [[], []]
    judge = ExchangeJudge()
    judge.judge(q1, a1)
    found = judge.judge(q2, dataclasses.replace(a1)).server
    assert [(f.rule, f.expected) for f in found] == [("request-id-replay", "409 CONFLICT")]
    new = ExchangeJudge(profile=Profile.from_mapping({"request-id-replay": "new-request"}))
    new.judge(q1, a1)
    assert new.judge(q2, a1).server == ()


def test_another_tpps_payment_visible_is_the_servers():
    for faults, expected in (((), [[], []]), ((F.FOREIGN_PAYMENT_READABLE,), [[], ["foreign-resource-visible"]])):
        rec = recording(*faults)
        pid = rec.client(TPP_A).call("createSepaCreditTransfer", body=sepa_body()).json()["paymentId"]
        rec.client(TPP_B).call("getPaymentStatus", path={**SEPA, "paymentId": pid})
        assert server_rules(ExchangeJudge(), rec.exchanges) == expected, faults


def test_a_basket_with_a_bulk_payment_seen_created_is_predicted_refused():
    for faults, server in (((), []), ((F.BASKET_ACCEPTS_BULK,), ["basket-reference-mix"])):
        rec = recording(*faults)
        tpp = rec.client(TPP_A)
        bulk = tpp.call("createBulkPayment", body=bulk_body("250.00")).json()["paymentId"]
        tpp.call("createSigningBasket", body={"paymentIds": [bulk]})
        judge = ExchangeJudge()
        judgements = [judge.judge(q, a) for q, a in rec.exchanges]
        assert judgements[1].predicted == (400, "REFERENCE_MIX_INVALID")
        assert "basket-reference-mix" in [f.rule for f in judgements[1].client]
        assert [f.rule for f in judgements[1].server] == server
        # a judge that did not see the bulk payment created cannot know: no finding either way
        alone = ExchangeJudge().judge(*rec.exchanges[1])
        assert alone.server == () and alone.predicted == (201, None)


def test_the_state_is_bounded_and_what_was_dropped_is_never_a_finding():
    rec = recording(F.FOREIGN_PAYMENT_READABLE)
    tpp = rec.client(TPP_A)
    ids = [tpp.call("createSepaCreditTransfer", body=sepa_body(f"{10 + i}.00")).json()["paymentId"] for i in range(5)]
    reader = rec.client(TPP_B)
    reader.call("getPaymentStatus", path={**SEPA, "paymentId": ids[0]})
    reader.call("getPaymentStatus", path={**SEPA, "paymentId": ids[4]})
    judge = ExchangeJudge(capacity=3)
    found = [[f.rule for f in judge.judge(q, a).server] for q, a in rec.exchanges]
    assert len(judge.lifecycle.resources) <= 3 and len(judge.lifecycle.request_ids) <= 3
    assert found[5] == [] and found[6] == ["foreign-resource-visible"]
