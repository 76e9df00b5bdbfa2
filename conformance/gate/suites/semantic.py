"""The differential oracle: requests that are schema-valid but break exactly one rule of the validator's catalogue,
plus valid controls. The validator predicts each answer (status and code) from the request exactly as sent; the
target must agree. Hypothesis generates the cases (:mod:`conformance.mutations`, the same mutations the validator's
own differential tests prove break only their rule) and shrinks each disagreement to a minimal example: one finding
per rule and operation.

One check per mutated rule (``semantic:<rule id>``) and one for the valid controls (``semantic:valid-control``).
Operations tried: the creations whose answer depends on the request alone. Basket rules need payments the target
holds (the stateful suite), and sandbox customers and accounts are unique per number (a second creation is a 409),
so they are left to the stateful suite; the coverage report says so.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.mutations import MUTATIONS, mutate, payloads, _KIND as MUTATION_STATE
from validator.rules import catalogue

from ..model import NotExercised, check
from ..session import Exchange, Session, answer_of

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
HEALTH = list(HealthCheck)


@dataclass
class Disagreement(Exception):
    exchange: Exchange
    expected: str
    rule: str
    message: str


def _created(session: Session, operation: str) -> tuple[int, ...]:
    declared = session.spec.operation(operation).responses
    return tuple(int(s) for s in declared if s.startswith("2"))


def _where(session: Session, operation: str) -> dict[str, Any]:
    """Path and query of an operation: a card account / account of the fixed test data where the path needs one,
    allowLogicalDuplicate=true where creations are payments (A30: repeated examples are not duplicates)."""
    op = session.spec.operation(operation)
    options: dict[str, Any] = {}
    if any(p.name == "allowLogicalDuplicate" for p in op.query_parameters):
        options["query"] = {"allowLogicalDuplicate": "true"}
    if "{mockCardAccountId}" in op.path or "{mockAccountId}" in op.path:
        from .data import sandbox_resources

        resources = sandbox_resources(session)
        key = "mockCardAccountId" if "{mockCardAccountId}" in op.path else "mockAccountId"
        options["path"] = {key: resources.card_account if key == "mockCardAccountId" else resources.account}
    return options


def probe(session: Session, operation: str, kind: str, rule_id: str | None) -> int:
    """Run the Hypothesis search for one (rule, operation) pair; a disagreement becomes one shrunk finding.
    Returns the number of cases sent."""
    client = session.client()
    where = _where(session, operation)
    success = _created(session, operation)
    today = session.today()
    sent = 0

    @settings(max_examples=session.max_examples, database=None, deadline=None, suppress_health_check=HEALTH,
              phases=(Phase.explicit, Phase.generate, Phase.shrink), report_multiple_bugs=False,
              print_blob=False)
    @seed(session.seed)
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        nonlocal sent
        if rule_id is None:
            MUTATION_STATE.today = today
            payload = data.draw(payloads(kind), label="valid payload")
        else:
            payload = mutate(rule_id, kind, data, today=today)[1].payload
        request = client.prepare(operation, body=json.loads(json.dumps(payload)), **where)
        expected, errors = session.predict(request, success=success)
        response = client.send_prepared(request)
        sent += 1
        session.record_case(operation, request)
        exchange = Exchange(operation, request, response, answer_of(response))
        if not expected.allows(exchange.answer):
            rule = rule_id or (errors[0].rule if errors else CONTROL)
            raise Disagreement(exchange, expected.describe(), rule, f"{_what(rule_id, kind)}: the validator expects "
                               f"{expected.describe()} ({expected.why}); the target answered {exchange.answer.describe()}")
        path = request.target.split("?", 1)[0]
        problems = session.responses.problems(request.method, path, response.status_code,
                                              response.headers.get("content-type", ""), response.content)
        if problems:
            p = problems[0]
            raise Disagreement(exchange, "an answer the spec declares", p.rule, f"response: {p.message}")

    try:
        search()
    except Disagreement as found:
        session.disagree(found.exchange, rule=found.rule, ref="", expected=found.expected, message=found.message)
    session.outcome(operation).cases += sent
    return sent


def _what(rule_id: str | None, kind: str) -> str:
    return f"a {kind} breaking only {rule_id}" if rule_id else f"a valid {kind}"


def _run(rule_id: str | None, kinds: tuple[str, ...]):
    def run(session: Session) -> None:
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
    kinds = _request_mutations().get(rule_id)
    if not kinds or any(k in OPERATIONS for k in kinds):
        return None
    return "; ".join(dict.fromkeys(LEFT_OUT.get(k, f"no operation for {k}") for k in kinds))


def register() -> None:
    rules = catalogue()
    check(f"semantic:{CONTROL}", suite="semantic", title="valid requests are accepted (the debtor account need not "
          "exist at creation)", refs=("Endpoints", "A26"))(_run(None, tuple(OPERATIONS)))
    for rule_id, kinds in _request_mutations().items():
        if not any(k in OPERATIONS for k in kinds):
            continue  # basket rules: the stateful suite sends them with payments the target holds
        rule = rules[rule_id]
        refs = tuple(dict.fromkeys([rule.ref, *rule.assumptions, "A6"]))  # A6: the refusal's error body
        check(f"semantic:{rule_id}", suite="semantic", title=rule.name, refs=refs)(_run(rule_id, kinds))


register()
