"""Hypothesis strategies for a TPP's own tests: valid payloads, whole signed requests, payloads breaking one rule.

The public testing API of obvalidate's generators (README "Testing your TPP client"); everything is read from
spec/openapi.yaml, nothing is copied. Each strategy is a plain Hypothesis strategy: use it with ``@given`` or
``data.draw``.

:func:`payloads` — payloads of a kind (``obvalidate kinds``) the validator accepts without any finding on a day::

    @given(payloads("sepa-credit-transfer", today=date(2031, 3, 15)))
    def test_my_mapper_round_trips(body): ...

:func:`signed_requests` — whole requests of an operation, the body drawn from its kind's payloads (or from
``bodies``), built and signed by a :class:`conformance.client.SignedClient` (Digest, Date, Signature,
TPP-Signature-Certificate over the exact bytes), dated by the client's clock; send one with
``client.send_prepared(request)``::

    @given(signed_requests("createSepaCreditTransfer", client, query={"allowLogicalDuplicate": "true"}))
    def test_created(request): assert client.send_prepared(request).status_code == 201

:func:`breaking` — a valid payload and a copy breaking exactly one named rule of the validator's catalogue, with the
answer a conforming bank gives (``status``, ``code``) and where (``pointer``). These are the mutations the
conformance gate sends (:mod:`conformance.mutations`): the differential tests prove each breaks its rule and no
other. :func:`breakable_rules` lists the rules a kind offers::

    @given(breaking("kid-invalid", "bulk-payment"))
    def test_my_client_refuses_a_bad_kid(broken): assert broken.status == 400 and broken.code == "KID_INVALID"

``today`` is a :class:`datetime.date` or ISO text; by default the day in Europe/Oslo (A13) of the strategy's
client (:func:`signed_requests`) or of the machine's clock. Payloads are ``realistic`` by default (non-empty
names, 1–3 payments: what a TPP sends); ``realistic=False`` reaches the boundaries the schema allows (an empty
name, a bulk without payments).
"""
from __future__ import annotations

import copy
import datetime as _dt
import functools
from dataclasses import dataclass
from typing import Any, Mapping

from hypothesis import strategies as st

from validator.context import today_in_oslo
from validator.spec import Spec, load_spec

__all__ = ["Broken", "breakable_rules", "breaking", "kind_of_operation", "payloads", "signed_requests"]


def _day(today: _dt.date | str | None) -> _dt.date:
    if today is None:
        return today_in_oslo()
    return _dt.date.fromisoformat(today) if isinstance(today, str) else today


def payloads(kind: str, *, today: _dt.date | str | None = None, realistic: bool = True,
             spec: Spec | None = None) -> st.SearchStrategy:
    """Payloads of ``kind`` the validator accepts on ``today`` without any finding, error or warning."""
    from conformance.generate import valid_payloads

    spec = spec or load_spec()
    spec.kind(kind)  # an unknown kind: the SpecError naming the kinds, now rather than at the first draw
    return valid_payloads(kind, today=_day(today), spec=spec, realistic=realistic)


def kind_of_operation(operation_id: str, spec: Spec | None = None) -> str | None:
    """The request kind of an operation's body (None: the operation takes no body)."""
    spec = spec or load_spec()
    op = spec.operation(operation_id)
    if not op.request_schema_ref:
        return None
    schema_name = op.request_schema_ref.rsplit("/", 1)[1]
    return next((k.name for k in spec.kinds.values() if k.is_request and k.schema_name == schema_name), None)


def signed_requests(operation_id: str, client, *, path: Mapping[str, str] | None = None,
                    query: Mapping[str, str] | None = None, headers: Mapping[str, str | None] | None = None,
                    bodies: st.SearchStrategy | None = None, today: _dt.date | str | None = None,
                    realistic: bool = True) -> st.SearchStrategy:
    """Whole signed requests (:class:`conformance.client.PreparedRequest`) of ``operation_id``, built by ``client``:
    every required header and query parameter filled from the spec (``path``, ``query``, ``headers`` as
    :meth:`SignedClient.prepare` takes them), a fresh X-Request-ID each, the body drawn from ``bodies`` or else from
    the payloads of the operation's kind valid on ``today`` (default: the client's day)."""
    kind = kind_of_operation(operation_id, client.spec)
    if bodies is None and kind is not None:
        day = _day(today) if today is not None else today_in_oslo(client.clock())
        bodies = payloads(kind, today=day, realistic=realistic, spec=client.spec)
    if bodies is None:
        return st.builds(lambda: client.prepare(operation_id, path=path, query=query, headers=headers))
    return bodies.map(lambda body: client.prepare(operation_id, path=path, query=query, headers=headers,
                                                  body=copy.deepcopy(body)))


@dataclass(frozen=True)
class Broken:
    """A payload breaking exactly one rule, and the answer the validator (and so a conforming bank) gives."""

    rule: str                 # the rule broken (validator catalogue id, `obvalidate rules`)
    kind: str
    valid: Any                # the valid payload it was made from
    payload: Any              # the payload breaking the rule
    severity: str             # "error" (the bank refuses it) or "warning" (accepted: status and code None)
    status: int | None        # the HTTP status a bank answers
    code: str | None          # the tppMessages code (FORMAT_ERROR, KID_INVALID, ...)
    pointer: str              # JSON pointer of the broken value in ``payload``
    message: str              # the validator's message
    context: Mapping | None = None  # what the rule needs to know besides the payload (a basket's payments)


def breakable_rules(kind: str) -> tuple[str, ...]:
    """The rules :func:`breaking` can break in payloads of ``kind``."""
    from conformance.mutations import MUTATIONS

    return tuple(rule for rule, (kinds, _fn) in MUTATIONS.items() if kind in kinds)


def breaking(rule: str, kind: str, *, today: _dt.date | str | None = None,
             realistic: bool = True) -> st.SearchStrategy:
    """:class:`Broken` payloads of ``kind`` breaking ``rule`` (and no other rule) on ``today``."""
    from conformance.mutations import MUTATIONS

    if rule not in MUTATIONS:
        raise ValueError(f"no mutation breaks rule {rule!r}; the rules: {', '.join(sorted(MUTATIONS))}")
    if kind not in MUTATIONS[rule][0]:
        raise ValueError(f"rule {rule!r} is broken in payloads of {', '.join(MUTATIONS[rule][0])}, not {kind!r}; "
                         f"{kind} offers: {', '.join(breakable_rules(kind)) or 'none'}")
    return _broken(rule, kind, _day(today), realistic)


class _Draws:
    """What the mutations draw with (``data.draw(strategy, label=...)``), over a composite strategy's ``draw``."""

    def __init__(self, draw) -> None:
        self._draw = draw

    def draw(self, strategy: st.SearchStrategy, label: str | None = None) -> Any:
        return self._draw(strategy)


@functools.lru_cache(maxsize=8)
def _validator(day: _dt.date):
    from validator.api import Validator

    return Validator(today=day)


@st.composite
def _broken(draw, rule: str, kind: str, day: _dt.date, realistic: bool) -> Broken:
    from conformance.mutations import mutate
    from validator.context import Context

    valid, mutant = mutate(rule, kind, _Draws(draw), today=day, realistic=realistic)
    validator = copy.copy(_validator(day))
    if mutant.context:
        validator.context = Context.from_mapping(mutant.context)
    report = validator.validate(mutant.payload, kind)
    finding = next(f for f in report.findings if f.rule == rule)
    return Broken(rule, kind, valid, mutant.payload, finding.severity, finding.status, finding.code, finding.pointer, finding.message,
                  mutant.context)
