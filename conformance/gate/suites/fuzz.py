"""Schemathesis per operation: the ``schema`` suite (positive generation) and the ``negative`` suite (schema-invalid
requests: Schemathesis' negative mode and its coverage phase).

The spec is loaded into Schemathesis without the headers the signer owns (Digest, Signature,
TPP-Signature-Certificate, Date): left in, negative mode drops them, the signer adds them back and a "schema-violating
request" is accepted. The string components the validator checks beyond their pattern get custom formats whose
strategies are the spec-driven generators of :mod:`conformance.generate` (IBAN, BBAN, KID, execution dates relative to
the clock; amounts drawn as whole numbers, then given their currency's minor-unit digits from the spec's
``x-minor-units``, since the currency is a sibling property a string format cannot see: JPY 0 digits, EUR 2, BHD 3). Every case is sent by Schemathesis with a
``requests`` auth that signs the exact bytes sent with the project's signer; the validator judges the request exactly
as sent and predicts the answer, so a generated case the validator refuses is judged by its prediction, never counted
as the target's failure. Every answer is checked against the spec and the validator's response kinds.

Ids a creation returned (paymentId, basketId, authorisationId) are fed to the path parameters of later operations
(creations run first), so the reads and the status responses are exercised on resources that exist. A request the validator finds valid may
still meet the target's state (an unknown id, a duplicate customer, a payment not in the state asked): that answer is
accepted when it is a documented refusal with a state code, never a 5xx or a format refusal.
"""
from __future__ import annotations

import copy
import datetime as _dt
import functools
import warnings
from typing import Any

import re
import uuid

import requests
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.client import JSON_MEDIA_TYPE, PreparedRequest
from conformance.exchange.oracle import declared
from validator.context import ALL_DECISIONS, Context, today_in_oslo
from validator.signing import SignableRequest, sign_request

from ..model import DECLARED_ANSWER, DIFFERENCE, Expected, check
from ..session import Disagreement, Exchange, Session

SIGNER_HEADERS = {"digest", "signature", "tpp-signature-certificate", "date"}
# Headers of HTTP itself, not of the interface, that Schemathesis would vary at random: content negotiation (a random
# Accept-Charset may legitimately draw a 406, RFC 9110 section 12.5.1) and Host (the HTTP client sets it from the
# URL). A generated case changes only what it tests, so they are not generated; the semantic suite's controls send
# them with the spec's example values.
HTTP_HEADERS = {"accept-charset", "accept-encoding", "accept-language", "host"}
ID_PARAMETERS = ("paymentId", "basketId", "authorisationId")
HEALTH = list(HealthCheck)
NEGATIVE_COVERAGE_PER_EXAMPLE = 3   # coverage-phase cases per operation, per --max-examples


# ---------------------------------------------------------------- custom formats (from the spec-driven generators)
def _today() -> _dt.date:
    return today_in_oslo(_dt.datetime.now(_dt.timezone.utc))


@functools.lru_cache(maxsize=1)
def _formats() -> dict[str, Any]:
    """Format name -> (component or (component, property), strategy)."""
    from conformance.generate import SpecStrategies
    from validator.spec import load_spec

    gen = SpecStrategies(load_spec(), today=_today(), response=False)
    execution = st.integers(0, 365).map(lambda days: (_today() + _dt.timedelta(days=days)).isoformat())
    return {
        "obvalidate-iban": ("Iban", gen.iban()),
        "obvalidate-bban": (("AccountReferenceBban", "bban"), gen.norwegian_bban()),
        "obvalidate-kid": (("RemittanceStructured", "reference"), gen.kid()),
        "obvalidate-amount": ("AmountString", st.integers(1, 10**6).map(str)),
        "obvalidate-execution-date": ("ExecutionDate", execution),
    }


def amount_objects(value: Any):
    """The objects of a JSON value that carry an amount and its currency (instructedAmount and the like)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if isinstance(node.get("amount"), str) and isinstance(node.get("currency"), str):
                yield node
            stack.extend(node.values())


def with_minor_units(value: Any, data: st.DataObject) -> Any:
    """A copy of a drawn body with each whole-number amount (the AmountString format's) written with exactly its
    currency's minor-unit digits (``x-minor-units`` of CurrencyCode; none for a currency without them). A copy:
    Schemathesis may hand the same body object out again when Hypothesis replays a case."""
    from validator.spec import load_spec

    units = load_spec().minor_units
    value = copy.deepcopy(value)
    for node in amount_objects(value):
        amount, currency = node["amount"], node["currency"]
        digits = units.get(currency, 0)
        if amount.isdigit() and digits:
            fraction = data.draw(st.integers(1, 10**digits - 1), label=f"{currency} minor units")
            node["amount"] = f"{amount}.{fraction:0{digits}d}"
    return value


# A37: a TPP-Redirect-URI (a parameter with x-redirect-target) is generated as an https URL, the target every
# implementation takes; unsafe ones are the semantic suite's mutants, judged by the profile.
REDIRECT_FORMAT = "obvalidate-redirect-uri"


def _redirect_urls():
    from hypothesis.provisional import urls

    return urls().map(lambda url: "https://" + url.split("://", 1)[1])


def register_formats() -> None:
    import schemathesis

    for name, (_where, strategy) in _formats().items():
        schemathesis.openapi.format(name, strategy)
    schemathesis.openapi.format(REDIRECT_FORMAT, _redirect_urls())


def fuzzing_document(document: dict) -> dict:
    """The spec as Schemathesis generates from it: signer-owned headers removed, custom formats set."""
    doc = copy.deepcopy(document)
    schemas = doc.get("components", {}).get("schemas", {})
    for name, (where, _strategy) in _formats().items():
        component, prop = where if isinstance(where, tuple) else (where, None)
        target = schemas.get(component)
        if target is None:
            continue
        if prop:
            target = target.get("properties", {}).get(prop)
            if target is None or "$ref" in target:
                continue
        for keyword in ("pattern", "minLength", "maxLength"):
            target.pop(keyword, None)
        target["type"], target["format"] = "string", name
    parameters = doc.get("components", {}).get("parameters", {})
    for parameter in parameters.values():
        if isinstance(parameter, dict) and parameter.get("x-redirect-target"):
            parameter["schema"] = {"type": "string", "format": REDIRECT_FORMAT}

    def owned(parameter: dict) -> bool:
        if "$ref" in parameter:
            parameter = parameters.get(parameter["$ref"].rsplit("/", 1)[1], {})
        return parameter.get("in") == "header" and parameter.get("name", "").lower() in SIGNER_HEADERS | HTTP_HEADERS

    for item in doc.get("paths", {}).values():
        for key, operation in list(item.items()):
            if key == "parameters" and isinstance(operation, list):
                item[key] = [p for p in operation if not owned(p)]
            elif isinstance(operation, dict) and "parameters" in operation:
                operation["parameters"] = [p for p in operation["parameters"] if not owned(p)]
    return doc


def served_paths(document: dict, paths: tuple[tuple[str, str], ...]) -> dict:
    """The document with each operation a profile's ``paths`` moves (A1, A15) at the path the implementation serves
    it, its path-level parameters with it: what Schemathesis sends goes where the target has the operation."""
    if not paths:
        return document
    moved = dict(paths)
    items = document.get("paths", {})
    out: dict[str, dict] = {}
    for template, item in items.items():
        for key, operation in item.items():
            target = moved.get(operation.get("operationId")) if isinstance(operation, dict) else None
            if key in HTTP_METHODS and target:
                out.setdefault(target, {"parameters": list(item.get("parameters", []))})[key] = operation
            else:
                out.setdefault(template, {})[key] = operation
    return {**document, "paths": {t: i for t, i in out.items() if any(k in HTTP_METHODS for k in i)}}


HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


@functools.lru_cache(maxsize=4)
def _schema(spec_id: int, base_url: str, paths: tuple[tuple[str, str], ...] = ()):
    import schemathesis

    register_formats()
    schema = schemathesis.openapi.from_dict(fuzzing_document(served_paths(_SPECS[spec_id].document, paths)))
    schema.config.update(base_url=base_url)
    return schema


_SPECS: dict[int, Any] = {}


def schemathesis_schema(session: Session):
    _SPECS[id(session.spec)] = session.spec
    return _schema(id(session.spec), session.base_url, tuple(sorted(session.profile.paths.items())))


# ---------------------------------------------------------------- signing the exact bytes sent
class SignedAuth(requests.auth.AuthBase):
    """Signs the prepared request's final bytes with the project's signer and keeps what was sent. Every body goes
    with ``Content-Type: application/json`` (A33). With ``fresh_request_id`` the X-Request-ID is a UUID of its own for
    each distinct request of the run (the document: unique per call), the same when Hypothesis sends the same case
    again to confirm a failure, which A29 then answers as the first time (a new id would meet A30's duplicate)."""

    def __init__(self, session: Session, digest: bool, *, fresh_request_id: bool = True) -> None:
        self.identity = session.identities.tpp
        self.also = session.profile.signature_extra_headers
        self.clock = session.now
        self.digest = digest
        self.fresh_request_id = fresh_request_id
        self.namespace = _run_namespace(session)
        self.sent: PreparedRequest | None = None

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        body = r.body.encode("utf-8") if isinstance(r.body, str) else bytes(r.body or b"")
        if body:
            r.headers["Content-Type"] = JSON_MEDIA_TYPE
        if self.fresh_request_id:
            case = [r.method, r.path_url, *sorted(f"{n.lower()}:{v}" for n, v in r.headers.items()
                                                  if n.lower() not in ("x-request-id", "x-schemathesis-testcaseid"))]
            r.headers["X-Request-ID"] = str(uuid.uuid5(self.namespace, "\n".join(case) + "\n" + body.hex()))
        headers = [(n, v) for n, v in r.headers.items() if n.lower() not in SIGNER_HEADERS | {"content-length"}]
        signable = SignableRequest(r.method, r.path_url, headers, body if (self.digest or body) else None)
        signed = sign_request(signable, self.identity.key, self.identity.certificate, date=self.clock(),
                              also=self.also)
        for name, value in signed.headers:
            r.headers[name] = value
        self.sent = PreparedRequest(r.method, r.path_url, list(signed.headers), body)
        return r


def _run_namespace(session: Session) -> uuid.UUID:
    """A random namespace per run for the X-Request-IDs: no run meets the ids of an earlier one (A29 keeps 24 h)."""
    namespace = session.__dict__.get("_request_id_namespace")
    if namespace is None:
        namespace = session._request_id_namespace = uuid.uuid4()
    return namespace


# ---------------------------------------------------------------- one operation
def _resources(session: Session) -> list[dict[str, str]]:
    """Path parameters of the resources the target created in this run (paymentId with its service and product,
    basketId, authorisationId with its payment or basket)."""
    known = getattr(session, "_fuzz_resources", None)
    if known is None:
        known = session._fuzz_resources = []
    return known


def _remember(session: Session, case, target: str, exchange: Exchange) -> None:
    if exchange.response.status_code not in (200, 201):
        return
    value = exchange.json()
    if not isinstance(value, dict):
        return
    ids = {name: value[name] for name in ID_PARAMETERS if isinstance(value.get(name), str)}
    if not ids:
        return
    resource = {k: str(v) for k, v in (case.path_parameters or {}).items()}
    if "paymentId" in ids and "paymentId" not in resource:
        segments = target.split("?", 1)[0].split("/")   # a creation: /v1/{payment-service}/{payment-product}
        if len(segments) != 4:
            return  # a paymentId in the answer to something that does not create payments: nothing to read back
        resource.update({"payment-service": segments[2], "payment-product": segments[3]})
    resource.update(ids)
    known = _resources(session)
    if resource not in known:
        known.append(resource)


def _request_id_generated_valid(case) -> bool:
    """Whether the case's X-Request-ID is one the spec allows (non-empty text): then it is not what a negative case
    breaks, and a fresh UUID takes its place."""
    value = next((v for n, v in (case.headers or {}).items() if n.lower() == "x-request-id"), None)
    return isinstance(value, str) and bool(value.strip())


def signed_call(session: Session, operation, case, *, negative: bool = False) -> Exchange | None:
    """Send one case signed over the exact bytes sent; the exchange, or None when nothing reached the target. The
    X-Request-ID is a fresh UUID per call unless the case is a negative one that breaks it (absent or empty)."""
    operation_id = operation.definition.raw.get("operationId") or operation.label
    op = session.spec.operation(operation_id)
    auth = SignedAuth(session, digest=any(p.key == "digest" for p in op.header_parameters),
                      fresh_request_id=not negative or _request_id_generated_valid(case))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            response = case.call(auth=auth, session=session.pool.requests_session(), timeout=session.pool.timeout,
                                 allow_redirects=False)
    except (ValueError, UnicodeError, requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL):
        return None  # a case the HTTP stack or the signer cannot send as is (CR/LF in a header)
    except requests.RequestException as exc:
        raise session.unreachable(f"{case.method} {case.formatted_path}", exc) from None
    if auth.sent is None:
        return None
    session.record_case(operation_id, auth.sent)
    exchange = session.exchange(operation_id, auth.sent, response)
    session.learn_issued_ids(exchange.json())
    return exchange


def send_case(session: Session, operation, case, *, negative: bool, context: Context | None = None):
    """Sign and send one case; compare the target's answer with the validator's prediction (given ``context``, the
    payments the target holds). The target's response, or None when nothing could be sent."""
    exchange = signed_call(session, operation, case, negative=negative)
    if exchange is None:
        return None
    operation_id, request, response = exchange.operation, exchange.request, exchange.response
    remember_links(session, exchange)
    success, refusals = declared(session.spec, operation_id)
    expected, errors = session.predict(request, success=success, context=context)
    if not errors:
        predicted = expected   # with the other readings of its warnings' decisions (a refusal may differ, A17, A19)
        # valid per the validator: the target may still refuse it for its state (an unknown id, a duplicate)
        expected = Expected(success + refusals, (), "the validator finds no error")
        # the judge's decision of what state the request does not show may explain (conformance.exchange)
        op = session.spec.operation(operation_id)
        state_refusal = session.judge.refusal_explained(op, exchange.answer.status, exchange.answer.code,
                                                        response.content)
        if not (exchange.answer.status in success or state_refusal):
            kind = "a schema-invalid request the validator accepts as sent" if negative else "a valid request"
            if predicted.tier(exchange.answer) == DIFFERENCE:
                session.disagree(exchange, rule="positive-data-acceptance", ref="", expected=predicted.describe(),
                                 message=f"{kind}: the target answered {exchange.answer.describe()}",
                                 expectation=predicted)
            else:
                raise Disagreement(exchange, f"{'/'.join(map(str, success))} or a state refusal "
                                             f"({session.judge.describe_state_refusals(op)})",
                                   "positive-data-acceptance", f"{kind}: the target answered "
                                                               f"{exchange.answer.describe()}")
    elif not (expected.allows(exchange.answer) or session.code_unreadable(exchange, expected)
              or session.unissued_refusal(exchange, expected)):
        rule = errors[0].rule
        what = "a schema-invalid request" if negative else "a generated request the validator refuses"
        message = (f"{what}: the validator expects {expected.describe()} ({expected.why}); the target answered "
                   f"{exchange.answer.describe()}")
        if expected.tier(exchange.answer) != DIFFERENCE:
            raise Disagreement(exchange, expected.describe(), rule, message, expected)
        # another reading of an open point: reported, and the search goes on (a difference hides no failure)
        session.disagree(exchange, rule=rule, ref="", expected=expected.describe(), message=message,
                         expectation=expected)
    _remember(session, case, request.target, exchange)
    problems = session.response_problems(exchange, _content_type(response))
    if problems:
        p = problems[0]
        raise Disagreement(exchange, DECLARED_ANSWER, p.rule, f"response: {p.message}")
    return response


def _content_type(response) -> str:
    """Schemathesis' response keeps each header as a list of values, under its name as received."""
    value = next((v for n, v in response.headers.items() if n.lower() == "content-type"), "")
    return value[0] if isinstance(value, list) and value else value if isinstance(value, str) else ""


def _with_known_ids(session: Session, case, data: st.DataObject) -> None:
    """Point the path at a resource a creation returned, when there is one, so reads and status responses are those
    of existing resources (unknown ids are the negative suite's and the stateful suite's)."""
    names = set(case.path_parameters or {})
    if not names & set(ID_PARAMETERS):
        return
    fitting = [r for r in _resources(session) if set(r) <= names]
    if fitting:
        most = max(len(r) for r in fitting)
        case.path_parameters.update(data.draw(st.sampled_from([r for r in fitting if len(r) == most]),
                                              label="known resource"))


def fuzz_operation(session: Session, operation, *, negative: bool) -> None:
    from schemathesis import GenerationMode

    operation_id = operation.definition.raw.get("operationId") or operation.label
    outcome = session.outcome(operation_id)
    mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE
    strategy = operation.as_strategy(generation_mode=mode)
    sent_before = len(session.cases)

    # No shrink phase: most of Schemathesis' shrunk draws are not even requests (measured: 274 attempts for 32
    # requests against a mock), and the finding's curl reproduces the first failing case as sent.
    @settings(max_examples=session.max_examples, database=None, deadline=None, suppress_health_check=HEALTH,
              phases=(Phase.explicit, Phase.generate), report_multiple_bugs=False, print_blob=False)
    @seed(session.seed)
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        case = data.draw(strategy, label="case")
        if not negative:
            _with_known_ids(session, case, data)
            if isinstance(case.body, (dict, list)):
                case.body = with_minor_units(case.body, data)
        try:
            send_case(session, operation, case, negative=negative)
        except Disagreement as found:
            if not seen:   # the first is the one reported (searching()); each holds its answer
                seen.append(found)
            raise

    seen: list[Disagreement] = []
    with session.searching(seen):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search()
        if negative:
            for case in _coverage(session, operation)[0]:
                send_case(session, operation, case, negative=True)
    outcome.cases += len(session.cases) - sent_before


def coverage_cases(operation, *, limit: int) -> tuple[list, list]:
    """Schemathesis' coverage phase for one operation (deterministic: no randomness): up to ``limit`` schema-invalid
    cases, and every unsupported-method case (the path with each method no operation there takes). One pass for
    both: the generator does not repeat a case it has generated for the operation before."""
    from schemathesis import GenerationMode
    from schemathesis.generation.drivers import CoverageGenerator
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.generation.overrides import Override

    generator = CoverageGenerator(operation=operation, generation_modes=[GenerationMode.NEGATIVE],
                                  generation_config=operation.schema.config.generation, auth_storage=None,
                                  override=Override(), feedback=FeedbackSources())
    invalid, methods = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in generator:
            if case.method.upper() != operation.method.upper():
                methods.append(case)
            elif len(invalid) < limit:
                invalid.append(case)
            elif methods:
                break  # the unsupported methods come as one block: it is over
    return invalid, methods


def _coverage(session: Session, operation) -> tuple[list, list]:
    """The coverage cases of an operation, generated once per run for both negative checks."""
    cache = session.__dict__.get("_fuzz_coverage")
    if cache is None:
        cache = session._fuzz_coverage = {}
        # The schema (built once per process) remembers each (path, method) probed with an unsupported method and
        # never probes it again: a new run probes them all again, so the same seed sends the same cases.
        seen = getattr(schemathesis_schema(session), "coverage_unexpected_methods_seen", None)
        if isinstance(seen, set):
            seen.clear()
    key = (operation.method, operation.path)
    if key not in cache:
        cache[key] = coverage_cases(operation, limit=NEGATIVE_COVERAGE_PER_EXAMPLE * session.max_examples)
    return cache[key]


# An unsupported method on a path of the interface. The interface document and its decisions name no status or code
# for it (A7 has none), so the status is judged by HTTP itself and nothing else: 405 Method Not Allowed (RFC 9110
# section 15.5.6; an Allow header where present is the target's business), 404 where the target hides the resource,
# 501 for a method the server does not implement at all (QUERY, TRACE: section 15.6.2), 200/204 for OPTIONS (section
# 9.3.7); never accepted, never another 5xx. No error body is demanded: the documented error bodies (A6) are those of
# the interface's operations, and no operation takes this method.
#
# A method a link offers is not unsupported, though no operation of the spec takes it: the spec's own examples link a
# sandbox customer's self with verbs [GET, DELETE] where A15 has DELETE only (Schemathesis' coverage phase sees only
# the operations, so it sent GET there as "unsupported"); a target's answers may link more. Such cases are not sent.
UNSUPPORTED_METHOD_STATUSES = (405, 404)
UNIMPLEMENTED_METHOD_STATUSES = (501,)
OPTIONS_STATUSES = (200, 204)
INTERFACE_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def unsupported_method_statuses(method: str) -> tuple[int, ...]:
    method = method.upper()
    extra = OPTIONS_STATUSES if method == "OPTIONS" else ()
    return UNSUPPORTED_METHOD_STATUSES + (UNIMPLEMENTED_METHOD_STATUSES if method not in INTERFACE_METHODS else ()) + extra


def _links_in(value: Any):
    """(href, verbs) of every link object under a ``_links`` member of a JSON value (verbs empty: a plain link)."""
    stack = [(value, False)]
    while stack:
        node, in_links = stack.pop()
        if isinstance(node, list):
            stack.extend((item, in_links) for item in node)
        elif isinstance(node, dict):
            if in_links and isinstance(node.get("href"), str):
                verbs = node.get("verbs")
                yield node["href"], tuple(v.upper() for v in verbs if isinstance(v, str)) if isinstance(verbs, list) else ()
            for key, item in node.items():
                stack.append((item, in_links or key == "_links"))


def _linked(session: Session, value: Any) -> set[tuple[str, str]]:
    """(METHOD, path template) pairs the links of a JSON value offer (a link without verbs is followed with GET)."""
    found = set()
    for href, verbs in _links_in(value):
        path = re.sub(r"^[a-z]+://[^/]+", "", href).split("?", 1)[0]
        template = next((template for template, _methods in session.templates_fitting(path)), None)
        if template is not None:
            found.update((verb, template) for verb in verbs or ("GET",))
    return found


def linked_methods(session: Session) -> set[tuple[str, str]]:
    """The (METHOD, path template) pairs links offer: the spec's examples' and, once seen, the target's answers'."""
    known = session.__dict__.get("_linked_methods")
    if known is None:
        known = session._linked_methods = _linked(session, session.spec.document.get("paths", {}))
    return known


def remember_links(session: Session, exchange: Exchange) -> None:
    if b'"_links"' not in (exchange.response.content or b""):
        return
    value = exchange.json()
    if isinstance(value, (dict, list)):
        linked_methods(session).update(_linked(session, value))


def send_unsupported_method(session: Session, operation, case) -> None:
    """Sign and send one unsupported-method case; judge its status only."""
    if (case.method.upper(), operation.path) in linked_methods(session):
        return  # a link offers it: not unsupported
    exchange = signed_call(session, operation, case)
    if exchange is None:
        return
    request = exchange.request
    session.exercised_rules.add("method-not-allowed")
    statuses = unsupported_method_statuses(request.method)
    overlap = overlapping_template(session, request.method, request.target.split("?", 1)[0], operation.path)
    if overlap:
        # the path also fits another template that takes the method, a literal segment standing in for one of its
        # parameters: a router matching templates answers as that operation would to a parameter value it does
        # not know (400, or 404 as our validator would), and that is as right as a 405
        statuses += (400,)
    expected = "/".join(map(str, statuses)) + " (no code decided)"
    if exchange.answer.status is not None and 200 <= exchange.answer.status < 300 \
            and session.profile.pinned_decisions != ALL_DECISIONS:
        # an operation the endpoint table does not list, which the bank has (an extra collection read): an extension,
        # a note -- a difference naming no decision, a failure only under --strict (the spec's operations and no more)
        session.disagree(exchange, rule="method-not-allowed", ref="Endpoints", expected=expected, choice=(None, None),
                         message=f"{request.method} on {operation.path}, which no operation of the interface takes, "
                                 f"answered {exchange.answer.describe()}: an extension of the bank's (a note)")
        return
    if exchange.answer.status not in statuses:
        raise Disagreement(exchange, expected, "method-not-allowed",
                           f"{request.method} on {operation.path}, where no operation takes it: the target answered "
                           f"{exchange.answer.describe()}")


def overlapping_template(session: Session, method: str, path: str, own: str) -> str | None:
    """Another path template of the spec that takes ``method`` and fits ``path`` (e.g. DELETE
    /v1/signing-baskets/{basketId}/status fits DELETE /v1/{payment-service}/{payment-product}/{paymentId}), or None."""
    return next((template for template, methods in session.templates_fitting(path)
                 if template != own and method.lower() in methods), None)


def _operations(session: Session):
    """Operations in an order where creations come before the reads of what they create."""
    schema = schemathesis_schema(session)
    ops = [result.ok() for result in schema.get_all_operations()]
    return sorted(ops, key=lambda o: sum(f"{{{n}}}" in o.path for n in ID_PARAMETERS))


def _unavailable(session: Session, operation) -> bool:
    """An operation the profile says the target lacks (absent, or the creation of a product not offered): "not
    exercised" with the reason (its paths are the validator's: a request there is predicted 404 or 403)."""
    operation_id = operation.definition.raw.get("operationId") or operation.label
    why = session.unavailable(operation_id)
    if why:
        outcome = session.outcome(operation_id)
        outcome.status, outcome.reason = "not-exercised", why
    return bool(why)


def _run(negative: bool):
    def run(session: Session) -> None:
        for operation in _operations(session):
            if not _unavailable(session, operation):
                fuzz_operation(session, operation, negative=negative)
    return run


def unsupported_methods(session: Session) -> None:
    for operation in _operations(session):
        if _unavailable(session, operation):
            continue
        cases = _coverage(session, operation)[1]
        if not cases:
            continue  # every method of the path is an operation's (its other operation sends the cases)
        operation_id = operation.definition.raw.get("operationId") or operation.label
        sent_before = len(session.cases)
        try:
            for case in cases:
                send_unsupported_method(session, operation, case)
        except Disagreement as found:
            session.disagree(found.exchange, rule=found.rule, ref="", expected=found.expected, message=found.message)
        session.outcome(operation_id).cases += len(session.cases) - sent_before


check("schema:generated-requests", suite="schema",
      title="Schemathesis positive generation per operation (custom formats): every answer is the validator's "
            "prediction, a declared status, JSON where a body is declared, and passes the response kind",
      refs=("Endpoints", "Errors", "A6", "A7", "A15", "A3"))(_run(negative=False))
check("negative:schema-invalid-requests", suite="negative",
      title="Schemathesis negative mode and coverage phase per operation: a schema-invalid request is refused with "
            "the 4xx and code of A7 and the documented error body; never accepted, never a 5xx",
      refs=("Errors", "A6", "A7"))(_run(negative=True))
check("negative:unsupported-methods", suite="negative",
      title="Schemathesis coverage phase's unsupported methods per path (not a method a link offers): 405 (RFC "
            "9110), 404, 501 for a method the server does not implement, 200/204 for OPTIONS; status only, no code "
            "or body judged (the document and A7 decide none); never accepted, never another 5xx",
      refs=("Endpoints", "A6"))(unsupported_methods)
