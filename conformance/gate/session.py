"""The run a check works in: the target, two TPP identities, the validator as oracle, and what was found.

Checks send every request through :meth:`Session.send`, which signs nothing itself (the
:class:`~conformance.client.SignedClient` signs the exact bytes it sends), checks every answer against the spec and
the validator's response kinds, and counts the case. :meth:`Session.predict` asks the validator's whole-request check
what a conforming implementation answers to a request exactly as prepared; :meth:`Session.expect` compares.
"""
from __future__ import annotations

import contextlib
import hashlib
import datetime as _dt
import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from urllib.parse import quote, urlsplit

import httpx

from conformance.client import Identity, PreparedRequest, SignedClient
from conformance.exchange.decoding import MAX_BYTES, NOT_JUDGED, Decoded, code_of, decode
from conformance.exchange.judge import ExchangeJudge
from conformance.exchange.origins import OffTarget, shown
from conformance.exchange.reasons import reason_problem
from conformance.exchange.responses import ERROR_BODY_RULE, LINK_RULES, ResponseProblem
from validator.context import Context, Profile
from validator import Validator
from validator.findings import Finding as ValidatorFinding
from validator.request import resolve_operation
from validator.rules import catalogue
from validator.spec import Spec

from .model import (ABSENT_IN_PROFILE, DECLARED_ANSWER, DIFFERENCE, FAILURE, NOT_OFFERED, SEVERAL_ANSWERS, Answer,
                    Expected, Finding, NotExercised, Outcome, bounded_headers, fingerprint, printable, reason,
                    refused_for)
from .pool import DEFAULT_MAX_CONNECTIONS, ConnectionPool, GatewayOptions, Unanswered
from .recorded import record
from .rules import SCENARIO_RULES
from .tls import TlsOptions, explain as explain_tls

# The ids a target issues in its creation answers (the spec's PaymentInitiationResponse, SigningBasketResponse and
# StartAuthorisationResponse members).
ISSUED_ID_FIELDS = ("paymentId", "basketId", "authorisationId")
ISSUED_ID_PARAMETERS = ISSUED_ID_FIELDS   # the path parameters naming them

EXCERPT = 240
ANSWERS_KEPT = 100_000   # distinct answer bodies a run counts (Session.answers); later new ones are not counted
NOT_REPRODUCIBLE = "not reproducible on retry"
# An operation a target without the sandbox's extras answers like this does not exist there.
ABSENT_STATUSES = (404, 405, 501)
def answer_of(response: Any, decoded: Decoded | None = None) -> Answer:
    """The answer of an httpx response, or of Schemathesis' (the fuzz suites'); ``decoded``, its body as the exchange
    decoded it (decoded here if not)."""
    body = response.content or b""
    # the judge's reading of the code (A6: tppMessages, or the bulk error body)
    code = code_of((decoded if decoded is not None else decode(body)).value)
    # The excerpt's characters only (at most 4 bytes each), never the whole body decoded once more.
    text = body[:EXCERPT * 4].decode("utf-8", "replace")
    cut = len(text) > EXCERPT or len(body) > EXCERPT * 4
    # The excerpt and the headers are the target's own answer, escaped (a hostile answer reaches a terminal, XML).
    return Answer(response.status_code, code if isinstance(code, str) else None,
                  printable(text[:EXCERPT] + "…" if cut else text),
                  bounded_headers(_header_pairs(response.headers)))


def _header_pairs(headers: Any) -> list[tuple[str, str]]:
    """(name, value) pairs of an httpx answer's headers, or of Schemathesis' (each name with a list of values)."""
    if hasattr(headers, "multi_items"):
        return headers.multi_items()
    return [(name, value) for name, values in headers.items()
            for value in (values if isinstance(values, list) else [values])]


# Headers a curl command leaves out: the certificate always (1,000+ characters of base64 that say nothing to a reader),
# any other header longer than this (the Signature stays: its keyId and signed headers are the evidence of the
# security findings, 581 characters with an RSA-2048 key, about 925 with RSA-4096).
LEFT_OUT_HEADERS = ("tpp-signature-certificate",)
LONG_HEADER = 1000


def _left_out(name: str, value: str) -> str:
    """A shell word standing for a header value the curl leaves out: an environment variable the reader sets; unset,
    the shell stops with a note saying how to re-sign."""
    variable = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "HEADER"
    if variable[0].isdigit():
        variable = "H_" + variable
    what = re.sub(r"[^A-Za-z0-9-]+", " ", name).strip() or "header"
    note = (f"the {len(value)}-character {what} value was left out: set {variable} to it, or re-sign the request "
            f"with obvalidate sign")
    return f'"${{{variable}:?{note}}}"'


def _gateway_value(name: str) -> str:
    """A shell word standing for a gateway header's value (``-H``): an environment variable the reader sets, so a
    report shared as a CI artifact carries no API key or client id."""
    variable = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_") or "HEADER"
    if variable[0].isdigit():
        variable = "H_" + variable
    return f'"${{{variable}:?set {variable} to the {name} value given with -H}}"'


# The rules of a finding about the certificate sent: its curl reads the certificate from a file of the report
# directory (certificate_file) instead of leaving it out, since the certificate is the evidence.
CERTIFICATE_RULE_PREFIX = "certificate-"
CERTIFICATE_RULES = ("signature-keyid-mismatch",)


def about_the_certificate(rule: str) -> bool:
    return rule.startswith(CERTIFICATE_RULE_PREFIX) or rule in CERTIFICATE_RULES


def certificate_file(value: str) -> str:
    """The report directory's file holding a certificate header's value (named by its hash: one file per
    certificate, however many findings are about it)."""
    return f"certificate-{hashlib.sha256(value.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}.txt"


def curl(base_url: str, request: PreparedRequest, gateway: tuple[tuple[str, str], ...] = (), *,
         full: bool = False, tls: TlsOptions | None = None, from_files: frozenset[str] = frozenset()) -> str:
    """A curl command sending the request as it was sent: signature headers included, no private key (the Date and
    Signature are the original ones, so a target with a Date window answers a late replay as stale). The
    certificate and any header over :data:`LONG_HEADER` characters are left out (:func:`_left_out`) unless ``full``
    (``conform --full-curl``: a command to paste as it is, certificate included) or named in ``from_files`` (lower
    case): then its value is read from the report directory's file (:func:`certificate_file`), so the command runs
    there as it is. The run's ``gateway`` headers (the pool sends them on every request) stand as environment
    variables. An empty value is written ``-H 'Name;'``, curl's way to send a header with no value (``-H 'Name:'``
    would remove it). With ``tls``, the run's TLS client certificate and CAs as curl's options (file names only)."""
    parts = ["curl", "-sS", "-i", *(shlex.quote(o) for o in (tls.curl_options() if tls else ())),
             "-X", request.method, shlex.quote(base_url + request.target)]
    names = {n.lower() for n, _v in request.headers}
    hidden = {n.lower() for n, _v in gateway}
    for name, value in list(request.headers) + [(n, v) for n, v in gateway if n.lower() not in names]:
        if name.lower() in hidden:
            parts += ["-H", shlex.quote(f"{name}: ") + _gateway_value(name)]
        elif name.lower() in from_files and not full:
            parts += ["-H", shlex.quote(f"{name}: ") + f'"$(cat {certificate_file(value)})"']
        elif not full and (name.lower() in LEFT_OUT_HEADERS or len(value) > LONG_HEADER):
            parts += ["-H", shlex.quote(f"{name}: ") + _left_out(name, value)]
        elif not value.strip():
            parts += ["-H", shlex.quote(f"{name};")]
        else:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    if request.body:
        parts += ["--data-binary", shlex.quote(request.body.decode("utf-8", "replace"))]
    return " ".join(parts)


NAMING_THE_FAULT = "naming where the request is wrong"   # what a refusal's tppMessage path must do (A6)
STATUS_UNDECLARED = "status-undeclared"   # the spec's rule for a status its operation does not declare (responses.py)


@dataclass
class Exchange:
    operation: str
    request: PreparedRequest
    response: httpx.Response
    answer: Answer
    decoded: Decoded | None = None   # the body, decoded once (decoding.py): every reader of the answer reads this
    # What is wrong with the body of an answer that should have been a refusal (Session.send's refusal_expected):
    # the consequence of the one defect, said in its finding's message, never findings of their own.
    withheld: list[str] = field(default_factory=list)
    # The spec's "status-undeclared" finding of this answer, if any: withdrawn when the check names the answer it
    # expected instead (Session.expect) -- one wrong answer is one finding, the check's.
    undeclared: Finding | None = None

    def __post_init__(self) -> None:
        if self.decoded is None:
            self.decoded = decode(self.response.content)

    def json(self) -> Any:
        """The answer's JSON value; None when it has none the gate can read."""
        return self.decoded.value

    def object(self) -> dict:
        """The answer's JSON object; empty when it is none (or cannot be read)."""
        return self.decoded.object()


@dataclass
class Disagreement(Exception):
    """Raised inside a Hypothesis search when the target disagrees, so the search stops (and may shrink) on it."""

    exchange: Exchange
    expected: str
    rule: str
    message: str
    expectation: Expected | None = None   # the judgement in machine form, for a replay


@dataclass
class Identities:
    tpp: Identity
    other: Identity

    @classmethod
    def throwaway(cls) -> "Identities":
        """Two throwaway test identities of two TPPs (the second for the cross-TPP checks, A28)."""
        return cls(Identity.generate("PSDNO-FSA-OBVALIDATE-A"), Identity.generate("PSDNO-FSA-OBVALIDATE-B"))


@dataclass
class Session:
    base_url: str
    spec: Spec
    profile: Profile
    identities: Identities
    seed: int = 0
    max_examples: int = 10
    max_connections: int = DEFAULT_MAX_CONNECTIONS   # the run's connections to the target open at once (pool.py)
    full_curl: bool = False   # the findings' curls carry the certificate and long headers (conform --full-curl)
    gateway: GatewayOptions = GatewayOptions()       # headers, rate limit and request timeout of the run (pool.py)
    tls: TlsOptions | None = None                    # the client certificate and trusted CAs (tls.py)
    test_data: Any = None   # the bank's fixed data set as it states it (conform --test-data; a sandbox DataSet)
    outcomes: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    exercised_rules: set[str] = field(default_factory=set)
    exercised_refs: set[str] = field(default_factory=set)
    cases: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    _check: tuple[str, str] = ("", "")     # (suite, check id) of the running check
    _absent: dict[str, bool] = field(default_factory=dict)
    # Resource ids the target issued, each named by the order it first appeared ("{paymentId#1}"): a target may
    # issue random ids, and the cases a seed sends are the same cases whatever ids it chose.
    _issued: dict[str, str] = field(default_factory=dict)
    _issued_pattern: Any = None
    # A6: answers whose error body is not a documented one (the profile's error-body), reported as one finding
    # for the run: the first (the finding, the first answer's words) and how many.
    error_bodies: int = 0
    _error_body: tuple[Finding, str] | None = None
    _links_reported: set[tuple[str, str, str]] = field(default_factory=set)
    # Each answer body of the run by its hash: [requests, bytes, excerpt, operations] (a mock's canned body answers
    # many requests; the report says it once, above the findings it causes). Bounded: see ANSWERS_KEPT.
    answers: dict[str, list] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.gateway.headers:  # the oracle knows the run's gateway headers: never "not accepted"
            self.profile = self.profile._replace(gateway_headers=self.profile.gateway_headers | frozenset(
                name.lower() for name, _value in self.gateway.headers))
        self.catalogue = catalogue()
        self._lock = threading.Lock()
        self._error_body_lock = threading.Lock()
        self._clients: list[SignedClient] = []
        self.pool = ConnectionPool(self.max_connections, self.gateway, origin=self.base_url, tls=self.tls)
        # Where the run may send requests (origins.py): the pool's guard and every follower of a link ask the same.
        self.origins = self.pool.transport.origins
        # the exchange judge's oracle and answer checks are the gate's (one copy: conformance.exchange)
        self.judge = ExchangeJudge(self.spec, self.profile, base_path=urlsplit(self.base_url).path,
                                   link_origins=self.origins)
        self.validator = self.judge.oracle.validator
        self.responses = self.judge.responses
        self._unanswered: dict[tuple[str, str], str] = {}   # (rule, operation) -> the check that reported it

    # ---- clock and clients ----
    @staticmethod
    def now() -> _dt.datetime:
        return _dt.datetime.now(_dt.timezone.utc)

    def today(self) -> _dt.date:
        return self.validator_at(self.now()).today

    def client(self, who: str = "tpp", *, identity: Identity | None = None,
               clock: Callable[[], _dt.datetime] | None = None) -> SignedClient:
        """A signed client of one of the run's TPPs, sending through the run's pool (closed at the end of the run)."""
        client = SignedClient(self.base_url, identity or getattr(self.identities, who), spec=self.spec,
                              clock=clock or self.now, http=self.pool.client(), extra_headers=self.gateway.headers,
                              also_signed=self.profile.signature_extra_headers, paths=self.profile.paths)
        with self._lock:
            self._clients.append(client)
        return client

    def unreachable(self, what: str, exc: BaseException) -> "TargetUnreachable":
        """The error ending the run when a request to the target failed: :class:`TlsFailure` with its one sentence
        when TLS is why, else :class:`TargetUnreachable`."""
        return self.tls_failure(exc, self.base_url) or TargetUnreachable(f"{what}: {type(exc).__name__}: {exc}")

    def tls_failure(self, exc: BaseException, url: str) -> "TlsFailure | None":
        """The run's TLS failure when a request to ``url`` on the target's host failed because of TLS; None for another
        host (a page the target links to elsewhere is the target's to serve: a finding) or another cause."""
        if urlsplit(url)[:2] != urlsplit(self.base_url)[:2]:
            return None
        problem = explain_tls(exc, url, self.tls)
        return TlsFailure(problem) if problem else None

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self.pool.close()

    # ---- the running check ----
    def begin(self, suite: str, check_id: str) -> None:
        self._check = (suite, check_id)

    def outcome(self, operation: str) -> Outcome:
        suite, check_id = self._check
        key = (check_id, operation)
        with self._lock:
            if key not in self.outcomes:
                self.outcomes[key] = Outcome(suite, check_id, operation)
            return self.outcomes[key]

    def unanswered(self, problem: Unanswered) -> None:
        """A request of the running check got no answer to judge (pool.py): the check ends. The first time for its
        rule and operation it is a finding of its own class; later, the check was not exercised (one finding per
        operation, however many checks meet it)."""
        path = urlsplit(problem.url).path
        base = urlsplit(self.base_url).path.rstrip("/")
        if base and path.startswith(base):
            path = path[len(base):] or "/"
        operation = self.resolve(problem.method, path) or f"{problem.method} {path}"
        suite, check_id = self._check
        with self._lock:
            first = self._unanswered.setdefault((problem.rule, operation), check_id)
        if first != check_id:
            outcome = self.outcome(operation)
            if outcome.status != "failed":
                outcome.status = "not-exercised"
                outcome.reason = f"{problem.reason} (reported once, under {first})"
            return
        if problem.rule == "request-timeout":
            expected = f"a whole answer within {self.gateway.timeout:g} s"
            actual = problem.actual or f"no answer within {self.gateway.timeout:g} s"
            option = "--request-timeout"
        elif problem.rule == "answer-too-large":
            expected = f"a body of at most {self.gateway.max_response_bytes:,} bytes"
            actual = problem.actual
            option = "--max-response-bytes"
        else:
            expected = "an answer other than 429 after Retry-After"
            actual = "429 Too Many Requests (rate limited)"
            option = "--rate-limit"
        finding = Finding(suite, check_id, operation, problem.rule, option, problem.message, expected, actual, "",
                          self.seed, "", {})
        outcome = self.outcome(operation)
        with self._lock:
            outcome.findings.append(finding)
            outcome.status = "failed"

    def off_target(self, problem: OffTarget, exchange: Exchange | None = None, *, operation: str | None = None,
                   ref: str = "", response: Any = None) -> None:
        """A link of the target's leading off the allowed origins (origins.py): a finding, never a request. With
        ``exchange``, the answer that carried the link (its request's curl); once per check, operation and rule, as
        the answer's own link check may have reported it already."""
        op = operation or (exchange.operation if exchange else "-")
        key = (self._check[1], op, OffTarget.rule)
        with self._lock:
            if key in self._links_reported:
                return
            self._links_reported.add(key)
        self.exercised_rules.add(OffTarget.rule)
        allowed = ", ".join(shown(o) for o in problem.allowed)
        self.disagree(exchange, rule=OffTarget.rule, ref=ref, operation=op, response=response,
                      expected=f"a link on the target's origin ({allowed}; more with --allow-origin)",
                      message=str(problem))

    # ---- sending ----
    def send(self, client: SignedClient, request: PreparedRequest, operation: str, *,
             absence_judged_apart: bool = False, refusal_expected: bool = False) -> Exchange:
        """Send a prepared request; the answer is checked against the spec and the validator's response kinds (not
        an answer saying the operation is not there, when ``absence_judged_apart``: :meth:`require` judges it). With
        ``refusal_expected`` (an id nobody issued, another TPP's payment), what is wrong with the body of an answer
        that is not a refusal is kept on the exchange (``withheld``) for the check's one finding about the answer:
        its links naming another id are what answering at all brings, not a second defect."""
        try:
            response = client.send_prepared(request)
        except httpx.HTTPError as exc:
            raise self.unreachable(f"{request.method} {request.target}", exc) from None
        exchange = self.exchange(operation, request, response)
        self.outcome(operation).cases += 1
        self.record_case(operation, request)
        self.learn_issued_ids(exchange.json())
        if absence_judged_apart and response.status_code in ABSENT_STATUSES:
            return exchange
        problems = self.response_problems(exchange)
        if refusal_expected and response.status_code < 400:
            exchange.withheld = [p.message for p in problems]
            self.exercised_rules.update(p.rule for p in problems)
            return exchange
        for problem in problems:
            self.exercised_rules.add(problem.rule)
            if problem.rule in LINK_RULES or problem.rule == NOT_JUDGED:  # once per check, operation and rule
                key = (self._check[1], operation, problem.rule)
                if key in self._links_reported:
                    continue
                self._links_reported.add(key)
            self.disagree(exchange, rule=problem.rule, ref=problem.ref, expected=DECLARED_ANSWER,
                          message=f"response: {problem.message}")
        return exchange

    def exchange(self, operation: str, request: PreparedRequest, response: Any) -> Exchange:
        """The exchange of one answer, its body decoded once (decoding.py). Schemathesis' answer gets the same value
        as its own (its links read it), so nothing decodes the body again."""
        # The loader takes what the pool read (at most --max-response-bytes): the answer read is the answer decoded.
        decoded = decode(response.content, max_bytes=max(self.gateway.max_response_bytes, MAX_BYTES))
        if hasattr(type(response), "_deserialized") and (decoded.value is not None or decoded.why_not):
            response._deserialized = decoded.value
        exchange = Exchange(operation, request, response, answer_of(response, decoded), decoded)
        self.count_answer(exchange)
        return exchange

    def count_answer(self, exchange: Exchange) -> None:
        """The answer's body counted by its hash (an empty body is not counted: a 204 is no canned answer)."""
        body = exchange.response.content or b""
        if not body:
            return
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            seen = self.answers.get(digest)
            if seen is None:
                if len(self.answers) >= ANSWERS_KEPT:
                    return
                seen = self.answers[digest] = [0, len(body), exchange.answer.excerpt, []]
            seen[0] += 1
            if exchange.operation not in seen[3]:
                seen[3].append(exchange.operation)

    def response_problems(self, exchange: Exchange, content_type: str | None = None) -> list[ResponseProblem]:
        """What is wrong with an answer per the spec and the response kinds; an error body that is not a documented
        one (A6) is counted towards the run's one finding of it, not returned."""
        request, response = exchange.request, exchange.response
        if content_type is None:
            content_type = response.headers.get("content-type", "")
        problems = self.responses.problems(request.method, request.target.split("?", 1)[0], response.status_code,
                                           content_type, response.content, decoded=exchange.decoded)
        for problem in problems:
            if problem.rule == ERROR_BODY_RULE:
                self.count_error_body(exchange, problem)
        return [p for p in problems if p.rule != ERROR_BODY_RULE]

    def response_rules_reached(self) -> set[str]:
        """The validator rules of every response kind an answer of the run was judged as: its semantic rules
        (engine.plan_for) and the schema rules of the keywords its schema uses (a tppMessage code against the code
        set, schema-enum; an array's bounds, schema-items) -- reached, whether or not an answer broke them."""
        from validator.engine import plan_for
        from validator.schema import KEYWORD_RULES, bundled_schema

        reached = set()
        for kind in set(self.responses.judged_kinds):
            reached.update(r.id for r, _where in plan_for(self.spec, kind).steps)
            keywords = _keywords(bundled_schema(self.spec, self.spec.kind(kind).schema_name))
            reached.update(KEYWORD_RULES[k] for k in keywords if k in KEYWORD_RULES)
        return reached

    def unissued_refusal(self, exchange: Exchange, expected: Expected) -> bool:
        """The document states no order of checks: a request refused for something else that also names, in its
        path, a payment, basket or authorisation id the target never issued in this run may be refused as unknown
        (404 RESOURCE_UNKNOWN, A28) -- every reading accepts that, so it is no finding."""
        answer = exchange.answer
        if (answer.status, answer.code) != (404, "RESOURCE_UNKNOWN") or not expected.statuses \
                or min(expected.statuses) < 400:
            return False
        try:
            values = self._path_values(exchange)
        except Exception:  # noqa: BLE001 - a target the resolver cannot read names no id it knows
            return False
        with self._lock:
            return any(v not in self._issued for k, v in values.items() if k in ISSUED_ID_PARAMETERS)

    def code_unreadable(self, exchange: Exchange, expected: Expected) -> bool:
        """True when the answer refuses with a status ``expected`` allows but its body is no documented error body,
        so no code can be read from it (A6: both documented bodies carry one). The code is then not judged: the
        body counts towards the run's one A6 finding, and the refusal itself agrees -- one undocumented error body
        is one defect, not one finding per rule whose refusal wears it."""
        answer = exchange.answer
        if not expected.codes or answer.code is not None or answer.status is None or answer.status < 400 \
                or answer.status not in expected.statuses:
            return False
        excerpt = answer.excerpt if len(answer.excerpt) <= 120 else answer.excerpt[:120] + "…"
        self.count_error_body(exchange, ResponseProblem(
            ERROR_BODY_RULE, "A6", f"{exchange.operation} {answer.status}: a refusal whose body names no code "
            f"({excerpt or 'no body'})"))
        return True

    def count_error_body(self, exchange: Exchange, problem: ResponseProblem) -> None:
        self.exercised_rules.add(ERROR_BODY_RULE)
        self.exercised_refs.add("A6")
        if getattr(exchange.response, "_obvalidate_error_body_counted", False):
            return  # judged twice (the refusal's code, then the answer's shape): one answer counts once
        try:
            exchange.response._obvalidate_error_body_counted = True
        except AttributeError:
            pass
        with self._error_body_lock:
            self.error_bodies += 1
            if self._error_body is not None:
                first, words = self._error_body
                first.message = error_body_message(self.error_bodies, words)
                list_refusal(first, problem.message)
                return
            self.disagree(exchange, rule=ERROR_BODY_RULE, ref="A6", expected=self._documented_error_body(),
                          message=error_body_message(1, problem.message))
            found = self.outcome(exchange.operation).findings
            first = next(f for f in reversed(found) if f.rule == ERROR_BODY_RULE)
            list_refusal(first, problem.message)
            self._error_body = (first, problem.message)

    def _documented_error_body(self) -> str:
        choice = self.profile.error_body
        return {"either": "a documented error body: tppMessages or {id, system, status, code, message} (A6)",
                "tpp-messages": "the tppMessages error body (profile error-body: tpp-messages, A6)",
                "bulk": "the {id, system, status, code, message} error body (profile error-body: bulk, A6)",
                }.get(choice, "the operation's documented error body (profile error-body: per-operation, A6)")

    def record_case(self, operation: str, request: PreparedRequest) -> None:
        """Remember what was sent (for the run's case digest: same seed, same cases), ids the target issued named."""
        with self._lock:
            target, body = self._named(request.target), self._named(request.body.decode("utf-8", "surrogateescape"))
            case = (self._check[1], operation, request.method, target,
                    hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest())
            self.cases.append(case)

    def learn_issued_ids(self, body: Any) -> None:
        """The ids an answer's JSON value issues (paymentId, basketId, authorisationId), named for the cases."""
        if not isinstance(body, dict):
            return
        with self._lock:
            for name in ISSUED_ID_FIELDS:
                value = body.get(name)
                if isinstance(value, str) and value and value not in self._issued:
                    self._issued[value] = f"{{{name}#{len(self._issued) + 1}}}"
                    # as a path segment of a later request too (percent-encoded by an HTTP client)
                    self._issued.setdefault(quote(value, safe=""), self._issued[value])
                    self._issued_pattern = None

    def _named(self, text: str) -> str:
        if not self._issued:
            return text
        if self._issued_pattern is None:
            self._issued_pattern = re.compile("|".join(map(re.escape, sorted(self._issued, key=len, reverse=True))))
        return self._issued_pattern.sub(lambda m: self._issued[m.group(0)], text)

    def call(self, client: SignedClient, operation: str, *, refusal_expected: bool = False,
             **options: Any) -> Exchange:
        """Build, sign and send one operation (options as :meth:`SignedClient.prepare`; ``refusal_expected`` as
        :meth:`send`); an operation or payment product the profile says the target lacks makes the check "not
        exercised" instead (A15, A25, A31)."""
        missing = self.unavailable(operation, options.get("path"))
        if missing:
            raise NotExercised(missing)
        return self.send(client, client.prepare(operation, **options), operation, refusal_expected=refusal_expected)

    def unavailable(self, operation: str, path: dict | None = None) -> str | None:
        """Why the profile says the target does not have ``operation`` (at ``path``'s payment service and product),
        or None: an absent operation (A15, A25), a product not offered (A31)."""
        if operation in self.profile.absent_operations:
            return reason(ABSENT_IN_PROFILE, operation)
        product = self.product(operation, path)
        if product and product in self.profile.products_not_offered:
            return reason(NOT_OFFERED, product)
        return None

    def product(self, operation: str, path: dict | None = None) -> str | None:
        """The payment product (payment-service/payment-product) an operation addresses, if any."""
        return self.judge.product(self.spec.operation(operation), dict(path or {}))

    # ---- the oracle (conformance.exchange's) ----
    def validator_at(self, now: _dt.datetime, context: Context | None = None) -> Validator:
        return self.judge.oracle.validator_at(now, context)

    def findings_for(self, request: PreparedRequest, *, at: _dt.datetime | None = None,
                     context: Context | None = None) -> list[ValidatorFinding]:
        """The validator's whole-request findings for a request exactly as prepared."""
        return self.judge.oracle.findings(request, at=at or self.now(), context=context)

    def findings_by_decision(self, request: PreparedRequest, *, at: _dt.datetime | None = None,
                             context: Context | None = None) -> list[ValidatorFinding]:
        """The validator's findings for a request with the rules' own severities (the profile's rules not
        applied): what a request breaks whatever the profile made of it."""
        return self.judge.oracle.findings_by_decision(request, at=at or self.now(), context=context)

    def rule_off(self, rule: str) -> bool:
        """The profile turned the rule off (severity: off): its checks are not exercised."""
        override = self.profile.rules.get(rule)
        return bool(override and override.severity == "off")

    def predict(self, request: PreparedRequest, *, success: tuple[int, ...], at: _dt.datetime | None = None,
                context: Context | None = None) -> tuple[Expected, list[ValidatorFinding]]:
        """What a conforming implementation answers, per the validator (:meth:`conformance.exchange.oracle.Oracle.
        predict`): any error finding's status and code, or ``success`` when there is none."""
        expected, errors = self.judge.oracle.predict(request, success=success, at=at or self.now(), context=context)
        for f in errors:
            self.exercised_rules.add(f.rule)
        return expected, errors

    def templates_fitting(self, path: str) -> list[tuple[str, frozenset[str]]]:
        return self.judge.oracle.templates_fitting(path)

    def expect(self, exchange: Exchange, expected: Expected, *, rule: str, ref: str, message: str,
               errors: list[ValidatorFinding] = ()) -> bool:
        """Compare an answer with what is expected; a disagreement is a finding. True when they agree. With the
        validator's ``errors`` (what the request breaks), a refusal that agrees is judged for its reason too (A6: a
        tppMessage path naming another place is a refusal for another reason, a finding of the rule). What is wrong
        with the body of an answer that should have been a refusal (``exchange.withheld``) is said in the message."""
        self.exercised_rules.add(rule)
        self.exercised_refs.update(r for r in ref.split(", ") if r)
        tier = expected.tier(exchange.answer)
        if self.unissued_refusal(exchange, expected):
            return True
        if tier is None or self.code_unreadable(exchange, expected):
            other_reason = reason_problem(exchange.json(), errors) if errors and exchange.answer.status \
                and exchange.answer.status >= 400 else None
            if other_reason:
                self.disagree(exchange, rule=rule, ref=ref, expected=f"{expected.describe()} {NAMING_THE_FAULT}", message=f"{message.split(': expected', 1)[0]}: {other_reason}")
                return False
            return True
        if exchange.withheld:
            message += f" (its body, which should not be there: {'; '.join(exchange.withheld)})"
        if exchange.undeclared is not None:   # the same wrong status said twice: the check's finding says it once
            self._withdraw(exchange.undeclared)
            exchange.undeclared = None
        self.disagree(exchange, rule=rule, ref=ref, expected=expected.describe(), message=message,
                      expectation=expected)
        return tier == DIFFERENCE

    def _withdraw(self, finding: Finding) -> None:
        with self._lock:
            for outcome in self.outcomes.values():
                outcome.findings[:] = [f for f in outcome.findings if f is not finding]

    def disagree(self, exchange: Exchange | None, *, rule: str, ref: str, expected: str, message: str,
                 operation: str | None = None, response: httpx.Response | None = None,
                 expectation: Expected | None = None, choice: tuple[str | None, str | None] | None = None) -> None:
        """Record a finding; the answer is the exchange's, or ``response`` (one sent outside the signed clients, such
        as the SCA page's). ``expectation``, the judgement in machine form, lets a replay judge the request again."""
        suite, check_id = self._check
        op = operation or (exchange.operation if exchange else "-")
        actual = exchange.answer if exchange else answer_of(response) if response is not None else Answer(None)
        tier, decision, line = FAILURE, None, None
        if choice is not None:  # another choice of a profile key (choice_differs): a difference
            tier, (decision, line) = DIFFERENCE, choice
            if decision is not None:
                message = f"{message} -- another reading of {decision}, which the document leaves open"
        elif expectation is not None and exchange is not None and not expectation.allows(exchange.answer) \
                and expectation.reading(exchange.answer) is not None:
            reading = expectation.reading(exchange.answer)
            tier = FAILURE if reading.pinned else DIFFERENCE
            decision, line = reading.decision, reading.line(exchange.answer)
            message = (f"{message} -- " + (f"another reading of {decision}, which the document leaves open"
                                           if decision else "an extension of the bank's (a note)")
                       + (" and the profile pins (or states otherwise)" if reading.pinned else ""))
        if exchange is not None:
            rule, ref, message, chosen = self.profile_decision(exchange, rule, ref, message)
            if chosen is not None:
                tier, decision, line = chosen
        # a finding about several answers (pages, concurrent creations) has no one answer: the message says them
        described = actual.describe() if exchange is not None or response is not None else SEVERAL_ANSWERS
        files = self._certificate_files(exchange.request) if exchange and about_the_certificate(rule) else {}
        finding = Finding(suite, check_id, op, rule, ref or self.rule_ref(rule), message, expected, described,
                          actual.excerpt, self.seed,
                          curl(self.base_url, exchange.request, self.gateway.headers, full=self.full_curl,
                               tls=self.tls, from_files=frozenset(LEFT_OUT_HEADERS) if files else frozenset())
                          if exchange else "",
                          dict(actual.headers), files=files)
        answered = exchange.response if exchange is not None else response
        if answered is not None:
            body = answered.content or b""
            finding.answer_sha256 = hashlib.sha256(body).hexdigest() if body else ""
            if expected != DECLARED_ANSWER and rule != ERROR_BODY_RULE:   # a refusal judged, not its body's shape
                finding.refused_for = refused_for(actual.status, exchange.json() if exchange is not None
                                                  else decode(body).value)
        # the ids this target issued named by kind, so the same defect has the same fingerprint in every run
        with self._lock:
            named = self._named(expected)
        # A success judged by the spec is the same defect whatever message code its body carries (a status read
        # with a PAYMENT_FAILED note lacks its transactionStatus as every other does): the status alone names it.
        fact = str(actual.status) if expected == DECLARED_ANSWER and 200 <= (actual.status or 0) < 300 \
            else finding.actual
        finding.fingerprint = fingerprint(op, rule, re.sub(r"#\d+\}", "}", named), fact, finding.refused_for)
        finding.tier, finding.decision, finding.profile_line = tier, decision, line
        if tier == DIFFERENCE and line:
            # one choice of the target, one finding: the profile line that states it, whatever the operation
            finding.fingerprint = fingerprint("*", "", f"{decision}: {line}", "")
        elif tier == DIFFERENCE and decision is None:  # a note: one extension, one finding, whatever the check expected
            finding.fingerprint = fingerprint(op, rule, "an extension", finding.actual)
        elif expected.endswith(NAMING_THE_FAULT):
            # A6: refusals naming another place than the request's fault are one defect of the target's error
            # bodies, whichever rule each request broke -- one finding per place the target names (a mock's canned
            # path, a bank putting every refusal's path elsewhere), its sightings the refusals
            finding.fingerprint = fingerprint("*", "refusal-path", NAMING_THE_FAULT, finding.refused_for)
        elif _success_otherwise(expectation, actual):
            # a success answered with another 2xx (200 for 201): the operation's one defect, whichever check's
            # request met it -- the same finding as the spec's status-undeclared of that status
            finding.fingerprint = fingerprint(op, STATUS_UNDECLARED, DECLARED_ANSWER, str(actual.status))
        self.replayable(finding, exchange, expectation)
        if exchange is not None and rule == STATUS_UNDECLARED and expected == DECLARED_ANSWER:
            exchange.undeclared = finding
        self.file(op, finding)

    def file(self, operation: str, finding: Finding) -> None:
        """Add a finding to the running check's outcome on ``operation``: a failure fails it; a difference leaves
        its status as it is (a difference never fails a run)."""
        outcome = self.outcome(operation)
        with self._lock:
            outcome.findings.append(finding)
            if finding.tier == FAILURE:
                outcome.status = "failed"

    def choice_differs(self, key: str, decision: str, observed: str | None, ours: str) -> tuple[str, str] | None:
        """Whether what the target did is another choice of a profile key the profile does not state (nor pins
        its decision): then ``(decision, profile line)`` for :meth:`disagree`'s ``choice`` -- a difference, not a
        failure. None: judge by the profile's choice (ours by default)."""
        if observed is None or observed == ours or self.profile.states(key) or self.profile.pins(decision):
            return None
        return decision, f"{key}: {observed}"

    @staticmethod
    def _certificate_files(request: PreparedRequest) -> dict[str, str]:
        """The certificate a finding about it ships beside the report: file name -> the header's value."""
        return {certificate_file(value): value + "\n" for name, value in request.headers
                if name.lower() in LEFT_OUT_HEADERS}

    def replayable(self, finding: Finding, exchange: Exchange | None, expectation: Expected | None) -> None:
        """What a replay of the finding needs: its request (recorded.record), its judgement in machine form, and
        whether one request re-creates it or only its check, run again, does (and why)."""
        issued, unrecorded = False, ""
        if exchange is not None:
            try:
                finding.request = record(exchange.request, self.identities, self.now(),
                                         gateway=[n for n, _v in self.gateway.headers],
                                         also_signed=self.profile.signature_extra_headers)
            except Exception as exc:  # noqa: BLE001 - a request no replay can hold must not break the check
                unrecorded = f"its request could not be recorded ({type(exc).__name__}: {exc})"
            with self._lock:
                issued = (self._named(exchange.request.target) != exchange.request.target
                          or self._named(exchange.request.body.decode("utf-8", "replace"))
                          != exchange.request.body.decode("utf-8", "replace"))
        if expectation is not None:
            finding.expectation = expectation.as_dict()
        elif finding.expected == DECLARED_ANSWER:
            finding.expectation = {"declared_answer": True}
        if exchange is None:
            why = "the finding is about several answers, not one request"
        elif finding.suite == "stateful":
            why = "a scenario: its request depends on the steps before it"
        elif issued:
            why = "its request names a resource the target issued earlier in the run"
        elif unrecorded:
            why = unrecorded
        elif finding.request.get("not_replayable"):
            why = finding.request["not_replayable"]
        elif finding.expectation is None:
            why = "its check judges more than this one answer"
        else:
            finding.replay = {"by": "request"}
            return
        finding.replay = {"by": "check", "why": why}

    def profile_decision(self, exchange: Exchange, rule: str, ref: str, message: str
                         ) -> tuple[str, str, str, tuple[str, str, str] | None]:
        """A disagreement whose answer shows a decision the profile can state, whatever the check: a product refused as
        not offered (403 PRODUCT_INVALID, A31), an operation without path parameters answered as not there (A15,
        A25). It is that decision's finding, with the key that states it, so a run reports the decision once as one
        group, not the rule each check was testing: a difference (tier, decision, profile line), a failure where the
        profile pins the decision."""
        op = self.spec.operation(exchange.operation) if exchange.operation in self.spec.operations else None
        decision = None if op is None else self.judge.profile_decision(
            op, self._path_values(exchange), exchange.request.method, exchange.answer.status, exchange.answer.code)
        if decision is None:
            return rule, ref, message, None
        rule, ref, note = decision
        line = self.judge.profile_line(op, self._path_values(exchange), rule)
        chosen = (FAILURE, ref, None) if self.profile.pins(ref) else (DIFFERENCE, ref, line)
        return rule, ref, f"{message} (the target {note})", chosen

    def _path_values(self, exchange: Exchange) -> dict[str, str]:
        """The request's path parameters; for a path no operation has (an unknown product), the payment service and
        product its segments name (/v1/{payment-service}/{payment-product}/...)."""
        path = exchange.request.target.split("?", 1)[0]
        resolution = resolve_operation(self.spec, exchange.request.method, path, paths=self.profile.paths,
                                       absent=self.profile.absent_operations)
        if resolution.path_values or resolution.operation is not None:
            return resolution.path_values
        segments = path.split("/")
        return {"payment-service": segments[2], "payment-product": segments[3]} if len(segments) > 3 else {}

    @contextlib.contextmanager
    def searching(self, seen: list["Disagreement"],
                  ref_for: Callable[[str], str] = lambda _rule: "") -> Iterator[None]:
        """Around a Hypothesis search: the disagreement it stops on is a finding (its section ``ref_for`` its rule). A
        target answering the same case otherwise when it is sent again (Hypothesis' ``Flaky``) does not end the
        check: the first disagreement the search met (``seen``) is the finding, marked as not reproducible on retry."""
        from hypothesis.errors import Flaky

        try:
            yield
        except Disagreement as found:
            self.disagree(found.exchange, rule=found.rule, ref=ref_for(found.rule), expected=found.expected,
                          message=found.message, expectation=found.expectation)
        except Flaky as flaky:
            inner = [e for e in getattr(flaky, "exceptions", ()) if isinstance(e, Disagreement)]
            found = (seen or inner or [None])[0]
            if found is None:
                unanswered = [e for e in getattr(flaky, "exceptions", ()) if isinstance(e, Unanswered)]
                if unanswered:  # a timeout the replay did not meet again is still the timeout it was
                    raise unanswered[0] from None
                raise
            self.disagree(found.exchange, rule=found.rule, ref=ref_for(found.rule), expected=found.expected,
                          expectation=found.expectation,
                          message=f"{found.message} ({NOT_REPRODUCIBLE}: the same case was answered otherwise when "
                                  "sent again)")

    def rule_ref(self, rule: str) -> str:
        known = self.catalogue.get(rule) or SCENARIO_RULES.get(rule)
        return known.ref if known else ""

    # ---- what the target has ----
    def require(self, client: SignedClient, operation: str, **options: Any) -> Exchange:
        """Call a sandbox-only operation; a target without it makes the check "not exercised". Unless the profile
        declares the operation absent (then it is not called), its absence departs from the decision that gives it
        (A15, A25): one finding per run and operation, naming the profile key that states it."""
        missing = self.unavailable(operation, options.get("path"))
        if missing:
            raise NotExercised(missing)
        exchange = self.send(client, client.prepare(operation, **options), operation, absence_judged_apart=True)
        if exchange.answer.status in ABSENT_STATUSES:
            with self._lock:
                first = not self._absent.get(operation)
                self._absent[operation] = True
            if first:
                op = self.spec.operation(operation)
                self.disagree(exchange, rule="operation-absent", ref=(op.assumptions or ("Endpoints",))[0],
                              expected=f"{op.method} {op.path} as decided", message=f"the target has no {operation} "
                              f"({exchange.answer.describe()}); if the implementation does not have it, list it under "
                              "absent-operations in its profile")
            raise NotExercised(f"the target has no {operation} ({exchange.answer.describe()})")
        return exchange

    def path_of(self, operation: str) -> str:
        """Where the target serves ``operation``: the profile's path (A1, A15), else the spec's."""
        return self.profile.paths.get(operation) or self.spec.operation(operation).path

    def resolve(self, method: str, path: str) -> str | None:
        op = resolve_operation(self.spec, method, path).operation
        return op.operation_id if op else None


REFUSALS_LISTED = 100   # refusals the run's one A6 finding lists (its message counts them all)


def list_refusal(finding: Finding, refusal: str) -> None:
    """One more refusal the A6 finding stands for (what answered what), listed once, at most REFUSALS_LISTED."""
    if refusal not in finding.refusals and len(finding.refusals) < REFUSALS_LISTED:
        finding.refusals.append(refusal)


def _keywords(schema: Any) -> set[str]:
    """Every key used anywhere in a JSON schema: its keywords (and property names: one named like a keyword counts
    too, so a rule may be said reached by a schema that only names it -- never the other way round)."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.update(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def error_body_message(count: int, first: str) -> str:
    """The run's one A6 finding: how many refusals carried another error body, and the first of them."""
    return (f"{count} refusal{'s' if count != 1 else ''} of the run carried an error body that is not the documented "
            f"one (A6; a profile states the choice with error-body); the first: {first}")


class TargetUnreachable(Exception):
    """The target cannot be reached: the run cannot happen (exit 2)."""


class TlsFailure(TargetUnreachable):
    """The target cannot be reached because of TLS (its message says what: a client certificate it requires or
    refuses, a certificate we do not trust or for another name): the run cannot happen (exit 2)."""


def timed(function: Callable[[], None]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def _success_otherwise(expectation: Expected | None, actual: Answer) -> bool:
    """A success expected and another one answered (200 for 201, 204 for 202)."""
    statuses = expectation.statuses if expectation is not None else ()
    return bool(statuses) and all(200 <= s < 300 for s in statuses) and actual.status is not None \
        and 200 <= actual.status < 300 and actual.status not in statuses
