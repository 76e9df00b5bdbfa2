"""The rule catalogue: every check obvalidate makes, with a stable id, its document section, the
status + code an implementation must answer, and a good and a bad example that the test suite runs.

Semantic rules are small functions registered with :func:`rule`. They receive one value the engine
found at a spec location they target (a component schema name or an ``x-rule`` tag of the spec)
and yield :class:`Issue` objects; the engine turns issues into findings, adding the pointer prefix,
the rule's metadata and the profile's overrides. Rules whose checking is done by the engine itself
(JSON Schema keywords, input decoding) are registered with :func:`engine_rule` so that they are in
the catalogue with their examples all the same.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from ..findings import ERROR, WARNING
from ..records import record


@record
class Issue:
    """What a rule function yields: a pointer relative to the value it was given, and a message."""

    path: str
    message: str
    severity: str | None = None  # None: the rule's (profile-adjusted) severity
    ref: str | None = None  # None: the rule's document section


@record
class Example:
    """A payload for a rule's documentation and tests.

    ``base`` names a spec example ("<operationId> request <name>" or "<operationId> <status> <name>")
    and ``patch`` maps JSON pointers to new values (``REMOVE`` deletes); or ``payload`` is given whole.
    ``pointer`` is where the bad example's finding must point.
    """

    kind: str | None  # None: detect the kind from the payload's shape
    base: str | None = None
    patch: tuple[tuple[str, Any], ...] = ()
    payload: Any = None
    pointer: str | None = None
    context: dict | None = None
    raw: bytes | None = None  # for input-decoding rules: the exact bytes
    options: dict | None = None  # validator options the example needs (e.g. max_bytes)


REMOVE = object()
# Target meaning "every object location of the kind" (with its declared properties).
EVERY_OBJECT = "@object"


@record
class Rule:
    """A catalogue entry; ``check`` is the function of a semantic rule (None: the engine checks it itself)."""

    id: str
    name: str
    summary: str
    ref: str
    severity: str
    code: str | None
    status: int | None
    targets: tuple[str, ...]
    kinds: tuple[str, ...] | None  # None: every kind where a target occurs
    direction: str | None  # "request" | "response" | None for both
    assumptions: tuple[str, ...]
    good: Example | None
    bad: Example | None
    check: Callable[..., Iterable[Issue]] | None = None
    group: str = "semantic"
    # Decided once per kind from the spec: can the rule find anything at a place with this declared
    # object shape (None: not an object schema)? Places where it cannot are never visited.
    applies_at: Callable[[Any], bool] | None = None

    def applies_to(self, kind: str, direction: str) -> bool:
        if self.direction and self.direction != direction:
            return False
        return self.kinds is None or kind in self.kinds


_REGISTRY: dict[str, Rule] = {}
# A7: a violation of a body, query or header value is answered 400 FORMAT_ERROR.
DEFAULT_CODE, DEFAULT_STATUS = "FORMAT_ERROR", 400


def _register(r: Rule) -> Rule:
    if r.id in _REGISTRY:
        raise ValueError(f"rule id {r.id!r} registered twice")
    if r.severity not in (ERROR, WARNING):
        raise ValueError(f"rule {r.id}: severity must be error or warning")
    if r.severity == WARNING:
        # A warning is accepted, not answered; a profile that makes it an error gets A7's answer.
        r = r._replace(code=None, status=None)
    _REGISTRY[r.id] = r
    return r


def rule(
    id: str,
    *,
    name: str,
    ref: str,
    targets: Iterable[str],
    severity: str = ERROR,
    code: str | None = "FORMAT_ERROR",
    status: int | None = 400,
    kinds: Iterable[str] | None = None,
    direction: str | None = "request",
    assumptions: Iterable[str] = (),
    good: Example | None = None,
    bad: Example | None = None,
    applies_at: Callable[[Any], bool] | None = None,
) -> Callable[[Callable], Callable]:
    """Register a semantic rule function; its docstring is the rule's explanation."""

    def decorate(fn: Callable) -> Callable:
        _register(
            Rule(
                id=id,
                name=name,
                summary=" ".join((fn.__doc__ or "").split()),
                ref=ref,
                severity=severity,
                code=code,
                status=status,
                targets=tuple(targets),
                kinds=tuple(kinds) if kinds is not None else None,
                direction=direction,
                assumptions=tuple(assumptions),
                good=good,
                bad=bad,
                check=fn,
                applies_at=applies_at,
            )
        )
        return fn

    return decorate


def engine_rule(
    id: str,
    *,
    name: str,
    summary: str,
    ref: str,
    severity: str = ERROR,
    code: str | None = "FORMAT_ERROR",
    status: int | None = 400,
    group: str,
    assumptions: Iterable[str] = (),
    good: Example | None = None,
    bad: Example | None = None,
    direction: str | None = None,
) -> Rule:
    return _register(
        Rule(
            id=id,
            name=name,
            summary=" ".join(summary.split()),
            ref=ref,
            severity=severity,
            code=code,
            status=status,
            targets=(),
            kinds=None,
            direction=direction,
            assumptions=tuple(assumptions),
            good=good,
            bad=bad,
            check=None,
            group=group,
        )
    )


def catalogue() -> dict[str, Rule]:
    """Every registered rule, by id (importing the rule modules registers them)."""
    from . import load_all  # noqa: F401  (import side effect: registration)

    return dict(_REGISTRY)


def get(rule_id: str) -> Rule:
    return catalogue()[rule_id]


def semantic_rules() -> Iterator[Rule]:
    return (r for r in catalogue().values() if r.check is not None)
