"""The lifecycle of A23-A32 driven over HTTP: creation, authorisation through the SCA page (submitted as a browser
would), batch runs, lack of funds, baskets, cancellation in each state, X-Request-ID replay, logical duplicates,
pagination and concurrent creations. Expected answers come from the validator (basket rules with the payments the
target holds as context; the basket's worst-case status, A2) and from the spec's data (``x-cancellation``,
``x-sca-page``). Sandbox-only operations (batch runs, sandbox data) are used where the target has them; what needs
them is "not exercised" elsewhere.
"""
from __future__ import annotations

import html
import json
import re
import threading
import uuid
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from conformance.client import SignedClient
from conformance.exchange.basis import document_codes
from validator.context import Context, PaymentFacts

from ..model import STOPPED_EARLY, Expected, NotExercised, check, reason, said
from conformance.exchange.origins import OffTarget
from ..session import Exchange, Session
from .reads import NOT_THERE, RESOURCE_UNKNOWN, read_back
from .semantic import CONTROL
from .data import (BULK, LACK_OF_FUNDS_AMOUNT, PERIODIC, REDIRECT, SEPA, SESSION_ID, UNKNOWN_REFERENCE, bulk_body,
                   sandbox_resources, sepa_body)

CREATED = Expected((201,), why="a creation answers 201 (Endpoints; A15)")
# The rules the steps every scenario shares judge by (rules.py), whichever scenario takes them.
PAYMENT_CREATED, PAYMENT_LIFECYCLE = "payment-created", "payment-lifecycle"
AUTHORISE_HEADERS = {"TPP-Redirect-URI": REDIRECT, "TPP-Session-ID": SESSION_ID}
DUPLICATES_ALLOWED = {"allowLogicalDuplicate": "true"}


class Broken(Exception):
    """A step the scenario depends on failed (already reported as a finding): stop the scenario."""


def _json(exchange: Exchange) -> dict:
    return exchange.object()


def create(session: Session, client: SignedClient, operation: str, body: dict, *, ref: str = "A23", **options) -> str:
    """A payment created (201 RCVD, A23); its id."""
    options.setdefault("query", DUPLICATES_ALLOWED)
    exchange = session.call(client, operation, body=body, **options)
    # A creation a scenario needs is a valid request: a wrong answer to it is the one valid-control finding of the
    # operation, whichever checks met it (each a sighting), not a new finding of each check's own rule.
    if not session.expect(exchange, CREATED, rule=CONTROL, ref=ref, message=f"{operation} answered "
                          f"{exchange.answer.describe()}, not 201"):
        if exchange.answer.status not in (200, 201):
            raise Broken(operation)
    created = _json(exchange)
    if created.get("transactionStatus") != "RCVD":
        session.disagree(exchange, rule=PAYMENT_CREATED, ref="A23", expected="transactionStatus RCVD",
                         message=f"a new payment is {said(created.get('transactionStatus'))}, not RCVD (A23)")
    if not created.get("paymentId"):
        raise Broken(operation)
    return created["paymentId"]


def sepa(session: Session, client: SignedClient, amount: str, **body) -> str:
    """A SEPA payment from the fixed EUR account created (201 RCVD); its id."""
    return create(session, client, "createSepaCreditTransfer", sepa_body(amount, **body))


def status_of(session: Session, client: SignedClient, pid: str, where: dict = SEPA) -> dict:
    exchange = session.call(client, "getPaymentStatus", path={**where, "paymentId": pid})
    return _json(exchange) if exchange.answer.status == 200 else {}


def status_unread(exchange: Exchange) -> bool:
    """A status answer (200) without its transactionStatus: the spec's judgement of the answer has reported that
    (schema-required); what a check would then say of the payment's status is a consequence of that finding, not
    a new one of its own rule -- the check judges the status only where there is one."""
    return exchange.answer.status == 200 and _json(exchange).get("transactionStatus") is None


def expect_status(session: Session, client: SignedClient, pid: str, wanted: str, *, rule: str, ref: str,
                  where: dict = SEPA, why: str = "") -> dict:
    exchange = session.call(client, "getPaymentStatus", path={**where, "paymentId": pid})
    found = _json(exchange).get("transactionStatus")
    if found != wanted and not status_unread(exchange):
        session.disagree(exchange, rule=rule, ref=ref, expected=f"transactionStatus {wanted}",
                         message=f"payment {pid} is {said(found)} {why}".strip())
    return _json(exchange)


# ---------------------------------------------------------------- the SCA page (A24), as a browser
def sca_field(session: Session) -> str:
    return session.spec.document["x-sca-page"]["post"]["fields"][0]


def authorise(session: Session, client: SignedClient, pid: str, customer_number: str, *,
              where: dict = SEPA) -> dict[str, list[str]]:
    """Start the authorisation (201 with scaRedirect), read the SCA page and submit the form; the query of the
    redirect's Location (303 or 302, A24: psu-id / tpp-session-id, or message)."""
    started = session.call(client, "startPaymentAuthorisation", path={**where, "paymentId": pid},
                           headers=AUTHORISE_HEADERS)
    if not session.expect(started, CREATED, rule=CONTROL, ref="A23",   # a valid request, as create()'s
                          message=f"starting the authorisation answered {started.answer.describe()}"):
        raise Broken("startPaymentAuthorisation")
    try:
        return submit_sca(session, started, customer_number)
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:  # the page is the target's: its finding
        session.disagree(started, rule=SCA_PAGE_RULE, ref="A24",
                         expected="the SCA page served where scaRedirect points",
                         message=f"the SCA page of the authorisation could not be reached: {type(exc).__name__}: {exc}")
        raise Broken("sca page") from None


# The gate's rules of the SCA page (A24), the same in every scenario that walks it: one defect, one finding group.
SCA_PAGE_RULE, SCA_REDIRECT_RULE = "sca-page", "sca-redirect"


def sca_redirect_statuses(session: Session) -> tuple[int, ...]:
    """The statuses a submitted SCA form may answer (A24): the profile's sca-redirect-status, else each of the
    spec's accepted ones (303, 302)."""
    post = session.spec.document["x-sca-page"]["post"]
    pinned = session.profile.sca_redirect_status
    return (pinned,) if pinned else tuple(post["accepted-statuses"])


class _HiddenInputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = {name.lower(): value or "" for name, value in attrs}
        if tag == "input" and attributes.get("type", "").lower() == "hidden" and attributes.get("name"):
            self.found.append((attributes["name"], attributes.get("value", "")))


def hidden_fields(page: str) -> list[tuple[str, str]]:
    """The hidden inputs of an HTML page (name, value), in order: what a browser submits with the form."""
    parser = _HiddenInputs()
    try:
        parser.feed(page or "")
        parser.close()
    except Exception:  # noqa: BLE001 - the page is the target's: what was read so far is what a browser would send
        pass
    return parser.found


def submit_sca(session: Session, started: Exchange, customer_number: str, *,
               form_required: bool = True) -> dict[str, list[str]] | None:
    """The page read and its form submitted: the query of the redirect. ``form_required`` False: a page that offers
    no form (an error page, or one saying there is nothing to authorise) is None, not a finding (A35)."""
    links = _json(started).get("_links")
    link = links.get("scaRedirect") if isinstance(links, dict) else None
    href = link.get("href") if isinstance(link, dict) else None
    if not isinstance(href, str) or not href:
        session.disagree(started, rule=SCA_PAGE_RULE, ref="A24", expected="_links.scaRedirect.href",
                         message="the authorisation has no scaRedirect link")
        raise Broken("scaRedirect")
    try:   # the walk goes only where the run may send requests (origins.py): a link elsewhere is a finding
        url = session.origins.follow(href, session.base_url.rstrip("/") + started.request.target,
                                     f"_links.scaRedirect.href of {started.operation}'s answer")
    except OffTarget as off:
        session.off_target(off, started, ref="A24")
        raise Broken("scaRedirect") from None
    with session.pool.client() as browser:
        try:
            page = browser.get(url)
        except httpx.HTTPError as exc:  # a link to a page nobody serves (a mock's example host): a finding
            failure = session.tls_failure(exc, url)
            if failure:  # the run's TLS, not the page: the run ends saying so
                raise failure from None
            session.disagree(started, rule=SCA_PAGE_RULE, ref="A24", expected="the SCA page at _links.scaRedirect",
                             message=f"the SCA page {url} could not be reached: {type(exc).__name__}: {exc}")
            raise Broken("sca page") from None
        field = sca_field(session)
        form = re.search(r'<form[^>]*action="([^"]*)"', page.text or "")
        if page.status_code != 200 or not page.headers.get("content-type", "").startswith("text/html") or not form \
                or f'name="{field}"' not in page.text:
            if not form_required:
                return None
            session.disagree(None, rule=SCA_PAGE_RULE, ref="A24", expected=f"200 text/html with a form field {field}",
                             message=f"the SCA page {url} answered {page.status_code} "
                                     f"{page.headers.get('content-type', '')} without the form",
                             operation="sca-page", response=page)
            raise Broken("sca page")
        try:
            action = session.origins.follow(html.unescape(form.group(1)), url, f"the form action of the SCA page {url}")
        except OffTarget as off:
            session.off_target(off, operation="sca-page", ref="A24", response=page)
            raise Broken("sca form") from None
        # as a browser: the form's hidden fields go back as the page gave them (an anti-CSRF token, A37)
        sent = urlencode([*hidden_fields(page.text), (field, customer_number)]).encode()
        answer = browser.post(action, content=sent, headers={"Content-Type": "application/x-www-form-urlencoded"})
    location = answer.headers.get("location", "")
    statuses = sca_redirect_statuses(session)
    if answer.status_code not in statuses or not location.startswith(REDIRECT.split("?")[0]):
        wanted = " or ".join(map(str, statuses))
        pinned = " (the profile's sca-redirect-status)" if session.profile.sca_redirect_status else ""
        session.disagree(None, rule=SCA_REDIRECT_RULE, ref="A24", expected=f"{wanted}{pinned} to the TPP-Redirect-URI",
                         message=f"submitting the SCA form answered {answer.status_code} "
                                 f"{'to ' + repr(location) if location else 'without a Location'}, not {wanted}"
                                 f"{pinned} to the TPP-Redirect-URI", operation="sca-page", response=answer)
        raise Broken("sca form")
    return parse_qs(urlsplit(location).query)


def batch_run(session: Session, client: SignedClient) -> dict:
    exchange = session.require(client, "runSandboxBatch", body=None)
    return _json(exchange)


def scenario(check_id: str, *, rule: str, title: str, refs: tuple[str, ...]):
    """Register a scenario judging by ``rule`` (rules.py, or the validator's catalogue: what it sees is filed under
    that rule, not the check's id); a failed step it depends on ends it (the finding is already recorded)."""
    def register(function):
        def run(session: Session) -> None:
            try:
                function(session, rule)
            except Broken as step:   # what follows the failed step was not judged: the outcome says so
                stopped = session.outcome("-")
                stopped.status = "not-exercised"
                stopped.reason = reason(STOPPED_EARLY, f"at {step} (its finding says why); the steps after it were "
                                                       "not judged")
        check(check_id, suite="stateful", title=title, refs=refs)(run)
        return function
    return register


# ---------------------------------------------------------------- scenarios
@scenario("stateful:lifecycle", rule="payment-lifecycle",
          title="create, status, detail, SCA over HTTP, PDNG, batch run, ACSC, booking",
          refs=("A3", "A4", "A23", "A24", "A25", "A32", "States and transitions"))
def lifecycle(session: Session, rule: str) -> None:
    tpp = session.client()
    resources = sandbox_resources(session)
    payer = resources.payer(session, "EUR", "iban")  # A32: an EUR account of the target's own data, and its owner
    text = f"obvalidate lifecycle {session.seed}"
    # A bank's sandbox keeps the bookings of earlier runs (the same seed sends the same remittance, and must send the
    # same cases): the payment's booking is the one more than were there before it was created.
    before = len(_booked(session, tpp, resources, payer, text))
    body = sepa_body("31.00", text=text, debtor=payer.as_debtor())
    pid = create(session, tpp, "createSepaCreditTransfer", body)
    expect_status(session, tpp, pid, "RCVD", rule=rule, ref="A23")
    read_back(session, session.call(tpp, "getPayment", path={**SEPA, "paymentId": pid}), pid, body)
    redirect = authorise(session, tpp, pid, payer.owner)
    if "psu-id" not in redirect:
        session.disagree(None, rule=rule, ref="A24", expected="psu-id in the redirect",
                         message=f"the owner of the debtor account was not authorised: {redirect}", operation="sca-page")
    expect_status(session, tpp, pid, "PDNG", rule=rule, ref="A24", why="after a successful SCA")
    tpp_run = batch_run(session, tpp)
    if pid not in tpp_run.get("executed", []):
        session.disagree(None, rule=rule, ref="A25", expected=f"{pid} executed",
                         message=f"the batch run did not execute the PDNG payment: {tpp_run}", operation="runSandboxBatch")
    expect_status(session, tpp, pid, "ACSC", rule=rule, ref="A25", why="after the batch run")
    booked = len(_booked(session, tpp, resources, payer, text)) - before
    if booked != 1:
        earlier = f" (besides the {before} of earlier runs)" if before else ""
        session.disagree(None, rule=rule, ref="A25", expected="one booked transaction on the debtor account",
                         message=f"{booked} transactions carry the payment's remittance {text!r}{earlier}",
                         operation="listSandboxAccountTransactions")


def _booked(session: Session, tpp: SignedClient, resources, payer, text: str) -> list[dict]:
    """The transactions of the payer's accounts whose remittance is ``text``."""
    booked = []
    for account in resources.accounts_of(payer.owner):
        listed = session.call(tpp, "listSandboxAccountTransactions", path={"mockAccountId": account})
        if listed.answer.status == 200 and isinstance(listed.json(), list):
            booked += [t for t in listed.json() if isinstance(t, dict)
                       and t.get("remittanceInformationUnstructured") == text]
    return booked


@scenario("stateful:lack-of-funds", rule="funds-unavailable-rejected",
          title="lack of funds: RJCT, fundsAvailable false, PAYMENT_FAILED, never 500",
          refs=("A24", "Errors 4"))
def lack_of_funds(session: Session, rule: str) -> None:
    tpp = session.client()
    payer = sandbox_resources(session).payer(session, "NOK", "bban")  # paying far more than it holds (A24)
    pid = create(session, tpp, "createBulkPayment", bulk_body(LACK_OF_FUNDS_AMOUNT, debtor=payer.as_debtor(),
                                                              text="Tomt"))
    authorise(session, tpp, pid, payer.owner, where=BULK)
    # A24: where the lack of funds shows -- the document states the flag, not the moment (profile lack-of-funds)
    after_sca = status_of(session, tpp, pid, BULK).get("transactionStatus")
    observed = {"RJCT": "at-sca", "PDNG": "at-batch-run"}.get(after_sca)
    differs = session.choice_differs("lack-of-funds", "A24", observed, session.profile.lack_of_funds)
    if (observed if differs else session.profile.lack_of_funds) == "at-batch-run":
        expect_status(session, tpp, pid, "PDNG", rule=rule, ref="A24", where=BULK,
                      why="after the SCA (lack-of-funds: at-batch-run: the batch run rejects it)")
        batch_run(session, tpp)
    failures = len(session.outcome("getPaymentStatus").findings)
    status = expect_status(session, tpp, pid, "RJCT", rule=rule, ref="A24", where=BULK,
                           why="after an SCA without funds" if observed == "at-sca" else "after the batch run")
    if differs and len(session.outcome("getPaymentStatus").findings) == failures \
            and status.get("fundsAvailable") is False:
        exchange = session.call(tpp, "getPaymentStatus", path={**BULK, "paymentId": pid})
        session.disagree(exchange, rule=rule, ref="A24", choice=differs,
                         expected="RJCT with fundsAvailable false when the SCA completes (A24)",
                         message="a payment without funds was authorised (PDNG) and rejected by the batch run "
                                 "(RJCT, fundsAvailable false)")
    if status and status.get("fundsAvailable") is not False:
        session.disagree(None, rule=rule, ref="A24", expected="fundsAvailable false",
                         message=f"fundsAvailable is {said(status.get('fundsAvailable'))}", operation="getPaymentStatus")
    again = session.call(tpp, "startPaymentAuthorisation", path={**BULK, "paymentId": pid}, headers=AUTHORISE_HEADERS)
    session.expect(again, Expected((400,), ("PAYMENT_FAILED",)), rule=rule, ref="A24, Errors 4",
                   message=f"authorising a payment rejected for lack of funds answered {again.answer.describe()}")


def _facts(session: Session, client: SignedClient, ids: dict[str, dict]) -> Context:
    """The payments a basket names as the target reports them, for the validator's basket rules."""
    payments = {}
    for pid, where in ids.items():
        status = status_of(session, client, pid, where).get("transactionStatus", "RCVD")
        payments[pid] = PaymentFacts(where["payment-service"], where["payment-product"], status)
    return Context(payments=payments)


def basket(session: Session, client: SignedClient, ids: dict[str, dict], *, rule: str, ref: str) -> Exchange:
    """Create a basket of ``ids``; the validator, knowing the payments, predicts the answer."""
    context = _facts(session, client, ids)
    request = client.prepare("createSigningBasket", body={"paymentIds": list(ids)})
    expected, errors = session.predict(request, success=(201,), context=context)
    exchange = session.send(client, request, "createSigningBasket")
    session.expect(exchange, expected, rule=errors[0].rule if errors else rule, ref=ref, errors=errors,
                   message=f"a basket of {len(ids)} payments: expected {expected.describe()} ({expected.why}), "
                           f"the target answered {exchange.answer.describe()}")   # a refusal's path too (A6)
    if exchange.answer.status == 201:
        _worst_case(session, exchange, context, rule)
    return exchange


def _worst_case(session: Session, exchange: Exchange, context: Context, rule: str) -> None:
    """A2: the basket's status is the worst case of its payments (the validator's basket-status-worst-case rule
    with the payments as context), at creation and from the status operation."""
    v = session.validator_at(session.now(), context)
    basket_id = _json(exchange).get("basketId")
    answers = [(exchange, "signing-basket-response")]
    if basket_id:
        answers.append((session.call(session.client(), "getSigningBasketStatus", path={"basketId": basket_id}),
                        "signing-basket-status"))
    for answer, kind in answers:
        if answer.answer.status != 200 and answer is not exchange:
            continue
        findings = [f for f in v.validate_loaded(answer.decoded.loaded, kind).findings
                    if f.rule == "basket-status-worst-case"]
        session.exercised_rules.add("basket-status-worst-case")
        for f in findings:
            session.disagree(answer, rule=f.rule, ref=f.ref or "A2", expected="the worst case of its payments",
                             message=f.message)


@scenario("stateful:basket-worst-case", rule="basket-status-worst-case",
          title="a basket's status is the worst case of its payments",
          refs=("A2", "A1"))
def basket_worst_case(session: Session, rule: str) -> None:
    tpp = session.client()
    payer = sandbox_resources(session).payer(session, "EUR", "iban")
    authorised = sepa(session, tpp, "41.00", debtor=payer.as_debtor())
    waiting = sepa(session, tpp, "42.00")
    authorise(session, tpp, authorised, payer.owner)
    basket(session, tpp, {authorised: SEPA, waiting: SEPA}, rule=rule, ref="A2")


@scenario("stateful:basket-size", rule="basket-size",
          title="a basket holds at most 10 payments", refs=("Limits", "A1"))
def basket_size(session: Session, rule: str) -> None:
    tpp = session.client()
    ids = {sepa(session, tpp, f"{50 + i}.00"): SEPA for i in range(11)}
    basket(session, tpp, dict(list(ids.items())[:10]), rule=rule, ref="Limits")
    basket(session, tpp, ids, rule=rule, ref="Limits")


@scenario("stateful:basket-reference-mix", rule="basket-reference-mix",
          title="bulk and periodic payments cannot be in a basket",
          refs=("A1", "Errors"))
def basket_reference_mix(session: Session, rule: str) -> None:
    tpp = session.client()
    single = sepa(session, tpp, "61.00")
    bulk = create(session, tpp, "createBulkPayment", bulk_body("62.00"))
    basket(session, tpp, {single: SEPA, bulk: BULK}, rule=rule, ref="A1")
    periodic_body = {**bulk_body("63.00")["payments"][0], "debtorAccount": bulk_body("63.00")["debtorAccount"],
                     "startDate": session.today().isoformat(), "frequency": "Monthly"}
    if session.unavailable("createPeriodicPayment"):
        return  # A31: not offered (the profile says so); the bulk half above still ran
    periodic = session.call(tpp, "createPeriodicPayment", body=periodic_body, query=DUPLICATES_ALLOWED)
    if periodic.answer.status == 201:
        basket(session, tpp, {single: SEPA, _json(periodic)["paymentId"]: PERIODIC}, rule=rule, ref="A31")


def _cancellation(session: Session) -> dict:
    return session.spec.operation("deletePayment").raw["x-cancellation"]


def cancellation_refused(session: Session) -> Expected:
    """A DELETE the payment's state refuses (A5, A27): the profile's cancellation-refused, else the spec's 409 CONFLICT;
    the document says only that it "yields an error message", so another 4xx with a code of its code set is a
    difference from A5 unless the profile states the key or pins A5."""
    decided = _cancellation(session)["refused"]
    chosen = session.profile.cancellation_refused
    status = (chosen.status if chosen and chosen.status else None) or decided["status"]
    code = (chosen.code if chosen and chosen.code else None) or decided["code"]
    readings = () if session.profile.states("cancellation-refused") or session.profile.pins("A5") else (
        Expected(tuple(range(400, 500)), document_codes(session.spec), decision="A5",
                 profile_line="cancellation-refused: {status: {status}, code: {code}}"),)
    return Expected((status,), (code,), "A5, A27", readings=readings)


@scenario("stateful:cancellation", rule="cancellation",
          title="cancellation in each state (RCVD 204 then CANC, or 202 with links to "
          "authorise it; PDNG, reached through the SCA page, and every other state 409)", refs=("A4", "A5", "A27"))
def cancellation(session: Session, rule: str) -> None:
    cancel = _cancellation(session)
    refused = cancellation_refused(session)
    tpp = session.client()
    resources = sandbox_resources(session)
    payer = resources.payer(session, "EUR", "iban")

    def delete(pid: str, state: str) -> int | None:
        wanted = Expected((204, 202)) if state in cancel["cancellable"] else refused
        exchange = session.call(tpp, "deletePayment", path={**SEPA, "paymentId": pid})
        session.expect(exchange, wanted, rule=rule, ref="A5, A27",
                       message=f"deleting a {state} payment answered {exchange.answer.describe()}, "
                               f"expected {wanted.describe()}")
        if state in cancel["cancellable"] and exchange.answer.status == 204:
            expect_status(session, tpp, pid, cancel["becomes"], rule=rule, ref="A27", why="after deletion")
        if state in cancel["cancellable"] and exchange.answer.status == 202 and not _json(exchange).get("_links"):
            # A4: 202 only when the cancellation needs authorisation, and then its links say where (each link is
            # judged, as every answer's, to lead to an operation of the spec)
            session.disagree(exchange, rule=rule, ref="A4, A27", expected="204, or 202 with _links to authorise "
                             "the cancellation", message=f"deleting a {state} payment answered 202 without _links")
        return exchange.answer.status

    received = sepa(session, tpp, "71.00")
    if delete(received, "RCVD") == 204:  # after a 202 the cancellation waits for its authorisation: not CANC yet
        delete(received, cancel["becomes"])
    pending = sepa(session, tpp, "72.00", debtor=payer.as_debtor())
    authorise(session, tpp, pending, payer.owner)
    reached = status_of(session, tpp, pending).get("transactionStatus")
    if reached is None:   # no status to read (an answer without one is the spec's finding): nothing judged here
        pass
    elif reached != "PDNG":  # Errors 8 is judged on a PDNG payment only
        session.disagree(None, rule=PAYMENT_LIFECYCLE, ref="A24, Errors 8",
                         expected="transactionStatus PDNG after the SCA",
                         message=f"the payment authorised by its debtor account's owner is {said(reached)}: deleting a "
                                 "PDNG payment could not be tried", operation="getPaymentStatus")
    else:
        delete(pending, "PDNG")
    rejected = sepa(session, tpp, "73.00", debtor=payer.as_debtor())
    authorise(session, tpp, rejected, resources.stranger(payer.owner))  # not the owner: RJCT (A24)
    delete(rejected, "RJCT")
    batch_run(session, tpp)  # executes the PDNG one (sandbox only)
    delete(pending, "ACSC")


@scenario("stateful:request-id-replay", rule="request-id-replay",
          title="a repeated X-Request-ID as the profile's request-id-replay says (ours: "
          "the same request answers the first response, another request with it is 409)", refs=("A29", "A17"))
def request_id_replay(session: Session, rule: str) -> None:
    """A29 by the profile: first-response (ours), new-request (the id detects nothing: each request is handled as
    new), conflict (any repeat is 409 CONFLICT). allowLogicalDuplicate=true keeps A30 out of it."""
    tpp = session.client()
    request_id = str(uuid.UUID(int=session.seed * 7919 + 29))
    headers = {"X-Request-ID": request_id}
    choice = session.profile.request_id_replay
    ref = "A29" if choice == "first-response" else "A29 (profile request-id-replay: " + choice + ")"
    body = sepa_body("81.00")
    first = session.call(tpp, "createSepaCreditTransfer", body=body, headers=headers, query=DUPLICATES_ALLOWED)
    again = session.call(tpp, "createSepaCreditTransfer", body=body, headers=headers, query=DUPLICATES_ALLOWED)
    other = session.call(tpp, "createSepaCreditTransfer", body=sepa_body("82.00"), headers=headers,
                         query=DUPLICATES_ALLOWED)
    conflict = Expected((409,), ("CONFLICT",))
    first_id, again_id = _json(first).get("paymentId"), _json(again).get("paymentId")
    differs = session.choice_differs("request-id-replay", "A29", _replay_choice(first, again, other), choice)
    if differs:  # the target follows another choice of A29 than the profile states (none stated): a difference
        session.disagree(again, rule=rule, ref="A29", choice=differs, expected="the first response again, "
                         "another request with the id 409 CONFLICT (A29)", message=f"a repeated X-Request-ID: the "
                         f"same request answered {again.answer.describe()} (paymentId {said(again_id)}, the first "
                         f"{said(first_id)}), another request {other.answer.describe()}")
        return
    if choice == "first-response":
        if (first.answer.status, _json(first)) != (again.answer.status, _json(again)):
            session.disagree(again, rule=rule, ref=ref, expected=f"the first response again "
                             f"({first.answer.describe()} {first_id})", message="the repeated request was answered "
                             f"differently (paymentId {said(again_id)})")
        session.expect(other, conflict, rule=rule, ref=ref,
                       message=f"another request with a used X-Request-ID answered {other.answer.describe()}")
    elif choice == "conflict":
        session.expect(again, conflict, rule=rule, ref=ref,
                       message=f"the same request with a used X-Request-ID answered {again.answer.describe()}")
        session.expect(other, conflict, rule=rule, ref=ref,
                       message=f"another request with a used X-Request-ID answered {other.answer.describe()}")
    else:  # new-request
        if not session.expect(again, CREATED, rule=rule, ref=ref, message="the same request with a used "
                              f"X-Request-ID, handled as new, answered {again.answer.describe()}"):
            return
        if again_id == first_id:
            session.disagree(again, rule=rule, ref=ref, expected="a new payment",
                             message=f"the repeated request answered the first payment {said(first_id)} again")
        session.expect(other, CREATED, rule=rule, ref=ref, message="another request with a used X-Request-ID, "
                       f"handled as new, answered {other.answer.describe()}")


def _replay_choice(first: Exchange, again: Exchange, other: Exchange) -> str | None:
    """Which choice of A29 (request-id-replay) three answers show -- the first request, the same again, another one
    with the same X-Request-ID -- or None when they show none of them."""
    statuses = (first.answer.status, again.answer.status, other.answer.status)
    if statuses == (201, 201, 409) and _json(first) == _json(again):
        return "first-response"
    if statuses == (201, 409, 409):
        return "conflict"
    ids = {_json(e).get("paymentId") for e in (first, again, other)}
    if statuses == (201, 201, 201) and len(ids) == 3:
        return "new-request"
    return None


@scenario("stateful:unlisted-headers", rule="header-format", title="a header of the wrong format on operations outside the document's header "
          "table (a payment's status read, a basket read): refused as decided (A42), or ignored -- a difference",
          refs=("A42", "A16"))
def unlisted_headers(session: Session, rule: str) -> None:
    """A42 on resources that exist, so an implementation ignoring the header answers 200 (not 404 for an id nobody
    issued, which every reading accepts)."""
    tpp = session.client()
    pid = sepa(session, tpp, "23.00")
    reads = [("getPaymentStatus", {**SEPA, "paymentId": pid})]
    if not session.unavailable("createSigningBasket"):
        basket = session.call(tpp, "createSigningBasket", body={"paymentIds": [pid]})
        if basket.answer.status == 201 and _json(basket).get("basketId"):
            reads.append(("getSigningBasket", {"basketId": _json(basket)["basketId"]}))
    for operation, path in reads:
        if session.unavailable(operation, path):
            continue
        request = tpp.prepare(operation, path=path, headers={"PSU-ID": "not-a-uuid"})
        expected, errors = session.predict(request, success=(200,))
        exchange = session.send(tpp, request, operation)
        session.expect(exchange, expected, rule=errors[0].rule if errors else rule, ref="A42",
                       message=f"{operation} with PSU-ID 'not-a-uuid' (its operation outside the header table) "
                               f"answered {exchange.answer.describe()}")


@scenario("stateful:logical-duplicate", rule="logical-duplicate",
          title="a logical duplicate is 409 unless allowLogicalDuplicate=true",
          refs=("A30",))
def logical_duplicate(session: Session, rule: str) -> None:
    tpp = session.client()
    body = sepa_body("91.00", text=f"duplicate {session.seed}")
    create(session, tpp, "createSepaCreditTransfer", body, query={})
    duplicate = session.call(tpp, "createSepaCreditTransfer", body=body)
    refused = session.profile.logical_duplicates == "refused"   # A30 (profile: logical-duplicates)
    observed = {409: "refused", 201: "allowed"}.get(duplicate.answer.status)
    differs = session.choice_differs("logical-duplicates", "A30", observed, session.profile.logical_duplicates)
    if differs:
        session.disagree(duplicate, rule=rule, ref="A30", choice=differs, expected="409 CONFLICT (A30)",
                         message=f"a logical duplicate answered {duplicate.answer.describe()}")
    else:
        session.expect(duplicate, Expected((409,), ("CONFLICT",)) if refused else CREATED, rule=rule, ref="A30",
                       message=f"a logical duplicate answered {duplicate.answer.describe()}"
                       + ("" if refused else " (the profile allows logical duplicates)"))
    allowed = session.call(tpp, "createSepaCreditTransfer", body=body, query=DUPLICATES_ALLOWED)
    session.expect(allowed, CREATED, rule=rule, ref="A30",
                   message=f"a duplicate with allowLogicalDuplicate=true answered {allowed.answer.describe()}")


def _pages(session: Session, client: SignedClient, operation: str, path: dict, query: dict, size: int,
           items) -> list | None:
    everything = session.call(client, operation, path=path, query=query)
    if everything.answer.status != 200:
        return None
    whole = items(everything.json())
    pages, offset = [], 0
    while offset <= len(whole):
        page = session.call(client, operation, path=path, query={**query, "offset": str(offset), "limit": str(size)})
        if page.answer.status != 200:
            return None
        pages.extend(items(page.json()))
        offset += size
    return [whole, pages]


def _compare_pages(session: Session, rule: str, operation: str, found: list | None) -> None:
    if found is None:
        return
    whole, pages = found
    if pages != whole:
        extra = len(pages) - len(whole)
        missing = sum(1 for t in whole if t not in pages)
        # the counts are the target's data of the day: in the message, not in the expectation (the fingerprint)
        session.disagree(None, rule=rule, ref="A22", expected="pages concatenating to the items of the unpaged "
                         "list", message=f"{operation}: the pages hold {len(pages)} items of the unpaged list's "
                         f"{len(whole)} ({missing} missing, {max(extra + missing, 0)} repeated or extra)",
                         operation=operation)


@scenario("stateful:pagination", rule="transaction-pages",
          title="card and account transactions: pages concatenate, no duplicates, no gaps; "
          "fromDate/toDate filter", refs=("A22", "A14", "A32"))
def pagination(session: Session, rule: str) -> None:
    tpp = session.client()
    resources = sandbox_resources(session)
    today = session.today()
    days = [(today.replace(day=1) if today.day > 1 else today).isoformat(), today.isoformat()]
    card = {"mockCardAccountId": resources.card_account}
    # the spec's example item, dated this month and today, six times with distinct ids
    example = json.loads(tpp.prepare("createSandboxCardTransactions", path=card, sign=False).body)[0]
    items = [{**example, "bookingDate": day, "transactionDate": day, "cardTransactionId": f"OBV-{session.seed}-{i}"}
             for i, day in enumerate(days * 3)]
    created = session.require(tpp, "createSandboxCardTransactions", path=card, body=items)
    session.expect(created, CREATED, rule=rule, ref="A15",
                   message=f"creating card transactions answered {created.answer.describe()}")

    def booked(value) -> list:
        return (value.get("cardTransactions") or {}).get("booked") or [] if isinstance(value, dict) else []

    _compare_pages(session, rule, "listSandboxCardTransactions",
                   _pages(session, tpp, "listSandboxCardTransactions", card, {"bookingStatus": "booked"}, 2, booked))
    account = {"mockAccountId": resources.account}
    _compare_pages(session, rule, "listSandboxAccountTransactions",
                   _pages(session, tpp, "listSandboxAccountTransactions", account, {}, 1,
                          lambda v: v if isinstance(v, list) else []))
    window = session.call(tpp, "listSandboxCardTransactions", path=card,
                          query={"bookingStatus": "booked", "fromDate": today.isoformat(), "toDate": today.isoformat()})
    outside = [t for t in booked(window.json() if window.answer.status == 200 else {})
               if t.get("bookingDate") != today.isoformat()]
    if window.answer.status != 200 or outside:
        session.disagree(window, rule=rule, ref="A22", expected=f"only transactions booked on {today}",
                         message=f"fromDate/toDate={today}: {len(outside)} transactions outside the window")


@scenario("stateful:concurrent-creations", rule="payment-id-unique",
          title="every 201 under concurrent load is stored exactly once",
          refs=("Endpoints", "A23"))
def concurrent_creations(session: Session, rule: str, clients: int = 8, each: int = 4) -> None:
    missing = session.unavailable("createSepaCreditTransfer")
    if missing:  # said here, not in the worker threads
        raise NotExercised(missing)
    created: list[tuple[str, dict]] = []
    failed: list[BaseException] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        client = session.client()
        try:
            for i in range(each):
                body = sepa_body(f"{n + 1}.{i + 10:02d}")
                exchange = session.call(client, "createSepaCreditTransfer", body=body, query=DUPLICATES_ALLOWED)
                pid = _json(exchange).get("paymentId")
                if exchange.answer.status == 201 and isinstance(pid, str) and pid:   # no id: nothing to compare
                    with lock:
                        created.append((pid, body))
        except Exception as exc:  # an answer too slow or too large, an unreachable target: the check's to report
            failed.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    ids = [pid for pid, _a in created]
    if len(set(ids)) != len(ids):
        session.disagree(None, rule=rule, ref="Endpoints", expected="a distinct paymentId per 201",
                         message=f"{len(ids) - len(set(ids))} of {len(ids)} concurrent creations got a paymentId "
                                 "another creation got too", operation="createSepaCreditTransfer")
    reader = session.client()
    for pid, body in created:
        # which creation is read back first wrong depends on the threads' order: its amount is in the message
        if not read_back(session, session.call(reader, "getPayment", path={**SEPA, "paymentId": pid}), pid, body):
            break



@scenario("stateful:basket-ids", rule="basket-duplicate-ids",
          title="a basket's paymentIds: no repeats, each a payment of this TPP",
          refs=("A1", "A28"))
def basket_ids(session: Session, rule: str) -> None:
    tpp = session.client()
    pid = sepa(session, tpp, "64.00")
    context = _facts(session, tpp, {pid: SEPA})
    request = tpp.prepare("createSigningBasket", body={"paymentIds": [pid, pid]})
    expected, errors = session.predict(request, success=(201,), context=context)
    exchange = session.send(tpp, request, "createSigningBasket")
    session.expect(exchange, expected, rule=errors[0].rule if errors else rule, ref="A1", errors=errors,
                   message=f"a basket with the same paymentId twice: expected {expected.describe()} "
                           f"({expected.why}), the target answered {exchange.answer.describe()}")
    # An id that never existed is 400 RESOURCE_UNKNOWN (A28); the validator only warns, as its context may be partial.
    never = session.call(tpp, "createSigningBasket", body={"paymentIds": [pid, "enc!!b2J2YWxpZGF0ZS1ub25l"]},
                         refusal_expected=True)
    session.expect(never, UNKNOWN_REFERENCE, rule="basket-payment-unknown", ref="A28",
                   message=f"a basket with an id that never existed answered {never.answer.describe()}")


# ---------------------------------------------------------------- what a profile may state (A31, A34)
def periodic_body(session: Session, amount: str) -> dict:
    """A periodic payment (A31): a bulk entry's fields, the debtor account, monthly from today."""
    bulk = bulk_body(amount)
    return {**bulk["payments"][0], "debtorAccount": bulk["debtorAccount"], "startDate": session.today().isoformat(),
            "frequency": "Monthly"}


UNKNOWN_PRODUCT = "instant-sepa-credit-transfers"  # a product this interface does not know (A7: 404 PRODUCT_UNKNOWN)


@check("stateful:products-offered", suite="stateful", title="each payment product offered answers its operations; one "
       "the profile says is not offered answers 403 PRODUCT_INVALID; a product the interface does not know 404 "
       "PRODUCT_UNKNOWN", refs=("A31", "A7", "Errors"))
def products_offered(session: Session) -> None:
    from validator.context import spec_products

    tpp = session.client()
    bodies = {"createSepaCreditTransfer": lambda: sepa_body("19.00"), "createBulkPayment": lambda: bulk_body("19.00"),
              "createPeriodicPayment": lambda: periodic_body(session, "19.00")}
    creations = {session.product(op): op for op in bodies}
    invalid = Expected((403,), ("PRODUCT_INVALID",), "a product not offered (A31, the bulk operation's 403)")
    for product in spec_products(session.spec):
        operation = creations.get(product)
        if operation is None:
            continue
        offered = product not in session.profile.products_not_offered
        if not offered and session.rule_off("product-not-offered"):
            continue  # nothing for the target to refuse (the rule is off in the profile)
        ref = "A31" if offered else "A31 (profile products-not-offered)"
        hint = "" if offered else " (the profile says it is not offered)"
        request = tpp.prepare(operation, body=bodies[operation](), query=DUPLICATES_ALLOWED)
        if not offered:  # the profile's status and code of product-not-offered, with the readings of its decision
            invalid = session.predict(request, success=(201,))[0]
        created = session.send(tpp, request, operation)
        session.expect(created, CREATED if offered else invalid, rule="product-offered" if offered
                       else "product-not-offered", ref=ref,
                       message=f"creating a {product} payment{hint} answered {created.answer.describe()}"
                               + (" (if the implementation does not offer it, list it under products-not-offered)"
                                  if offered and created.answer.code == "PRODUCT_INVALID" else ""))
        service, name = product.split("/")
        path = {"payment-service": service, "payment-product": name, "paymentId": "enc!!b2J2YWxpZGF0ZS1ub25l"}
        read = session.send(tpp, tpp.prepare("getPaymentStatus", path=path), "getPaymentStatus", refusal_expected=True)
        wanted = NOT_THERE if offered else Expected((403, 404), ("PRODUCT_INVALID", "RESOURCE_UNKNOWN"), invalid.why)
        session.expect(read, wanted, rule=RESOURCE_UNKNOWN if offered else "product-not-offered", ref=ref,
                       message=f"the status of an unknown {product} payment{hint} answered {read.answer.describe()}")
    if session.rule_off("product-unknown"):
        return
    path = {"payment-service": "payments", "payment-product": UNKNOWN_PRODUCT, "paymentId": "enc!!b2J2YWxpZGF0ZS1ub25l"}
    request = tpp.prepare("getPaymentStatus", path=path)
    wanted = session.predict(request, success=(200,))[0]   # the profile's product-unknown, with A7's readings
    unknown = session.send(tpp, request, "getPaymentStatus", refusal_expected=True)
    session.expect(unknown, wanted, rule="product-unknown", ref="A7",
                   message=f"a payment product the interface does not know ({UNKNOWN_PRODUCT}) answered "
                           f"{unknown.answer.describe()}")


@scenario("stateful:basket-membership", rule="basket-membership",
          title="a payment in a second basket: 201 (ours: several baskets), or 409 "
          "CONFLICT while another basket holds it when the profile's payment-baskets is one", refs=("A34", "A1"))
def basket_membership(session: Session, rule: str) -> None:
    tpp = session.client()
    choice = session.profile.payment_baskets
    ref = "A34" if choice == "several" else "A34 (profile payment-baskets: one)"
    pid = sepa(session, tpp, "65.00")
    first = session.call(tpp, "createSigningBasket", body={"paymentIds": [pid]})
    if not session.expect(first, CREATED, rule=rule, ref="A1",
                          message=f"a basket of one new payment answered {first.answer.describe()}"):
        return
    second = session.call(tpp, "createSigningBasket", body={"paymentIds": [pid]})
    observed = {201: "several", 409: "one"}.get(second.answer.status)
    differs = session.choice_differs("payment-baskets", "A34", observed, choice)
    if differs:
        session.disagree(second, rule=rule, ref="A34", choice=differs, expected="201 (A34: several baskets)",
                         message=f"a second basket with a payment another basket holds answered "
                                 f"{second.answer.describe()}")
        return
    wanted = CREATED if choice == "several" else Expected((409,), ("CONFLICT",), "the payment is in another basket")
    session.expect(second, wanted, rule=rule, ref=ref,
                   message=f"a second basket with a payment another basket holds answered {second.answer.describe()}"
                           + (" (if the implementation allows one basket per payment, set payment-baskets: one)"
                              if choice == "several" and second.answer.status == 409 else ""))
    if choice == "one" and not session.unavailable("deleteSigningBasket"):
        basket_id = _json(first).get("basketId")
        deleted = session.call(tpp, "deleteSigningBasket", path={"basketId": basket_id})
        if deleted.answer.status == 204:
            again = session.call(tpp, "createSigningBasket", body={"paymentIds": [pid]})
            session.expect(again, CREATED, rule=rule, ref=ref, message="a basket with a payment whose basket "
                           f"was deleted answered {again.answer.describe()}")


# ---------------------------------------------------------------- an SCA that moves nothing says so (A35)
NOTHING_AUTHORISED = "a failure: the redirect with message (not psu-id), scaStatus failed, the payment as it was"


def start_authorisation(session: Session, client: SignedClient, pid: str) -> Exchange:
    started = session.call(client, "startPaymentAuthorisation", path={**SEPA, "paymentId": pid},
                           headers=AUTHORISE_HEADERS)
    if not session.expect(started, CREATED, rule=PAYMENT_LIFECYCLE, ref="A23",
                          message=f"starting the authorisation answered {started.answer.describe()}"):
        raise Broken("startPaymentAuthorisation")
    return started


def nothing_authorised(session: Session, client: SignedClient, started: Exchange, customer_number: str, pid: str,
                       was: str, why: str, *, rule: str, ref: str) -> None:
    """The PSU completes ``started`` although its payment is no longer RCVD (it is ``was``): no success redirect, the
    authorisation not finalised (failed, when the form was submitted), the payment still ``was`` (A35). One finding
    naming all that went wrong, the same expectation for every case: one defect, one finding group."""
    try:
        redirect = submit_sca(session, started, customer_number, form_required=False)
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        session.disagree(started, rule=SCA_PAGE_RULE, ref="A24",
                         expected="the SCA page served where scaRedirect points",
                         message=f"the SCA page of the authorisation could not be reached: {type(exc).__name__}: {exc}")
        raise Broken("sca page") from None
    wrong = []
    if redirect is not None and "psu-id" in redirect:
        wrong.append("the form redirected with success (psu-id)")
    elif redirect is not None and "message" not in redirect:
        wrong.append("the failure redirect carries no message (A24)")
    authorisation = _json(started).get("authorisationId")
    read = session.call(client, "getPaymentAuthorisationStatus",
                        path={**SEPA, "paymentId": pid, "authorisationId": authorisation}) if authorisation else None
    sca_status = _json(read).get("scaStatus") if read is not None and read.answer.status == 200 else None
    if sca_status == "finalised" or (redirect is not None and sca_status not in (None, "failed")):
        wrong.append(f"the authorisation reads {said(sca_status)}")
    now = status_of(session, client, pid).get("transactionStatus")
    if now is not None and now != was:
        wrong.append(f"the payment became {now} (it was {was})")
    if wrong:
        session.disagree(None, rule=rule, ref=ref, expected=NOTHING_AUTHORISED, operation="sca-page",
                         message=f"the SCA of a payment {why} said success where nothing was authorised: "
                                 + "; ".join(wrong))


@scenario("stateful:sca-without-effect", rule="sca-without-effect",
          title="an SCA that moves no payment does not say success: completed after "
          "the payment was cancelled, or after another authorisation moved it (profile open-authorisations: one - the "
          "second start 409)", refs=("A35", "A24"))
def sca_without_effect(session: Session, rule: str) -> None:
    tpp = session.client()
    payer = sandbox_resources(session).payer(session, "EUR", "iban")  # one who could authorise it (A24)
    one = session.profile.open_authorisations == "one"
    ref = "A35 (profile open-authorisations: one)" if one else "A35"
    cancellation = _cancellation(session)

    cancelled = sepa(session, tpp, "37.00", debtor=payer.as_debtor())
    started = start_authorisation(session, tpp, cancelled)
    deleted = session.call(tpp, "deletePayment", path={**SEPA, "paymentId": cancelled})
    # a 202 (the cancellation needs its own authorisation) or a refusal is stateful:cancellation's to judge
    if deleted.answer.status == 204 and status_of(session, tpp, cancelled).get("transactionStatus") == \
            cancellation["becomes"]:
        nothing_authorised(session, tpp, started, payer.owner, cancelled, cancellation["becomes"],
                           "cancelled after the authorisation started", rule=rule, ref=ref)

    pid = sepa(session, tpp, "38.00", debtor=payer.as_debtor())
    first = start_authorisation(session, tpp, pid)
    second = session.call(tpp, "startPaymentAuthorisation", path={**SEPA, "paymentId": pid}, headers=AUTHORISE_HEADERS)
    differs = session.choice_differs("open-authorisations", "A35", {201: "several", 409: "one"}.get(
        second.answer.status), session.profile.open_authorisations)
    if differs:
        session.disagree(second, rule=rule, ref="A35", choice=differs, expected="201 (A35: several started "
                         "authorisations)", message="a second authorisation of a payment whose first is started "
                         f"answered {second.answer.describe()}")
        return
    if one:
        session.expect(second, Expected((409,), ("CONFLICT",), "another authorisation of the payment is started"),
                       rule=rule, ref=ref, message="a second authorisation of a payment whose first is started "
                       f"answered {second.answer.describe()}")
        return
    if not session.expect(second, CREATED, rule=rule, ref=ref, message="a second authorisation of a RCVD payment "
                          f"answered {second.answer.describe()}" + (" (if the implementation allows one authorisation "
                          "at a time, set open-authorisations: one)" if second.answer.status == 409 else "")):
        return
    redirect = submit_sca(session, first, payer.owner)
    if "psu-id" not in redirect or status_of(session, tpp, pid).get("transactionStatus") != "PDNG":
        return  # the first authorisation's own success is stateful:lifecycle's to judge
    nothing_authorised(session, tpp, second, payer.owner, pid, "PDNG", "another authorisation had already moved to "
                       "PDNG", rule=rule, ref=ref)
