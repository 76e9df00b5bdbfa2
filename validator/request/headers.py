"""The header checks of the ``request`` kind: each header the operation declares (presence, repeats, schema,
recommended format, code lists such as X-Accept-Fix, national identity numbers), PSU-Corporate-ID for a corporate
PSU, and headers the operation does not accept. Digest, Signature and TPP-Signature-Certificate (A8) belong to the
signature verifier."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..context import DEFAULT_PROFILE, Profile
from ..findings import WARNING
from ..schema import FORMAT_CHECKS
from ..schema import short_value as _short
from ..spec import Operation, Parameter, Spec, as_tuple
from .message import HttpRequest, Problems, RequestProblem, header_pointer
from .parameters import ParameterSchema, owned_by_verifier, parameter_validator, schema_problem

HEADER_REQUIRED = "header-required"
HEADER_FORMAT = "header-format"
HEADER_RECOMMENDED_FORMAT = "header-recommended-format"
PSU_IDENTITY_INVALID = "psu-identity-invalid"
ACCEPT_FIX_UNKNOWN = "accept-fix-unknown"
ACCEPT_FIX_REQUIRED = "accept-fix-required"
CORPORATE_ID_REQUIRED = "corporate-id-required"
HEADER_NOT_ACCEPTED = "header-not-accepted"
HEADER_DUPLICATE = "header-duplicate"
CONTENT_TYPE_NOT_JSON = "content-type-not-json"
CONTENT_TYPE = "content-type"
REDIRECT_TARGET_UNSAFE = "redirect-target-unsafe"

# A7: a corporate PSU (PSU-Context: CORPORATE) must send PSU-Corporate-ID
SIGNATURE_CONTEXT_HEADER = "psu-context"
CORPORATE_CONTEXT = "CORPORATE"
CORPORATE_ID_HEADER = "psu-corporate-id"
PSU_IDENTITY_HEADER = "x-psu-identity"

# Headers defined as comma-separated lists (RFC 9110 content negotiation, forwarded PSU values, RFC 3230 Digest):
# repeating them is legitimate. x-accept-fix is a list too (A18): parameters with x-code-set.
LIST_HEADERS = frozenset({
    "accept", "accept-charset", "accept-encoding", "accept-language",
    "psu-accept", "psu-accept-charset", "psu-accept-encoding", "psu-accept-language", "digest",
})
MAX_HEADER_LENGTH = 8192  # the verifier's default; longer values are reported by it (header-oversized)
# What a header value's check found is kept per declared header: most values recur on every request of a TPP
# (X-Accept-Fix, TPP-Redirect-URI, PSU-IP-Address, PSU-ID, ...). Bounded, since the validator lives in servers:
# values up to this length, this many per header, all dropped when full.
_REMEMBERED_VALUE_LENGTH = 256
_REMEMBERED_VALUES = 256


def _is_list_header(param: Parameter | None, lname: str) -> bool:
    return lname in LIST_HEADERS or (param is not None and bool(param.raw.get("x-code-set")))


@dataclass(frozen=True, slots=True, eq=False)
class _HeaderCheck:
    """What the check of one declared header needs, worked out once per operation, and what its check found for
    the values met so far (a pure function of the operation, the header and the value)."""

    param: Parameter
    key: str
    required: bool
    owned_by_verifier: bool
    listed: bool
    schema: ParameterSchema
    recommended: str | None
    code_set: str | None
    found: dict[str, tuple[RequestProblem, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _HeaderPlan:
    operation: Operation
    checks: tuple[_HeaderCheck, ...]
    declared: dict[str, Parameter]
    quiet: frozenset[str]  # declared, HTTP metadata and signing-only headers: never "not accepted"
    content: dict[str, tuple[str, dict]]
    positions: dict[str, tuple[int, ...]]  # header key -> its checks' places in ``checks``
    required: tuple[int, ...]  # places of the checks that report an absent header (required, not the verifier's)


def _plan(spec: Spec, op: Operation) -> _HeaderPlan:
    """The operation's header checks, built once per spec and operation (cached on the spec)."""
    plans = spec._cache.setdefault("header-plans", {})
    found = plans.get(id(op))
    if found is not None and found.operation is op:
        return found
    checks = []
    for p in op.header_parameters:
        code_set = p.raw.get("x-code-set")
        # A list of code-set names: its content is worded by the accept-fix rules, not by a pattern.
        schema = parameter_validator(spec, p, drop=("pattern",) if code_set else ())
        recommended = p.schema.get("x-recommended-format") if isinstance(p.schema, dict) else None
        checks.append(_HeaderCheck(p, p.key, p.required, owned_by_verifier(p), _is_list_header(p, p.key), schema,
                                   recommended, code_set))
    declared = {c.key: c.param for c in checks}
    positions: dict[str, tuple[int, ...]] = {}
    for i, c in enumerate(checks):
        positions[c.key] = positions.get(c.key, ()) + (i,)
    plan = plans[id(op)] = _HeaderPlan(
        op, tuple(checks), declared, frozenset(declared) | http_metadata_headers(spec) | _signing_only_headers(spec),
        {name.lower(): (name, meta or {}) for name, meta in op.content_headers.items()}, positions,
        tuple(i for i, c in enumerate(checks) if c.required and not c.owned_by_verifier))
    return plan


def check_headers(spec: Spec, op: Operation, req: HttpRequest, out: Problems,
                  profile: Profile = DEFAULT_PROFILE) -> None:
    plan = _plan(spec, op)
    repeats = profile.repeated_headers
    index: dict[str, list[str]] = {}
    for name, value in req.headers:
        lname = name.lower()
        values = index.get(lname)
        if values is None:
            index[lname] = [value]
        else:
            values.append(value)
    # The declared headers the request carries and the required ones it lacks, in declaration order: the same
    # problems, in the same order, as walking every declared header, without visiting the many absent optional ones.
    checks, positions = plan.checks, plan.positions
    places = [i for key in index if key in positions for i in positions[key]]
    places.extend(i for i in plan.required if checks[i].key not in index)
    places.sort()
    for i in places:
        check = checks[i]
        values = index.get(check.key)
        if not values:
            out.add(HEADER_REQUIRED, header_pointer(check.param.name),
                    f"{check.param.name} is required for {op.operation_id} but absent")
            continue
        if check.owned_by_verifier:
            continue  # presence, format and repeats: the signature verifier (A8)
        if len(values) > 1 and repeats.get(check.key, "accepted" if check.listed else "refused") == "refused":
            why = "the profile refuses its repeats" if check.listed else "it takes one value"
            out.add(HEADER_DUPLICATE, header_pointer(check.param.name),
                    f"{check.param.name} occurs {len(values)} times; {why}")
        for value in ([", ".join(values)] if check.listed else values):
            found = check.found.get(value)
            if found is None:
                checked = Problems()
                _check_header_value(spec, op, check, value, checked)
                found = tuple(checked.problems)
                if len(value) <= _REMEMBERED_VALUE_LENGTH:
                    if len(check.found) >= _REMEMBERED_VALUES:
                        check.found.clear()
                    check.found[value] = found
            out.problems.extend(found)
            if check.key == PSU_IDENTITY_HEADER and not found and profile.synthetic_identity_numbers == "refused":
                _refuse_synthetic(check.param, value, out)  # after the cache: the value's check is the profile's
    # A7: a corporate PSU needs PSU-Corporate-ID
    declared = plan.declared
    if CORPORATE_ID_HEADER in declared and CORPORATE_ID_HEADER not in index \
            and CORPORATE_CONTEXT in index.get(SIGNATURE_CONTEXT_HEADER, ()):
        out.add(CORPORATE_ID_REQUIRED, header_pointer(declared[CORPORATE_ID_HEADER].name),
                f"PSU-Context is {CORPORATE_CONTEXT}: a corporate PSU must send {declared[CORPORATE_ID_HEADER].name}")
    # headers the operation does not accept
    for lname in index:
        if lname == CONTENT_TYPE and (op.request_schema_ref or req.has_body):
            # A33: HTTP metadata of the body sent (RFC 9110 section 8.3), like Content-Length; a body the operation
            # does not take is body-not-accepted's
            value = ", ".join(index[lname])
            if not is_json_media_type(value):
                wire = next(n for n, _v in req.headers if n.lower() == lname)
                out.add(CONTENT_TYPE_NOT_JSON, header_pointer(wire), f"{wire} {_short(value)} does not name JSON; "
                        f"the body of {op.operation_id} is application/json", WARNING)
            continue
        if lname in plan.quiet or lname in profile.gateway_headers:
            continue
        if lname in plan.content:
            name, meta = plan.content[lname]
            if meta.get("accepted", True) is not False:
                continue
            why = meta.get("description") or "not accepted"
            out.add(HEADER_NOT_ACCEPTED, header_pointer(name), f"{name} is not accepted by {op.operation_id}: {why}")
        else:
            wire = next(n for n, _v in req.headers if n.lower() == lname)
            out.add(HEADER_NOT_ACCEPTED, header_pointer(wire), f"{wire} is not a header of {op.operation_id} (header table, column {op.header_table_column or 'none'}); it is ignored")


def is_json_media_type(value: str) -> bool:
    """application/json or a structured +json type (RFC 6839), parameters (charset=utf-8) aside."""
    media = value.split(";", 1)[0].strip(" \t").lower()
    kind, _, subtype = media.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def http_metadata_headers(spec: Spec) -> frozenset[str]:
    """HTTP metadata of the message, never "not accepted" (the spec's x-http-metadata-headers, A33): framing, and
    what clients and proxies send by protocol (User-Agent, Expect, TE, Via)."""
    found = spec._cache.get("request-http-metadata-headers")
    if found is None:
        names = (spec.document.get("x-http-metadata-headers") or {}).get("names", ())
        found = spec._cache["request-http-metadata-headers"] = frozenset(str(n).lower() for n in names)
    return found


def _signing_only_headers(spec: Spec) -> frozenset[str]:
    """Headers the signature covers that no operation declares ("date": signed, never a parameter)."""
    found = spec._cache.get("request-signing-only-headers")
    if found is None:
        from ..signing import PROFILE_SIGNED_HEADERS

        parameters = {p.key for op in spec.operations.values() for p in op.header_parameters}
        found = spec._cache["request-signing-only-headers"] = frozenset(h for h in PROFILE_SIGNED_HEADERS if h not in parameters)
    return found


def _check_header_value(spec: Spec, op: Operation, check: _HeaderCheck, value: str, out: Problems) -> None:
    p = check.param
    if not check.schema.is_valid(value):
        problem = schema_problem(check.schema, value)
        if problem:
            out.add(HEADER_FORMAT, header_pointer(p.name), f"{p.name}: {problem}")
            return
    if check.recommended and not _conforms(check.recommended, value):
        out.add(HEADER_RECOMMENDED_FORMAT, header_pointer(p.name),
                f"{p.name} {_short(value)} is not a {check.recommended}; a {check.recommended} is recommended", WARNING)
    if check.key == PSU_IDENTITY_HEADER:
        from ..checks.identity import check_norwegian_identity_number

        for issue in check_norwegian_identity_number(value):
            out.add(PSU_IDENTITY_INVALID, header_pointer(p.name), f"X-PSU-IDENTITY: {issue.message}")
    if check.code_set:
        _check_code_list(spec, op, p, check.code_set, value, out)
    target = p.raw.get("x-redirect-target")
    if target:
        problem = unsafe_redirect(target, value)
        if problem:
            out.add(REDIRECT_TARGET_UNSAFE, header_pointer(p.name), f"{p.name} {_short(value)}: {problem} (A37)")


def unsafe_redirect(target: dict, value: str) -> str | None:
    """Why ``value`` is no place to send the PSU's browser per the parameter's ``x-redirect-target`` (A37: its
    schemes with any host, its loopback schemes with a loopback host only), or None when it is one."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        host = parts.hostname
    except ValueError:
        return "not a URI with a host"
    scheme = parts.scheme.lower()
    schemes, loopback_schemes = tuple(target.get("schemes", ())), tuple(target.get("loopback-schemes", ()))
    allowed = " or ".join([*schemes, *(f"{s} to a loopback host" for s in loopback_schemes)])
    if scheme not in schemes + loopback_schemes:
        return f"the scheme {scheme + ':' if scheme else '(none)'} is not a redirect target; {allowed} is"
    if not host:
        return f"no host; a redirect target is {allowed}"
    if scheme in schemes:
        return None
    loopback = False
    for name in target.get("loopback-hosts", ()):
        try:
            network = ipaddress.ip_network(name)
        except ValueError:
            loopback = loopback or host.lower().rstrip(".") == name
            continue
        try:
            loopback = loopback or ipaddress.ip_address(host) in network
        except ValueError:
            pass
    return None if loopback else f"{scheme} to {host}, which is not a loopback host; a redirect target is {allowed}"


def _refuse_synthetic(p: Parameter, value: str, out: Problems) -> None:
    """A16 as the profile states it: a synthetic test number (month + 80) is not accepted."""
    from ..checks.identity import is_synthetic_test_number

    if is_synthetic_test_number(value):
        out.add(PSU_IDENTITY_INVALID, header_pointer(p.name),
                f"X-PSU-IDENTITY {value} is a synthetic test number (month + 80), which this implementation refuses "
                "(profile: synthetic-identity-numbers: refused, A16)")


def _conforms(fmt: str, value: str) -> bool:
    check = FORMAT_CHECKS.get(fmt)
    try:
        return check is None or bool(check(value))
    except ValueError:
        return False


def _check_code_list(spec: Spec, op: Operation, p: Parameter, code_set: str, value: str, out: Problems) -> None:
    pointer = header_pointer(p.name)
    schema = spec.schema(code_set)
    known = tuple(schema.get("enum", ()))
    aliases = dict(schema.get("x-aliases") or {})
    # RFC 9110 section 5.6.1: a recipient accepts and ignores empty list elements ("a,,b", "a, ,b", ", a").
    names = [n for n in (n.strip(" \t") for n in value.split(",")) if n]
    given = set()
    for n in names:
        canonical = aliases.get(n, n)
        given.add(canonical)
        if canonical not in known:
            out.add(ACCEPT_FIX_UNKNOWN, pointer, f"{p.name}: {n!r} is not a published change name ({', '.join(known)}); it has no effect", WARNING)
    required = (schema.get("x-required-on") or {}).get(op.operation_id)
    for needed in as_tuple(required):
        if needed not in given:
            out.add(ACCEPT_FIX_REQUIRED, pointer, f"{p.name} on {op.operation_id} must contain {needed!r}, got {_short(value)}")

