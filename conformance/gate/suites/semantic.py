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
  sent with a payment the target holds (created once per run), so its header rules are all it can break.

One check per mutated rule (``semantic:<rule id>``) and one for the valid controls (``semantic:valid-control``:
valid payloads, and valid optional headers: a national identity number (a synthetic test number, month + 80, is
sent by ``semantic:psu-identity-invalid`` as its control, A16), x-accept-fix
aliases, a corporate PSU with its id). Rules no request can break alone, and kinds whose creation depends on the
target's state, are left out with the reason the coverage report gives (:func:`left_out_reason`).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.client import PreparedRequest, SignedClient
from conformance.mutations import (MUTATIONS, REQUEST_LEFT_OUT, REQUEST_MUTATIONS, REQUEST_OPERATIONS, draft_of,
                                   mutate, mutate_request, payloads, signed_draft, synthetic_identity_number,
                                   valid_optional_headers, _KIND as MUTATION_STATE)
from validator.context import Context, PaymentFacts
from validator.rules import catalogue

from ..model import Expected, NotExercised, check
from ..session import Disagreement, Exchange, Session, answer_of
from .data import SEPA, sepa_body

# request kind -> the creation operation whose answer depends on the request alone
OPERATIONS = {
    "sepa-credit-transfer": "createSepaCreditTransfer",
    "bulk-payment": "createBulkPayment",
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
# Rules whose answer has a status but no code decided by the document or a decision (the catalogue's code is its
# suggestion, a profile may set another): the status is judged, the code not (as the negative suite's unsupported
# methods).
CODE_UNDECIDED = frozenset({"method-not-allowed"})
# A33: the document states no header length, so a target may take an over-long value (the validator's warning) or
# refuse it as HTTP lets a server bound a field (RFC 9110 section 5.4; 413, 431 of RFC 6585), never with a 5xx.
LENGTH_REFUSALS = {"header-oversized": (400, 413, 431)}
HEALTH = list(HealthCheck)


def _created(session: Session, operation: str) -> tuple[int, ...]:
    declared = session.spec.operation(operation).responses
    return tuple(int(s) for s in declared if s.startswith("2"))


def _where(session: Session, operation: str) -> dict[str, Any]:
    """Path and query of an operation: a card account / account of the fixed test data where the path needs one,
    allowLogicalDuplicate=true where creations are payments (A30: repeated examples are not duplicates)."""
    op = session.spec.operation(operation)
    missing = session.unavailable(operation)
    if missing:  # absent in the profile, or a product not offered (A15, A31)
        raise NotExercised(missing)
    options: dict[str, Any] = {}
    if any(p.name == "allowLogicalDuplicate" for p in op.query_parameters):
        options["query"] = {"allowLogicalDuplicate": "true"}
    if "{mockCardAccountId}" in op.path or "{mockAccountId}" in op.path:
        from .data import sandbox_resources

        resources = sandbox_resources(session)
        key = "mockCardAccountId" if "{mockCardAccountId}" in op.path else "mockAccountId"
        options["path"] = {key: resources.card_account if key == "mockCardAccountId" else resources.account}
    return options


def _search(session: Session, client: SignedClient, operation: str, rule_id: str | None, what: str, build,
            success: tuple[int, ...], *, examples: int | None = None, ref: str = "") -> int:
    """Run the Hypothesis search for one (rule, operation) pair: ``build(data)`` draws a request and its context;
    the validator predicts its answer; a disagreement becomes one shrunk finding. Returns the number of cases sent."""
    sent = 0

    @settings(max_examples=examples or session.max_examples, database=None, deadline=None, suppress_health_check=HEALTH,
              phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
              print_blob=False)
    @seed(session.seed)
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        nonlocal sent
        request, context = build(data)
        expected, errors = session.predict(request, success=success, context=context)
        if errors and all(e.rule in CODE_UNDECIDED for e in errors):
            expected = Expected(expected.statuses, (), f"{expected.why} (no code decided)")
        response = client.send_prepared(request)
        sent += 1
        session.record_case(operation, request)
        exchange = Exchange(operation, request, response, answer_of(response))
        if not expected.allows(exchange.answer):
            rule = rule_id or (errors[0].rule if errors else CONTROL)
            raise Disagreement(exchange, expected.describe(), rule, f"{what}: the validator expects "
                               f"{expected.describe()} ({expected.why}); the target answered {exchange.answer.describe()}")
        problems = session.response_problems(exchange)
        if problems:
            p = problems[0]
            raise Disagreement(exchange, "an answer the spec declares", p.rule, f"response: {p.message}")

    try:
        search()
    except Disagreement as found:
        session.disagree(found.exchange, rule=found.rule, ref=ref if found.rule == rule_id else "",
                         expected=found.expected, message=found.message)
    session.outcome(operation).cases += sent
    return sent


def probe(session: Session, operation: str, kind: str, rule_id: str | None) -> int:
    """A body mutation of ``kind`` breaking ``rule_id`` (None: valid payloads) sent to ``operation``."""
    client = _client(session)
    where = _where(session, operation)
    today = session.today()

    def build(data: st.DataObject):
        if rule_id is None:
            MUTATION_STATE.today = today
            payload = data.draw(payloads(kind), label="valid payload")
        else:
            payload = mutate(rule_id, kind, data, today=today)[1].payload
        return client.prepare(operation, body=json.loads(json.dumps(payload)), **where), None

    return _search(session, client, operation, rule_id, _what(rule_id, kind), build, _created(session, operation))


def _client(session: Session) -> SignedClient:
    """The suite's one client (a client per search would spend most of the run building TLS contexts)."""
    client = getattr(session, "_semantic_client", None)
    if client is None:
        client = session._semantic_client = session.client()
    return client


def _valid_body(session: Session, kind: str | None) -> Any:
    """One valid payload of ``kind`` per run (drawn with the run's seed): a request mutation breaks a header, the
    query, the path or the signature, and the body stays the same valid one (drawing a body per case would cost
    more than sending it)."""
    if kind is None:
        return None
    bodies = session.__dict__.setdefault("_semantic_bodies", {})
    if kind not in bodies:
        MUTATION_STATE.today = session.today()

        @settings(max_examples=1, database=None, deadline=None, suppress_health_check=HEALTH, phases=(Phase.generate,))
        @seed(session.seed)
        @given(payload=payloads(kind).filter(lambda p: p not in ([], {})))
        def draw(payload: Any) -> None:
            bodies[kind] = json.loads(json.dumps(payload))

        draw()
    return bodies[kind]


def _basket_of_a_held_payment(session: Session, *, fresh: bool = False) -> tuple[dict, Context]:
    """A basket body naming one payment the target holds (created once per run), and the payment as the validator's
    context: the basket operation's header rules are then the only thing a request can break."""
    held = None if fresh else getattr(session, "_semantic_basket", None)
    if held is None:
        created = session.call(session.client(), "createSepaCreditTransfer", body=sepa_body("17.00"),
                               query={"allowLogicalDuplicate": "true"})
        pid = created.response.json().get("paymentId") if created.answer.status == 201 else None
        if not isinstance(pid, str):
            raise NotExercised(f"the target created no payment to put in a basket ({created.answer.describe()})")
        facts = PaymentFacts(SEPA["payment-service"], SEPA["payment-product"], "RCVD")
        held = session._semantic_basket = ({"paymentIds": [pid]}, Context(payments={pid: facts}))
    return held


def request_probe(session: Session, operation: str, rule_id: str | None, site=None, *, examples: int | None = None,
                  control=None) -> int:
    """A request of ``operation`` (its body valid) changed at ``site`` to break ``rule_id`` of the request kind
    (headers, query, path, method, signature; None: valid optional headers as the control), signed over the exact
    bytes sent."""
    client = _client(session)
    kind = REQUEST_OPERATIONS[operation]
    where = _where(session, operation)
    basket = _basket_of_a_held_payment(session) if kind == "signing-basket" else None
    identity = session.identities.tpp
    body, context = basket if basket is not None else (_valid_body(session, kind), None)

    # A34: where a payment may be in one basket only, each basket case names a payment of its own
    one_basket = basket is not None and session.profile.payment_baskets == "one"

    def build(data: st.DataObject):
        nonlocal body, context
        if one_basket:
            body, context = _basket_of_a_held_payment(session, fresh=True)
        unsigned = client.prepare(operation, body=body, sign=False, **where)
        draft = draft_of(operation, unsigned.method, unsigned.target, unsigned.headers, unsigned.body)
        if control is not None:
            control.change(draft, site, data)
        elif rule_id is None:
            valid_optional_headers(draft, data)
        else:
            mutate_request(rule_id, draft, site, data)
        return PreparedRequest(*signed_draft(draft, identity.key, identity.certificate, date=session.now())), context

    what = f"a {operation} request breaking only {rule_id} at {_site_name(site)}" if rule_id else \
        f"a valid {operation} request with optional headers"
    if control is not None:
        what = f"a {operation} request with {control.what}"
    success = _created(session, operation) + LENGTH_REFUSALS.get(rule_id or "", ())
    return _search(session, client, operation, rule_id, what, build, success, examples=examples,
                   ref=control.ref if control is not None else "")


@dataclass(frozen=True)
class RuleControl:
    """A value on the edge of a rule that a decision accepts and a profile may refuse: sent at each of the rule's
    sites, the validator (with the profile) predicting the answer; a disagreement names the decision."""

    what: str
    ref: str
    change: Callable[[Any, Any, st.DataObject], None]


# A16: a synthetic test national identity number (month + 80) is accepted unless the profile refuses it
# (synthetic-identity-numbers); sent beside the rule's mutants, so an implementation refusing it is reported once,
# under the rule and the decision.
RULE_CONTROLS = {
    "psu-identity-invalid": RuleControl("a synthetic test X-PSU-IDENTITY (month + 80)", "A16",
                                        lambda draft, name, data: draft.set_header(name, synthetic_identity_number(data))),
    # A list header sent as two lines is one list (RFC 9110 5.3): accepted unless the profile's repeated-headers
    # refuses it for Accept-Language.
    "header-duplicate": RuleControl("Accept-Language sent twice (a list header)", "",
                                    lambda draft, _name, data: _repeat_list_header(draft, "Accept-Language")),
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


def _run_controls(session: Session) -> None:
    _run(None, tuple(OPERATIONS))(session)
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
          "exist at creation), with valid optional headers (an X-PSU-IDENTITY, x-accept-fix names and "
          "aliases, a corporate PSU with PSU-Corporate-ID)", refs=("Endpoints", "A26", "A16", "A18"))(_run_controls)
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
