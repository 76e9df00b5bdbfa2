"""The gate against an implementation nobody here wrote: Stoplight Prism mocking spec/openapi.yaml on loopback.

Prism is a Node.js tool: `.ci/run` installs the pinned version into `.ci/node` (ignored by git); without it the tests
skip locally saying how to install it, and fail when `CI` is set (tests/prism_target.py). One run of every suite (1 example per rule and operation) is shared by the tests. Every answer Prism gives
is recorded on the way through the run's connection pool, with Prism's own reason for a refusal (its
``sl-violations`` header), so "no request refused for a missing Content-Type" is judged on every request, not only
on the findings. The findings asserted are the ones a bank's engineer reading this run's report would call true:
Prism's real defects, each with its rule or decision; and none of the classes an audit of an earlier run judged
wrong (issue 17)."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import httpx
import pytest

from conformance.gate import report
from conformance.gate.model import SUITES
from conformance.gate.runner import RunOptions, run
from prism_target import serving_prism

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prism_url():
    with serving_prism() as url:
        yield url


class Recorded:
    """Every request of the run and Prism's answer (status, its sl-violations), as they passed through the pool."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[httpx.Request, int, list]] = []

    def __call__(self, original):
        def handle_request(transport, request: httpx.Request) -> httpx.Response:
            response = original(transport, request)
            try:
                violations = json.loads(response.headers.get("sl-violations", "[]"))
            except ValueError:
                violations = []
            self.exchanges.append((request, response.status_code, violations))
            return response
        return handle_request


@pytest.fixture(scope="module")
def prism_run(prism_url):
    recorded = Recorded()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx.HTTPTransport, "handle_request", recorded(httpx.HTTPTransport.handle_request))
        result = run(RunOptions(prism_url, SUITES, seed=0, max_examples=1))
    data = report.as_json(result)
    by_rule = Counter(f["rule"] for f in data["findings"])
    by_check = Counter(c for f in data["findings"] for c in f["checks"])
    print(f"\nPrism: {data['summary']}\nfindings by rule: {dict(by_rule.most_common())}\n"
          f"findings by check: {dict(by_check.most_common())}")
    return result, data, recorded.exchanges


def _status(actual: str) -> int | None:
    head = actual.split(" ", 1)[0]
    return int(head) if head.isdigit() else None


def test_the_run_completes_and_classifies(prism_run):
    _result, data, exchanges = prism_run
    assert not [o for o in data["outcomes"] if o["status"] == "error"], \
        [o["reason"] for o in data["outcomes"] if o["status"] == "error"]
    assert data["summary"]["findings"] and data["summary"]["passed"] and len(exchanges) >= data["summary"]["cases"]


def test_no_request_is_refused_for_a_missing_content_type(prism_run):
    """Prism reads a JSON body sent without Content-Type as text and refuses it ("Request body must be object"), as a
    Spring or Starlette service would: the gate sends Content-Type: application/json on every JSON body (A33)."""
    _result, _data, exchanges = prism_run
    objects = [(request, violations) for request, _status, violations in exchanges
               if request.content.startswith(b"{") and _json_object(request.content)]
    assert objects, "the run sent JSON bodies"
    untyped = [f"{r.method} {r.url.path}" for r, _v in objects if "content-type" not in r.headers]
    assert not untyped, untyped[:5]
    # Prism's own reason for every refusal of a JSON object body: never that the body is not an object
    refused = [f"{r.method} {r.url.path}" for r, violations in objects
               if any(v.get("location") == ["request", "body"] and "must be object" in v.get("message", "")
                      for v in violations) and "json" in r.headers.get("content-type", "")]
    assert not refused, refused[:5]


def _json_object(content: bytes) -> bool:
    try:
        return isinstance(json.loads(content), dict)
    except ValueError:
        return False


ACCEPT_FIX = re.compile(r"-H '(?i:x-accept-fix): ([^']*)'")


def test_none_of_the_wrong_classes(prism_run):
    """The classes an audit of an earlier Prism run judged wrong (issue 17, sections 1 and 3) do not come back."""
    _result, data, exchanges = prism_run
    findings = data["findings"]
    # A6: either documented error body is accepted on a refusal
    error_body = [f for f in findings if f["rule"] == "schema-required" and f["message"].startswith("response:")
                  and (_status(f["actual"]) or 0) >= 400]
    assert not error_body, [f["message"] for f in error_body]
    # a 405 to a method no operation takes is HTTP's answer, whatever its body
    demanded = [f for f in findings if "negative:unsupported-methods" in f["checks"] and _status(f["actual"]) == 405]
    assert not demanded, [f["message"] for f in demanded]
    # RFC 9110 section 5.6.1: empty list elements are ignored; a list with one is not refused for it
    empty_element = [f for f in findings if "accept-fix" in f["rule"] or "x-accept-fix" in f["message"]
                     for value in ACCEPT_FIX.findall(f["curl"])
                     if value.strip() and "" in [e.strip() for e in value.split(",")]]
    assert not empty_element, [f["message"] for f in empty_element]
    # a generated case changes only what it tests: Schemathesis' cases draw no Accept-Charset (a random one may
    # legitimately be answered 406), and no 406 is blamed on a rule
    generated = [r for r, _s, _v in exchanges if "x-schemathesis-testcaseid" in r.headers]
    assert generated and not [r for r in generated if "accept-charset" in r.headers]
    assert not [f for f in findings if _status(f["actual"]) == 406]


# Prism's real defects in a run of this seed, as its report names them: (what a bank's engineer reads, the predicate
# over the grouped findings). Each is a defect of a stateless mock answering the spec's examples.
def _canned_refusal(f) -> bool:
    """Refusals whose tppMessage path is Prism's canned example's, where the requests are wrong elsewhere (A6): one
    finding for the one cause, whichever rule each refused request broke, its sightings the refusals."""
    return (f["actual"] == "400 FORMAT_ERROR" and "naming where the request is wrong" in f["expected"]
            and f["refused_for"] == "path '/instructedAmount/amount'" and f["occurrences"] > 10
            and "'/instructedAmount/amount', but the request is wrong at " in f["message"])


DEFECTS = {
    "a canned 400 FORMAT_ERROR naming /instructedAmount/amount for a body wrong elsewhere (A6 tppMessage path)":
        _canned_refusal,
    "an amount with too many minor-unit digits accepted (amount-minor-units)":
        lambda f: f["rule"] == "amount-minor-units" and _status(f["actual"]) == 201,
    "an IBAN failing mod-97 accepted (iban-invalid)":
        lambda f: f["rule"] == "iban-invalid" and _status(f["actual"]) == 201,
    "a synthetic identity number with wrong control digits accepted (psu-identity-invalid)":
        lambda f: f["rule"] == "psu-identity-invalid" and _status(f["actual"]) == 201,
    "ids nobody issued read with 200 (A28, stateful:unknown-ids)":
        lambda f: "stateful:unknown-ids" in f["checks"] and f["rule"] == "resource-unknown"
        and f["expected"].startswith("404") and _status(f["actual"]) == 200,
    "a payment read back as another payment (A4, stateful:read-back)":
        lambda f: f["rule"] == "payment-read-back" and "reads back as another payment" in f["message"],
    "_links naming another resource's id than the answer's own (link-foreign-id)":
        lambda f: f["rule"] == "link-foreign-id" and "names paymentId" in f["message"],
    "a DELETE answered 202 whose link names another payment (link-foreign-id on deletePayment)":
        lambda f: f["rule"] == "link-foreign-id" and f["operation"] == "deletePayment" and _status(f["actual"]) == 202,
    "another TPP's payment read with 200 (A28, security:foreign-payment)":
        lambda f: f["check"] == "security:foreign-payment" and f["operation"] == "getPayment"
        and _status(f["actual"]) == 200,
    "refusals with Prism's problem+json body: one finding for the run, the A6 decision (error-body)":
        lambda f: f["rule"] == "error-body" and f["occurrences"] == 1 and "refusals of the run" in f["message"],
    "a payment's path under a service x product pair no creation path offers served, not 404 PRODUCT_UNKNOWN (A7)":
        lambda f: f["rule"] == "product-unknown" and "is not offered as bulk-payments" in f["message"]
        and _status(f["actual"]) != 404,
    "a Date left out of the signature accepted (signature-headers-incomplete, A8)":
        lambda f: f["rule"] == "signature-headers-incomplete" and _status(f["actual"]) == 201,
}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_prisms_real_defects_are_reported_with_their_rule(prism_run, defect):
    _result, data, _exchanges = prism_run
    assert [f for f in data["findings"] if DEFECTS[defect](f)], f"not reported: {defect}"


def test_an_sca_without_effect_is_not_blamed_on_prism(prism_run):
    """A35 (issue 21, point 6) needs a customer who could authorise the payment; Prism's listings show none (A32), so
    the check says so and blames nothing on a mock without an SCA page."""
    _result, data, _exchanges = prism_run
    assert not [f for f in data["findings"] if "stateful:sca-without-effect" in f["checks"]]
    outcomes = [o for o in data["outcomes"] if o["check"] == "stateful:sca-without-effect"]
    assert outcomes and {o["status"] for o in outcomes} <= {"passed", "not-exercised"}
