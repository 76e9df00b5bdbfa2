"""Running the edges: each one built into a request signed by the conformance client, judged by the validator's
whole-request check (the conformance gate's oracle, :class:`~conformance.gate.session.Session`), and — with a target
— sent and compared. With a target, the semantic suite's Hypothesis search (:func:`conformance.gate.suites.semantic.
probe`) runs too: every disagreement it finds is shrunk to a minimal example and becomes a case of the report.
"""
from __future__ import annotations

import datetime as _dt
import json
import shlex
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import httpx

from conformance.gate.model import Answer, NotExercised, printable
from conformance.gate.pool import GatewayOptions, Unanswered
from conformance.gate.session import Identities, Session, TargetUnreachable, TlsFailure, answer_of, curl
from conformance.gate.suites.data import PLACEHOLDERS
from conformance.gate.suites import boundaries, semantic
from conformance.gate.tls import TlsOptions
from validator import Validator
from validator.context import OSLO, Context, Profile
from validator.findings import ERROR
from validator.spec import Spec

from .derive import Deriver, Edge

NO_TARGET = "none"
SEARCH_FIELD = "Hypothesis search"
# Why a case has no answer of the target (Case.unsent): left out by design, or the target lacked what it needs.
NOT_SENT, NOT_EXERCISED = "not sent", "not exercised"
# A target that cannot be connected to any more ends the run (exit 2); any other failure to answer is that case's
# answer.
GONE = (httpx.ConnectError, httpx.ConnectTimeout)
# The request kinds whose answer depends on the request alone, sent (the gate sends their boundaries), and why the
# other kinds' edges are not sent.
SENT = boundaries.OPERATIONS
NOT_SENT_WHY = boundaries.LEFT_OUT


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
    note: str = ""             # why the case was not sent (see unsent)
    curl: str = ""
    source: str = "derived"
    unsent: str = ""           # NOT_SENT (by design) or NOT_EXERCISED (the target lacks what it needs); "" sent
    assumptions: list[str] = field(default_factory=list)  # the decisions (A<n>) behind the verdict

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
    # (rule or valid controls, kind, why) of the searches the target gave nothing to search with
    searches_not_exercised: list[dict] = field(default_factory=list)
    # derived edges that break more than one rule, left out: {kind, field, edge, rules}
    left_out: list[dict] = field(default_factory=list)
    # the run's TLS as the report records it (TlsOptions.as_dict: the files, whether the target was verified)
    tls: dict | None = None

    def as_dict(self) -> dict:
        return {**{k: v for k, v in asdict(self).items() if k != "cases"}, "cases": [asdict(c) for c in self.cases]}


class _Recording(Session):
    """A session that also keeps the exchange of every disagreement the search reports."""

    def disagree(self, exchange, **what: Any) -> None:  # noqa: ANN001
        self.__dict__.setdefault("found", []).append((exchange, what))
        super().disagree(exchange, **what)


# A case's curl names the target as $TARGET: the run's own base URL is often a temporary port (--target reference).
TARGET_VARIABLE = '"${TARGET:?set TARGET to the base URL of the implementation}"'


def _curl(session: Session, request) -> str:  # noqa: ANN001
    """The curl reproducer of ``request`` with the run's gateway headers and TLS options, the target as $TARGET."""
    text = curl(session.base_url, request, session.gateway.headers, tls=session.tls)
    return text.replace(shlex.quote(session.base_url + request.target), TARGET_VARIABLE + shlex.quote(request.target),
                        1)


def noon_in_oslo(day: _dt.date) -> _dt.datetime:
    return _dt.datetime.combine(day, _dt.time(12), OSLO).astimezone(_dt.timezone.utc)


def run(spec: Spec, *, base_url: str | None, target: str, today: _dt.date | None, kinds: tuple[str, ...],
        seed: int, max_examples: int, profile: Profile | None = None, faults: tuple[str, ...] = (),
        progress: Callable[[int, int, str], None] | None = None,
        gateway: GatewayOptions = GatewayOptions(), tls: TlsOptions | None = None,
        identities: Identities | None = None) -> Result:
    """Every derived edge judged by the validator (and answered by the target at ``base_url`` when given, reached
    through ``gateway`` -- its headers, rate limit, request timeout and size cap -- and ``tls``, signed by
    ``identities``' TPP)."""
    started = time.perf_counter()
    session = _Recording(base_url or "http://target.invalid", spec, profile or Profile(),
                         identities or Identities.throwaway(), seed=seed, max_examples=max_examples, gateway=gateway,
                         tls=tls)
    instant = session.now() if base_url else noon_in_oslo(today or session.today())
    day = session.validator_at(instant).today
    clock = [instant]
    client = session.client(clock=lambda: clock[0])  # the Date signed is the instant the validator judges at

    def request_check(edge: Edge, operation: str) -> set[str]:
        """The rules a header edge's whole request breaks (the deriver verifies an edge against its rule)."""
        request = client.prepare(operation, body=_json(edge.body), headers=dict(edge.headers),
                                 **semantic._where(session, operation, PLACEHOLDERS))
        return {f.rule for f in session.findings_for(request, at=instant) if f.severity == ERROR}

    deriver = Deriver(spec, Validator(spec=spec, profile=session.profile, today=day), day, request_check)
    edges = deriver.edges(kinds or None)
    bare = [k for k in kinds if not any(e.kind == k for e in edges)]
    if bare:
        session.close()
        raise NoEdges(f"no edge case for {', '.join(bare)}: the spec has no request example of it that the validator "
                      "accepts to start from")
    result = Result(target, day.isoformat(), seed, max_examples, tuple(sorted({e.kind for e in edges})),
                    faults=faults, tls=tls.as_dict() if tls is not None else None, left_out=[{"kind": e.kind, "field": e.field, "edge": e.edge, "rules": list(rules)}
                                             for e, rules in deriver.left_out])
    searches = _searches(kinds) if base_url else []
    total = len(edges) + len(searches)
    places: dict[tuple[str, bool], tuple[dict, str]] = {}
    try:
        for i, edge in enumerate(edges):
            if progress:
                progress(i, total, edge.group)
            result.cases.append(_judge(session, client, clock, instant, deriver, edge, places,
                                       send=bool(base_url)))
        for j, (rule_id, kind) in enumerate(searches):
            if progress:
                progress(len(edges) + j, total, f"search {rule_id or 'valid controls'} · {kind}")
            found, sent, why = _search(session, rule_id, kind, places)
            result.cases.extend(found)
            result.searched += sent
            if why:
                result.searches_not_exercised.append({"rule": rule_id or semantic.CONTROL, "kind": kind,
                                                      "why": why})
    finally:
        session.close()
    if progress:
        progress(total, total, "done")
    result.seconds = time.perf_counter() - started
    return result


class NoEdges(ValueError):
    """A request kind asked for has no edge (its spec has no usable request example): the run cannot happen."""


def _operation(deriver: Deriver, kind: str) -> str:
    return deriver.bases[kind][0]


def _place(session: Session, operation: str, places: dict[tuple[str, bool], tuple[dict, str]],
           send: bool) -> tuple[dict, str]:
    """Path and query of ``operation`` on the target, and why not ("" when there is no reason): a target without the
    sandbox's fixed data (or that the profile says lacks the operation) gets the request judged with the placeholder
    data, not sent. Asked of the target once per operation."""
    key = (operation, send)
    if key not in places:
        try:
            places[key] = (semantic._where(session, operation, None if send else PLACEHOLDERS), "")
        except TlsFailure:
            raise
        except (NotExercised, TargetUnreachable, Unanswered, RecursionError) as exc:
            places[key] = (semantic._where(session, operation, PLACEHOLDERS), _trouble(exc))
    return places[key]


def _trouble(exc: BaseException) -> str:
    """Why the target gave nothing to judge, in one line (the target's own words escaped)."""
    if isinstance(exc, Unanswered):
        return f"no answer: {printable(exc.message)}"
    if isinstance(exc, RecursionError):
        return "the target's answer is JSON nested too deep to decode"
    if isinstance(exc, httpx.HTTPError):
        return f"no HTTP answer: {type(exc).__name__}: {printable(str(exc))[:300]}"
    if isinstance(exc, TargetUnreachable):  # a request of the gate's own (the test data's listing) got no answer
        return f"no HTTP answer to {printable(str(exc))[:300]}"
    return printable(str(exc))[:300]


def _judge(session: Session, client, clock: list, instant: _dt.datetime, deriver: Deriver, edge: Edge,
           places: dict[tuple[str, bool], tuple[dict, str]], *, send: bool) -> Case:
    operation = _operation(deriver, edge.kind)
    at = _dt.datetime.fromisoformat(edge.at) if edge.at else None
    clock[0] = at or (session.now() if send else instant)
    note = edge.only_validator
    if send and not note and edge.kind not in SENT:
        note = NOT_SENT_WHY.get(edge.kind, f"the conformance suites send no {edge.kind} request")
    unsent = NOT_SENT if send and note else ""
    where, missing = _place(session, operation, places, send and not note)
    if missing:
        note, unsent = missing, NOT_EXERCISED
    sending = send and not note
    request = client.prepare(operation, body=_json(edge.body), headers=dict(edge.headers), **where)
    context = Context.from_mapping(edge.context) if edge.context else None
    when = clock[0]
    findings = session.findings_for(request, at=when, context=context)
    expected, _errors = session.predict(request, success=semantic._created(session, operation), at=when,
                                        context=context)
    case = Case(edge.rule, edge.field, edge.section, edge.kind, operation, edge.edge, edge.pointer,
                _input(edge), edge.body, _verdict(findings), [_finding(f) for f in findings],
                expected.describe(), note=note, source=edge.source, unsent=unsent,
                assumptions=_assumptions(session, edge.assumptions, findings))
    if sending:
        case.curl = _curl(session, request)
        try:
            response = client.send_prepared(request)
        except GONE as exc:
            raise session.unreachable(f"{request.method} {request.target}", exc) from None
        except (httpx.HTTPError, Unanswered) as exc:
            # a timeout, a 429 that did not pass (the pool's), a closed connection or bytes that are not HTTP: this
            # case's answer, not the run's
            case.actual, case.agree = _trouble(exc), False
            return case
        answer = _answer(response)
        case.actual = answer.describe()
        case.agree = expected.allows(answer)
    return case


def _answer(response: httpx.Response) -> Answer:
    """The answer to compare; a body nested deeper than the JSON decoder goes is judged by its status alone."""
    try:
        return answer_of(response)
    except RecursionError:
        return Answer(response.status_code, None, _trouble(RecursionError()))


def _assumptions(session: Session, own: tuple[str, ...], findings: list) -> list[str]:
    """The decisions behind a verdict: the edge's (its rule's and its field's) and those of the rules it broke."""
    found = [a for f in findings for a in (session.catalogue[f.rule].assumptions if f.rule in session.catalogue
                                           else ())]
    return sorted(dict.fromkeys([*own, *found]), key=lambda a: (len(a), a))


def _input(edge: Edge) -> Any:
    if edge.input is not None:
        return edge.input
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


def _search(session: _Recording, rule_id: str | None, kind: str,
            places: dict[tuple[str, bool], tuple[dict, str]]) -> tuple[list[Case], int, str]:
    """The semantic suite's Hypothesis search for one rule and kind: each shrunk disagreement is a case; the number
    of requests sent; and why the search was not exercised ("" when it was: the target refused the valid control,
    lacks the test data, or gave no answer to judge)."""
    from hypothesis.errors import Flaky

    operation = semantic.OPERATIONS[kind]
    before = len(session.__dict__.get("found", []))
    session.begin("edge-cases", f"search:{rule_id or semantic.CONTROL}")
    why, sent = _place(session, operation, places, True)[1], 0  # the target lacks the test data: not asked again
    try:
        if not why:
            sent = semantic.probe(session, operation, kind, rule_id)
    except TlsFailure:
        raise
    except GONE as exc:
        raise session.unreachable(f"the search for {rule_id or semantic.CONTROL} · {kind}", exc) from None
    except (NotExercised, TargetUnreachable, Unanswered, httpx.HTTPError, RecursionError) as exc:
        why = _trouble(exc)
    except Flaky as exc:  # answered otherwise when Hypothesis sent a case again, and not with a disagreement
        why = f"the target answered the same case otherwise when it was sent again ({type(exc).__name__})"
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
                          False, curl=_curl(session, request), source="search",
                          assumptions=_assumptions(session, tuple(known.assumptions) if known else (), findings)))
    return cases, sent, why
