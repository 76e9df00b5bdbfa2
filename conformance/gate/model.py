"""What the conformance gate is made of: registered checks, the answers they compare, and the findings they produce.

A check is a plain function registered with :func:`check` under a stable id, the suite it belongs to and the
decisions or document sections it enforces (Schemathesis registers its checks the same way). It receives the run's
:class:`~conformance.gate.session.Session`, sends requests through it and reports disagreements with
:meth:`Session.disagree`; it raises :class:`NotExercised` when the target lacks what it needs (a sandbox-only
operation), which is reported as "not exercised", never as a failure.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

Session = Any  # conformance.gate.session.Session, which builds on this module

SUITES = ("semantic", "security", "stateful")


class NotExercised(Exception):
    """The target lacks what the check needs (e.g. a sandbox-only operation): the check is not exercised."""


@dataclass(frozen=True)
class Check:
    id: str
    suite: str
    title: str
    refs: tuple[str, ...]            # decisions (A1-A32) and document sections the check enforces
    function: Callable[[Session], None]

    def __call__(self, session: Session) -> None:
        self.function(session)


REGISTRY: dict[str, Check] = {}


def check(check_id: str, *, suite: str, title: str, refs: tuple[str, ...] = ()) -> Callable:
    """Register a check function under a stable id (a duplicate id is refused)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}")

    def register(function: Callable[[Session], None]) -> Callable[[Session], None]:
        if check_id in REGISTRY:
            raise ValueError(f"check id {check_id!r} is registered twice")
        REGISTRY[check_id] = Check(check_id, suite, title, tuple(refs), function)
        return function

    return register


@dataclass(frozen=True)
class Answer:
    """An HTTP answer as the gate compares it: status, the error code (tppMessages[0].code or the bulk body's code)
    and a short excerpt of the body."""

    status: int | None
    code: str | None = None
    excerpt: str = ""

    def describe(self) -> str:
        if self.status is None:
            return "no answer"
        return f"{self.status} {self.code}" if self.code else str(self.status)


@dataclass(frozen=True)
class Expected:
    """What a conforming implementation answers: any of ``statuses`` (with one of ``codes`` when given)."""

    statuses: tuple[int, ...]
    codes: tuple[str, ...] = ()
    why: str = ""

    def allows(self, answer: Answer) -> bool:
        if answer.status not in self.statuses:
            return False
        return not self.codes or answer.code in self.codes

    def describe(self) -> str:
        statuses = "/".join(str(s) for s in self.statuses)
        return f"{statuses} {'/'.join(self.codes)}".strip()


@dataclass
class Finding:
    """One disagreement between the target and the interface, with what it takes to reproduce it."""

    suite: str
    check: str
    operation: str
    rule: str                 # the validator catalogue's rule id, or the check's own id
    ref: str                  # the document section or decision
    message: str
    expected: str
    actual: str
    excerpt: str = ""
    seed: int | None = None
    curl: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Outcome:
    """The result of one check against one operation: ``passed``, ``failed`` (findings), ``not-exercised`` (reason)
    or ``error`` (the check itself broke; reason)."""

    suite: str
    check: str
    operation: str
    status: str = "passed"
    cases: int = 0
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["findings"] = [f.as_dict() for f in self.findings]
        return out
