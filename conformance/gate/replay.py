"""Replaying a report's findings against a target: is each one fixed, still failing, or not replayable (and why)?

A finding whose request stands alone (``replay.by == "request"``) is re-sent, signed anew by the replay's identity
(:func:`~conformance.gate.recorded.rebuild`: a fresh Date, Digest, Signature and X-Request-ID, what the check altered
on purpose re-created), and judged again as its check judged it: the recorded expectation (statuses, codes, codeless
statuses) through :meth:`Session.expect`, or the spec's declared answers through :meth:`Session.send`. A finding that
one request cannot re-create (a scenario's step, a request naming a resource issued earlier, an altered Signature, a
finding about several answers) has its check run again (``replay.by == "check"``) with the report's seed, each check
once: the finding still fails when the re-run finds the same fingerprint again.

Still failing: the replay found the same fingerprint, or the same rule at the same operation answered otherwise
(the answer changed but is still wrong). Fixed: neither. Not replayable: the check is gone, or not exercised now.
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from validator.context import DEFAULT_PROFILE, Profile
from validator.formats.escape import printable
from validator.spec import load_spec

from .model import REGISTRY, SUITES, Expected, Finding
from .pool import GatewayOptions, Unanswered
from .recorded import NotReplayable, rebuild
from .runner import RunOptions, run_checks
from .session import Identities, Session
from .tls import TlsOptions

FIXED, STILL_FAILING, NOT_REPLAYABLE = "fixed", "still failing", "not replayable"


class ReportUnreadable(Exception):
    """The report cannot be read as a conform.json (the message says why)."""


@dataclass
class Verdict:
    id: str
    fingerprint: str
    check: str
    operation: str
    status: str           # fixed, still failing, not replayable
    detail: str
    by: str               # request or check

    def as_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


def load(path: str | Path) -> dict[str, Any]:
    """A conform.json report, its findings each with an ``id`` (the report's own, else F1, F2, ... in report
    order). Raises :class:`ReportUnreadable`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportUnreadable(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list) or not all(isinstance(f, dict) and isinstance(f.get("fingerprint"), str)
                                                 and isinstance(f.get("check"), str) for f in findings):
        raise ReportUnreadable(f"{path} is not a conform.json report (no findings list with fingerprints and checks)")
    for number, finding in enumerate(findings, 1):
        finding.setdefault("id", f"F{number}")
        for key in ("request", "expectation", "replay"):   # a report edited by hand: what is not a mapping is absent
            if not isinstance(finding.get(key), dict):
                finding[key] = None
    return data


def select(findings: list[dict], wanted: Iterable[str]) -> list[dict]:
    """The findings named by id or fingerprint (a unique prefix of at least 6 characters will do), in report
    order; without names, every failure (a difference is a choice of the target's, not a defect to fix: replayed only
    when named). Raises ValueError naming one that matches none (or several)."""
    wanted = list(wanted)
    if not wanted:
        return [f for f in findings if f.get("tier", "failure") == "failure"]
    chosen: list[dict] = []
    for name in wanted:
        matches = [f for f in findings if str(f["id"]) == name or f["fingerprint"] == name]
        if not matches and len(name) >= 6:
            matches = [f for f in findings if f["fingerprint"].startswith(name)]
        if len(matches) != 1:
            raise ValueError(f"--finding {name!r} matches {'no' if not matches else 'more than one'} finding of the "
                             "report (give its id or fingerprint)")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return [f for f in findings if f in chosen]


def _verdict(finding: dict, found: list[Finding], by: str, how: str) -> Verdict:
    """Judge one finding by what the replay found: the same fingerprint, or the same rule at the same operation."""
    same = next((f for f in found if f.fingerprint == finding["fingerprint"]), None)
    if same is None:
        same = next((f for f in found if f.rule == finding.get("rule") and f.operation == finding.get("operation")),
                    None)
    if same is None:
        return _of(finding, FIXED, f"{how}: no longer found (it was: expected {finding.get('expected')}, answered "
                                   f"{finding.get('actual')})", by)
    return _of(finding, STILL_FAILING, f"{how}: expected {same.expected}, answered {same.actual}"
               + ("" if same.fingerprint == finding["fingerprint"] else f" (it was {finding.get('actual')})"), by)


def _of(finding: dict, status: str, detail: str, by: str) -> Verdict:
    return Verdict(str(finding["id"]), finding["fingerprint"], finding["check"], str(finding.get("operation", "-")),
                   status, detail, by)


def replay(report: dict[str, Any], findings: list[dict], base_url: str, identities: Identities,
           profile: Profile | None = None, profile_path: str | None = None,
           max_connections: int = 10, gateway: GatewayOptions = GatewayOptions(),
           tls: TlsOptions | None = None) -> list[Verdict]:
    """Replay ``findings`` (of ``report``) against ``base_url``: one verdict each, in report order (through the
    target's gateway as the run met it: its headers, rate limit and request timeout, and its ``tls``: the client
    certificate and the CAs trusted), each request signed as the profile has requests signed."""
    verdicts: dict[int, Verdict] = {}
    by_check: dict[str, list[int]] = {}
    by_request: list[int] = []
    for index, finding in enumerate(findings):
        if (finding.get("replay") or {}).get("by") == "request":
            by_request.append(index)
        else:
            by_check.setdefault(finding["check"], []).append(index)
    # The checks first, in the run's order of suites: a Schemathesis suite's cases meet the target's state as in the
    # run (the replayed requests create payments a duplicate check would then meet).
    order = sorted(by_check, key=lambda c: SUITES.index(REGISTRY[c].suite) if c in REGISTRY else len(SUITES))
    for check_id in order:
        rerun = _rerun(check_id, report, base_url, identities, profile_path, max_connections, gateway, tls)
        for index in by_check[check_id]:
            finding = findings[index]
            why = (finding.get("replay") or {}).get("why") or "the report has no request to replay"
            if isinstance(rerun, str):
                verdicts[index] = _of(finding, NOT_REPLAYABLE, f"{why}; re-running {check_id}: {rerun}", "check")
            else:
                verdicts[index] = _verdict(finding, rerun, "check", f"{why}: re-ran {check_id}")
    session = Session(base_url, load_spec(), profile or DEFAULT_PROFILE, identities,
                      seed=int(report.get("seed", 0)), max_examples=int(report.get("max_examples", 10)),
                      max_connections=max_connections, gateway=gateway, tls=tls)
    try:
        for index in by_request:
            verdicts[index] = _replay_request(session, findings[index])
    finally:
        session.close()
    return [verdicts[i] for i in range(len(findings))]


def _replay_request(session: Session, finding: dict) -> Verdict:
    now = _dt.datetime.now(_dt.timezone.utc)
    try:
        request = rebuild(finding["request"], session.identities, now, gateway=session.gateway.headers,
                          also_signed=session.profile.signature_extra_headers)
    except NotReplayable as why:
        return _of(finding, NOT_REPLAYABLE, str(why), "request")
    operation = str(finding.get("operation", "-"))
    session.outcomes.clear()
    session.begin(str(finding.get("suite", "")), finding["check"])
    try:
        exchange = session.send(session.client(), request, operation)
    except Unanswered as problem:  # a timeout, a 429 that did not pass: no answer is no fix
        return _of(finding, STILL_FAILING, f"no answer: {problem.message}", "request")
    expectation = finding.get("expectation") or {}
    if "statuses" in expectation:
        try:
            expected = Expected.from_dict(expectation)
        except (KeyError, TypeError, ValueError) as exc:
            return _of(finding, NOT_REPLAYABLE, f"the report's expectation is unreadable: {exc}", "request")
        session.expect(exchange, expected, rule=str(finding.get("rule", "")), ref=str(finding.get("ref", "")),
                       message=f"replay of {finding['id']}")
    found = [f for o in session.outcomes.values() for f in o.findings]
    return _verdict(finding, found, "request", f"re-sent {request.method} {request.target}")


def _rerun(check_id: str, report: dict, base_url: str, identities: Identities, profile_path: str | None,
           max_connections: int, gateway: GatewayOptions = GatewayOptions(),
           tls: TlsOptions | None = None) -> list[Finding] | str:
    """The findings of ``check_id`` run again with the report's seed, or why it could not run."""
    check = REGISTRY.get(check_id)
    if check is None:
        return "no such check in this version of obvalidate"
    options = RunOptions(base_url, (check.suite,), profile_path, identities, int(report.get("seed", 0)),
                         int(report.get("max_examples", 10)), 1, (check_id,), max_connections,
                         headers=gateway.headers, rate_limit=gateway.rate_limit, request_timeout=gateway.timeout,
                         max_response_bytes=gateway.max_response_bytes, tls=tls,
                         allowed_origins=gateway.allowed_origins)
    result = run_checks(options, (check.suite,))
    broken = [o for o in result.outcomes if o.status in ("not-exercised", "error")]
    if not result.findings and broken:
        first = broken[0]
        return f"{first.status}: {first.reason.splitlines()[0] if first.reason else ''}".rstrip(": ")
    return result.findings


def text(verdicts: list[Verdict]) -> str:
    lines = [f"{v.id} {v.fingerprint} {v.check} [{v.operation}]: {v.status.upper()} — {v.detail}" for v in verdicts]
    counts = {s: sum(v.status == s for v in verdicts) for s in (FIXED, STILL_FAILING, NOT_REPLAYABLE)}
    lines.append(f"replayed {len(verdicts)} finding{'s' if len(verdicts) != 1 else ''}: "
                 + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(printable(line) for line in lines) + "\n"   # the report's and the target's words: data
