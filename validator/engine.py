"""Load → schema → rules → findings: the one path that decides whether a payload is valid.

The payload engine knows nothing of whole HTTP requests: :mod:`validator.api` sits above it and routes kind
``request`` to :mod:`validator.request.checker`, which is handed the engine for the body."""
from __future__ import annotations

import dataclasses
import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import rules as rules_pkg
from .context import DEFAULT_PROFILE, Context, Profile, parse_day, parse_instant, today_in_oslo
from .detect import Detection, detect_kind
from .findings import ERROR, Finding, Report
from .jsonload import JSONL_SUFFIXES, Loaded, jsonl_lines, load_json_bytes
from .locate import KindLayout, ObjectShape, build_layout, iter_values
from .schema import checker_for
from .spec import Kind, Spec, load_spec

DEFAULT_MAX_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class Location:
    """Where a rule's value sits: its pointer and, for objects, the declared properties there."""

    pointer: str
    shape: ObjectShape | None
    target: str  # the component name or x-rule tag that matched


@dataclass(frozen=True)
class RuleContext:
    spec: Spec
    kind: Kind
    today: _dt.date
    context: Context
    profile: Profile
    root: Any

    @property
    def is_request(self) -> bool:
        return self.kind.is_request

    @property
    def minor_units(self) -> dict[str, int]:
        return self.spec.minor_units


@dataclass(frozen=True)
class _Plan:
    kind: Kind
    layout: KindLayout
    # (rule, ((pattern, target), ...)) for every semantic rule with a target in this kind
    steps: tuple[tuple[rules_pkg.Rule, tuple[tuple[tuple, str], ...]], ...]


def plan_for(spec: Spec, kind_name: str) -> _Plan:
    """Where each semantic rule looks in payloads of a kind; built once per spec and kind."""
    key = ("plan", kind_name)
    plan = spec._cache.get(key)
    if plan is None:
        kind = spec.kind(kind_name)
        layout = build_layout(spec, kind.schema_name)
        steps = []
        for r in rules_pkg.semantic_rules():
            if not r.applies_to(kind.name, kind.direction):
                continue
            patterns: list[tuple[tuple, str]] = []
            for target in r.targets:
                if target == rules_pkg.EVERY_OBJECT:
                    patterns.extend((p, target) for p in layout.objects)
                else:
                    patterns.extend((p, target) for p in layout.locations.get(target, ()))
            if patterns:
                steps.append((r, tuple(dict.fromkeys(patterns))))
        plan = spec._cache[key] = _Plan(kind, layout, tuple(steps))
    return plan


class PayloadValidator:
    """Payload validation with one spec, profile and context; reuse it for many payloads. The public
    :class:`validator.Validator` (validator/api.py) adds whole requests."""

    def __init__(
        self,
        *,
        spec: Spec | None = None,
        profile: Profile | None = None,
        context: Context | None = None,
        today: _dt.date | str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        now: _dt.datetime | str | None = None,
    ):
        self.spec = spec or load_spec()
        self.profile = profile or DEFAULT_PROFILE
        self.context = context or Context()
        # The request clock (kind "request": Date window, certificate validity); see validator.request.checker._clock.
        self.now = _parse_now(now) if now is not None else None
        given = today or self.context.today or self.profile.today
        self.today_given = bool(given)
        self.today = parse_day(given, "today") if given else today_in_oslo(self.now)
        self.max_bytes = max_bytes
        self.catalogue = rules_pkg.catalogue()
        self._steps: dict[str, list] = {}

    # ---- entry points ----
    def validate(self, payload: Any, kind: str | None = None, *, source: str = "<payload>") -> Report:
        findings: list[Finding] = []
        candidates: tuple[str, ...] = ()
        detected = kind is None
        if detected:
            detection = self.detect_kind(payload)
            if detection.kind is None:
                report = Report(source, None)
                report.findings.append(self._engine_finding(("kind-undetected", detection.message), ""))
                return report
            kind, candidates = detection.kind, detection.candidates
            if not detection.confident:
                findings.append(self._engine_finding(("kind-ambiguous", detection.message), ""))
        report = Report(source, kind, findings, candidates=candidates if len(candidates) > 1 else (), detected=detected)
        report.findings.extend(self._check(payload, self.spec.kind(kind)))
        return report

    def validate_bytes(self, data: bytes, kind: str | None = None, *, source: str = "<bytes>") -> Report:
        loaded = load_json_bytes(data, max_bytes=self.max_bytes)
        report = self._from_loaded(loaded, kind, source)
        # Only a payload report points into this text (a subclass's whole-request report points into the request).
        if (report.kind is None or report.kind in self.spec.kinds) and any(f.line is None for f in report.findings):
            _add_positions(report, data)
        return report

    def validate_path(self, path: str | Path, kind: str | None = None) -> list[Report]:
        """A JSON file gives one report; a .jsonl or .ndjson file one report per non-blank line."""
        path = Path(path)
        size = path.stat().st_size
        if size > self.max_bytes and path.suffix not in JSONL_SUFFIXES:
            return [self.too_large(str(path), f"the file is {size:,} bytes; the limit is {self.max_bytes:,} bytes (--max-bytes)")]
        if path.suffix in JSONL_SUFFIXES:
            with path.open("rb") as stream:
                return [self.validate_line(line, kind, f"{path}:{lineno}") for lineno, line in jsonl_lines(stream, self.max_bytes)]
        return [self.validate_bytes(path.read_bytes(), kind, source=str(path))]

    def validate_line(self, line: bytes | None, kind: str | None, source: str) -> Report:
        """One JSONL line (None: longer than the limit, not read)."""
        if line is None:
            return self.too_large(source, f"the line is longer than {self.max_bytes:,} bytes (--max-bytes)")
        return self.validate_bytes(line, kind, source=source)

    def too_large(self, source: str, message: str) -> Report:
        """The report of an input refused for its size, unread."""
        return Report(source, None, [self._engine_finding(("json-too-large", message), "")])

    # ---- kind detection (validator/detect.py) ----
    def detect_kind(self, payload: Any) -> Detection:
        """The kind a payload is meant to be."""
        return detect_kind(self.spec, payload)

    # ---- the checks ----
    def _check(self, payload: Any, kind: Kind) -> list[Finding]:
        findings: list[Finding] = []
        request = kind.is_request
        checker = checker_for(self.spec, kind.schema_name)
        for issue in checker.issues(payload):
            finding = self._finding(issue.rule, issue.pointer, issue.message, request, ref=issue.ref)
            if finding:
                findings.append(finding)
        plan = plan_for(self.spec, kind.name)
        ctx = RuleContext(self.spec, kind, self.today, self.context, self.profile, payload)
        # Values are found once per location; every rule targeting that location then sees them.
        for pattern, shape, calls in self._active_steps(plan):
            values = iter_values(payload, pattern)
            if not values:
                continue
            for rule, target in calls:
                check = rule.check
                for pointer, value in values:
                    try:
                        issues = list(check(value, ctx, Location(pointer, shape, target)))
                    except Exception as exc:  # a rule bug must surface as a finding, never a traceback
                        findings.append(
                            Finding("internal-error", ERROR, pointer, f"rule {rule.id} failed: {type(exc).__name__}: {exc}", None, None, rule.ref)
                        )
                        continue
                    for issue in issues:
                        finding = self._finding(rule.id, pointer + issue.path, issue.message, request, severity=issue.severity, ref=issue.ref)
                        if finding:
                            findings.append(finding)
        findings.sort(key=_finding_order)
        return findings

    def _active_steps(self, plan: _Plan):
        """The plan's steps without the rules this validator's profile switched off."""
        cached = self._steps.get(plan.kind.name)
        if cached is None:
            by_pattern: dict[tuple, list] = {}
            for rule, patterns in plan.steps:
                if self._severity(rule.id) == "off":
                    continue
                for pattern, target in patterns:
                    by_pattern.setdefault(pattern, []).append((rule, target))
            objects = plan.layout.objects
            cached = self._steps[plan.kind.name] = [(p, objects.get(p), calls) for p, calls in by_pattern.items()]
        return cached

    def _severity(self, rule_id: str, issued: str | None = None) -> str:
        """The profile's severity for a rule, else the one the issue carries, else the rule's."""
        override = self.profile.rules.get(rule_id)
        if override and override.severity:
            return override.severity
        if issued:
            return issued
        rule = self.catalogue.get(rule_id)
        return rule.severity if rule else ERROR

    def _finding(
        self, rule_id: str, pointer: str, message: str, request: bool, *, ref: str | None = None, severity: str | None = None
    ) -> Finding | None:
        rule = self.catalogue.get(rule_id)
        chosen = self._severity(rule_id, severity)
        if chosen == "off":
            return None
        code = status = None
        if request and chosen == ERROR and rule is not None:  # what an implementation must answer
            code, status = self._answer(rule, self.profile.rules.get(rule_id))
        return Finding(rule_id, chosen, pointer, message, code, status, ref or (rule.ref if rule else None))

    @staticmethod
    def _answer(rule: rules_pkg.Rule, override) -> tuple[str | None, int | None]:
        """Status and code for an error: the profile's, else the rule's; a warning rule a profile made an
        error is answered as any other violation of a body, query or header value (A7: 400 FORMAT_ERROR)."""
        code = (override.code if override and override.code else None) or rule.code or rules_pkg.DEFAULT_CODE
        status = (override.status if override and override.status else None) or rule.status or rules_pkg.DEFAULT_STATUS
        return code, status

    def _engine_finding(self, detection: tuple[str, str], pointer: str, line: int | None = None, column: int | None = None) -> Finding:
        rule_id, message = detection
        rule = self.catalogue[rule_id]
        severity = self._severity(rule_id)
        severity = rule.severity if severity == "off" else severity
        code = status = None
        if severity == ERROR and rule.code is not None:
            code, status = self._answer(rule, self.profile.rules.get(rule_id))
        return Finding(rule_id, severity, pointer, message, code, status, rule.ref, line, column)

    def _from_loaded(self, loaded: Loaded, kind: str | None, source: str) -> Report:
        decoding = [
            self._engine_finding((p.rule, p.message), getattr(p, "pointer", None) or "", p.line, p.column)
            for p in loaded.problems
        ]
        if decoding and loaded.value is None:
            return Report(source, kind, decoding)
        report = self.validate(loaded.value, kind, source=source)
        report.findings[:0] = decoding
        return report


def _add_positions(report: Report, data: bytes) -> None:
    """Line and column of each finding's pointer in the text it was decoded from; findings then in
    text order."""
    from .positions import PositionIndex

    try:
        index = PositionIndex(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return
    placed = []
    for f in report.findings:
        pos = index.position(f.pointer) if f.line is None else None
        placed.append(dataclasses.replace(f, line=pos[0], column=pos[1]) if pos else f)
    # In the order a reader meets them in the text (stable: findings at one place keep the rule order).
    placed.sort(key=lambda f: (f.line is None, f.line or 0, f.column or 0))
    report.findings[:] = placed


def _parse_now(value: _dt.datetime | str) -> _dt.datetime:
    """An aware datetime from a datetime (naive = UTC) or ISO 8601 text."""
    return parse_instant(value, "now")


def _finding_order(f: Finding) -> tuple:
    # ASCII digits only: "²".isdigit() is true but int("²") fails (a JSON key may be any text).
    return (tuple((0, int(t), "") if t.isascii() and t.isdigit() else (1, 0, t) for t in f.pointer.split("/")), f.rule)
