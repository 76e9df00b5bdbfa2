"""Whatever a TPP sends and a bank answers, the judge answers with a judgement, never a traceback: any method,
target, header bytes, body bytes and status; answers nested too deep to decode, not JSON, cut short."""
from __future__ import annotations

import datetime as _dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.exchange import ExchangeJudge, Judgement, RecordedAnswer, RecordedRequest

JUDGE = ExchangeJudge()
AT = _dt.datetime(2026, 7, 1, 8, 30, tzinfo=_dt.timezone.utc)
text = st.text(max_size=40)
targets = st.one_of(text, st.sampled_from([
    "/v1/payments/sepa-credit-transfers", "/v1/payments/sepa-credit-transfers/%ff%fe/status",
    "/v1/signing-baskets/x/authorisations/y", "https://bank.example/v1/payments/x/y/z?a=%zz", "*", "",
    "/v1/sandbox/customers/" + "a" * 3000]))
bodies = st.one_of(st.binary(max_size=60), st.sampled_from([
    b"[" * 100_000, b'{"a":' * 50_000, b'{"paymentIds": ["x", 1, null]}', b'{"transactionStatus": 7}',
    b'{"_links": {"scaRedirect": {"href": 5}}, "paymentId": []}', b"\xff\xfe{}"]))
headers = st.lists(st.tuples(st.sampled_from(["X-Request-ID", "TPP-Signature-Certificate", "Signature", "Digest",
                                              "Date", "Content-Type", "x", ""]), text), max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "get", "BREW", ""]), target=targets, headers=headers,
       body=bodies, status=st.integers(0, 999), answer_headers=headers, answer_body=bodies, truncated=st.booleans(),
       alone=st.booleans())
def test_any_exchange_gets_a_judgement(method, target, headers, body, status, answer_headers, answer_body,
                                       truncated, alone):
    request = RecordedRequest(method, target, tuple(headers), body, AT)
    answer = None if alone else RecordedAnswer(status, tuple(answer_headers), answer_body, truncated)
    judgement = JUDGE.judge(request, answer)
    assert isinstance(judgement, Judgement)
    assert all(f.party in ("client", "server") for f in judgement.findings)


def test_a_naive_time_is_utc():
    request = RecordedRequest("GET", "/v1/payments/sepa-credit-transfers/x/status", (), b"", AT.replace(tzinfo=None))
    assert ExchangeJudge().judge(request, None).operation == "getPaymentStatus"
