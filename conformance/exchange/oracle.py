"""The validator as oracle: the whole-request check of a request exactly as sent, at the time it was sent, and what
a conforming implementation answers it (A7, A8 and the profile's choices).

The gate (its Session), the proxy and ``obvalidate traffic`` all ask this one oracle; the request is anything with
``method``, ``target`` (path and query as signed), ``headers`` (name-value pairs) and ``body`` (the exact bytes).
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import re
from typing import Any, Callable, Protocol, Sequence

from validator import Validator
from validator.context import Context, Profile, today_in_oslo
from validator.findings import ERROR, WARNING, Finding
from validator.request import Parsed, parse_envelope, request_findings, resolve_operation
from validator.spec import Spec

from .basis import cancellation_reading, kid_reading, refusal_readings, with_readings
from .expect import Expected

# Rules whose answer has a status but no code decided by the document or a decision (the catalogue's code is its
# suggestion, a profile may set another): the status is judged, the code not.
CODE_UNDECIDED = frozenset({"method-not-allowed"})
# Rules whose refusal the document does not require, judged only when the implementer's profile states them (their
# severity under `rules`): without that, accepting the request is right too. A37: an unsafe TPP-Redirect-URI.
JUDGED_WHEN_PROFILED = {"redirect-target-unsafe": "A37"}
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


class Sendable(Protocol):
    method: str
    target: str
    headers: Sequence[tuple[str, str]]
    body: bytes


def now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class Oracle:
    """The validator's findings and prediction for requests of one spec and profile."""

    def __init__(self, spec: Spec, profile: Profile) -> None:
        self.spec = spec
        self.profile = profile
        self.validator = Validator(spec=spec, profile=profile)
        self._plain: Validator | None = None
        self._template_patterns: list | None = None
        # The refusals of a valid request the bank's state explains, per operation (the judge's): a request whose
        # refusal is a decision may be accepted and then refused for its state (:func:`.basis.acceptance`).
        self.state_refusals: Callable[[Any], frozenset[tuple[int, str]]] = lambda _op: frozenset()

    def validator_at(self, at: _dt.datetime, context: Context | None = None) -> Validator:
        """The validator with its clock at ``at`` (signature Date window, certificate validity, "today" in Oslo for
        execution dates, A13), and ``context`` (the payments a basket names) when given."""
        return _at(self.validator, at, context)

    def findings(self, request: Sendable, *, at: _dt.datetime | None = None,
                 context: Context | None = None) -> list[Finding]:
        """The validator's whole-request findings for a request exactly as sent."""
        return request_findings(self.validator_at(at or now(), context), _parsed(request))

    def findings_by_decision(self, request: Sendable, *, at: _dt.datetime | None = None,
                             context: Context | None = None) -> list[Finding]:
        """The findings with the rules' own severities (the profile's rules not applied): what a request breaks
        whatever the profile made of it."""
        if self._plain is None:
            self._plain = Validator(spec=self.spec, profile=self.profile._replace(rules={}))
        return request_findings(_at(self._plain, at or now(), context), _parsed(request))

    def predict(self, request: Sendable, *, success: tuple[int, ...], at: _dt.datetime | None = None,
                context: Context | None = None,
                findings: list[Finding] | None = None) -> tuple[Expected, list[Finding]]:
        """What a conforming implementation answers, per the validator: any error finding's status and code (an
        implementation may report any of several errors first), or ``success`` when there is none. ``findings``:
        the request's findings when already known."""
        if findings is None:
            findings = self.findings(request, at=at, context=context)
        errors = [f for f in findings if f.severity == ERROR]
        expected = self.expectation(request, errors, success)
        if not errors:
            readings = refusal_readings(self.spec, self.profile, [f for f in findings if f.severity == WARNING])
            if request.method == "DELETE":
                readings += cancellation_reading(self.spec, self.profile, self._operation(request))
            elif request.method == "POST":
                readings += kid_reading(self.spec, self.profile, self._operation(request))
            expected = dataclasses.replace(expected, readings=readings) if readings else expected
        return expected, errors

    def expectation(self, request: Sendable, errors: list[Finding], success: tuple[int, ...]) -> Expected:
        """The errors' statuses and codes (any one of them: the document states no order of checks), the document's
        own answers added, with the other readings of the decisions behind them (:mod:`.basis`)."""
        expected = self._expectation(request, errors, success)
        if not errors:
            return expected
        op = self._operation(request)
        return with_readings(self.spec, self.profile, op, request, expected, errors, success,
                             self.state_refusals(op) if op is not None else frozenset())

    def _operation(self, request: Sendable):
        return resolve_operation(self.spec, request.method, request.target.split("?", 1)[0], paths=self.profile.paths,
                                 absent=self.profile.absent_operations).operation

    def _expectation(self, request: Sendable, errors: list[Finding], success: tuple[int, ...]) -> Expected:
        if not errors:
            return Expected(success, why="the validator finds no error")
        statuses = tuple(dict.fromkeys(f.status or 400 for f in errors))
        codes = tuple(dict.fromkeys(f.code or "FORMAT_ERROR" for f in errors))
        why = "; ".join(f"{f.rule}: {f.message}" for f in errors[:3])
        unstated = {f.rule for f in errors if f.rule in JUDGED_WHEN_PROFILED and f.rule not in self.profile.rules}
        if unstated and all(f.rule in unstated for f in errors):
            decisions = ", ".join(sorted({JUDGED_WHEN_PROFILED[r] for r in unstated}))
            return Expected(statuses, codes, why=f"{why} (accepting it is right too unless the profile states "
                                                 f"{', '.join(sorted(unstated))}, {decisions})",
                            codeless=tuple(s for s in success if s not in statuses))
        if all(f.rule == "path-unknown" for f in errors):
            return self._unknown_path(request, statuses, codes, why)
        return Expected(statuses, codes, why=why)

    def _unknown_path(self, request: Sendable, statuses: tuple[int, ...], codes: tuple[str, ...],
                      why: str) -> Expected:
        """A path no operation has may still fit a path template of the spec, a literal segment standing in for a
        parameter (/v1/signing-baskets/x/y fits /v1/{payment-service}/{payment-product}/{paymentId}). A router
        matching templates then answers as HTTP and that template's operation do -- a 405 where the template does
        not take the method (RFC 9110 section 15.5.6), a 400 for a parameter value it does not know where it does --
        and that is as right as our 404 (A7)."""
        fitting = self.templates_fitting(request.target.split("?", 1)[0])
        if not fitting:
            return Expected(statuses, codes, why=why)
        method = request.method.lower()
        takes = any(method in methods for _template, methods in fitting)
        return Expected(statuses + ((400,) if takes else ()), codes + (("FORMAT_ERROR",) if takes else ()),
                        why=f"{why} (the path fits {fitting[0][0]})", codeless=() if takes else (405,))

    def templates_fitting(self, path: str) -> list[tuple[str, frozenset[str]]]:
        """The spec's path templates ``path`` fits, parameters taking any one segment, with the methods each takes
        (lower case), the most literal first."""
        if self._template_patterns is None:
            paths = self.spec.document.get("paths", {})
            self._template_patterns = [
                (template, re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + r"\Z"),
                 frozenset(m for m in paths[template] if m in HTTP_METHODS))
                for template in sorted(paths, key=lambda t: t.count("{"))]
        return [(template, methods) for template, pattern, methods in self._template_patterns if pattern.match(path)]


def _at(validator: Validator, at: _dt.datetime, context: Context | None) -> Validator:
    v = copy.copy(validator)
    v.now = at
    v.today = today_in_oslo(at)
    v.today_given = False
    if context is not None:
        v.context = context
    return v


def _parsed(request: Sendable) -> Parsed:
    parsed = parse_envelope({"method": request.method, "path": request.target, "headers": list(request.headers)})
    if parsed.request is not None:
        parsed = Parsed(dataclasses.replace(parsed.request, body=request.body, body_is_exact=True), parsed.problems)
    return parsed


def declared(spec: Spec, operation_id: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The success (2xx) and refusal (4xx) statuses the spec declares for an operation (worked out once per spec)."""
    cache = spec._cache.setdefault("exchange-declared", {})
    found = cache.get(operation_id)
    if found is None:
        responses = spec.operation(operation_id).responses
        statuses = tuple(int(s) for s in responses if s.isdigit())
        found = cache[operation_id] = (tuple(s for s in statuses if s < 300),
                                       tuple(s for s in statuses if 400 <= s < 500))
    return found


