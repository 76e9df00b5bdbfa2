"""Defects an implementation nobody here wrote showed the gate missing (issue 17, section 5), each planted by a fault
switch of the reference sandbox: the check written for it catches the switch with evidence that shows the defect,
and passes on the faithful sandbox. Also what needs no switch: the judgement of a refusal's path and of links on
their own, a target whose creations all fail (setup failed: not exercised, the unknown-id reads still judged), and a
target answering at random (one finding marked not reproducible, never an error)."""
from __future__ import annotations

import json
import random
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from conformance.gate.model import SUITES
from conformance.exchange.reasons import points_at, reason_problem, reason_unjudged
from conformance.exchange.responses import ResponseKinds
from conformance.gate.runner import RunOptions, run
from conformance.gate.session import NOT_REPRODUCIBLE, Identities
from conformance.gate.target import ReferenceServer
from conformance.sandbox import faults as F
from validator import Validator
from validator.findings import ERROR, Finding
from validator.spec import load_spec


@pytest.fixture(scope="module")
def identities() -> Identities:
    return Identities.throwaway()


def gate(url: str, checks: tuple[str, ...], identities: Identities, max_examples: int = 1):
    return run(RunOptions(url, SUITES, identities=identities, seed=0, max_examples=max_examples, checks=checks))


def against_reference(faults, checks, identities):
    server = ReferenceServer(faults=faults).start()
    try:
        return gate(server.url, checks, identities)
    finally:
        server.stop()


def describe(result) -> str:
    return "\n".join(f"{f.check} [{f.operation}] {f.rule} ({f.ref}): {f.message} (expected {f.expected}, actual "
                     f"{f.actual})" for f in result.findings) or "(no findings)"


# switch -> (the checks written for it, what a finding that shows the defect carries: its rule and words of its message)
CAUGHT = {
    F.REFUSAL_PATH_ELSEWHERE: (("semantic:iban-invalid", "semantic:amount-minor-units"), "iban-invalid",
                               ("/creditorName", "another reason", "/body/creditorAccount/iban")),
    F.DETAIL_OTHER_PAYMENT: (("stateful:read-back",), "payment-read-back", ("reads back as another payment",
                                                                             "created as")),
    F.DETAIL_AMOUNT_AS_SENT: (("stateful:read-back",), "response-amount-digits",
                              ("getPayment", "NOK amounts carry exactly 2 fraction digits, got 0")),
    F.CANCELLATION_202_UNKNOWN_LINK: (("stateful:cancellation",), "link-unresolved",
                                      ("cancellation-authorisations", "no operation of the spec")),
    F.UNKNOWN_ID_READABLE: (("stateful:unknown-ids",), "resource-unknown", ("an id nobody issued", "answered 200")),
    F.STATUS_LINK_UNRESOLVED: (("stateful:read-back",), "link-unresolved", ("/_links/status", "/state")),
    F.SIGNED_HEADERS_PARTIAL: (("security:header-unsigned",), "signature-headers-incomplete",
                               ("psu-id present but left out of the signature",)),
}


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_each_missed_defect_is_caught_with_evidence(name, identities):
    checks, rule, words = CAUGHT[name]
    faithful = against_reference((), checks, identities)
    assert not faithful.findings, describe(faithful)
    assert not [o for o in faithful.outcomes if o.status != "passed"], [(o.check, o.reason) for o in faithful.outcomes]
    broken = against_reference((name,), checks, identities)
    showing = [f for f in broken.findings if f.rule == rule and all(w in f.message for w in words)]
    assert showing, f"{name}: no {rule} finding saying {words}:\n{describe(broken)}"
    assert not [o for o in broken.outcomes if o.status == "error"]


def test_pdng_cancellation_is_judged_on_a_payment_the_sca_form_made_pdng(identities):
    result = against_reference((F.PDNG_DELETION_ALLOWED,), ("stateful:cancellation",), identities)
    assert [f for f in result.findings if "deleting a PDNG payment answered 204" in f.message], describe(result)


def test_the_headers_left_unsigned_are_the_specs_and_the_verifiers():
    from validator.signing.rules import PROFILE_SIGNED_HEADERS

    spec = load_spec()
    assert tuple(spec.document["components"]["parameters"]["Signature"]["x-signed-headers"]) == PROFILE_SIGNED_HEADERS


# ---------------------------------------------------------------- the refusal's path (A6) on its own
def _finding(pointer: str) -> Finding:
    return Finding("iban-invalid", ERROR, pointer, "bad", "FORMAT_ERROR", 400)


def _refusal(*paths) -> bytes:
    return json.dumps({"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR", **({"path": p} if p else {})}
                                       for p in paths]}).encode()


@pytest.mark.parametrize("path, pointer, points", [
    ("/creditorAccount/iban", "/body/creditorAccount/iban", True),
    ("/creditorAccount", "/body/creditorAccount/iban", True),          # the place, named less precisely
    ("creditorAccount.iban", "/body/creditorAccount/iban", True),      # dotted
    ("/payments/0/instructedAmount", "/body/payments/0/instructedAmount/amount", True),
    ("payments[0].instructedAmount.amount", "/body/payments/0/instructedAmount/amount", True),
    ("/", "/body/creditorAccount/iban", True),                         # the whole body
    ("/instructedAmount/amount", "/body/creditorAccount/iban", False),
    ("/payments/1/instructedAmount", "/body/payments/0/instructedAmount/amount", False),
    ("/headers/PSU-ID", "/headers/PSU-ID", True),
    ("psu-id", "/headers/PSU-ID", True),
    ("/creditorName", "/headers/PSU-ID", False),
    ("/", "/headers/PSU-ID", False),
    ("/creditorName", "/path", None),                                  # no form to compare
])
def test_a_refusal_path_points_at_the_place_or_not(path, pointer, points):
    assert points_at(path, pointer) is points


def test_a_refusal_for_another_reason_is_a_problem_and_no_path_is_judged_by_status_and_code_alone():
    wrong = [_finding("/body/creditorAccount/iban")]
    assert "another reason" in reason_problem(_refusal("/instructedAmount/amount"), wrong)
    assert reason_problem(_refusal("/instructedAmount/amount", "/creditorAccount/iban"), wrong) is None
    assert reason_problem(_refusal(None), wrong) is None
    bulk = json.dumps({"id": "x", "system": "bulk-payments", "status": 400, "code": "FORMAT_ERROR",
                       "message": "no"}).encode()
    assert reason_problem(bulk, wrong) is None
    assert "only its status and code are judged" in reason_unjudged(bulk)
    assert reason_unjudged(_refusal("/creditorAccount/iban")) == ""


# ---------------------------------------------------------------- links on their own
@pytest.fixture(scope="module")
def kinds() -> ResponseKinds:
    spec = load_spec()
    return ResponseKinds(spec, Validator(spec=spec), base_path="/api")


def _links(**links) -> dict:
    return {name: {"href": href, "verbs": ["GET"]} for name, href in links.items()}


def test_links_resolve_to_operations_of_the_spec_with_the_answers_own_ids(kinds):
    creation = "/v1/payments/sepa-credit-transfers"
    own = "/v1/payments/sepa-credit-transfers/P1"
    good = {"paymentId": "P1", "transactionStatus": "RCVD", "_links": _links(
        self=own, status="https://bank.example/api" + own + "/status", startAuthorisation=own + "/authorisations")}
    assert kinds.link_problems(creation, {}, json.dumps(good).encode()) == []
    wrong = {**good, "_links": _links(status=own + "/state", startAuthorisation="/v1/payments/sepa-credit-transfers/P2"
                                                                                "/authorisations")}
    problems = kinds.link_problems(creation, {}, json.dumps(wrong).encode())
    assert [p.rule for p in problems] == ["link-unresolved", "link-foreign-id"], problems
    assert "P2" in problems[1].message
    # the request's own id counts as the answer's (a status read linking to another payment)
    status = {"transactionStatus": "RCVD", "_links": _links(self="/v1/payments/sepa-credit-transfers/P2")}
    assert [p.rule for p in kinds.link_problems(own + "/status", {"paymentId": "P1"}, json.dumps(status).encode())] \
        == ["link-foreign-id"]


def test_the_sca_page_link_is_exempt_by_the_spec(kinds):
    started = {"scaStatus": "started", "authorisationId": "A1",
               "_links": _links(scaRedirect="https://bank.example/sca/abc",
                                scaStatus="/v1/payments/sepa-credit-transfers/P1/authorisations/A1")}
    assert kinds.page_links == {"scaRedirect"}
    assert kinds.link_problems("/v1/payments/sepa-credit-transfers/P1/authorisations", {"paymentId": "P1"},
                               json.dumps(started).encode()) == []


def test_links_the_spec_says_lead_outside_its_operations_are_not_judged(kinds):
    """The document requires an agreement's self and engagements links but has no agreement operation."""
    customer = {"customerId": "C1", "_links": _links(self="/v1/sandbox/customers/C1"),
                "agreements": [{"id": "G1", "_links": _links(self="/v1/sandbox/agreements/G1",
                                                             engagements="/v1/sandbox/agreements/G1/engagements")}]}
    body = json.dumps(customer).encode()
    assert kinds.problems("POST", "/v1/sandbox/customers", 201, "application/json", body)
    assert not [p for p in kinds.problems("POST", "/v1/sandbox/customers", 201, "application/json", body)
                if p.rule.startswith("link-")]
    customer["_links"] = _links(self="/v1/sandbox/clients/C1")  # the customer's own link is judged
    assert [p.rule for p in kinds.problems("POST", "/v1/sandbox/customers", 201, "application/json",
                                           json.dumps(customer).encode()) if p.rule.startswith("link-")] \
        == ["link-unresolved"]


def test_every_link_in_the_specs_examples_resolves(kinds):
    spec = kinds.spec
    for op in spec.operations.values():
        for status, response in op.responses.items():
            response = spec.deref(response) if "$ref" in response else response
            examples = (response.get("content") or {}).get("application/json", {}).get("examples") or {}
            for name, example in examples.items():
                problems = [p for p in kinds.link_problems(op.path, {}, json.dumps(example.get("value")).encode())
                            if p.rule == "link-unresolved"]
                assert not problems, f"{op.operation_id} {status} {name}: {problems}"


# ---------------------------------------------------------------- targets nobody here wrote
class App:
    """A Starlette app served on a free loopback port for the duration of a test."""

    def __init__(self, handler) -> None:
        self.app = Starlette(routes=[Route("/{path:path}", handler, methods=["GET", "POST", "PUT", "DELETE",
                                                                              "PATCH"])])
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="error", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _error(status: int, code: str) -> JSONResponse:
    return JSONResponse({"tppMessages": [{"category": "ERROR", "code": code}]}, status_code=status)


async def refuses_creations(request):
    """Refuses every creation (no setup can happen) and knows no id (404 RESOURCE_UNKNOWN)."""
    if request.method == "POST":
        return _error(400, "FORMAT_ERROR")
    return _error(404, "RESOURCE_UNKNOWN")


def test_a_check_whose_setup_failed_is_not_exercised_and_unknown_ids_are_judged_anyway(identities):
    with App(refuses_creations) as url:
        result = gate(url, ("stateful:read-back", "stateful:unknown-ids", "security:foreign-payment"), identities)
    assert not [o for o in result.outcomes if o.status == "error"], [o.reason for o in result.outcomes]
    setup = {(o.check, o.reason) for o in result.outcomes if o.status == "not-exercised"}
    assert any(c == "stateful:read-back" and "setup failed" in r for c, r in setup), setup
    assert any(c == "security:foreign-payment" and "setup failed" in r for c, r in setup), setup
    assert any(c == "stateful:unknown-ids" and "setup failed" in r for c, r in setup), setup
    judged = [o for o in result.outcomes if o.check == "stateful:unknown-ids" and o.status == "passed"]
    assert {o.operation for o in judged} >= {"getPayment", "getPaymentStatus", "getSigningBasket"}
    assert not [f for f in result.findings if f.check != "stateful:read-back"], describe(result)


CHANCE = random.Random(17)  # its own generator: Hypothesis seeds the global one for every example it runs


async def answers_at_random(request):
    """A target that answers the same request one way or the other (as Prism's dynamic mode does)."""
    if request.method == "POST" and CHANCE.random() < 0.5:
        return JSONResponse({"paymentId": f"P{CHANCE.randrange(10**6)}", "transactionStatus": "RCVD"},
                            status_code=201)
    return _error(400, "FORMAT_ERROR")


def test_a_target_answering_at_random_gives_a_finding_marked_not_reproducible_never_an_error(identities):
    with App(answers_at_random) as url:
        result = gate(url, ("semantic:amount-minor-units", "semantic:iban-invalid", "schema:generated-requests",
                            "stateful:links"), identities, max_examples=25)
    assert not [o for o in result.outcomes if o.status == "error"], [o.reason for o in result.outcomes
                                                                      if o.status == "error"]
    marked = [f for f in result.findings if NOT_REPRODUCIBLE in f.message]
    assert marked, describe(result)
    per_check = {}
    for f in [f for f in result.findings if f.check.startswith("semantic:")]:  # one shrunk finding per search
        per_check.setdefault((f.check, f.operation, f.rule), []).append(f)
    assert all(len(v) == 1 for v in per_check.values()), describe(result)


async def sca_page_nowhere(request):
    """Creates payments and starts authorisations whose SCA page is at a host name no resolver takes; its test data
    is one customer with one EUR account (A32: the gate finds the payer in the listings)."""
    path = request.url.path
    if path == "/v1/sandbox/customers":
        return JSONResponse([{"customerId": "C1", "customerNumber": "01010112345", "customerType": "private",
                              "customerName": "Kari Nordmann", "agreements": [], "accounts": ["ACC1"],
                              "cardAccounts": [], "_links": {"self": {"href": path + "/C1", "verbs": ["GET"]}}}])
    if path == "/v1/sandbox/accounts/ACC1/transactions":
        return JSONResponse([{"debtorName": "Kari Nordmann", "debtorAccount": {"iban": "NO9386011117947"},
                              "creditorName": "Ola", "creditorAccount": {"iban": "DE89370400440532013000"},
                              "currency": "EUR", "amount": "10.00"}])
    if request.method == "POST" and path.endswith("/authorisations"):
        return JSONResponse({"scaStatus": "started", "authorisationId": "A1", "_links": {
            "scaRedirect": {"href": "https://" + "x" * 70 + ".example/sca", "verbs": ["GET"]},
            "scaStatus": {"href": path + "/A1", "verbs": ["GET"]}}}, status_code=201)
    if request.method == "POST":
        return JSONResponse({"paymentId": "P1", "transactionStatus": "RCVD"}, status_code=201)
    if request.method == "DELETE":
        return _error(409, "CONFLICT")
    return JSONResponse({"transactionStatus": "RCVD"})


def test_an_sca_page_that_cannot_be_reached_is_the_targets_finding_not_an_error(identities):
    """The page's host is allowed (--allow-origin) but no resolver takes it; not allowed, it is link-off-target."""
    with App(sca_page_nowhere) as url:
        result = run(RunOptions(url, SUITES, identities=identities, seed=0, max_examples=1,
                                checks=("stateful:cancellation", "stateful:lifecycle"),
                                allowed_origins=("https://" + "x" * 70 + ".example",)))
        elsewhere = gate(url, ("stateful:lifecycle",), identities)
    assert not [o for o in result.outcomes if o.status == "error"], [o.reason for o in result.outcomes]
    assert [f for f in result.findings if f.ref == "A24" and "could not be reached" in f.message], describe(result)
    assert [f.rule for f in elsewhere.findings if f.ref == "A24"] == ["link-off-target"], describe(elsewhere)
