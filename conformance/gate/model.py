"""What the conformance gate is made of: registered checks, the answers they compare, and the findings they produce.

A check is a plain function registered with :func:`check` under a stable id, the suite it belongs to and the
decisions or document sections it enforces (Schemathesis registers its checks the same way). It receives the run's
:class:`~conformance.gate.session.Session`, sends requests through it and reports disagreements with
:meth:`Session.disagree`; it raises :class:`NotExercised` when the target lacks what it needs (a sandbox-only
operation), which is reported as "not exercised", never as a failure.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from conformance.exchange.expect import DIFFERENCE, FAILURE, Expected  # noqa: F401 - re-exported for the checks
from validator.formats.escape import printable

Session = Any  # conformance.gate.session.Session, which builds on this module

# In running order: the Schemathesis suites first, since they may reset the sandbox (initializeSandbox) or run its
# batch, which the scenarios of the others must not meet half-way.
SUITES = ("schema", "negative", "semantic", "security", "stateful")


class NotExercised(Exception):
    """The target lacks what the check needs (e.g. a sandbox-only operation): the check is not exercised."""


# The stable heads of "not exercised" reasons a profile or the target's data cause (the summary counts by reason):
# each reason is one of these, then what in particular (see reason()).
NOT_OFFERED = "not offered"                          # a payment product the profile lists under products-not-offered
ABSENT_IN_PROFILE = "absent in the profile"          # an operation the profile lists under absent-operations
NO_TEST_DATA = "the target's sandbox data has no"    # followed by what a check needed, e.g. "an EUR account"
SETUP_FAILED = "setup failed"                        # a step a check needs failed on the target (what answered what)
STOPPED_EARLY = "stopped early"                      # a scenario ended at a failed step: the rest was not judged


def reason(head: str, what: str) -> str:
    """A not-exercised reason: a stable head and what in particular ("not offered: <product>", "the target's sandbox
    data has no <what>")."""
    return f"{head} {what}" if head == NO_TEST_DATA else f"{head}: {what}"


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


# An answer's headers as a finding keeps them: a target's own reason is often there (Prism's ``sl-violations``), but
# a hostile or broken target may send many, long or with control characters, so they are bounded and escaped.
HEADER_VALUE_LIMIT = 1000
HEADER_NAME_LIMIT = 64
HEADERS_LIMIT = 24


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def bounded_headers(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """An answer's headers as a finding keeps them: names lower-cased, a repeated header's values joined with ", "
    (RFC 9110 section 5.3), each escaped (:func:`printable`) and cut to :data:`HEADER_VALUE_LIMIT` characters, at
    most :data:`HEADERS_LIMIT` headers (then one entry saying how many more)."""
    merged: dict[str, list[str]] = {}
    for name, value in pairs:
        merged.setdefault(_cut(printable(name.lower()), HEADER_NAME_LIMIT), []).append(value)
    kept = [(name, _cut(printable(", ".join(values)), HEADER_VALUE_LIMIT)) for name, values in merged.items()]
    if len(kept) > HEADERS_LIMIT:
        kept = kept[:HEADERS_LIMIT] + [("…", f"{len(kept) - HEADERS_LIMIT} more headers")]
    return tuple(kept)


@dataclass(frozen=True)
class Answer:
    """An HTTP answer as the gate compares it: status, the error code (tppMessages[0].code or the bulk body's code),
    a short excerpt of the body and the headers (both bounded and escaped, as the target sent them)."""

    status: int | None
    code: str | None = None
    excerpt: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        if self.status is None:
            return "no answer"
        return f"{self.status} {self.code}" if self.code else str(self.status)


# What a check expects of an answer it judges by the spec's declared responses (the response kinds), not a status.
DECLARED_ANSWER = "an answer the spec declares"
# The "actual" of a finding about several answers (pages, concurrent creations): its message says them.
SEVERAL_ANSWERS = "as the message says"
ABSENT = "absent"


def said(value: Any) -> str:
    """A value a target answered (or left out) as a finding's message says it: ``absent`` for a missing one, never
    Python's ``None``; text quoted, anything else as JSON writes it."""
    if value is None:
        return ABSENT
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


_IDS = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                  r"|\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


def fingerprint(operation: str, rule: str, expected: str, actual: str, refused_for: str = "") -> str:
    """A defect's stable name: a hash over what does not depend on the suite, the check, the run or the request's
    ids and dates -- the operation, the rule, what was expected, the status and code answered and, for a refusal,
    the target's own reason (``refused_for``: two refusals for different reasons are two defects) -- so the same
    defect found by several checks, or in a later run, has the same fingerprint (a baseline can list them)."""
    parts = (operation, rule, expected, actual) + ((refused_for,) if refused_for else ())
    facts = "\x1f".join(_IDS.sub("*", part) for part in parts)
    return hashlib.sha256(facts.encode("utf-8")).hexdigest()[:16]


REFUSAL_TEXT = 80   # characters of a refusal's own text kept as its reason when it names no path


def refused_for(status: int | None, value: Any) -> str:
    """The target's own reason for a refusal, as a fingerprint keeps it: the tppMessage paths it names (A6), else
    its texts with the request's values masked (quoted strings, numbers), so two refusals of one operation for
    different reasons ("payments must be a non-empty array", "unknown alias") are two findings, and the same reason
    has the same words whatever values a seed sent. Empty for an answer that is no refusal or gives no reason."""
    if status is None or status < 400 or not isinstance(value, dict):
        return ""
    messages = [m for m in value.get("tppMessages") or () if isinstance(m, dict)] \
        if isinstance(value.get("tppMessages"), list) else []
    paths = [m["path"] for m in messages if isinstance(m.get("path"), str) and m["path"]]
    if paths:
        return "path " + ", ".join(map(repr, dict.fromkeys(paths)))
    texts = [m.get("text") for m in messages] or [value.get("message")]
    texts = [_VALUES.sub("…", t.strip())[:REFUSAL_TEXT] for t in texts if isinstance(t, str) and t.strip()]
    return "text " + "; ".join(map(repr, dict.fromkeys(texts))) if texts else ""


_VALUES = re.compile(r"'[^']*'|\"[^\"]*\"|\d+(?:\.\d+)?")


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
    headers: dict[str, str] = field(default_factory=dict)   # the answer's, bounded and escaped (bounded_headers)
    refused_for: str = ""     # a refusal's own reason (refused_for()): part of the fingerprint
    answer_sha256: str = ""   # the answer body's hash: the same canned body behind many findings is said once
    # files the report directory ships for the curl (the certificate a certificate finding is about): name -> text
    files: dict[str, str] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)   # the A6 finding: the refusals it stands for
    fingerprint: str = field(init=False, default="")
    # What a replay needs (conformance.gate.replay): the request without its signature headers and what the check
    # altered on purpose (recorded.record), the judgement in machine form, and how the finding is replayed.
    request: dict[str, Any] | None = None
    expectation: dict[str, Any] | None = None   # {statuses, codes, codeless} or {declared_answer: true}
    replay: dict[str, str] = field(default_factory=dict)   # {"by": "request"} or {"by": "check", "why": ...}
    # The two tiers (issue 27): a failure contradicts the document (the run fails); a difference follows another
    # reading of a point the document leaves open -- the decision it differs from and the profile line that would
    # state the target's choice -- counted, never failing the run.
    tier: str = FAILURE
    decision: str | None = None
    profile_line: str | None = None

    def __post_init__(self) -> None:
        self.fingerprint = fingerprint(self.operation, self.rule, self.expected, self.actual, self.refused_for)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["files"] = sorted(self.files)   # written beside the report (report.write), not into it
        return out


ALSO_LIMIT = 10   # other sightings' messages a finding group lists


@dataclass
class FindingGroup:
    """One defect: the findings of the run with the same fingerprint, whichever checks and suites saw them. The
    first one found (in report order) stands for the group; ``checks`` names every check that saw it. ``id`` names
    it in this run's reports (F1, F2, ... in report order); ``baseline`` is "known" or "new" when the run is compared
    with a baseline (baseline.py), else None."""

    finding: Finding
    occurrences: list[Finding]
    id: str = ""
    baseline: str | None = None

    @property
    def tier(self) -> str:
        return self.finding.tier

    @property
    def checks(self) -> list[str]:
        return list(dict.fromkeys(f.check for f in self.occurrences))

    @property
    def suites(self) -> list[str]:
        return list(dict.fromkeys(f.suite for f in self.occurrences))

    def also(self, limit: int = ALSO_LIMIT) -> list[dict[str, str]]:
        """The other sightings' checks and messages where they say something the first does not (another site of
        the same rule, another scenario), at most ``limit``."""
        seen = {(self.finding.check, self.finding.message)}
        out = []
        for f in self.occurrences[1:]:
            if (f.check, f.message) not in seen and len(out) < limit:
                seen.add((f.check, f.message))
                out.append({"check": f.check, "message": f.message})
        return out

    def as_dict(self) -> dict[str, Any]:
        out = {"id": self.id, **self.finding.as_dict(), "checks": self.checks, "suites": self.suites,
               "occurrences": len(self.occurrences), "also": self.also()}
        if self.baseline is not None:
            out["baseline"] = self.baseline
        return out


def grouped(findings: Iterable[Finding]) -> list[FindingGroup]:
    """Findings grouped by fingerprint, in the order of each group's first finding: the failures named F1, F2, ...,
    then the differences D1, D2, ... (a failure sighting makes its group a failure)."""
    groups: dict[str, FindingGroup] = {}
    for f in findings:
        if f.fingerprint in groups:
            group = groups[f.fingerprint]
            group.occurrences.append(f)
            if f.tier == FAILURE and group.finding.tier != FAILURE:
                group.finding = f
        else:
            groups[f.fingerprint] = FindingGroup(f, [f])
    failures = [g for g in groups.values() if g.tier == FAILURE]
    differences = [g for g in groups.values() if g.tier != FAILURE]
    for prefix, part in (("F", failures), ("D", differences)):
        for number, group in enumerate(part, 1):
            group.id = f"{prefix}{number}"
    return failures + differences


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
