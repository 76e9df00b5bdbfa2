"""One HTTP exchange judged: the request exactly as sent and the answer exactly as received.

- **client** findings: what the request breaks -- the validator's whole-request check (headers, Digest, signature,
  certificate, body and query rules) at the time the request was sent, with the profile;
- **server** findings: what the answer breaks -- a status the operation does not declare, the content type, the
  response kind's schema and rules, links that lead to no operation or to another resource
  (:mod:`.responses`); an answer that disagrees with what the request demanded (:mod:`.oracle`'s prediction, A7,
  A8): a request the validator refuses answered 2xx or with another status or code, a valid request answered 5xx
  or refused with what no state of the bank explains; and what the session's earlier exchanges show
  (:mod:`.lifecycle`).

What the judge cannot know is not a finding: a valid request may be refused for the bank's state -- an id the judge
never saw created (404 RESOURCE_UNKNOWN, A7, A28; 400 as a basket's paymentId), a conflict (409 CONFLICT: A5, A23,
A27, A29, A30), a payment rejected for lack of funds when its authorisation starts (400 PAYMENT_FAILED, A23), a
basket naming payments whose kind the judge does not know (400 REFERENCE_MIX_INVALID), a rate limit (429). Those
refusals are checked for their status and code only (A7: an unknown resource in a path is 404, not 403).

Exchanges that are not operations of the spec -- another origin, a path outside the base path, the SCA page (A24),
static files -- are skipped, with the reason, and never judged.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from validator.context import DEFAULT_PROFILE, Profile
from validator.findings import ERROR, WARNING, Finding
from validator.request import resolve_operation
from validator.spec import Operation, Spec

from .expect import Expected
from .lifecycle import DEFAULT_CAPACITY, Lifecycle, body_ids as _body_ids, names_existing, names_payments
from .oracle import CODE_UNDECIDED, Oracle, declared
from .reasons import reason_problem
from .record import RecordedAnswer, RecordedRequest, normal_origin, split_target
from .decoding import Decoded, code_of, decode, text_of
from .origins import Origins
from .responses import ResponseKinds

CLIENT, SERVER = "client", "server"
DECLARED_ANSWER = "an answer the spec declares"
# A8's codes (the signature and certificate refusals) and the decisions a prediction disagreement is judged by.
SIGNATURE_CODES = frozenset({"SIGNATURE_MISSING", "SIGNATURE_INVALID", "CERTIFICATE_INVALID", "CERTIFICATE_EXPIRED"})
RATE_LIMITED = 429   # RFC 6585: a gateway's or bank's limit, state no request shows
PATH_UNKNOWN = "path-unknown"  # the validator's rule of a path no operation of the spec has: skipped, not judged
# Path parameters naming the request's resource (not the payment service or product): an unknown one is 404 (A7).
NOT_RESOURCES = frozenset({"payment-service", "payment-product"})
# The rule ids of the judge's own server findings (a prediction disagreement carries the rule the request breaks).
VALID_REFUSED = "valid-request-refused"
UNKNOWN_NAMED = "resource-unknown-named"    # a client finding: a refusal the session's own exchanges explain
REFUSED = "request-refused"                 # a client warning: a refusal for the bank's state, quoted
SERVER_ERROR = "server-error"
PRODUCT_NOT_OFFERED = "product-not-offered"
OPERATION_ABSENT = "operation-absent"
OPERATION_ELSEWHERE = "operation-elsewhere"   # an operation whose path the document does not show, not at ours (A1)
ABSENT_STATUSES = (404, 405, 501)


@dataclass(frozen=True)
class ExchangeFinding:
    party: str          # "client" (the request's defect, the TPP's) or "server" (the answer's, the bank's)
    rule: str
    severity: str
    ref: str
    pointer: str
    message: str
    expected: str | None = None      # server findings: the answer a conforming bank gives
    actual: str | None = None        # server findings: the answer given
    status: int | None = None        # client findings: the refusal the rule asks of a bank (by the profile) ...
    code: str | None = None          # ... and its code

    def as_dict(self) -> dict[str, Any]:
        out = {"party": self.party, "rule": self.rule, "severity": self.severity, "ref": self.ref,
               "pointer": self.pointer, "message": self.message}
        if self.party == SERVER:
            out.update(expected=self.expected, actual=self.actual)
        return out


@dataclass(frozen=True)
class Judgement:
    operation: str | None            # operationId, None when skipped
    skipped: str | None              # why it is not an operation of the spec (SCA page, other host, static file)
    findings: tuple[ExchangeFinding, ...]
    predicted: tuple[int, str | None] | None = None   # what a conforming bank answers this request (status, code)

    @property
    def client(self) -> tuple[ExchangeFinding, ...]:
        return tuple(f for f in self.findings if f.party == CLIENT)

    @property
    def server(self) -> tuple[ExchangeFinding, ...]:
        return tuple(f for f in self.findings if f.party == SERVER)


@dataclass(frozen=True)
class _Sent:
    """The request as the validator reads it: the target without the base path."""
    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


def describe(status: int | None, code: str | None) -> str:
    if status is None:
        return "no answer"
    return f"{status} {code}" if code else str(status)


class ExchangeJudge:
    """Judges exchanges of one session (one TPP's traffic to one bank, or several TPPs' through one proxy): state
    learned from earlier exchanges -- created ids and their owners, statuses seen, basket members, X-Request-IDs,
    SCA pages -- feeds later judgements, bounded (``capacity`` resources, least recently seen dropped first).
    Judgements of one judge are serialised (a lock): exchanges judged from several threads are judged one at a
    time, in the order they take the lock."""

    def __init__(self, spec: Spec | None = None, profile: Profile = DEFAULT_PROFILE, *, base_path: str = "",
                 origins: tuple[str, ...] = (), capacity: int = DEFAULT_CAPACITY,
                 link_origins: Origins | None = None) -> None:
        """``origins``: the bank's (scheme://host[:port]); a request to another is skipped. ``link_origins``: where
        the answers' links may lead (origins.py; the gate's target and --allow-origin): a link elsewhere is
        link-off-target; None, links are not judged by origin."""
        if spec is None:
            from validator.spec import load_spec

            spec = load_spec()
        self.spec = spec
        self.profile = profile
        self.base_path = base_path.rstrip("/")
        self.origins = tuple(normal_origin(o) for o in origins)
        self.oracle = Oracle(spec, profile)
        self.oracle.state_refusals = self.state_refusals
        self.responses = ResponseKinds(spec, self.oracle.validator, profile, base_path=self.base_path,
                                       origins=link_origins)
        self.lifecycle = Lifecycle(spec, profile, capacity=capacity)
        self._lock = threading.Lock()
        self.prefixes = tuple(sorted({"/" + p.split("/")[1] + "/" for p in spec.document.get("paths", {})
                                      if p.count("/") > 1}))

    # ---- what is an operation of the spec ----
    def skipped(self, request: RecordedRequest) -> tuple[str | None, str]:
        """(why the exchange is not judged or None, the target as the validator reads it)."""
        origin, target = split_target(request.target, request.origin)
        if self.origins and origin is not None and origin not in self.origins:
            return f"another origin ({origin}): not the bank's", target
        path = target.split("?", 1)[0]
        if self.base_path:
            if path != self.base_path and not path.startswith(self.base_path + "/"):
                return f"outside the base path {self.base_path}", target
            target = target[len(self.base_path):] or "/"
            path = path[len(self.base_path):] or "/"
        if self.lifecycle.is_sca_page(origin, path):
            return "the SCA page (A24): a page for the PSU's browser, not an operation of the spec", target
        if not path.startswith(self.prefixes):
            return (f"not an operation of the spec (a page or static file: the spec's paths start with "
                    f"{', '.join(self.prefixes)})"), target
        return None, target

    # ---- judging ----
    def judge(self, request: RecordedRequest, answer: RecordedAnswer | None) -> Judgement:
        """The judgement of one exchange; ``answer`` None: the request alone (what a conforming bank answers it)."""
        if request.at.tzinfo is None:  # a recording without a zone: UTC, as HAR's startedDateTime means it
            request = dataclasses.replace(request, at=request.at.replace(tzinfo=_dt.timezone.utc))
        with self._lock:
            return self._judge(request, answer)

    def _judge(self, request: RecordedRequest, answer: RecordedAnswer | None) -> Judgement:
        why, target = self.skipped(request)
        if why is not None:
            if answer is not None:
                self.lifecycle.learn_skipped(request, answer)
            return Judgement(None, why, ())
        sent = _Sent(request.method, target, tuple(request.headers), request.body)
        path = target.split("?", 1)[0]
        resolution = resolve_operation(self.spec, request.method, path, paths=self.profile.paths,
                                       absent=self.profile.absent_operations)
        op = resolution.operation
        if op is None and resolution.template is None and {p.rule for p in resolution.problems} == {PATH_UNKNOWN}:
            # a path no operation of the spec has (another API the bank serves beside this one, e.g. account
            # information): not an operation of the spec, skipped like a page -- a wrong product or method of a path
            # the spec has is still judged
            if answer is not None:
                self.lifecycle.learn_skipped(request, answer)
            return Judgement(None, f"not an operation of the spec (no path of the spec is {path})", ())
        context = self.lifecycle.request_context(op, request) if op is not None else None
        findings = self.oracle.findings(sent, at=request.at, context=context)
        found = [ExchangeFinding(CLIENT, f.rule, f.severity, f.ref or "", f.pointer, f.message,
                                 status=f.status or 400 if f.severity == ERROR else None,
                                 code=f.code or "FORMAT_ERROR" if f.severity == ERROR else None) for f in findings]
        success = declared(self.spec, op.operation_id)[0] if op is not None else ()
        expected, errors = self.oracle.predict(sent, success=success, findings=findings)
        if errors and all(e.rule in CODE_UNDECIDED for e in errors):
            expected = dataclasses.replace(expected, codes=(), why=f"{expected.why} (no code decided)")
        predicted = (expected.statuses[0], expected.codes[0] if expected.codes else None) if expected.statuses \
            else None
        if answer is None:
            return Judgement(op.operation_id if op else None, None, tuple(found), predicted)
        # codes are in refusals only (A6); the body is decoded once for the links and the lifecycle
        # the body decoded once, within the loader's limits (decoding.py): the code, the answer's checks, the state
        decoded = None if answer.truncated else decode(answer.body)
        code = code_of(decoded.value) if decoded is not None and answer.status >= 400 else None
        actual = describe(answer.status, code)
        if errors:
            found += self._refused_request(op, resolution.path_values, sent, answer, code, actual, expected, errors)
        elif op is not None:
            found += self._valid_request(op, resolution.path_values, answer, code, actual, success, request)
        if op is not None and answer.status != RATE_LIMITED:  # a limit says nothing of the operation (RFC 6585)
            found += self._answer(op, resolution.path_values, path, answer, actual, decoded)
            if not errors:
                found += self.lifecycle.judge(op, resolution.path_values, request, answer,
                                              decoded.object() if decoded is not None else {}, actual,
                                              self._server_finding(actual))
        return Judgement(op.operation_id if op else None, None, tuple(found), predicted)

    def _refused_request(self, op: Operation | None, path_values: dict[str, str], sent: _Sent,
                         answer: RecordedAnswer, code: str | None, actual: str, expected: Expected,
                         errors: list[Finding]) -> list[ExchangeFinding]:
        """A request the validator refuses: the answer must be the predicted refusal (A7, A8), and where it names the
        place it refuses (a tppMessage path, A6), a place the request is wrong. A rate limit (429) is the bank's
        state; an answer showing a decision the profile states otherwise is that decision's finding."""
        first = errors[0]
        ref = "A8" if set(expected.codes) & SIGNATURE_CODES else "A7"
        if answer.status == RATE_LIMITED:
            return []
        if answer.status in expected.statuses and answer.status >= 400 and expected.codes and code is None:
            return []  # no code can be read (an undocumented error body, A6): the body's own finding says so
        if not expected.allows(_Seen(answer.status, code)):
            what = "accepted" if 200 <= answer.status < 300 else f"answered {actual}"
            message = f"a request the validator refuses was {what}: {expected.why}"
            decision = self.profile_decision(op, path_values, sent.method, answer.status, code) if op else None
            if decision is not None:
                rule, ref, note = decision
                return [ExchangeFinding(SERVER, rule, ERROR, ref, "/status", f"{message} (the bank {note})",
                                        expected.describe(), actual)]
            reading = expected.reading(_Seen(answer.status, code))
            if reading is not None and not reading.pinned:  # another reading of an open point: a difference
                line = reading.line(_Seen(answer.status, code))
                return [ExchangeFinding(SERVER, first.rule, WARNING, reading.decision or ref, first.pointer,
                                        f"{message} -- a difference from {reading.decision}, another reading of a "
                                        f"point the document leaves open" + (f" (profile: {line})" if line else ""),
                                        expected.describe(), actual)]
            return [ExchangeFinding(SERVER, first.rule, ERROR, ref, first.pointer, message, expected.describe(),
                                    actual)]
        if answer.truncated or answer.status in expected.codeless:
            return []
        other = reason_problem(answer.body, errors)
        if other:
            return [ExchangeFinding(SERVER, first.rule, ERROR, "A6", first.pointer, other,
                                    f"{expected.describe()} naming where the request is wrong", actual)]
        return []

    def _valid_request(self, op: Operation, path_values: dict[str, str], answer: RecordedAnswer,
                       code: str | None, actual: str, success: tuple[int, ...],
                       request: RecordedRequest | None = None) -> list[ExchangeFinding]:
        """A request the validator finds no error in: a declared success, or a refusal some state of the bank
        explains (:meth:`state_refusal`) -- then the client's: explained from what the session showed
        (:meth:`refusal_from_session`) or quoted; a refused request is never silent."""
        status = answer.status
        wanted = "/".join(map(str, success))
        if status in success or status == RATE_LIMITED or 300 <= status < 400 and status not in success:
            return []  # a redirect is not a refusal; an undeclared one is the answer check's status finding
        if status >= 500:
            return [ExchangeFinding(SERVER, SERVER_ERROR, ERROR, "A7", "/status",
                                    f"a valid request of {op.operation_id} answered {actual}", wanted, actual)]
        decision = self.profile_decision(op, path_values, op.method, status, code)
        if decision is not None:
            rule, ref, note = decision
            wanted = f"{op.method} {op.path} as decided" if rule == OPERATION_ABSENT else wanted
            return [ExchangeFinding(SERVER, rule, ERROR, ref, "/status", f"the bank {note} ({actual})", wanted,
                                    actual)]
        if self.refusal_explained(op, status, code, answer.body):
            if (status, code) not in self.state_refusals(op) or request is None:
                return []   # SCA needed: the flow goes on, nothing is refused
            return self.refusal_from_session(op, path_values, request, answer, actual)
        allowed = self.state_refusals(op)
        statuses_for_code = [s for s, c in allowed if c == code]
        if statuses_for_code:
            return [ExchangeFinding(SERVER, VALID_REFUSED, ERROR, "A7", "/status",
                                    f"{op.operation_id} refused with {code}, which is answered "
                                    f"{'/'.join(map(str, statuses_for_code))} (A7)",
                                    f"{'/'.join(map(str, statuses_for_code))} {code}", actual)]
        refusals = self.describe_state_refusals(op)
        return [ExchangeFinding(SERVER, VALID_REFUSED, ERROR, "A7", "/status",
                                f"a valid request of {op.operation_id} refused with {actual}: the validator finds no "
                                f"error, and no state of the bank explains it (state refusals: {refusals})",
                                f"{wanted} or a state refusal", actual)]

    def refusal_from_session(self, op: Operation, path_values: dict[str, str], request: RecordedRequest,
                             answer: RecordedAnswer, actual: str) -> list[ExchangeFinding]:
        """A valid request refused for the bank's state, as the client's finding: a RESOURCE_UNKNOWN naming an id
        this session never saw issued (nor read) is explained by the session -- an error of the request; any other
        state refusal (a conflict, a payment failed, an id the session knows) is quoted as a warning."""
        code = code_of(decode(answer.body).value) if not answer.truncated else None
        if code == "RESOURCE_UNKNOWN":
            named = [(name, unquote(path_values[name])) for name in ("paymentId", "basketId", "authorisationId")
                     if path_values.get(name)]
            if names_payments(self.spec, op):
                ids = _body_ids(request.body)
                named += [("paymentIds", i) for i in ids]
            unseen = [(name, rid) for name, rid in named if self.lifecycle.resources.get(rid) is None]
            if unseen:
                where = "; ".join(f"{name} {rid!r}" for name, rid in unseen[:5])
                return [ExchangeFinding(CLIENT, UNKNOWN_NAMED, ERROR, "A28", "/status",
                                        f"{op.operation_id} names {where}, which no answer of this session issued: "
                                        f"the bank's {actual} says so")]
        text = text_of(decode(answer.body).value) if not answer.truncated else None
        return [ExchangeFinding(CLIENT, REFUSED, "warning", "A7", "/status",
                                f"{op.operation_id} refused with {actual} for the bank's state"
                                + (f": {text!r}" if text else ""))]

    def profile_decision(self, op: Operation, path_values: dict[str, str], method: str, status: int | None,
                         code: str | None) -> tuple[str, str, str] | None:
        """An answer showing a decision the profile can state, whatever was asked: a product refused as not offered
        (PRODUCT_INVALID, A31), an operation without path parameters answered as not there (A15, A25). (rule, its
        decision, what the bank does and the profile key that states it), or None."""
        if code == "PRODUCT_INVALID":
            product = self.product(op, path_values) or "its product"
            return (PRODUCT_NOT_OFFERED, "A31", f"refuses {product} as not offered: if so, list it under "
                                                "products-not-offered")
        if (method == op.method and status in ABSENT_STATUSES and not op.path_parameters
                and op.raw.get("x-header-table-column") == "none" and op.operation_id not in self.profile.absent_operations):
            return (OPERATION_ABSENT, (op.assumptions or ("Endpoints",))[0],
                    f"has no {op.operation_id}: if so, list it under absent-operations")
        if (method == op.method and status in ABSENT_STATUSES and not op.path_parameters and "A1" in op.assumptions
                and op.operation_id not in self.profile.paths):
            return (OPERATION_ELSEWHERE, "A1", f"does not serve {op.operation_id} at {op.path} (the document does not "
                                              "show its path): if it serves it elsewhere, state the path under paths")
        return None

    def profile_line(self, op: Operation, path_values: dict[str, str], rule: str) -> str:
        """The profile line stating the choice a :meth:`profile_decision` answer shows."""
        if rule == PRODUCT_NOT_OFFERED:
            return f"products-not-offered: [{self.product(op, path_values) or '<service>/<product>'}]"
        if rule == OPERATION_ELSEWHERE:
            return f"paths: {{{op.operation_id}: <its path>}}"
        return f"absent-operations: [{op.operation_id}]"

    def refusal_explained(self, op: Operation, status: int, code: str | None, body: bytes) -> bool:
        """Whether the bank's state, which the request does not show, explains refusing a valid request so
        (:meth:`state_refusals`, or SCA needed: a 401 whose body is the ScaRedirectResponse)."""
        if (status, code) in self.state_refusals(op):
            return True
        return code is None and status == 401 and "401" in op.responses and self._sca_needed(body)

    def describe_state_refusals(self, op: Operation) -> str:
        return ", ".join(describe(s, c) for s, c in sorted(self.state_refusals(op))) or "none"

    def state_refusals(self, op: Operation) -> frozenset[tuple[int, str]]:
        """The (status, code) refusals of a valid request that state the request does not show explains, from the
        decisions: an unknown resource in the path 404 RESOURCE_UNKNOWN (A7, A28), one the body names (the spec's
        x-names-existing: a basket's payment, a sandbox account's customer) 400 RESOURCE_UNKNOWN (A28, A15), a
        basket's bulk or periodic payment 400 REFERENCE_MIX_INVALID (A7: the judge may not have seen it created),
        409 CONFLICT where the operation declares it (A5, A23, A27, A29, A30), a payment rejected for lack of funds
        when its authorisation starts 400 PAYMENT_FAILED (A23)."""
        cache = self.__dict__.setdefault("_state_refusals", {})
        found = cache.get(op.operation_id)
        if found is None:
            declared_statuses = {int(s) for s in op.responses if s.isdigit()}
            out = set()
            if any(p.name not in NOT_RESOURCES for p in op.path_parameters) and 404 in declared_statuses:
                out.add((404, "RESOURCE_UNKNOWN"))
            if names_existing(self.spec, op) and 400 in declared_statuses:
                out.add((400, "RESOURCE_UNKNOWN"))
            if names_payments(self.spec, op) and 400 in declared_statuses:
                out.add((400, "REFERENCE_MIX_INVALID"))
            if 409 in declared_statuses:
                out.add((409, "CONFLICT"))
            refused = self.profile.cancellation_refused   # A5, A27: the profile's refusal of a DELETE the state refuses
            if refused is not None and op.method == "DELETE" and "x-cancellation" in op.raw:
                decided = op.raw["x-cancellation"]["refused"]
                out.add((refused.status or decided["status"], refused.code or decided["code"]))
            if op.method == "POST" and op.path.endswith("/authorisations") and 400 in declared_statuses:
                out.add((400, "PAYMENT_FAILED"))
            found = cache[op.operation_id] = frozenset(out)
        return found

    def _sca_needed(self, body: bytes) -> bool:
        """A 401 whose body is the ScaRedirectResponse: SCA is needed (the Unauthorized response)."""
        kind = self.responses.kinds.get("ScaRedirectResponse")
        return kind is not None and not self.oracle.validator.validate_bytes(body, kind).errors

    @staticmethod
    def _server_finding(actual: str):
        def finding(rule: str, ref: str, pointer: str, message: str, expected: str) -> ExchangeFinding:
            return ExchangeFinding(SERVER, rule, ERROR, ref, pointer, message, expected, actual)
        return finding

    def _answer(self, op: Operation, path_values: dict[str, str], path: str, answer: RecordedAnswer,
                actual: str, decoded: Decoded | None) -> list[ExchangeFinding]:
        problems = self.responses.operation_problems(op, path_values, path, answer.status, answer.content_type,
                                                     answer.body, decoded, body_known=not answer.truncated)
        return [ExchangeFinding(SERVER, p.rule, ERROR, p.ref, p.pointer, p.message, DECLARED_ANSWER, actual)
                for p in problems]

    def product(self, op: Operation, path_values: dict[str, str]) -> str | None:
        if "payment-service" in path_values and "payment-product" in path_values:
            return f"{path_values['payment-service']}/{path_values['payment-product']}"
        parts = op.path.split("/")
        if op.method == "POST" and len(parts) == 4 and "{" not in op.path and op.path.endswith("-credit-transfers"):
            return f"{parts[2]}/{parts[3]}"
        return None


@dataclass(frozen=True)
class _Seen:
    status: int | None
    code: str | None

