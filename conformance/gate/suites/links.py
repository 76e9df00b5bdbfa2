"""The spec's OpenAPI links walked by Schemathesis' state machine: created payments to their status, detail,
cancellation and authorisation and into a basket, baskets to theirs, authorisations to their status.

Schemathesis builds the state machine from the links (``schema.as_state_machine()``); each scenario starts from an
operation that creates something and follows links from its answers, so later steps read, cancel, authorise and
put in baskets what the target really created. Every step is the schema suite's case (:func:`.fuzz.send_case`):
signed over the exact bytes sent, the validator's prediction compared with the answer (for a basket, with the
payments this run created as context, so a bulk or periodic payment in a basket is predicted as the validator
predicts it), and every answer checked against the spec and the validator's response kinds. A disagreement is one
finding per operation and rule, with the link that led there; the walk goes on.

Scenarios are ``--max-examples`` long runs of at most :data:`STEPS_PER_SCENARIO` steps, seeded by ``--seed``,
without shrinking (each finding's curl reproduces the request as sent). A link counts as exercised when a step
followed it with the value it names; the clause coverage lists the links exercised and those not reached.
"""
from __future__ import annotations

import contextlib
import functools
import uuid
import warnings
from dataclasses import dataclass
from typing import Any, Iterator

from validator.context import Context, PaymentFacts
from validator.spec import Spec

from ..model import NotExercised, check
from ..session import ABSENT_STATUSES, NOT_REPRODUCIBLE, Disagreement, Session
from .fuzz import fuzzing_document, register_formats, send_case, served_paths

CHECK_ID = "stateful:links"
STEPS_PER_SCENARIO = 20
SANDBOX_TAG = "Sandbox"
DUPLICATES = "allowLogicalDuplicate"


@dataclass(frozen=True)
class Link:
    source: str      # operationId of the operation whose answer the link reads
    status: str
    name: str
    target: str      # operationId of the operation it leads to

    @property
    def label(self) -> str:
        return f"{self.source} {self.status} -> {self.name}"


def spec_links(spec: Spec) -> list[Link]:
    """Every link the spec declares, in document order."""
    found = []
    for item in spec.document.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for status, response in operation["responses"].items():
                for name, link in (response.get("links") or {}).items() if isinstance(response, dict) else ():
                    found.append(Link(operation["operationId"], str(status), name, link["operationId"]))
    return found


def link_reference(link: Link) -> str:
    """How the clause coverage names an exercised link (among the run's exercised references)."""
    return f"link {link.label}"


def links_document(document: dict) -> dict:
    """The fuzzing document (:func:`.fuzz.fuzzing_document`) whose links that give a request body replace the
    generated body (the basket the link names, not the link's id merged into a generated list of ids)."""
    doc = fuzzing_document(document)
    for item in doc.get("paths", {}).values():
        for operation in item.values():
            for response in (operation.get("responses") or {}).values() if isinstance(operation, dict) else ():
                for link in (response.get("links") or {}).values() if isinstance(response, dict) else ():
                    if "requestBody" in link:
                        link["x-schemathesis"] = {"merge_body": False}
    return doc


_SPECS: dict[int, Spec] = {}


@functools.lru_cache(maxsize=4)
def _linked_schema(spec_id: int, base_url: str, paths: tuple[tuple[str, str], ...] = ()):
    import schemathesis
    from schemathesis import GenerationMode

    spec = _SPECS[spec_id]
    register_formats()
    schema = schemathesis.openapi.from_dict(links_document(served_paths(spec.document, paths)))
    schema.config.update(base_url=base_url)
    # Schema-invalid requests are the negative suite's: the walk sends requests valid per the spec.
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    # The spec's links only: no links Schemathesis infers from names (they join unrelated operations).
    schema.config.phases.stateful.inference.algorithms = []
    linked = {op for link in spec_links(spec) for op in (link.source, link.target)}
    return schema.include(operation_id=sorted(linked))


def _operation_id(operation) -> str:
    return operation.definition.raw.get("operationId") or operation.label


def state_machine(session: Session):
    """The state machine over the spec's links, its steps sent and judged as the schema suite's cases."""
    from hypothesis import seed
    from schemathesis.generation.feedback import NO_FEEDBACK
    from schemathesis.generation.stateful.state_machine import StepOutput, normalize_name

    _SPECS[id(session.spec)] = session.spec
    # Without the pool of constants Schemathesis collects from the loaded Python modules (what it holds depends on
    # the process), so the same seed sends the same cases.
    base = _linked_schema(id(session.spec), session.base_url,
                          tuple(sorted(session.profile.paths.items()))).build_state_machine(feedback=NO_FEEDBACK,
                                                                                  link_calibration=None)
    labels = {link.full_name: Link(_operation_id(link.source), link.status_code, link.name,
                                   _operation_id(link.target))
              for transitions in base._transitions.operations.values() for link in transitions.outgoing}
    # Scenarios start where nothing links to: at the creations. A linked operation as a root is called with
    # generated ids, which the schema suite already does; here it would spend the walk on 404s.
    targets = {link.target.label for transitions in base._transitions.operations.values()
               for link in transitions.outgoing}
    dropped = {normalize_name(f"RANDOM -> {label}"): None for label in base._root_labels & targets}
    sandbox = {op.operation_id for op in session.spec.operations.values() if SANDBOX_TAG in op.raw.get("tags", ())}
    created: dict[str, dict[str, str]] = {}      # paymentId -> payment-service and payment-product
    reported: set[tuple[str, str]] = set()

    class LinkWalk(base):
        root_rules = base.root_rules - set(dropped)
        _root_labels = base._root_labels - targets

        def step(self, input) -> StepOutput | None:
            case = input.case
            operation_id = _operation_id(case.operation)
            followed = labels.get(input.transition.id) if input.transition is not None else None
            if _unavailable(operation_id, case):
                return None
            _new_request(case)
            try:
                response = send_case(session, case.operation, case, negative=False, context=_basket_context(case))
            except Disagreement as found:
                response = found.exchange.response
                _report(operation_id, found, followed)
            if response is None:
                return None
            session.outcome(operation_id).cases += 1
            if followed is not None and input.is_applied:
                session.exercised_refs.add(link_reference(followed))
            _learn_payment(case, response)
            return StepOutput(response, case)

    request_ids = iter(range(1, 2**62))

    def _unavailable(operation_id: str, case) -> bool:
        """A step the profile says the target cannot take (an absent operation, a product not offered: A15, A31) is
        not sent; the operation itself, when always so, is "not exercised" with that reason."""
        why = session.unavailable(operation_id, {k: str(v) for k, v in (case.path_parameters or {}).items()})
        if why and session.unavailable(operation_id):
            outcome = session.outcome(operation_id)
            outcome.status, outcome.reason = "not-exercised", why
        return bool(why)

    def _new_request(case) -> None:
        """Each step is a new request, each creation a new resource: a generated X-Request-ID (often the spec's
        example) would make most steps a replay of an earlier one (A29), and the simple bodies generated first
        logical duplicates of the schema suite's (A30) -- the targeted scenarios' business, not the walk's. The
        ids are numbered from the seed: the same seed, the same cases."""
        for name in list(case.headers or ()):
            if name.lower() == "x-request-id":
                case.headers[name] = str(uuid.UUID(int=(session.seed << 80) | next(request_ids), version=4))
        if any(p.name == DUPLICATES for p in case.operation.iter_parameters()):
            case.query = {**(case.query or {}), DUPLICATES: "true"}

    def _basket_context(case) -> Context | None:
        """The payments this run created, for the validator's basket rules (their service and product)."""
        if _operation_id(case.operation) != "createSigningBasket" or not created:
            return None
        return Context(payments={pid: PaymentFacts(where["payment-service"], where["payment-product"])
                                 for pid, where in created.items()})

    def _learn_payment(case, response) -> None:
        if response.status_code != 201 or "{paymentId}" in case.operation.path:
            return
        try:
            body = response.json()
        except ValueError:
            return
        segments = case.operation.path.split("/")  # a creation: /v1/{payment-service}/{payment-product}
        if isinstance(body, dict) and isinstance(body.get("paymentId"), str) and len(segments) == 4:
            created[body["paymentId"]] = {"payment-service": segments[2], "payment-product": segments[3]}

    def _report(operation_id: str, found: Disagreement, followed: Link | None) -> None:
        if operation_id in sandbox and found.exchange.answer.status in ABSENT_STATUSES:
            outcome = session.outcome(operation_id)
            outcome.status = "not-exercised"
            outcome.reason = f"the target has no {operation_id} ({found.exchange.answer.describe()})"
            return
        if (operation_id, found.rule) in reported:
            return
        reported.add((operation_id, found.rule))
        via = f"following {followed.label}: " if followed else ""
        session.disagree(found.exchange, rule=found.rule, ref="", expected=found.expected,
                         message=via + found.message)

    for name in dropped:
        setattr(LinkWalk, name, None)
    LinkWalk.__name__ = LinkWalk.__qualname__ = "LinkWalk"
    return seed(session.seed)(LinkWalk)


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis mixes string and number constants of the project's loaded modules into what it generates; the pool
    grows as modules load (the reference sandbox serving in the same process loads some lazily), so a second run in
    the same process would send other cases for the same seed. The walk draws without them."""
    from hypothesis.internal.conjecture import providers

    pool = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if pool is None or cache is None:   # another Hypothesis: same seed, same cases across processes still
        yield
        return
    empty = providers.Constants(integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
                                bytes=providers.SortedSet(), strings=providers.SortedSet())
    cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = pool
        cache.clear()


@check(CHECK_ID, suite="stateful",
       title="Schemathesis' state machine over the spec's links (created payments to status, detail, cancellation, "
             "authorisation and baskets): every step judged as the schema suite's cases",
       refs=("Endpoints", "A1", "A3", "A23", "A27", "A28"))
def walk_links(session: Session) -> None:
    from hypothesis import HealthCheck, Phase, settings
    from schemathesis.generation.stateful import run_state_machine_as_test

    machine = state_machine(session)
    # No shrinking, no replay: findings are recorded as the walk goes, never raised to Hypothesis.
    walk = settings(max_examples=session.max_examples, stateful_step_count=STEPS_PER_SCENARIO, database=None,
                    deadline=None, phases=(Phase.generate,), suppress_health_check=list(HealthCheck),
                    report_multiple_bugs=False, print_blob=False)
    from hypothesis.errors import Flaky

    try:
        with warnings.catch_warnings(), _without_local_constants():
            warnings.simplefilter("ignore")
            run_state_machine_as_test(machine, settings=walk)
    except Flaky as flaky:  # the findings are recorded as the walk goes: they stand, the walk ends here
        session.outcome("-").reason = (f"the walk ended early, {NOT_REPRODUCIBLE}: the target answered the same steps "
                                       f"otherwise when they were replayed ({type(flaky).__name__})")
    if not any(key[0] == CHECK_ID for key in session.outcomes):
        raise NotExercised("no step of the walk reached the target")


def exercised_links(spec: Spec, refs: set[str]) -> list[str]:
    return [link.label for link in spec_links(spec) if link_reference(link) in refs]


def links_coverage(spec: Spec, refs: set[str], ran: bool) -> dict[str, Any]:
    """Which of the spec's links the run followed, and why the others were not."""
    done = set(exercised_links(spec, refs))
    why = ("no scenario of the walk followed it (its source never answered with the value it names, or the walk "
           "was too short: raise --max-examples)" if ran else f"{CHECK_ID} did not run (suite or check not selected)")
    return {"exercised": [link.label for link in spec_links(spec) if link.label in done],
            "not_exercised": {link.label: why for link in spec_links(spec) if link.label not in done}}
