"""Load → schema → rules → findings: the one path that decides whether a payload is valid.

The payload engine knows nothing of whole HTTP requests: :mod:`validator.api` sits above it and routes kind
``request`` to :mod:`validator.request.checker`, which is handed the engine for the body."""
from __future__ import annotations

import datetime as _dt
import itertools
import re
from gc import disable as _gc_disable, enable as _gc_enable, isenabled as _gc_isenabled
from pathlib import Path
from typing import Any, Iterator

from . import rules as rules_pkg
from .checks.accounts import bban_passes, iban_passes
from .checks.kid import kid_passes
from .context import DEFAULT_PROFILE, Context, Profile, parse_day, parse_instant, today_in_oslo
from .detect import Detection, detect_kind, kind_by_keys
from .findings import ERROR, WARNING, Finding, Report, escape_pointer_token, place
from .gcpause import gc_paused
from .jsonload import (JSONL_SUFFIXES, ArrayStream, Loaded, Unstreamable, check_value, jsonl_lines, load_json_bytes,
                       streamable_text)
from .locate import KindLayout, ObjectShape, Visit, build_layout, compile_visit, encode_pattern
from .records import record
from .rules.dates import as_date
from .schema import SchemaIssue, StreamPlan, checker_for, stream_plan
from .spec import Kind, Spec, load_spec

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
# Findings reported per input: a million wrong values give this many findings and one more that
# counts the rest (rule findings-limited), so time and memory stay bounded by the input's size.
MAX_FINDINGS = 1000
_UNBOUND = object()
FINDINGS_LIMITED = "findings-limited"


# Inputs from this size on are decoded and checked with the cyclic garbage collector paused: a
# decoded payload and its findings hold no reference cycles, yet each of the collector's passes
# would walk every object of a large payload again (43 % of the time at 100,000 entries).
GC_PAUSE_BYTES = 64 * 1024


# Inputs from this size on whose top level holds a long array (validator.schema.stream_plan: a bulk's payments)
# are checked one entry at a time, never holding the decoded array: decoded, a payload takes 5 to 6 times the
# size of its text (a 40 MB bulk: over 200 MB), streamed about twice (the file's bytes and its text). Below it
# the whole document is decoded: a payload of a few megabytes costs tens of megabytes, and checking it whole is
# about a tenth faster than entry by entry.
STREAM_BYTES = 8 * 1024 * 1024
_STREAM_BATCH = 64  # entries decoded, then checked, at a time
_OBJECT_START = re.compile(rb"[ \t\r\n]*\{")  # only an object's member can be streamed


class _FindingLimit:
    """The findings of one input, up to a limit; beyond it only counted."""

    __slots__ = ("findings", "limit", "omitted", "omitted_errors")

    def __init__(self, limit: int):
        self.findings: list[Finding] = []
        self.limit = limit
        self.omitted = 0
        self.omitted_errors = 0

    @property
    def full(self) -> bool:
        return len(self.findings) >= self.limit

    def add(self, finding: Finding) -> None:
        if len(self.findings) < self.limit:
            self.findings.append(finding)
        else:
            self.omit(1, finding.severity)

    def omit(self, count: int, severity: str) -> None:
        self.omitted += count
        if severity == ERROR:
            self.omitted_errors += count


@record
class Location:
    """Where a rule's value sits: for objects, the declared properties there, and the component name
    or x-rule tag that matched. One per rule and place of a kind, built once (the pointer of each
    value is known to the engine, which prefixes it to the rule's issues)."""

    shape: ObjectShape | None
    target: str  # the component name or x-rule tag that matched


_tuple_new = tuple.__new__


@record
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


@record
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
            if r.applies_at is not None:
                patterns = [(p, target) for p, target in patterns if r.applies_at(layout.objects.get(p))]
            if patterns:
                steps.append((r, tuple(dict.fromkeys(patterns))))
        plan = spec._cache[key] = _Plan(kind, layout, tuple(steps))
    return plan


class _StreamedArray(list):
    """What the rules see of a streamed array (a list to ``isinstance``, so rules reading across entries work
    unchanged), holding none of its entries. The first to iterate it while its entries are being checked
    pulls them through that one pass (the top-level rules run before the entries, as in the walk of a whole
    document: a rule comparing every entry with the top level costs no second decoding); later iterations
    decode the entries again from the text. The engine's walk (``type(value) is list``) does not descend
    into it. Reading only: iteration, ``len``, indexing, ``in``.

    The number of entries is known once they are all read: asked earlier, the answer would be wrong, so
    ``premature`` is set and the engine checks the document whole instead."""

    __slots__ = ("_stream", "_pass", "premature")

    def __init__(self, stream: ArrayStream):
        super().__init__()
        self._stream = stream
        self._pass: Iterator[Any] | None = None  # the checking pass, until someone iterates it
        self.premature = False

    def checking(self, entries: Iterator[Any]) -> None:
        self._pass = entries

    def release(self) -> None:
        self._stream = self._pass = None

    def __len__(self) -> int:
        if self._stream.length is None:
            self.premature = True
            return 0
        return self._stream.length

    def __iter__(self):
        if self._pass is not None:
            entries, self._pass = self._pass, None
            return _Tap(entries)
        return self._stream.entries()

    def __reversed__(self):
        return reversed(list(self))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(self)[index]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError("list index out of range")
        return next(itertools.islice(self._stream.entries(), position, None))

    def __contains__(self, value: object) -> bool:
        return any(item is value or item == value for item in self._stream.entries())


class _Tap:
    """An iterator over another that leaves it open when dropped: a rule that stops reading entries early
    must not end the pass that checks them (a generator is closed when its last reference goes)."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Iterator[Any]):
        self._entries = entries

    def __iter__(self) -> "_Tap":
        return self

    def __next__(self) -> Any:
        return next(self._entries)


class _StreamPass:
    """One pass over a streamed array's entries, with the top level's rules: the kind it was checked as, and
    what it found."""

    __slots__ = ("kind", "plan", "limit", "errors", "failed", "spans")

    def __init__(self, kind: Kind, plan: StreamPlan, limit: _FindingLimit):
        self.kind = kind
        self.plan = plan
        self.limit = limit
        self.errors = 0  # the compiled schema engine's errors
        self.failed = False  # the pass could not go on (only the whole-document path answers)
        # (first, first of the rules', end) indices in the findings of each entry with findings: schema issues come
        # before every rule's findings in a whole document's check, the top level's rules before the entries'
        self.spans: list[tuple[int, int, int]] = []


# The value tests of the rules' checks that the compiled rule passes call (tools/compile_spec.py writes them in where
# a rule finds nothing when its test passes); handed to them when they are bound: validator/compiled.py, generated
# below every other module, imports none.
COMPILED_HELPERS = {"bban_passes": bban_passes, "iban_passes": iban_passes, "kid_passes": kid_passes, "as_date": as_date,
                    "escape_pointer_token": escape_pointer_token}


def walk_patterns(plan: _Plan, call_at) -> dict[tuple, list]:
    """The places of the general walk in its order, each with its calls (``call_at(rule, pattern, target)``; None:
    the walk makes no such call): patterns in the order of the plan's steps (the rules in :func:`_walk_rank`'s order,
    each rule's places in turn), which :func:`validator.locate.compile_visit` turns into the walk's tree.
    tools/compile_spec.py writes the find pass in this order, so both take it from here."""
    rank = _walk_rank()
    by_pattern: dict[tuple, list] = {}
    for rule, patterns in sorted(plan.steps, key=lambda step: rank[step[0].id]):
        for pattern, target in patterns:
            call = call_at(rule, pattern, target)
            if call is not None:
                by_pattern.setdefault(pattern, []).append(call)
    return by_pattern


def _walk_rank() -> dict[str, int]:
    """Each semantic rule's place in the walk's order, the same in every process. The catalogue lists the rules in the
    order their modules were first imported, which a process importing one rule module before the engine changes
    (and with it which findings the findings limit keeps, and the find pass's order): here the order a validating
    process has always had, the rules of the module the engine imports itself (rules.dates, for ``as_date``) first,
    then those of the modules rules.load_all imports, in its order; each module's rules in the order it registers
    them (a module of none of these, as a test's, after them)."""
    from .rules import load_all

    modules = list(dict.fromkeys([as_date.__module__] + [value.__name__ for value in vars(load_all).values()
                                                         if type(value) is type(load_all)]))
    rank = {name: number for number, name in enumerate(modules)}
    ranked = sorted(enumerate(rules_pkg.semantic_rules()),
                    key=lambda pair: (rank.get(getattr(pair[1].check, "__module__", None), len(rank)), pair[0]))
    return {rule.id: number for number, (_index, rule) in enumerate(ranked)}


def walk_order(node: Visit | None, site_of, path: tuple = ()) -> tuple | None:
    """The order in which the walk of ``node`` makes its calls, as plain data: (the calls of the place, each as
    ``site_of(call, encoded path)``; each member's (name, order); the map values' order; the items' order), places
    without any call left out (None). Two visits with one order make the same calls in the same order on any value."""
    if node is None:
        return None
    members = tuple((name, order) for name, _token, child in node.members
                    if (order := walk_order(child, site_of, path + (name,))) is not None)
    values, items = walk_order(node.values, site_of, path + (1,)), walk_order(node.items, site_of, path + (0,))
    calls = tuple(site_of(call, path) for call in node.calls)
    if not calls and not members and values is None and items is None:
        return None
    return calls, members, values, items


def _kept_order(order: tuple | None, kept) -> tuple | None:
    """``order`` (walk_order's data) with only the calls in ``kept``, places left without any call dropped."""
    if order is None:
        return None
    calls, members, values, items = order
    members = tuple((name, sub) for name, child in members if (sub := _kept_order(child, kept)) is not None)
    values, items = _kept_order(values, kept), _kept_order(items, kept)
    calls = tuple(site for site in calls if site in kept)
    if not calls and not members and values is None and items is None:
        return None
    return calls, members, values, items


def _finds_nothing(_value: Any, _ctx: RuleContext, _at: Location) -> tuple:
    """A rule the profile switched off, in a compiled rule pass."""
    return ()


@record
class _BoundPasses:
    """A kind's generated passes (validator/compiled.py) bound to this validator's rules."""

    sites: tuple  # (rule id, encoded pattern, target) of each site, in the generated file's order
    order: tuple | None  # the general walk's order of the sites' calls with every rule on (walk_order's data)
    accepts: dict  # encoded pattern -> accept(value, ctx): the whole payload's at (), each array's items'
    find: Any  # find(value, ctx) -> hits [(site, value, pointer)]
    calls: tuple  # each site's (check, at, rule); None: a rule the profile switched off


class PayloadValidator:
    """Payload validation with one spec, profile and context; reuse it for many payloads. The public
    :class:`validator.Validator` (validator/api.py) adds whole requests."""

    # Inputs of at least this many bytes stream their long array (see STREAM_BYTES); a test sets it per instance.
    stream_bytes = STREAM_BYTES
    # The rules of a payload are found by its kind's compiled find pass (validator/compiled.py, generated by
    # tools/compile_spec.py): the general walk's calls that may find something, made as the walk makes them; where
    # that pass is not exactly the walk, a payload the schema engine finds valid is first given to the accept pass
    # (no rule finds anything: nothing more to do), else to the general walk. False: always the general walk (the
    # differential tests compare the two).
    compiled_pass = True

    def __init__(
        self,
        *,
        spec: Spec | None = None,
        profile: Profile | None = None,
        context: Context | None = None,
        today: _dt.date | str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        now: _dt.datetime | str | None = None,
        max_findings: int = MAX_FINDINGS,
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
        if max_findings < 1:
            from .context import ConfigError

            raise ConfigError(f"max_findings must be at least 1, got {max_findings}")
        self.max_findings = max_findings
        self.catalogue = rules_pkg.catalogue()
        self._visits: dict[str, Visit] = {}
        self._passes: dict[str, Any] = {}  # kind -> its bound compiled rule passes (None: the kind has none)
        self._finds: dict[str, Any] = {}  # kind -> (its find pass, each site's call), when exactly the general walk

    # ---- entry points: each gives a report for any input, never an exception ----
    def validate(self, payload: Any, kind: str | None = None, *, source: str = "<payload>") -> Report:
        self._known_kind(kind)
        try:
            # A decoded value has not met the loader's limits: nesting depth, integers too long to print.
            return self._from_loaded(check_value(payload), kind, source)
        except Exception as exc:  # a defect must cost this input's report, never the caller's other inputs
            return _internal_error(source, kind, exc)

    def _known_kind(self, kind: str | None) -> None:
        """An unknown kind is the caller's mistake, not the input's: SpecError, before any input is read."""
        if kind is not None:
            self.spec.kind(kind)

    def _validate(self, payload: Any, kind: str | None, source: str) -> Report:
        """One decoded payload (within the loader's limits); a subclass routes other inputs (whole requests) here."""
        findings: list[Finding] = []
        candidates: tuple[str, ...] = ()
        detected = kind is None
        if detected:
            detection = self._detect_kind(payload)
            if detection.kind is None:
                report = Report(source, None)
                report.findings.append(self._engine_finding(("kind-undetected", detection.message), ""))
                return report
            kind, candidates = detection.kind, detection.candidates
            if not detection.confident:
                findings.append(self._engine_finding(("kind-ambiguous", detection.message), ""))
        # The kind is known here (detected, or given and checked before any input was read)
        checked = self._check(payload, self.spec.kinds[kind])
        if findings:
            findings.extend(checked)
        else:
            findings = checked
        return Report(source, kind, findings, candidates if len(candidates) > 1 else (), detected)

    def validate_bytes(self, data: bytes, kind: str | None = None, *, source: str = "<bytes>") -> Report:
        self._known_kind(kind)
        try:
            return self._validate_bytes(data, kind, source)
        except Exception as exc:
            return _internal_error(source, kind, exc)

    def _validate_bytes(self, data: bytes, kind: str | None, source: str) -> Report:
        if len(data) < GC_PAUSE_BYTES and len(data) < self.stream_bytes:  # a JSONL line: no stream, no pause
            loaded = load_json_bytes(data, max_bytes=self.max_bytes)
            report = self._from_loaded(loaded, kind, source)
            if report.findings:
                self._place(report, data, loaded)
            return report
        with gc_paused():
            report = self._streamed(data, kind, source) if len(data) >= self.stream_bytes and type(data) is bytes else None
            loaded = None
            if report is None:
                loaded = load_json_bytes(data, max_bytes=self.max_bytes)
                report = self._from_loaded(loaded, kind, source)
            if report.findings:
                self._place(report, data, loaded)
        return report

    def _place(self, report: Report, data: bytes, loaded: Loaded | None) -> None:
        """Lines and columns for the findings of a payload report (a subclass's whole-request report points into
        the request, not this text); ``loaded``: the loader's reading of ``data`` (None: streamed)."""
        if (report.kind is None or report.kind in self.spec.kinds) and any(f.line is None for f in report.findings):
            _add_positions(report, data, clean=loaded is not None and not loaded.problems)

    def validate_loaded(self, loaded: Loaded, kind: str | None = None, *, data: bytes | None = None,
                        source: str = "<bytes>") -> Report:
        """What :meth:`validate_bytes` reports for the bytes the loader read as ``loaded`` (its value and problems),
        without decoding them again: a caller that holds the decoded value (the gate, for an answer each check
        reads) keeps one copy. With ``data`` (those bytes), findings get lines and text order as validate_bytes
        gives them (that decodes the text once more, only when there are findings)."""
        self._known_kind(kind)
        try:
            report = self._from_loaded(loaded, kind, source)
            if data is not None and any(f.line is None for f in report.findings):
                _add_positions(report, data, clean=not loaded.problems)
            return report
        except Exception as exc:
            return _internal_error(source, kind, exc)

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
        """The kind a payload is meant to be (any value: the loader's limits are applied first)."""
        checked = check_value(payload)
        if checked.value is None and checked.problems:  # nested too deeply (a null payload is a value)
            return Detection(None, (), f"cannot tell which kind of payload this is: {checked.problems[0].message}",
                             confident=False)
        return self._detect_kind(checked.value)

    def _detect_kind(self, payload: Any) -> Detection:
        return detect_kind(self.spec, payload)

    # ---- the checks ----
    def _check(self, payload: Any, kind: Kind) -> list[Finding]:
        # The collector paused as gc_paused() does, written out: this runs once per input, a batch's every line
        if not _gc_isenabled():
            return self._check_unpaused(payload, kind)
        _gc_disable()
        try:
            return self._check_unpaused(payload, kind)
        finally:
            _gc_enable()

    def _check_unpaused(self, payload: Any, kind: Kind) -> list[Finding]:
        checker = checker_for(self.spec, kind.schema_name)
        valid = checker.is_valid(payload)
        # RuleContext(...) without its __new__'s Python frame: a record is a tuple of its fields in order
        ctx = _tuple_new(RuleContext, (self.spec, kind, self.today, self.context, self.profile, payload))
        found = self._find(payload, kind, ctx) if self.compiled_pass else None
        if found is None:
            if valid and self.compiled_pass and self._accepts(payload, kind, ctx):
                return []
        elif valid and not found[0]:
            return []
        limit = _FindingLimit(self.max_findings)
        request = kind.is_request
        issues, omitted = checker.limited_issues(payload, self.max_findings, valid=valid)
        self._add_issues(issues, "", request, limit)
        limit.omit(omitted, ERROR)
        if found is None:
            self._visit(self._visit_for(kind), payload, ctx, request, limit)
        else:  # the calls the general walk would make that can find something, in its order
            hits, calls = found
            call = self._caller(ctx, request, limit)
            for site, value, pointer in hits:
                made = calls[site]
                if made is not None:  # None: a rule the profile switched off, which the walk never calls
                    call(made[0], made[1], made[2], value, pointer)
        findings = limit.findings
        if len(findings) > 1:
            findings.sort(key=_finding_order)
        if limit.omitted:
            findings.append(self._omitted_finding(limit))
        return findings

    def _add_issues(self, issues: list[SchemaIssue], prefix: str, request: bool, limit: "_FindingLimit") -> None:
        """Schema issues as findings (their pointers below ``prefix``)."""
        for issue in issues:
            finding = self._finding(issue.rule, prefix + issue.pointer, issue.message, request, ref=issue.ref)
            if finding:
                limit.add(finding)

    def _visit(self, root: Visit, payload: Any, ctx: RuleContext, request: bool, limit: "_FindingLimit") -> None:
        """Walk the payload along the kind's compiled visit: at each place, every rule of the place runs on
        the value there (so two rules reading one value run one after the other)."""
        self._walker(ctx, request, limit)(root, payload, "")

    def _caller(self, ctx: RuleContext, request: bool, limit: "_FindingLimit"):
        """``call(check, at, rule, value, pointer)``: one rule on the value at ``pointer``, its findings added to
        ``limit`` (the general walk's and the find pass's calls alike); made once per input."""
        make_finding = self._finding

        def call(check, at: Location, rule: rules_pkg.Rule, value: Any, pointer: str) -> None:
            try:
                for issue in check(value, ctx, at):
                    if limit.full:  # counted, not built
                        severity = self._severity(rule.id, issue.severity)
                        if severity != "off":
                            limit.omit(1, severity)
                        continue
                    finding = make_finding(rule.id, pointer + issue.path, issue.message, request, severity=issue.severity, ref=issue.ref)
                    if finding:
                        limit.add(finding)
            except Exception as exc:  # a rule bug must surface as a finding, never a traceback
                limit.add(Finding("internal-error", ERROR, pointer, f"rule {rule.id} failed: {type(exc).__name__}: {exc}", None, None, rule.ref))

        return call

    def _walker(self, ctx: RuleContext, request: bool, limit: "_FindingLimit"):
        """``visit(node, value, pointer)``: the walk of :meth:`_visit` from any place; made once per input (the
        function refers to itself: a reference cycle, which the paused collector frees only later)."""
        call = self._caller(ctx, request, limit)

        def visit(node: Visit, value: Any, pointer: str) -> None:
            accept = node.accept
            if accept is not None:  # an array's item: its compiled pass (validator/compiled.py) says whether any rule finds something
                try:
                    if accept(value, ctx):
                        return
                except Exception:  # noqa: BLE001 - walked as usual: a failing rule becomes its finding
                    pass
            for check, at, rule in node.calls:
                call(check, at, rule, value, pointer)
            kind = type(value)
            if kind is dict:
                for name, token, child in node.members:
                    if name in value:
                        visit(child, value[name], pointer + token)
                child = node.values
                if child is not None:
                    for key, item in value.items():
                        visit(child, item, pointer + "/" + escape_pointer_token(key))
            elif kind is list:
                child = node.items
                if child is not None:
                    for i, item in enumerate(value):
                        visit(child, item, f"{pointer}/{i}")

        return visit

    # ---- one entry at a time ----
    def _streamed(self, data: bytes, kind: str | None, source: str) -> Report | None:
        """The report of an input whose long top-level array is checked one entry at a time, never held whole;
        None when only the whole-document path gives the exact report (a problem the loader reports, another
        kind or shape, the findings limit reached, the python schema engine needed): the caller takes that path.

        Exactly the whole-document report: the schema is checked per entry and for the rest with as many nulls
        in the array (validator.schema.stream_plan); the top level's rules run on it first, with the array
        standing in (a rule reading across entries pulls them through the pass), then each entry's as the walk
        would reach it; findings are then ordered as the whole document's check orders them."""
        keys = self._stream_keys(kind) if _OBJECT_START.match(data) else None
        text = streamable_text(data, max_bytes=self.max_bytes) if keys else None
        if text is None:
            return None
        entries = None
        try:
            stream = ArrayStream(text, keys, data)
            del text  # the stream holds the one copy
            entries = _StreamedArray(stream)
            top = {**stream.head, stream.key: entries}
            checked = None
            if self._stream_kind(top, kind) is not None:
                checked = self._stream_pass(stream, top, kind)
            else:  # the members after the array may decide the kind
                for _entry in stream.entries():
                    pass
            stream.read_tail()
            if stream.tail or checked is None:  # checked (again) knowing the whole top level: kind, ctx.root, rules
                top = {**stream.head, stream.key: entries, **stream.tail}
                checked = self._stream_pass(stream, top, kind)
            return self._stream_report(stream, top, checked, source, detected=kind is None)
        except Unstreamable:
            return None
        finally:
            if entries is not None:  # the rules' context refers to it: the text goes now, not with a later collection
                entries.release()

    def _stream_keys(self, kind: str | None) -> frozenset[str]:
        """The members that may hold a long array in payloads of ``kind`` (any kind when None)."""
        kinds = [self.spec.kind(kind)] if kind is not None else self.spec.kinds.values()
        plans = (stream_plan(self.spec, k.schema_name) for k in kinds)
        return frozenset(plan.key for plan in plans if plan is not None)

    def _stream_kind(self, top: dict, kind: str | None) -> str | None:
        """The kind a streamed input is checked as: the given one, else the one its top-level members decide
        alone (anything less sure is decided on the whole document); None: check it whole."""
        return kind if kind is not None else kind_by_keys(self.spec, top)

    def _stream_pass(self, stream: ArrayStream, top: dict, kind: str | None) -> _StreamPass:
        """The rules of the top level (its value ``top``) and, as they are read, schema and rules on each entry."""
        name = self._stream_kind(top, kind)
        chosen = self.spec.kind(name) if name is not None else None
        plan = stream_plan(self.spec, chosen.schema_name) if chosen is not None else None
        if plan is None or plan.key != stream.key:
            raise Unstreamable("not the streamed member of the kind")
        checked = _StreamPass(chosen, plan, _FindingLimit(self.max_findings))
        ctx = RuleContext(self.spec, chosen, self.today, self.context, self.profile, top)
        visit = self._visit_for(chosen)
        entries = self._checked_entries(stream, checked, ctx, visit)
        array = top[stream.key]
        array.checking(entries)
        # The whole document's walk: the top level's rules first (one reading across entries pulls them through
        # the pass), the members in order; it does not descend into the streamed array.
        self._visit(visit, top, ctx, chosen.is_request, checked.limit)
        for _entry in entries:  # the entries no rule read
            pass
        if checked.failed or array.premature or checked.limit.omitted:
            raise Unstreamable("the whole document decides")
        return checked

    def _checked_entries(self, stream: ArrayStream, checked: _StreamPass, ctx: RuleContext, visit: Visit) -> Iterator[Any]:
        """Each entry of the array, once its schema and rules are checked."""
        member = next((node for name, _token, node in visit.members if name == stream.key), None)
        visit = member.items if member is not None else None
        most, limit, request = self.max_findings, checked.limit, checked.kind.is_request
        walk = self._walker(ctx, request, limit)
        findings = limit.findings
        prefix = "/" + escape_pointer_token(stream.key) + "/"
        schema, valid = checked.plan.entries, ([], 0)
        entries, index = stream.entries(), 0
        try:
            # A batch of entries at a time: the decoder, the schema engine and the rules each run over a few
            # entries in turn (20 % faster than taking turns on every entry), a valid batch in one schema call.
            while batch := list(itertools.islice(entries, _STREAM_BATCH)):
                every = schema.all_valid(batch)
                for entry in batch:
                    found = valid if every else schema.compiled_issues(entry, most)
                    if found is None or found[1] + checked.errors > most:
                        raise Unstreamable("the schema engines or the findings limit depend on the whole document")
                    checked.errors += found[1]
                    pointer = prefix + str(index)
                    index += 1
                    first = len(findings)
                    self._add_issues(found[0], pointer, request, limit)
                    rules = len(findings)
                    if visit is not None:
                        walk(visit, entry, pointer)
                    if len(findings) > first:
                        checked.spans.append((first, rules, len(findings)))
                    if limit.omitted:
                        raise Unstreamable("the findings limit is reached")
                yield from batch
        except Exception:  # raised inside a rule reading the entries, it would become that rule's finding
            checked.failed = True
            raise

    def _stream_report(self, stream: ArrayStream, top: dict, checked: _StreamPass, source: str, detected: bool) -> Report:
        """The top level's schema after the entries', and the report."""
        kind, limit, most = checked.kind, checked.limit, self.max_findings
        found = checked.plan.top.compiled_issues({**top, stream.key: [None] * len(top[stream.key])}, most)
        if found is None or found[1] + checked.errors > most:
            raise Unstreamable("the schema engines or the findings limit depend on the whole document")
        first = len(limit.findings)
        self._add_issues(found[0], "", kind.is_request, limit)
        if limit.omitted:
            raise Unstreamable("the findings limit is reached")
        # The order of a whole document's check where findings share pointer and rule: schema issues, the
        # top level's rules, the entries' rules (a stable sort by pointer and rule keeps it).
        rank = [1] * len(limit.findings)
        for start, rules, end in checked.spans + [(first, len(limit.findings), len(limit.findings))]:
            rank[start:rules] = [0] * (rules - start)
            rank[rules:end] = [2] * (end - rules)
        findings = [f for _rank, f in sorted(zip(rank, limit.findings), key=lambda pair: pair[0])]
        findings.sort(key=_finding_order)
        return Report(source, kind.name, findings, detected=detected)

    def _accepts(self, payload: Any, kind: Kind, ctx: RuleContext) -> bool:
        """The kind's compiled rule pass: True only when no rule (of those the profile keeps) finds anything."""
        bound = self._bound_passes(kind)
        if bound is None:
            return False
        try:
            return bound.accepts[()](payload, ctx)
        except Exception:  # noqa: BLE001 - the general walk turns a failing rule into its finding
            return False

    def _find(self, payload: Any, kind: Kind, ctx: RuleContext) -> tuple[list, tuple] | None:
        """The kind's find pass on ``payload``: (the hits, each ``(site, value, pointer)`` of a call the general walk
        would make whose rule may find something, in the walk's order; each site's ``(check, at, rule)``, None for a
        rule switched off); None when only the general walk gives the findings exactly (no pass bound, a profile
        that changes the walk's order, or the pass raised: then a rule or the walk itself raises there as well)."""
        found = self._finds.get(kind.name, _UNBOUND)
        if found is _UNBOUND:
            found = self._finds[kind.name] = self._exact_find(kind)
        if found is None:
            return None
        try:
            return found[0](payload, ctx), found[1]
        except Exception:  # noqa: BLE001 - the general walk words it (a rule's failure becomes its finding)
            return None

    def _exact_find(self, kind: Kind) -> tuple[Any, tuple] | None:
        """The kind's find pass and its sites' calls when its walk is this validator's (the general walk's calls,
        without the rules the profile switched off, in the same order); else None."""
        bound = self._bound_passes(kind)
        if bound is None:
            return None
        index = {site: number for number, site in enumerate(bound.sites)}
        walked = walk_order(self._visit_for(kind), lambda call, path: index.get((call[2].id, path, call[1].target)))
        kept = {number for number, call in enumerate(bound.calls) if call is not None}
        return (bound.find, bound.calls) if _kept_order(bound.order, kept) == walked else None

    def _bound_passes(self, kind: Kind) -> "_BoundPasses | None":
        bound = self._passes.get(kind.name, _UNBOUND)
        if bound is _UNBOUND:
            bound = self._passes[kind.name] = self._bind_pass(kind)
        return bound

    def _bind_pass(self, kind: Kind) -> "_BoundPasses | None":
        """The generated passes of ``kind`` given each site's rule function (a no-op for a rule the profile switched
        off, which the general walk never runs) and location; None when the generated file does not match the rules
        and places of this spec (then it is stale: tools/compile_spec.py regenerates it)."""
        from . import compiled

        generated = compiled.KINDS.get(kind.name)
        plan = plan_for(self.spec, kind.name)
        sites = {}
        for rule, patterns in plan.steps:
            off = self._severity(rule.id) == "off"
            for pattern, target in patterns:
                sites[(rule.id, encode_pattern(pattern), target)] = (rule, off, Location(plan.layout.objects.get(pattern), target))
        if generated is None or len(generated[0]) != len(sites) or not sites.keys() >= set(generated[0]):
            return None
        made = [sites[site] for site in generated[0]]
        accepts, find = generated[2]([part for rule, off, at in made for part in (_finds_nothing if off else rule.check, at)],
                                     COMPILED_HELPERS)
        calls = tuple(None if off else (rule.check, at, rule) for rule, off, at in made)
        return _BoundPasses(generated[0], generated[1], accepts, find, calls)

    def _visit_for(self, kind: Kind) -> Visit:
        """The kind's compiled visit without the rules this validator's profile switched off: each
        place a rule reads, with its rules in catalogue order; built once per validator and kind."""
        cached = self._visits.get(kind.name)
        if cached is None:
            plan = plan_for(self.spec, kind.name)

            def call_at(rule, pattern, target):
                if self._severity(rule.id) != "off":
                    return rule.check, Location(plan.layout.objects.get(pattern), target), rule
                return None

            cached = self._visits[kind.name] = compile_visit(walk_patterns(plan, call_at))
            if self.compiled_pass:
                self._attach_item_passes(cached, kind)
        return cached

    def _attach_item_passes(self, root: Visit, kind: Kind) -> None:
        """Each array's items in the visit get the compiled pass of their place: the walk skips an item it accepts."""
        bound = self._bound_passes(kind)
        for pattern, accept in (bound.accepts if bound is not None else {}).items():
            node: Visit | None = root
            for step in pattern:
                if node is None:
                    break
                if step == 0 and type(step) is int:
                    node = node.items
                elif step == 1 and type(step) is int:
                    node = node.values
                else:
                    node = next((child for name, _token, child in node.members if name == step), None)
            if pattern and node is not None:
                node.accept = accept

    def _omitted_finding(self, limit: "_FindingLimit") -> Finding:
        rule = self.catalogue[FINDINGS_LIMITED]
        message = (
            f"{limit.omitted:,} more findings not listed ({limit.omitted_errors:,} of them errors): "
            f"at most {self.max_findings:,} are reported per input (max_findings, --max-findings)"
        )
        severity = ERROR if limit.omitted_errors else WARNING
        return Finding(FINDINGS_LIMITED, severity, "", message, None, None, rule.ref)

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
        if not loaded.problems:  # nearly every input: nothing the loader found to report first
            return self._validate(loaded.value, kind, source)
        decoding = [
            self._engine_finding((p.rule, p.message), getattr(p, "pointer", None) or "", p.line, p.column)
            for p in loaded.problems
        ]
        if loaded.value is None:
            return Report(source, kind, decoding)
        report = self._validate(loaded.value, kind, source)
        report.findings[:0] = decoding
        return report


def _internal_error(source: str, kind: str | None, exc: Exception) -> Report:
    try:
        detail = str(exc)[:300]
    except Exception:  # noqa: BLE001 - the message of an exception about an unprintable value
        detail = ""
    return Report(source, kind, [Finding("internal-error", ERROR, "", f"validation failed: {type(exc).__name__}: {detail}")])


def _add_positions(report: Report, data: bytes, *, clean: bool = False) -> None:
    """Line and column of each finding's pointer in the text it was decoded from; findings then in
    text order. ``clean``: the loader found no problem in the text (no repeated key among them), so the
    text is scanned only as far as the findings' pointers lead."""
    global _PositionIndex
    if _PositionIndex is None:  # imported on the first findings to place: a valid payload's start does without it
        from .positions import PositionIndex as _PositionIndex
    if data[:3] == _BOM:  # as the "utf-8-sig" codec decodes (one byte order mark dropped), without its Python step
        data = data[3:]
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return
    index = _PositionIndex(text, unique_keys=clean, data=data)
    one_line = _NEWLINE not in data  # a JSONL line, a compact document: the column is the offset's
    placed = []
    offsets: dict[str, int | None] = {}  # findings at one place (a rule's error and another's warning) look it up once
    for f in report.findings:
        if f.line is None:
            pointer = f.pointer
            offset = offsets[pointer] if pointer in offsets else offsets.setdefault(pointer, index.offset(pointer))
            if offset is not None:
                line, column = (1, offset + 1) if one_line else index.line_column(offset)
                place(f, line, column)  # made by this check, held by nothing else yet
        placed.append(f)
    # In the order a reader meets them in the text (stable: findings at one place keep the rule order).
    if len(placed) > 1:
        placed.sort(key=_text_order)
    report.findings[:] = placed


_PositionIndex = None  # validator.positions.PositionIndex, once imported
_BOM = b"\xef\xbb\xbf"
_NEWLINE = ord("\n")  # a number: ``b"\n" in data`` first tries to read b"\n" as one (an exception raised and cleared)


def _text_order(f: Finding) -> tuple:
    return (f.line is None, f.line or 0, f.column or 0)


def _parse_now(value: _dt.datetime | str) -> _dt.datetime:
    """An aware datetime from a datetime (naive = UTC) or ISO 8601 text."""
    return parse_instant(value, "now")


def _finding_order(f: Finding) -> tuple:
    # Array indices in numeric order without converting them: "2" < "10" as (1, "2") < (2, "10"). Only ASCII
    # digits are indices ("²".isdigit() is true), and a member name of 5,000 digits must not meet int().
    return (tuple((0, len(t), t) if t.isascii() and t.isdigit() else (1, 0, t) for t in f.pointer.split("/")), f.rule)
