"""Running the edges: each one built into a request signed by the conformance client, judged by the validator's
whole-request check (the conformance gate's oracle, :class:`~conformance.gate.session.Session`), and — with a target
— sent and compared. With a target, the semantic suite's Hypothesis search (:func:`conformance.gate.suites.semantic.
probe`) runs too: every disagreement it finds is shrunk to a minimal example and becomes a case of the report.
"""
from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import httpx

from conformance.gate.pool import Unanswered
from conformance.gate.session import Identities, Session, TargetUnreachable, answer_of, curl
from conformance.gate.suites import data as suite_data
from conformance.gate.suites import semantic
from validator import Validator
from validator.context import OSLO, Context, Profile
from validator.findings import ERROR
from validator.spec import Spec

from .derive import Deriver, Edge

NO_TARGET = "none"
# What stands in for the target's test data when there is no target (the validator never looks them up).
PLACEHOLDERS = suite_data.Resources((suite_data.Customer("customer-number", "", "", ("account-id",), ("card-account-id",)),))
SEARCH_FIELD = "Hypothesis search"


@dataclass
class Case:
    rule: str
    field: str
    section: str
    kind: str
    operation: str
    edge: str
    pointer: str
    input: Any                 # the edge value itself (the whole request is in body / curl)
    body: Any
    verdict: str               # accepted | accepted with warnings | refused
    findings: list[dict]
    expected: str              # the answer a conforming implementation gives
    actual: str | None = None  # the target's answer
    agree: bool | None = None  # None: not sent
    note: str = ""
    curl: str = ""
    source: str = "derived"

    @property
    def group(self) -> str:
        return f"{self.rule} · {self.field}"


@dataclass
class Result:
    target: str
    today: str
    seed: int
    max_examples: int
    kinds: tuple[str, ...]
    cases: list[Case] = field(default_factory=list)
    seconds: float = 0.0
    faults: tuple[str, ...] = ()
    searched: int = 0         # requests the Hypothesis search sent (its agreeing cases are not listed one by one)

    def as_dict(self) -> dict:
        return {**{k: v for k, v in asdict(self).items() if k != "cases"}, "cases": [asdict(c) for c in self.cases]}


class _Recording(Session):
    """A session that also keeps the exchange of every disagreement the search reports."""

    def disagree(self, exchange, **what: Any) -> None:  # noqa: ANN001
        self.__dict__.setdefault("found", []).append((exchange, what))
        super().disagree(exchange, **what)


def noon_in_oslo(day: _dt.date) -> _dt.datetime:
    return _dt.datetime.combine(day, _dt.time(12), OSLO).astimezone(_dt.timezone.utc)


def run(spec: Spec, *, base_url: str | None, target: str, today: _dt.date | None, kinds: tuple[str, ...],
        seed: int, max_examples: int, profile: Profile | None = None, faults: tuple[str, ...] = (),
        progress: Callable[[int, int, str], None] | None = None) -> Result:
    """Every derived edge judged by the validator (and answered by the target at ``base_url`` when given)."""
    started = time.perf_counter()
    session = _Recording(base_url or "http://target.invalid", spec, profile or Profile(), Identities.throwaway(),
                         seed=seed, max_examples=max_examples)
    instant = session.now() if base_url else noon_in_oslo(today or session.today())
    day = session.validator_at(instant).today
    if not base_url:
        session._resources = PLACEHOLDERS  # the data suite's cache: no target to look them up on
    deriver = Deriver(spec, Validator(spec=spec, profile=session.profile, today=day), day)
    edges = deriver.edges(kinds or None)
    result = Result(target, day.isoformat(), seed, max_examples, tuple(sorted({e.kind for e in edges})),
                    faults=faults)
    clock = [instant]
    client = session.client(clock=lambda: clock[0])  # the Date signed is the instant the validator judges at
    searches = _searches(kinds) if base_url else []
    total = len(edges) + len(searches)
    try:
        for i, edge in enumerate(edges):
            if progress:
                progress(i, total, edge.group)
            result.cases.append(_judge(session, client, clock, instant, deriver, edge, send=bool(base_url)))
        for j, (rule_id, kind) in enumerate(searches):
            if progress:
                progress(len(edges) + j, total, f"search {rule_id or 'valid controls'} · {kind}")
            found, sent = _search(session, rule_id, kind)
            result.cases.extend(found)
            result.searched += sent
    finally:
        session.close()
    if progress:
        progress(total, total, "done")
    result.seconds = time.perf_counter() - started
    return result


def _operation(deriver: Deriver, kind: str) -> str:
    return deriver.bases[kind][0]


def _judge(session: Session, client, clock: list, instant: _dt.datetime, deriver: Deriver, edge: Edge, *,
           send: bool) -> Case:
    operation = _operation(deriver, edge.kind)
    at = _dt.datetime.fromisoformat(edge.at) if edge.at else None
    clock[0] = at or (session.now() if send else instant)
    note = edge.only_validator
    if send and not note and edge.kind not in semantic.OPERATIONS:
        note = semantic.LEFT_OUT.get(edge.kind, f"the conformance suites send no {edge.kind} request")
    sending = send and not note
    where = semantic._where(session, operation)
    request = client.prepare(operation, body=_json(edge.body), headers=dict(edge.headers), **where)
    context = Context.from_mapping(edge.context) if edge.context else None
    when = clock[0]
    findings = session.findings_for(request, at=when, context=context)
    expected, _errors = session.predict(request, success=semantic._created(session, operation), at=when,
                                        context=context)
    case = Case(edge.rule, edge.field, edge.section, edge.kind, operation, edge.edge, edge.pointer,
                _input(edge), edge.body, _verdict(findings), [_finding(f) for f in findings],
                expected.describe(), note=note, source=edge.source)
    if sending:
        try:
            response = client.send_prepared(request)
        except httpx.HTTPError as exc:
            raise TargetUnreachable(f"{request.method} {request.target}: {type(exc).__name__}: {exc}") from None
        except Unanswered as exc:  # a timeout, a 429 that did not pass (the pool's): this case's answer, not the run's
            case.actual, case.agree, case.curl = f"no answer: {exc.message}", False, curl(session.base_url, request)
            return case
        answer = answer_of(response)
        case.actual = answer.describe()
        case.agree = expected.allows(answer)
        case.curl = curl(session.base_url, request)
    return case


def _input(edge: Edge) -> Any:
    if edge.headers:
        return dict(edge.headers)
    if not edge.pointer:
        return edge.body
    node = edge.body
    for token in edge.pointer.split("/")[1:]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _verdict(findings: list) -> str:
    if any(f.severity == ERROR for f in findings):
        return "refused"
    return "accepted with warnings" if findings else "accepted"


def _finding(f) -> dict:
    return {"rule": f.rule, "severity": f.severity, "status": f.status, "code": f.code, "pointer": f.pointer,
            "message": f.message}


# ---------------------------------------------------------------------------------------------- the search
def _searches(kinds: tuple[str, ...]) -> list[tuple[str | None, str]]:
    """(rule id or None for valid controls, kind) pairs the semantic suite's search covers."""
    reached = [k for k in semantic.OPERATIONS if not kinds or k in kinds]
    pairs: list[tuple[str | None, str]] = [(None, k) for k in reached]
    for rule_id, rule_kinds in semantic._request_mutations().items():
        pairs += [(rule_id, k) for k in rule_kinds if k in reached]
    return pairs


def _search(session: _Recording, rule_id: str | None, kind: str) -> tuple[list[Case], int]:
    """The semantic suite's Hypothesis search for one rule and kind: each shrunk disagreement is a case; and the
    number of requests sent."""
    operation = semantic.OPERATIONS[kind]
    before = len(session.__dict__.get("found", []))
    session.begin("edge-cases", f"search:{rule_id or semantic.CONTROL}")
    sent = semantic.probe(session, operation, kind, rule_id)
    cases = []
    for exchange, what in session.__dict__.get("found", [])[before:]:
        request = exchange.request
        try:
            body = json.loads(request.body) if request.body else None
        except ValueError:
            body = request.body.decode("utf-8", "replace")
        findings = session.findings_for(request)
        rule = what.get("rule") or rule_id or semantic.CONTROL
        known = session.catalogue.get(rule)
        cases.append(Case(rule, SEARCH_FIELD, known.ref if known else "", kind, operation,
                          f"shrunk by Hypothesis: {what.get('message', '')}", "", body, body, _verdict(findings),
                          [_finding(f) for f in findings], what.get("expected", ""), exchange.answer.describe(),
                          False, curl=curl(session.base_url, request), source="search"))
    return cases, sent
