"""Running the gate: the chosen suites' checks against one target, in order (or spread over worker processes), and
the run's result: outcomes per check × operation, findings, the cases sent and the clause coverage."""
from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from cryptography.hazmat.primitives import serialization

from conformance.client import Identity
from validator.context import ALL_DECISIONS, DEFAULT_PROFILE, Profile
from validator.spec import Spec, load_spec

from . import suites as _suites  # noqa: F401 - importing the suites registers their checks
from .baseline import Baseline
from .model import REGISTRY, SUITES, Check, Finding, NotExercised, Outcome
from conformance.exchange.origins import OffTarget
from .pool import DEFAULT_MAX_BYTES, DEFAULT_MAX_CONNECTIONS, TIMEOUT, GatewayOptions, Unanswered
from .session import Identities, Session, TargetUnreachable
from .tls import TlsOptions

# Suites whose generated cases may reset the sandbox's state (initializeSandbox) or run its batch.
RESETTING_SUITES = ("schema", "negative")
# (event, name, outcome): "start" and "done" name a check (done: one of its outcomes), "suite" a suite all of whose
# checks have ended (in a worker process: when its outcomes arrive).
Progress = Callable[[str, str, Outcome | None], None]


@dataclass
class RunOptions:
    base_url: str
    suites: tuple[str, ...] = SUITES
    profile_path: str | None = None
    identities: Identities | None = None
    seed: int = 0
    max_examples: int = 10
    workers: int = 1
    checks: tuple[str, ...] = ()       # fnmatch patterns of check ids; none: every check of the suites
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # connections to the target open at once, for the whole run
    full_curl: bool = False            # the findings' curls carry the certificate (--full-curl)
    # The target's gateway (pool.py): headers sent on every request, requests per second for the whole run (None: no
    # limit), seconds to wait for an answer.
    headers: tuple[tuple[str, str], ...] = ()
    rate_limit: float | None = None
    request_timeout: float = TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_BYTES   # the most an answer's body may have (conformance/bounded.py)
    tls: TlsOptions | None = None      # the TLS client certificate and the CAs trusted (file names: they travel)
    # Origins besides the target's the run may follow links to (--allow-origin, origins.py).
    allowed_origins: tuple[str, ...] = ()
    test_data: str | None = None       # the bank's fixed data set (--test-data FILE, the sandbox's own format)
    strict: bool = False               # every decision pinned (--strict): another reading is a failure, not a difference

    def gateway(self) -> GatewayOptions:
        return GatewayOptions(self.headers, self.rate_limit, self.request_timeout, self.max_response_bytes,
                              allowed_origins=self.allowed_origins)

    def judged_by(self) -> dict:
        """What judged the run, as its reports record it: the profile (name, file, SHA-256 of its bytes), the
        suites and check patterns, seed and examples, and how the target was reached -- the -H names (never their
        values), rate limit, timeouts, size cap, connections, origins allowed."""
        profile = {"name": DEFAULT_PROFILE.name, "file": None, "sha256": None}
        if self.profile_path:
            try:
                with open(self.profile_path, "rb") as f:
                    data = f.read()
                profile = {"name": Profile.load(self.profile_path).name, "file": self.profile_path,
                           "sha256": hashlib.sha256(data).hexdigest()}
            except Exception:  # noqa: BLE001 - the run read it; a file changed since is recorded as unreadable
                profile = {"name": "unreadable", "file": self.profile_path, "sha256": None}
        return {"profile": profile, "suites": list(self.suites), "checks": list(self.checks) or ["*"],
                "seed": self.seed, "max_examples": self.max_examples, "workers": self.workers,
                "gateway_headers": [name for name, _value in self.headers], "rate_limit": self.rate_limit,
                "request_timeout": self.request_timeout, "max_response_bytes": self.max_response_bytes,
                "max_connections": self.max_connections, "allowed_origins": list(self.allowed_origins)}


@dataclass
class RunResult:
    base_url: str
    options: RunOptions
    outcomes: list[Outcome] = field(default_factory=list)
    cases: list[tuple] = field(default_factory=list)
    exercised_rules: set[str] = field(default_factory=set)
    exercised_refs: set[str] = field(default_factory=set)
    seconds: float = 0.0
    error_bodies: int = 0   # refusals whose error body is not the documented one (A6): one finding for them all
    answers: dict[str, list] = field(default_factory=dict)   # answer bodies by hash (Session.answers)
    baseline: Baseline | None = None   # compared with (--baseline): the reports mark findings known or new

    @property
    def findings(self) -> list[Finding]:
        return [f for o in self.outcomes for f in o.findings]

    @property
    def cases_digest(self) -> str:
        """The cases sent (check, operation, method, target, body hash), order-free: same seed, same digest."""
        lines = sorted("\t".join(c) for c in self.cases)
        return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def checks_of(suites: tuple[str, ...]) -> list[Check]:
    """The registered checks of ``suites``, in registration order."""
    return [c for c in REGISTRY.values() if c.suite in suites]


def selected(suites: tuple[str, ...], patterns: tuple[str, ...] = ()) -> list:
    """The checks of ``suites`` whose id matches one of ``patterns`` (all without patterns)."""
    return [c for c in checks_of(suites) if not patterns or any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]


def _profile(path: str | None, strict: bool = False) -> Profile:
    profile = Profile.load(path) if path else DEFAULT_PROFILE
    return profile._replace(pinned_decisions=ALL_DECISIONS) if strict else profile


def _test_data(path: str | None):
    from conformance.sandbox.testdata import load

    return load(path) if path else None


def run_checks(options: RunOptions, suites: tuple[str, ...], spec: Spec | None = None,
               progress: Progress | None = None) -> RunResult:
    """Run the checks of ``suites`` in this process."""
    spec = spec or load_spec()
    session = Session(options.base_url, spec, _profile(options.profile_path, options.strict),
                      options.identities or Identities.throwaway(), seed=options.seed,
                      max_examples=options.max_examples, max_connections=options.max_connections,
                      gateway=options.gateway(), tls=options.tls, test_data=_test_data(options.test_data))
    session.full_curl = options.full_curl
    result = RunResult(options.base_url, options)
    started = time.perf_counter()
    try:
        chosen = selected(suites, options.checks)
        for i, chk in enumerate(chosen):
            if progress:
                progress("start", chk.id, None)
            session.begin(chk.suite, chk.id)
            before = set(session.outcomes)
            t0 = time.perf_counter()
            try:
                chk(session)
            except NotExercised as why:
                outcome = session.outcome("-")
                outcome.status, outcome.reason = "not-exercised", str(why)
            except TargetUnreachable:
                raise
            except Unanswered as problem:  # a timeout or a 429 that did not pass: its own finding, the run goes on
                session.unanswered(problem)
            except OffTarget as problem:  # a request off the target's origins the pool refused: a finding, not sent
                session.off_target(problem)
            except Exception as exc:  # a defect of the check itself: reported, never a traceback to the user
                outcome = session.outcome("-")
                outcome.status = "error"
                outcome.reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
            new = [o for key, o in session.outcomes.items() if key not in before]
            if not new:
                new = [session.outcome("-")]
            for o in new:
                o.seconds = round(time.perf_counter() - t0, 3)
            if progress:
                for o in new:
                    progress("done", chk.id, o)
                if i + 1 == len(chosen) or chosen[i + 1].suite != chk.suite:
                    progress("suite", chk.suite, None)
        result.outcomes = list(session.outcomes.values())
        result.cases = list(session.cases)
        result.exercised_rules = set(session.exercised_rules) | session.response_rules_reached()
        result.exercised_refs = set(session.exercised_refs)
        result.error_bodies = session.error_bodies
        result.answers = dict(session.answers)
    finally:
        session.close()
    result.seconds = time.perf_counter() - started
    return result


# ---------------------------------------------------------------- worker processes
def _pem(identity: Identity) -> tuple[bytes, bytes]:
    return (identity.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()),
            identity.certificate.public_bytes(serialization.Encoding.PEM))


def _from_pem(pair: tuple[bytes, bytes]) -> Identity:
    from cryptography import x509

    return Identity(serialization.load_pem_private_key(pair[0], None), x509.load_pem_x509_certificate(pair[1]))


def _worker(options: RunOptions, pems: tuple, suite: str) -> RunResult:
    with_keys = dataclasses.replace(options, identities=Identities(_from_pem(pems[0]), _from_pem(pems[1])))
    result = run_checks(with_keys, (suite,))
    result.options = options  # back to the parent without the private keys (they do not pickle, nor should travel)
    return result


def worker_connections(max_connections: int, workers: int, suites: int) -> int:
    """Each worker's share of the run's connections: at most ``max_connections`` in all, at least one each (so with
    more workers than connections, one per worker)."""
    return max(1, max_connections // max(1, min(workers, suites)))


def worker_rate(rate_limit: float | None, workers: int, suites: int) -> float | None:
    """Each worker's share of the run's requests per second, divided as the connections are: the run's workers
    together never send more than ``rate_limit`` a second."""
    return None if rate_limit is None else rate_limit / max(1, min(workers, suites))


def run(options: RunOptions, progress: Progress | None = None) -> RunResult:
    """Run the chosen suites; with ``workers`` > 1 each suite runs in a worker process."""
    options.identities = options.identities or Identities.throwaway()
    suites = tuple(s for s in SUITES if s in options.suites)
    if options.workers <= 1 or len(suites) <= 1:
        return run_checks(options, suites, progress=progress)
    started = time.perf_counter()
    pems = (_pem(options.identities.tpp), _pem(options.identities.other))
    # The connection limit holds for the run: each worker gets its share (at least one connection).
    plain = RunOptions(options.base_url, suites, options.profile_path, None, options.seed, options.max_examples, 1,
                       options.checks, worker_connections(options.max_connections, options.workers, len(suites)),
                       headers=options.headers, rate_limit=worker_rate(options.rate_limit, options.workers, len(suites)),
                       request_timeout=options.request_timeout, max_response_bytes=options.max_response_bytes,
                       tls=options.tls)
    plain.full_curl = options.full_curl
    plain.allowed_origins = options.allowed_origins
    plain.strict = options.strict
    import multiprocessing

    result = RunResult(options.base_url, options)
    # The Schemathesis suites may reset the sandbox (initializeSandbox) or run its batch: they run before the
    # others start, as in one process, so no scenario meets a reset half-way.
    phases = [tuple(s for s in suites if s in RESETTING_SUITES), tuple(s for s in suites if s not in RESETTING_SUITES)]
    with ProcessPoolExecutor(max_workers=options.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for phase in phases:
            futures = [(suite, pool.submit(_worker, plain, pems, suite)) for suite in phase]
            for suite, future in futures:
                part = future.result()
                if progress:
                    for o in part.outcomes:
                        progress("done", o.check, o)
                    progress("suite", suite, None)
                result.outcomes.extend(part.outcomes)
                result.cases.extend(part.cases)
                result.exercised_rules |= part.exercised_rules
                result.exercised_refs |= part.exercised_refs
                result.error_bodies += part.error_bodies
                merge_answers(result.answers, part.answers)
    _one_error_body_finding(result)
    _one_unanswered_finding(result)
    result.seconds = time.perf_counter() - started
    return result


def merge_answers(into: dict[str, list], part: dict[str, list]) -> None:
    """A worker's answer bodies counted into the run's (Session.answers' form)."""
    for digest, (count, size, excerpt, operations) in part.items():
        seen = into.setdefault(digest, [0, size, excerpt, []])
        seen[0] += count
        seen[3] += [o for o in operations if o not in seen[3]]


def _one_error_body_finding(result: RunResult) -> None:
    """The worker processes' A6 findings as one for the run: the first, counting every process's answers."""
    from conformance.exchange.responses import ERROR_BODY_RULE
    from .session import error_body_message, list_refusal

    found = [(o, f) for o in result.outcomes for f in o.findings if f.rule == ERROR_BODY_RULE]
    if len(found) < 2:
        return
    first = found[0][1]
    first.message = error_body_message(result.error_bodies, first.message.split("; the first: ", 1)[-1])
    for _outcome, finding in found[1:]:
        for refusal in finding.refusals:
            list_refusal(first, refusal)
    for outcome, finding in found[1:]:
        outcome.findings.remove(finding)
        if not outcome.findings and outcome.status == "failed":
            outcome.status = "passed"


def _one_unanswered_finding(result: RunResult) -> None:
    """The worker processes' timeout and rate-limit findings as the run's: one per rule and operation (the first;
    the other checks that met it were not exercised)."""
    from .pool import AnswerTooLarge, RateLimited, RequestTimeout

    first: dict[tuple[str, str], str] = {}
    for outcome in result.outcomes:
        for finding in list(outcome.findings):
            if finding.rule not in (RequestTimeout.rule, RateLimited.rule, AnswerTooLarge.rule):
                continue
            key = (finding.rule, finding.operation)
            if key not in first:
                first[key] = finding.check
                continue
            outcome.findings.remove(finding)
            if not outcome.findings:
                outcome.status = "not-exercised"
                outcome.reason = f"{finding.message} (reported once, under {first[key]})"
