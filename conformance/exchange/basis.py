"""The basis of what a refusal must be (issue 27, two tiers): the interface document's own words, or a decision of
ours for a point it leaves open -- and, for each decision, the other readings a bank may follow without being wrong
by the document.

- **Status and code.** The document names few: the bulk operation's table (400 FORMAT_ERROR, ...) and the further
  stated error behaviour (KID errors 400, a corporate PSU without PSU-Corporate-ID 400, a bulk or periodic payment in
  a basket 400 REFERENCE_MIX_INVALID): the spec's ``x-document-answers``. Every other status and code is a decision
  (A7; A8 for signature and certificate failures): any 4xx with a code of the document's code set is another reading.
- **The refusal itself.** Some refusals are decisions (the spec's ``x-refusal-decisions``: a repeated JSON key, query
  parameter or header, A40), as are a header sent empty (A41) and a header format on an operation the header table
  does not list (A42): accepting the request is another reading.

A profile stating the rule (its status, code or severity under ``rules``, ``repeated-headers``) or pinning the
decision (``pinned-decisions``, ``conform --strict``) pins the other readings: the profile's answer is then the one
the target must give, and another is a failure naming the decision.
"""
from __future__ import annotations

from typing import Any, Sequence

from validator.context import ALL_DECISIONS, Profile
from validator.findings import Finding
from validator.spec import Operation, Spec

from .expect import Expected

A7, A8 = "A7", "A8"
CLIENT_ERRORS = tuple(range(400, 500))
# The headers of the document's request signing (all operations): listed for every operation, whatever its column.
SIGNING_HEADERS = frozenset({"x-request-id", "digest", "signature", "tpp-signature-certificate", "date"})
METHOD_NOT_ALLOWED = "method-not-allowed"


def _cached(spec: Spec, name: str, build) -> Any:
    cache = spec._cache.setdefault("exchange-basis", {})
    if name not in cache:
        cache[name] = build()
    return cache[name]


def document_codes(spec: Spec) -> tuple[str, ...]:
    """The document's code set: MessageCode without the members a decision added (A8's signature codes)."""
    def build() -> tuple[str, ...]:
        schema = spec.document["components"]["schemas"]["MessageCode"]
        added = {code for code, note in schema.get("x-extensions", {}).items() if "x-assumption" in note}
        return tuple(c for c in schema["enum"] if c not in added)
    return _cached(spec, "document-codes", build)


def all_codes(spec: Spec) -> tuple[str, ...]:
    return tuple(spec.document["components"]["schemas"]["MessageCode"]["enum"])


def document_answers(spec: Spec) -> list[dict[str, Any]]:
    return spec.document.get("x-document-answers", [])


def refusal_decision(spec: Spec, rule: str) -> str | None:
    """The decision whose refusal ``rule`` is (x-refusal-decisions), or None."""
    table = _cached(spec, "refusal-decisions", lambda: {
        r: entry["x-assumption"] for entry in spec.document.get("x-refusal-decisions", []) for r in entry["rules"]})
    return table.get(rule)


def _header(pointer: str) -> str | None:
    return pointer[len("/headers/"):] if pointer.startswith("/headers/") else None


def _values(request: Any, name: str) -> list[str]:
    return [v for n, v in request.headers if n.lower() == name.lower()]


def _rule_stated(profile: Profile, rule: str, *, severity: bool = False) -> bool:
    override = profile.rules.get(rule)
    if override is None:
        return False
    return override.severity == "error" if severity else (override.status is not None or override.code is not None)


def acceptance(spec: Spec, profile: Profile, op: Operation | None, request: Any, error: Finding,
               success: tuple[int, ...], state: frozenset[tuple[int, str]] = frozenset()) -> Expected | None:
    """Accepting the request as another reading of the decision that refuses it (A40, A41, A42) -- a success, or a
    refusal the bank's state explains (``state``: an unknown id, a conflict) -- pinned where the profile states or
    pins it; None: the refusal is the document's."""
    if not success:
        return None
    if error.rule == METHOD_NOT_ALLOWED:  # a method the endpoint table does not list, answered: an extension (a note)
        return Expected(tuple(range(200, 300)), why="an extension of the bank's",
                        pinned=profile.pinned_decisions == ALL_DECISIONS)
    decision, line = refusal_decision(spec, error.rule), None
    header = _header(error.pointer)
    if decision is not None:
        stated = False
        if error.rule == "header-duplicate" and header:
            stated = header.lower() in profile.repeated_headers
            line = f"repeated-headers: {{{header}: accepted}}"
        else:
            line = f"rules: {{{error.rule}: {{severity: warning}}}}"
    elif error.rule in (headers := spec.document["x-header-refusal-decisions"])["rules"] and header \
            and header.lower() not in SIGNING_HEADERS and op is not None:
        stated = False
        optional = any(p.name.lower() == header.lower() and not p.required for p in op.header_parameters)
        if optional and any(not v.strip() for v in _values(request, header)):
            decision = headers["empty-optional-header"]["x-assumption"]
        elif op.raw.get("x-header-table-column") == "none":
            decision = headers["operation-outside-the-header-table"]["x-assumption"]
        else:
            return None
        line = f"rules: {{{error.rule}: {{severity: warning}}}}"
    else:
        return None
    pinned = stated or profile.pins(decision) or _rule_stated(profile, error.rule, severity=True)
    return Expected(tuple(sorted({status for status, _code in state})), tuple(sorted({c for _s, c in state})),
                    why=f"accepting it is another reading ({decision})", codeless=success, decision=decision,
                    profile_line=line, pinned=pinned)


def answer_readings(spec: Spec, profile: Profile, op: Operation | None, error: Finding
                    ) -> tuple[tuple[tuple[int, str], ...], Expected | None]:
    """(answers the document itself gives this refusal, the other reading of the decision that gives its status and
    code -- pinned where the profile states the rule or pins the decision -- or None: the document names both)."""
    if error.status is None or error.code is None:
        return (), None
    operation_id = op.operation_id if op is not None else None
    stated_status = None
    answers: list[tuple[int, str]] = []
    for entry in document_answers(spec):
        if error.rule in entry.get("rules", ()):
            if "code" in entry:
                return ((entry["status"], entry["code"]),), None   # the document's status and code: no other reading
            stated_status = entry["status"]
        elif operation_id in entry.get("operations", ()) and entry["status"] == error.status:
            answers.append((entry["status"], entry["code"]))
            stated_status = entry["status"]
    decision = A8 if A8 in _rule_assumptions(error.rule) else A7
    pinned = profile.pins(decision) or _rule_stated(profile, error.rule)
    statuses = (stated_status,) if stated_status is not None else CLIENT_ERRORS
    codes = all_codes(spec) if decision == A8 else document_codes(spec)
    other = Expected(statuses, codes, why=f"any {'/'.join(map(str, statuses)) if stated_status else '4xx'} with a "
                     f"code of the {'interface' if decision == A8 else 'document'}'s code set ({decision})",
                     decision=decision, pinned=pinned,
                     profile_line=f"rules: {{{error.rule}: {{status: {{status}}, code: {{code}}}}}}")
    return tuple(answers), other


def _rule_assumptions(rule: str) -> tuple[str, ...]:
    from validator.rules import catalogue

    known = catalogue().get(rule)
    return known.assumptions if known else ()


def with_readings(spec: Spec, profile: Profile, op: Operation | None, request: Any, expected: Expected,
                  errors: Sequence[Finding], success: tuple[int, ...],
                  state: frozenset[tuple[int, str]] = frozenset()) -> Expected:
    """``expected`` (the errors' statuses and codes) with the document's own answers added and the other readings of
    the decisions it follows: accepting the request where every error's refusal is a decision (A40-A42), another 4xx
    with a code of the document's code set where a decision gives the status and code (A7, A8)."""
    if not errors or not expected.codes:
        return expected
    readings: list[Expected] = []
    accepted = [acceptance(spec, profile, op, request, e, success, state) for e in errors]
    if all(accepted):
        readings.append(accepted[0])
    extra: list[tuple[int, str]] = []
    for e in errors:
        answers, other = answer_readings(spec, profile, op, e)
        extra.extend(answers)
        if other is not None and all((r.decision, r.profile_line) != (other.decision, other.profile_line)
                                     for r in readings):
            readings.append(other)
    statuses = expected.statuses + tuple(s for s, _c in extra if s not in expected.statuses)
    codes = expected.codes + tuple(dict.fromkeys(c for _s, c in extra if c not in expected.codes))
    return Expected(statuses, codes, expected.why, expected.codeless, readings=tuple(readings))


def refusal_readings(spec: Spec, profile: Profile, warnings: Sequence[Finding]) -> tuple[Expected, ...]:
    """Refusing a request whose only findings are warnings of decided rules (a non-UUID X-Request-ID, A17; an unknown
    property, A19; ...) as another reading: a 4xx with a code of the document's code set is a difference from the
    rule's decision, unless the profile states the rule or pins the decision."""
    readings: list[Expected] = []
    for w in warnings:
        decision = next(iter(_rule_assumptions(w.rule)), None)
        if decision is None:
            continue
        if any(r.decision == decision and w.rule in (r.profile_line or "") for r in readings):
            continue
        readings.append(Expected(CLIENT_ERRORS, document_codes(spec), why=f"refusing it is another reading "
                                 f"({decision})", decision=decision,
                                 profile_line=f"rules: {{{w.rule}: {{severity: error, status: {{status}}, "
                                              f"code: {{code}}}}}}",
                                 pinned=w.rule in profile.rules or profile.pins(decision)))
    return tuple(readings)


def cancellation_reading(spec: Spec, profile: Profile, op: Operation | None) -> tuple[Expected, ...]:
    """A DELETE the payment's or basket's state refuses "yields an error message" whose code the document does not
    name: another 4xx with a code of its code set is a difference from A5 (cancellation-refused), unless the profile
    states the key or pins A5."""
    if op is None or "x-cancellation" not in op.raw:
        return ()
    return (Expected(CLIENT_ERRORS, document_codes(spec), why="a cancellation the state refuses (A5)",
                     decision="A5", profile_line="cancellation-refused: {status: {status}, code: {code}}",
                     pinned=profile.states("cancellation-refused") or profile.pins("A5")),)


def kid_reading(spec: Spec, profile: Profile, op: Operation | None) -> tuple[Expected, ...]:
    """Which structured references are KIDs and which check digits count is A11's decision: a valid request of an
    operation whose payments carry KIDs (the kid-invalid rule's kinds) refused 400 KID_INVALID follows another
    reading (the bank's kid), unless the profile states kid or pins A11."""
    if op is None:
        return ()
    from validator.rules import catalogue

    kinds = catalogue()["kid-invalid"].kinds or ()
    if not any(f"{op.operation_id} request" in spec.kinds[k].operations for k in kinds if k in spec.kinds):
        return ()
    return (Expected((400,), ("KID_INVALID",), why="a KID read otherwise (A11)", decision="A11",
                     profile_line="kid: {reference-types: [<the bank's>], algorithms: [<the bank's>]}",
                     pinned=profile.states("kid") or profile.pins("A11")),)
