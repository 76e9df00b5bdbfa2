"""The differential oracle: requests that are schema-valid but break exactly one rule of the validator's catalogue,
plus valid controls. The validator predicts each answer (status and code) from the request exactly as sent; the
target must agree. Hypothesis generates the cases and shrinks each disagreement to a minimal example: one finding
per rule, operation and site.

Two kinds of mutation (:mod:`conformance.mutations`, which the validator's differential tests prove break only their
rule):

* body mutations (``MUTATIONS``) of the creations whose answer depends on the request alone;
* request mutations (``REQUEST_MUTATIONS``): the rules of the request kind -- a header (PSU-ID not a UUID, an
  X-PSU-IDENTITY with wrong control digits, an unknown x-accept-fix name, which is a warning the target must accept,
  x-accept-fix without amount-as-string on the basket, a corporate PSU without PSU-Corporate-ID, ...), the query,
  the path, the method, the body's bytes and the signature headers (A8) -- at every site an operation offers,
  signed over the exact bytes sent (a signed header such as PSU-ID is signed with its wrong value). The basket is
  sent with a payment the target created for that case, so its header rules are all it can break.

Every mutation starts from a realistic request (:mod:`conformance.generate`'s ``realistic`` payloads: non-empty
names, 1 to 3 payments; a fresh X-Request-ID per call), and a valid control of that kind is sent first, once per
run and operation: where the target refuses it, the operation's mutation checks are "not exercised: the valid
control was refused (status, code, message)" instead of a finding per mutation that blames the rule under test. A
disagreement is also checked against the unmutated request it was made from. The valid controls hold only values every
reading accepts; the boundary values the schema allows (an empty name, a bulk without payments) are sent as a case of
their own, never the base of another, so a refused boundary value is reported once, as what it is.

One check per mutated rule (``semantic:<rule id>``) and one for the valid controls (``semantic:valid-control``:
valid payloads, and valid optional headers: a national identity number (a synthetic test number, month + 80, is
sent by ``semantic:psu-identity-invalid`` as its control, A16), published x-accept-fix names (an alias is
``semantic:accept-fix-unknown``'s control, A18), a corporate PSU with its id). Rules no request can break alone, and kinds whose creation depends on the
target's state, are left out with the reason the coverage report gives (:func:`left_out_reason`).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.client import PreparedRequest, SignedClient
from conformance.mutations import (MUTATIONS, REQUEST_LEFT_OUT, REQUEST_MUTATIONS, REQUEST_OPERATIONS, accept_fix_alias,
                                   draft_of,
                                   mutate, mutate_request, payloads, signed_draft, synthetic_identity_number,
                                   valid_optional_headers, _KIND as MUTATION_STATE)
from conformance.mutations import get_at, set_at, sites
from conformance.exchange.basis import document_codes
from conformance.exchange.decoding import decode
from conformance.exchange.oracle import CODE_UNDECIDED  # the status judged, the code not
from conformance.exchange.reasons import reason_problem, reason_unjudged
from validator.context import Context, PaymentFacts
from validator.findings import ERROR
from validator.rules import catalogue

from ..model import DECLARED_ANSWER, DIFFERENCE, Expected, NotExercised, check
from ..session import NAMING_THE_FAULT, Disagreement, Session, answer_of
from .data import SEPA, sepa_body

# request kind -> the creation operation whose answer depends on the request alone
OPERATIONS = {
    "sepa-credit-transfer": "createSepaCreditTransfer",
    "bulk-payment": "createBulkPayment",
    "periodic-payment": "createPeriodicPayment",
    "card-transactions": "createSandboxCardTransactions",
    "sandbox-account-transactions": "createSandboxAccountTransactions",
}
# Kinds left out and why (clause coverage).
LEFT_OUT = {
    "signing-basket": "basket rules depend on payments the target holds: the stateful suite creates them",
    "sandbox-customer": "a customerNumber is unique: a repeated creation is 409 whatever the body (stateful)",
    "sandbox-account": "an account needs an existing customer and a unique BBAN/IBAN (stateful)",
    "sandbox-card-account": "a card account needs an existing customer (stateful)",
}
CONTROL = "valid-control"
# A33: the document states no header length, so a target may take an over-long value (the validator's warning) or
# refuse it as HTTP lets a server bound a field (RFC 9110 section 5.4; 413, 431 of RFC 6585), never with a 5xx.
# RFC 9110 section 9.3.1: content in a GET "has no generally defined semantics" and "might lead some implementations
# to reject the request": ignoring it (the validator's warning) and refusing it with a 400 are both right.
HTTP_REFUSALS = {"header-oversized": (400, 413, 431), "body-not-accepted": (400,)}
HEALTH = list(HealthCheck)


def _created(session: Session, operation: str) -> tuple[int, ...]:
    declared = session.spec.operation(operation).responses
    return tuple(int(s) for s in declared if s.startswith("2"))


def _where(session: Session, operation: str, resources=None) -> dict[str, Any]:
    """Path and query of an operation: a card account / account of the fixed test data where the path needs one,
    allowLogicalDuplicate=true where creations are payments (A30: repeated examples are not duplicates).
    ``resources`` (a :class:`~.data.Resources`) stands in for the target's test data in a request that is judged but
    not sent (edge-cases): then nothing is asked of the target or the profile."""
    op = session.spec.operation(operation)
    missing = None if resources is not None else session.unavailable(operation)
    if missing:  # absent in the profile, or a product not offered (A15, A31)
        raise NotExercised(missing)
    options: dict[str, Any] = {}
    if any(p.name == "allowLogicalDuplicate" for p in op.query_parameters):
        options["query"] = {"allowLogicalDuplicate": "true"}
    if "{mockCardAccountId}" in op.path or "{mockAccountId}" in op.path:
        from .data import sandbox_resources

        resources = resources if resources is not None else sandbox_resources(session)
        key = "mockCardAccountId" if "{mockCardAccountId}" in op.path else "mockAccountId"
        options["path"] = {key: resources.card_account if key == "mockCardAccountId" else resources.account}
    return options


def _refusal(response) -> str:
    """A refusal as a reason says it: status, code and the target's own message."""
    decoded = decode(response.content)
    answer = answer_of(response, decoded)
    message = ""
    body = decoded.value
    if isinstance(body, dict):
        messages = body.get("tppMessages")
        first = messages[0] if isinstance(messages, list) and messages and isinstance(messages[0], dict) else body
        message = str(first.get("text") or first.get("message") or "")
    return ", ".join(part for part in (str(answer.status), answer.code or "", message[:160]) if part)


def _control_first(session: Session, client: SignedClient, operation: str, build_control, success: tuple[int, ...]) -> None:
    """Send a realistic valid request of ``operation`` once per run before its mutations: every "break exactly one
    rule" case starts from such a request, so a target that refuses it cannot have its refusal taken for the answer
    to the rule under test. Refused, the operation's mutation checks are not exercised, with the refusal as reason
    (the valid-control check reports the refusal itself, once)."""
    refused = session.__dict__.setdefault("_semantic_control_refused", {})
    if operation not in refused:
        request = build_control()
        response = client.send_prepared(request)
        session.record_case(operation, request)
        session.outcome(operation).cases += 1
        refused[operation] = _control_problem(response)
        if refused[operation] is None and response.status_code not in success:
            # accepted with another status (200 for 201): a finding about that answer, once; the mutations still run
            exchange = session.exchange(operation, request, response)
            session.expect(exchange, Expected(success, (), "the validator finds no error"), rule=CONTROL, ref="",
                           message=f"a valid {operation} request was accepted with {exchange.answer.describe()}, "
                                   f"not {' or '.join(map(str, success))}")
    if refused[operation]:
        raise NotExercised(refused[operation])


def _control_problem(response) -> str | None:
    """Why a valid control does not show the target accepting the request, or None: any 2xx with a body the gate can
    read is accepted, whatever status the spec declares for it (another one is judged apart); an answer it cannot
    read shows nothing (a mock's 100,000-deep JSON to everything)."""
    if not 200 <= response.status_code < 300:
        return f"the valid control was refused ({_refusal(response)})"
    why_not = decode(response.content).why_not
    return f"the valid control's answer could not be read ({why_not})" if why_not else None


def _search(session: Session, client: SignedClient, operation: str, rule_id: str | None, what: str, build,
            success: tuple[int, ...], *, examples: int | None = None, ref: str = "",
            http_refusals: tuple[int, ...] = (), readings: tuple[Expected, ...] = ()) -> int:
    """Run the Hypothesis search for one (rule, operation) pair: ``build(data)`` draws a request, its context and the
    unmutated request it was made from (None for a control); the validator predicts its answer; a disagreement
    becomes one shrunk finding. A disagreement is first checked against the unmutated request: when the target
    refuses that too, the rule was not what it answered, and the check is "not exercised" with the refusal as reason.
    Returns the number of cases sent."""
    sent = 0
    control_refused: list[str] = []
    seen: list[Disagreement] = []

    @settings(max_examples=examples or session.max_examples, database=None, deadline=None, suppress_health_check=HEALTH,
              phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
              print_blob=False)
    @seed(session.seed)
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        try:
            judge(data)
        except Disagreement as found:
            if not seen:   # the first is the one reported (searching()); each holds its answer
                seen.append(found)
            raise

    def judge(data: st.DataObject) -> None:
        nonlocal sent
        if control_refused:
            return  # the target refuses the unmutated request: nothing more to learn about the rule
        try:
            request, context, original = build(data)
        except NotExercised as why:
            control_refused.append(str(why))
            return
        expected, errors = session.predict(request, success=success, context=context)
        if readings and not errors:  # a control on the edge of a decision: refusing it is another reading
            expected = dataclasses.replace(expected, readings=expected.readings + readings)
        if errors and all(e.rule in CODE_UNDECIDED for e in errors):
            expected = dataclasses.replace(expected, codes=(), why=f"{expected.why} (no code decided)")
        response = client.send_prepared(request)
        sent += 1
        session.record_case(operation, request)
        exchange = session.exchange(operation, request, response)
        agrees = expected.allows(exchange.answer) or session.code_unreadable(exchange, expected) \
            or session.unissued_refusal(exchange, expected)
        # where the refusal says what it refuses (a tppMessage path, A6), it must be what the request breaks
        other_reason = reason_problem(exchange.json(), errors) if agrees and response.status_code not in \
            http_refusals else None
        if (not agrees or other_reason) and original is not None:
            control = original()
            control_response = client.send_prepared(control)
            sent += 1
            session.record_case(operation, control)
            problem = _control_problem(control_response)
            if problem:
                control_refused.append(problem)
                return
        if not agrees:
            rule = rule_id or (errors[0].rule if errors else CONTROL)
            message = (f"{what}: the validator expects {expected.describe()} ({expected.why}); the target answered "
                       f"{exchange.answer.describe()}"
                       + (reason_unjudged(exchange.json()) if errors and response.status_code >= 400 else ""))
            if expected.tier(exchange.answer) != DIFFERENCE:
                raise Disagreement(exchange, expected.describe(), rule, message, expected)
            # another reading of an open point: reported once, and the search goes on (it hides no failure)
            session.disagree(exchange, rule=rule, ref=ref if rule == rule_id else "", expected=expected.describe(),
                             message=message, expectation=expected)
            return
        if response.status_code in http_refusals:
            return  # HTTP's own refusal (A33), not an answer of the interface's: its body is the server's
        if other_reason:
            raise Disagreement(exchange, f"{expected.describe()} {NAMING_THE_FAULT}",
                               rule_id or errors[0].rule, f"{what}: {other_reason}")
        problems = session.response_problems(exchange)
        if problems:
            p = problems[0]
            raise Disagreement(exchange, DECLARED_ANSWER, p.rule, f"response: {p.message}")

    with session.searching(seen, ref_for=lambda rule: ref if rule == rule_id else ""):
        search()
    session.outcome(operation).cases += sent
    if control_refused:
        raise NotExercised(control_refused[0])
    return sent


def probe(session: Session, operation: str, kind: str, rule_id: str | None) -> int:
    """A body mutation of ``kind`` breaking ``rule_id`` (None: valid payloads) sent to ``operation``."""
    client = _client(session)
    where = _where(session, operation)
    today = session.today()

    success = _created(session, operation)

    def build(data: st.DataObject):
        if rule_id is None:
            # a valid control holds only values every reading accepts (realistic); the boundary values the schema
            # allows (an empty name, an empty bulk) are a case of their own (_boundary_control), reported as such
            MUTATION_STATE.today, MUTATION_STATE.realistic = today, True
            payload = data.draw(payloads(kind), label="valid payload")
            return client.prepare(operation, body=json.loads(json.dumps(payload)), **where), None, None
        original, mutant = mutate(rule_id, kind, data, today=today, realistic=True)
        return (client.prepare(operation, body=json.loads(json.dumps(mutant.payload)), **where), None,
                lambda: client.prepare(operation, body=json.loads(json.dumps(original)), **where))

    if rule_id is not None:
        _control_first(session, client, operation,
                       lambda: client.prepare(operation, body=_valid_body(session, kind), **where), success)
    return _search(session, client, operation, rule_id, _what(rule_id, kind), build, success)


def _client(session: Session) -> SignedClient:
    """The suite's one client (a client per search would spend most of the run building TLS contexts)."""
    client = getattr(session, "_semantic_client", None)
    if client is None:
        client = session._semantic_client = session.client()
    return client


def _valid_body(session: Session, kind: str | None) -> Any:
    """One realistic valid payload of ``kind`` per run (drawn with the run's seed; no boundary value): a request
    mutation breaks a header, the query, the path or the signature, and the body stays the same valid one (drawing a
    body per case would cost more than sending it)."""
    if kind is None:
        return None
    bodies = session.__dict__.setdefault("_semantic_bodies", {})
    if kind not in bodies:
        MUTATION_STATE.today, MUTATION_STATE.realistic = session.today(), True

        @settings(max_examples=1, database=None, deadline=None, suppress_health_check=HEALTH, phases=(Phase.generate,))
        @seed(session.seed)
        @given(payload=payloads(kind).filter(lambda p: p not in ([], {})))
        def draw(payload: Any) -> None:
            bodies[kind] = json.loads(json.dumps(payload))

        draw()
    return bodies[kind]


def _basket_of_a_fresh_payment(session: Session) -> tuple[dict, Context]:
    """A basket body naming a payment the target created for this case alone, and the payment as the validator's
    context: the basket operation's header rules are then the only thing a request can break, and no case meets a
    payment an earlier basket already holds (a target may allow a payment in one basket only)."""
    created = session.call(_client(session), "createSepaCreditTransfer", body=sepa_body("17.00"),
                           query={"allowLogicalDuplicate": "true"})
    # accepted with another 2xx (200 for 201): still a payment to put in a basket (the status is judged apart)
    pid = created.object().get("paymentId") if 200 <= created.answer.status < 300 else None
    if not isinstance(pid, str):
        raise NotExercised(f"setup failed: the target created no payment to put in a basket ({created.answer.describe()})")
    facts = PaymentFacts(SEPA["payment-service"], SEPA["payment-product"], "RCVD")
    return {"paymentIds": [pid]}, Context(payments={pid: facts})


def request_probe(session: Session, operation: str, rule_id: str | None, site=None, *, examples: int | None = None,
                  control=None) -> int:
    """A request of ``operation`` (its body valid) changed at ``site`` to break ``rule_id`` of the request kind
    (headers, query, path, method, signature; None: valid optional headers as the control), signed over the exact
    bytes sent."""
    client = _client(session)
    kind = REQUEST_OPERATIONS[operation]
    where = _where(session, operation)
    basket = kind == "signing-basket"
    identity = session.identities.tpp

    def base() -> tuple[Any, Context | None]:
        return _basket_of_a_fresh_payment(session) if basket else (_valid_body(session, kind), None)

    def build(data: st.DataObject):
        body, context = base()
        unsigned = client.prepare(operation, body=body, sign=False, **where)
        draft = draft_of(operation, unsigned.method, unsigned.target, unsigned.headers, unsigned.body)
        if control is not None or rule_id is None:  # a valid request: nothing unmutated to compare it with
            if control is not None:
                control.change(draft, site, data)
            else:
                valid_optional_headers(draft, data)
            return PreparedRequest(*signed_draft(draft, identity.key, identity.certificate, date=session.now(),
                                             also=session.profile.signature_extra_headers)), \
                context, None
        mutate_request(rule_id, draft, site, data)
        return (PreparedRequest(*signed_draft(draft, identity.key, identity.certificate, date=session.now(),
                                             also=session.profile.signature_extra_headers)), context,
                lambda: client.prepare(operation, body=base()[0] if basket else body, **where))

    what = f"a {operation} request breaking only {rule_id} at {_site_name(site)}" if rule_id else \
        f"a valid {operation} request with optional headers"
    if control is not None:
        what = f"a {operation} request with {control.what}"
    created = _created(session, operation)
    if rule_id is not None:
        _control_first(session, client, operation, lambda: client.prepare(operation, body=base()[0], **where), created)
    refusals = HTTP_REFUSALS.get(rule_id or "", ())
    return _search(session, client, operation, rule_id, what, build, created + refusals, examples=examples,
                   ref=control.ref if control is not None else "", http_refusals=refusals,
                   readings=control.readings(session) if control is not None else ())


@dataclass(frozen=True)
class RuleControl:
    """A value on the edge of a rule that a decision accepts and a profile may refuse: sent at each of the rule's
    sites, the validator (with the profile) predicting the answer; a disagreement names the decision."""

    what: str
    ref: str
    change: Callable[[Any, Any, st.DataObject], None]
    refused: str = ""   # the profile line of the other choice, refusing it (a difference unless stated or pinned)

    def readings(self, session: Session) -> tuple[Expected, ...]:
        decision = self.ref or "A40"
        key = self.refused.split(":", 1)[0]
        if not self.refused or session.profile.states(key) or session.profile.pins(decision):
            return ()
        return (Expected(tuple(range(400, 500)), document_codes(session.spec), why=f"refusing it is another reading "
                         f"({decision})", decision=decision, profile_line=self.refused),)


# A16: a synthetic test national identity number (month + 80) is accepted unless the profile refuses it
# (synthetic-identity-numbers); sent beside the rule's mutants, so an implementation refusing it is reported once,
# under the rule and the decision.
RULE_CONTROLS = {
    "psu-identity-invalid": RuleControl("a synthetic test X-PSU-IDENTITY (month + 80)", "A16",
                                        lambda draft, name, data: draft.set_header(name, synthetic_identity_number(data)),
                                        "synthetic-identity-numbers: refused"),
    # A list header sent as two lines is one list (RFC 9110 5.3): accepted unless the profile's repeated-headers
    # refuses it for Accept-Language.
    "header-duplicate": RuleControl("Accept-Language sent twice (a list header)", "",
                                    lambda draft, _name, data: _repeat_list_header(draft, "Accept-Language"),
                                    "repeated-headers: {Accept-Language: refused}"),
    # A18: an alias of a published x-accept-fix name is accepted by our decision; a target knowing only the published
    # names may refuse it. A case of its own, never part of another case's valid request.
    "accept-fix-unknown": RuleControl("an alias of a published x-accept-fix name (longer-names)", "A18",
                                      accept_fix_alias),
}


def _repeat_list_header(draft, name: str) -> None:
    draft.set_header(name, "nb")
    draft.headers.append((name.lower(), "en;q=0.5"))


def _site_name(site) -> str:
    return site[0] if isinstance(site, tuple) else str(site)


def _run_request(rule_id: str):
    """Every operation that offers the rule a site, every site at least once (the examples spread over the sites)."""
    def run(session: Session) -> None:
        _unless_off(session, rule_id)
        for operation in REQUEST_OPERATIONS:
            sites = REQUEST_MUTATIONS[rule_id].sites(session.spec.operation(operation))
            if not sites:
                continue
            each = max(1, -(-session.max_examples // len(sites)))
            try:
                for site in sites:
                    request_probe(session, operation, rule_id, site, examples=each)
                if rule_id in RULE_CONTROLS:
                    request_probe(session, operation, rule_id, sites[0], control=RULE_CONTROLS[rule_id])
            except NotExercised as why:
                session.outcome(operation).status = "not-exercised"
                session.outcome(operation).reason = str(why)
                continue
            session.exercised_rules.add(rule_id)
    return run


def _unless_off(session: Session, rule_id: str | None) -> None:
    """A rule the profile turned off has nothing to break: its check is not exercised."""
    if rule_id is not None and session.rule_off(rule_id):
        raise NotExercised(f"{rule_id} off in the profile")


def _emptied(kind: str, payload: Any) -> list[tuple]:
    """Paths of a payload's free texts and arrays whose schema lets them be empty (no minLength / minItems, no
    enum, format, pattern or const, no rule of the catalogue reading them)."""
    def empty_allowed(site) -> bool:
        k = site.keywords
        if site.rule_owned:
            return False
        if isinstance(site.value, str):
            return bool(site.value) and not k.get("minLength") and not {"enum", "format", "pattern", "const"} & set(k)
        return isinstance(site.value, list) and bool(site.value) and not k.get("minItems")

    return [site.path for site in sites(kind, payload, empty_allowed) if site.path]


def _boundary_control(session: Session, client: SignedClient, operation: str, kind: str, where: dict) -> None:
    """The run's realistic valid payload with every text and array the schema lets be empty emptied, as far as the
    validator still finds the request valid (an empty creditorName, a bulk without payments): the boundary values
    the mutation checks no longer start from are sent here, once, and a refusal is reported as the valid request it
    refuses."""
    payload = copy.deepcopy(_valid_body(session, kind))
    success = _created(session, operation)
    emptied = []
    for path in sorted(_emptied(kind, payload), key=len, reverse=True):  # the deepest first: a parent stays valid
        trial = copy.deepcopy(payload)
        set_at(trial, path, "" if isinstance(get_at(trial, path), str) else [])
        request = client.prepare(operation, body=trial, **where)
        if not [f for f in session.findings_for(request) if f.severity == ERROR]:
            payload = trial
            emptied.append("/" + "/".join(map(str, path)))
    if not emptied:
        return
    request = client.prepare(operation, body=payload, **where)
    response = client.send_prepared(request)
    session.record_case(operation, request)
    session.outcome(operation).cases += 1
    exchange = session.exchange(operation, request, response)
    expected = Expected(success, (), "the validator finds no error")
    session.expect(exchange, expected, rule=CONTROL, ref="", message=f"a valid {kind} with empty values at "
                   f"{', '.join(emptied)} (the schema sets no minimum): the target answered {exchange.answer.describe()}")


def _run_controls(session: Session) -> None:
    _run(None, tuple(OPERATIONS))(session)
    for kind, operation in OPERATIONS.items():
        try:
            _boundary_control(session, _client(session), operation, kind, _where(session, operation))
        except NotExercised:
            continue  # the operation's outcome already says why
    for operation in REQUEST_OPERATIONS:
        try:
            request_probe(session, operation, None)
        except NotExercised as why:
            session.outcome(operation).status = "not-exercised"
            session.outcome(operation).reason = str(why)


def _what(rule_id: str | None, kind: str) -> str:
    return f"a {kind} breaking only {rule_id}" if rule_id else f"a valid {kind}"


def _run(rule_id: str | None, kinds: tuple[str, ...]):
    def run(session: Session) -> None:
        _unless_off(session, rule_id)
        reached = [k for k in kinds if k in OPERATIONS]
        if not reached:
            raise NotExercised("; ".join(LEFT_OUT.get(k, f"no operation for {k}") for k in kinds))
        for kind in reached:
            operation = OPERATIONS[kind]
            try:
                probe(session, operation, kind, rule_id)
            except NotExercised as why:
                session.outcome(operation).status = "not-exercised"
                session.outcome(operation).reason = str(why)
                continue
            session.exercised_rules.add(rule_id or CONTROL)
    return run


@functools.lru_cache(maxsize=1)
def _request_mutations() -> dict[str, tuple[str, ...]]:
    """Rules with a mutation on a request kind (response-kind mutations are the validator's own business)."""
    from validator.spec import load_spec

    spec = load_spec()
    out = {}
    for rule_id, (kinds, _fn) in MUTATIONS.items():
        request_kinds = tuple(k for k in kinds if spec.kind(k).is_request)
        if request_kinds:
            out[rule_id] = request_kinds
    return out


def left_out_reason(rule_id: str) -> str | None:
    """Why the semantic suite does not send a rule's mutants, when it does not."""
    if rule_id in REQUEST_LEFT_OUT:
        return REQUEST_LEFT_OUT[rule_id]
    kinds = _request_mutations().get(rule_id)
    if not kinds or any(k in OPERATIONS for k in kinds):
        return None
    return "; ".join(dict.fromkeys(LEFT_OUT.get(k, f"no operation for {k}") for k in kinds))


def register() -> None:
    rules = catalogue()
    check(f"semantic:{CONTROL}", suite="semantic", title="valid requests are accepted (the debtor account need not "
          "exist at creation), with valid optional headers (an X-PSU-IDENTITY, published x-accept-fix "
          "names, a corporate PSU with PSU-Corporate-ID)", refs=("Endpoints", "A26", "A16", "A18"))(_run_controls)
    for rule_id, kinds in _request_mutations().items():
        if not any(k in OPERATIONS for k in kinds):
            continue  # basket rules: the stateful suite sends them with payments the target holds
        rule = rules[rule_id]
        refs = tuple(dict.fromkeys([rule.ref, *rule.assumptions, "A6"]))  # A6: the refusal's error body
        check(f"semantic:{rule_id}", suite="semantic", title=rule.name, refs=refs)(_run(rule_id, kinds))
    for rule_id in REQUEST_MUTATIONS:
        rule = rules[rule_id]
        refs = tuple(dict.fromkeys([rule.ref, *rule.assumptions, "A6"]))
        check(f"semantic:{rule_id}", suite="semantic", title=f"{rule.name} (request: headers, query, path, method, "
              "signature)", refs=refs)(_run_request(rule_id))


register()
