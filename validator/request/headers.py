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
    index = req.header_index
    # The common case first: headers of printable ASCII that the operation's compiled check (generated from the
    # spec, below) finds nothing in. Anything else, and whatever it refuses, takes the general check, which words
    # the problems; the compiled check only ever answers "nothing to report".
    if req.headers_clean and compiled_header_check(spec, op, profile)(index, req.has_body):
        return
    plan = _plan(spec, op)
    repeats = profile.repeated_headers
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



# ---- the compiled header check: one generated function per operation and profile ----------------------------------
# The general check above walks a plan for every header, keeps a cache per value and builds problems; a valid
# request (the common case) needs none of that. For each operation the spec's header parameters are compiled into
# one Python function: its header set (declared, HTTP metadata, signing-only, the profile's gateway headers), each
# header's presence, repeats and values as the spec allows them (lengths and enumerations written into the code,
# formats through the same functions the schema engine calls, patterns through the compiled schema engine), the
# recommended formats, code lists, national identity numbers, redirect targets and the corporate PSU rule. It answers
# True only when the general check would find nothing; False sends the request to the general check. It takes values
# of printable ASCII only (HttpRequest.headers_clean), where a length, an enumeration member or a format means the
# same to Python as to the schema engine.

_ANNOTATIONS = frozenset({"title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly",
                          "$comment"})
_COMPILED_BOUND = 256  # operations x profiles; emptied when full (a server has one profile)
_MEMO_BOUND = 256  # values remembered per header for the costly checks (URI, IP address, code list, redirect target)


class _Names:
    """The constants a generated function refers to, each under a name of its own."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}

    def add(self, value: object) -> str:
        name = f"_k{len(self.values)}"
        self.values[name] = value
        return name


def _safe(check):
    """A format function as a predicate: an exception is "not shown valid" (the general check words it)."""
    def predicate(value: str) -> bool:
        try:
            return bool(check(value))
        except Exception:  # noqa: BLE001 - any failure sends the value to the general check
            return False
    return predicate


def _format_predicate(name: str):
    """The format check ``name`` as a predicate on text: for uuid the format's pattern compiled once (what
    :data:`validator.schema.FORMAT_CHECKS` matches each time), else that function (an exception: not shown valid)."""
    if name == "uuid":
        import re

        from ..schema import _UUID

        return re.compile(_UUID).match
    return _safe(FORMAT_CHECKS[name])


def _schema_expression(node: object, x: str, names: _Names) -> tuple[str, bool] | None:
    """A Python expression over the text ``x`` that is True exactly when it satisfies the schema ``node``, and
    whether it is costly (a format other than uuid, a pattern); None for a schema using anything else than the
    keywords below (the caller then asks the compiled schema engine)."""
    import jsonschema_rs

    if not isinstance(node, dict):
        return None
    terms = []
    costly = False
    for key, value in node.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            if value != "string":
                return None
        elif key in ("minLength", "maxLength"):
            if type(value) is not int:
                return None
            terms.append(f"len({x}) {'>=' if key == 'minLength' else '<='} {value}")
        elif key == "enum":
            if not isinstance(value, list):
                return None
            terms.append(f"{x} in {names.add(frozenset(v for v in value if isinstance(v, str)))}")
        elif key == "const":
            if not isinstance(value, str):
                return None
            terms.append(f"{x} == {value!r}")
        elif key == "format":
            if value not in FORMAT_CHECKS:
                return None
            terms.append(f"{names.add(_format_predicate(value))}({x})")
            costly = costly or value != "uuid"
        elif key == "pattern":
            if not isinstance(value, str):
                return None
            # ECMA-262 semantics, exactly as the schema engine reads the spec's patterns
            engine = jsonschema_rs.validator_for({"pattern": value})
            terms.append(f"{names.add(_safe(engine.is_valid))}({x})")
            costly = True
        elif key in ("anyOf", "allOf"):
            if not isinstance(value, list) or not value:
                return None
            parts = [_schema_expression(branch, x, names) for branch in value]
            if any(part is None for part in parts):
                return None
            terms.append("(" + (" or " if key == "anyOf" else " and ").join(f"({p[0]})" for p in parts) + ")")
            costly = costly or any(p[1] for p in parts)
        else:
            return None
    return " and ".join(terms) or "True", costly


def _predicate(expression: str, names: _Names):
    """``expression`` over ``x`` as a function of ``x``."""
    namespace = dict(names.values)
    exec(compile(f"def predicate(x):\n    return {expression}\n", "<header value check>", "exec"), namespace)  # noqa: S102
    return namespace["predicate"]


def _code_list_predicate(spec: Spec, op: Operation, code_set: str):
    """:func:`_check_code_list` finds nothing: every name known (aliases read as their name), the operation's
    required names present."""
    schema = spec.schema(code_set)
    known = frozenset(schema.get("enum", ()))
    aliases = dict(schema.get("x-aliases") or {})
    required = as_tuple((schema.get("x-required-on") or {}).get(op.operation_id))

    def predicate(value: str) -> bool:
        given = {aliases.get(n, n) for n in (n.strip(" \t") for n in value.split(",")) if n}
        return given <= known and all(needed in given for needed in required)
    return predicate


def _memoized(predicate):
    """``predicate`` remembering its answers for values up to _REMEMBERED_VALUE_LENGTH, at most _MEMO_BOUND of
    them (all dropped when full): a TPP sends the same redirect target, address and code list on every request."""
    memo: dict[str, bool] = {}

    def remembered(value: str) -> bool:
        found = memo.get(value)
        if found is None:
            found = predicate(value)
            if len(value) <= _REMEMBERED_VALUE_LENGTH:
                if len(memo) >= _MEMO_BOUND:
                    memo.clear()
                memo[value] = found
        return found
    return remembered


def _value_expression(spec: Spec, op: Operation, check: _HeaderCheck, profile: Profile, names: _Names) -> str:
    """The expression over ``x`` that is True when :func:`_check_header_value` (and the profile's refusal of
    synthetic identity numbers) finds nothing in the value ``x`` of ``check``'s header."""
    schema = _schema_expression(check.schema.schema, "x", names)
    if schema is None:  # a keyword the generator does not write: the compiled schema engine decides
        cheap, costly_schema = f"{names.add(_safe(check.schema.is_valid))}(x)", True
    else:
        cheap, costly_schema = schema
    costly = []  # checks worth remembering per value
    if costly_schema:
        costly.append(_predicate(cheap, names))
        cheap = "True"
    if check.recommended in FORMAT_CHECKS:
        recommended = f"{names.add(_format_predicate(check.recommended))}(x)"
        if check.recommended != "uuid":
            costly.append(_predicate(recommended, names))
        else:
            cheap = recommended if cheap == "True" else f"{cheap} and {recommended}"
    if check.key == PSU_IDENTITY_HEADER:
        from ..checks.identity import check_norwegian_identity_number, is_synthetic_test_number

        costly.append(lambda value: not check_norwegian_identity_number(value))
        if profile.synthetic_identity_numbers == "refused":
            costly.append(lambda value: not is_synthetic_test_number(value))
    if check.code_set:
        costly.append(_code_list_predicate(spec, op, check.code_set))
    target = check.param.raw.get("x-redirect-target")
    if target:
        costly.append(lambda value: unsafe_redirect(target, value) is None)
    if not costly:
        return cheap
    steps = tuple(costly)
    remembered = names.add(_memoized(lambda value: all(step(value) for step in steps)))
    return f"{remembered}(x)" if cheap == "True" else f"{cheap} and {remembered}(x)"


def _generate(spec: Spec, op: Operation, profile: Profile):
    """The source and constants of the compiled header check of ``op`` under ``profile``, as a function
    ``check(index, has_body) -> bool`` (``index``: lower-case header name -> values in wire order)."""
    plan = _plan(spec, op)
    names = _Names()
    repeats = profile.repeated_headers
    silent = set(plan.quiet) | set(profile.gateway_headers)
    silent |= {lname for lname, (_name, meta) in plan.content.items() if meta.get("accepted", True) is not False}
    takes_body = bool(op.request_schema_ref)
    lines = [f"def check(index, has_body):  # {op.operation_id}"]
    # Headers the operation does not accept; Content-Type is judged on its own when there is a body to describe.
    with_body = names.add(frozenset(silent | {CONTENT_TYPE}))
    without_body = names.add(frozenset(silent))
    if takes_body:
        lines.append(f"    if not index.keys() <= {with_body}: return False")
    else:
        lines.append(f"    if not index.keys() <= ({with_body} if has_body else {without_body}): return False")
    json_media = names.add(is_json_media_type)
    indent = "    " if takes_body else "        "
    if not takes_body:
        lines.append("    if has_body:")
    lines.append(f"{indent}v = index.get({CONTENT_TYPE!r})")
    lines.append(f"{indent}if v is not None and not {json_media}(v[0] if len(v) == 1 else ', '.join(v)): return False")
    # The optional headers' checks are skipped as a whole when the request sends none of them (one set operation
    # in C instead of a look-up for each absent header).
    optional: list[str] = []
    optional_keys: set[str] = set()
    for check in plan.checks:
        if check.owned_by_verifier:
            continue  # presence, format and repeats: the signature verifier (A8)
        key = check.key
        refused = repeats.get(key, "accepted" if check.listed else "refused") == "refused"
        test = _value_expression(spec, op, check, profile, names)
        into = lines if check.required else optional
        if test == "True" and not check.required:  # any value will do: only a refused repeat is a problem
            if refused:
                optional_keys.add(key)
                into.append(f"    v = index.get({key!r})")
                into.append("    if v is not None and len(v) != 1: return False")
            continue
        into.append(f"    v = index.get({key!r})")
        if check.required:
            into.append("    if v is None: return False")
            indent = "    "
        else:
            optional_keys.add(key)
            into.append("    if v is not None:")
            indent = "        "
        if refused:
            into.append(f"{indent}if len(v) != 1: return False")
            into.append(f"{indent}x = v[0]")
            into.append(f"{indent}if not ({test}): return False")
        elif check.listed:
            into.append(f"{indent}x = v[0] if len(v) == 1 else ', '.join(v)")
            into.append(f"{indent}if not ({test}): return False")
        else:
            into.append(f"{indent}for x in v:")
            into.append(f"{indent}    if not ({test}): return False")
    if optional:
        lines.append(f"    if not {names.add(frozenset(optional_keys))}.isdisjoint(index):")
        lines.extend("    " + line for line in optional)
    if CORPORATE_ID_HEADER in plan.declared:
        lines.append(f"    if {CORPORATE_ID_HEADER!r} not in index and {CORPORATE_CONTEXT!r} in "
                     f"index.get({SIGNATURE_CONTEXT_HEADER!r}, ()): return False")
    lines.append("    return True")
    return "\n".join(lines) + "\n", names.values


def compiled_header_check(spec: Spec, op: Operation, profile: Profile = DEFAULT_PROFILE):
    """The compiled header check of ``op`` under ``profile`` (generated once, cached on the spec):
    ``check(index, has_body)`` is True only when :func:`check_headers` finds nothing in headers of printable ASCII
    whose lower-case index is ``index``."""
    last = _LAST_COMPILED  # the one a server asks for on every request, without building a key
    if last[0] is op and last[1] is profile:
        return last[2]
    cache = spec._cache.get("compiled-header-checks")  # no new empty dict per call (setdefault's default)
    if cache is None:
        cache = spec._cache.setdefault("compiled-header-checks", {})
    key = (id(op), id(profile))
    found = cache.get(key)
    if found is not None and found[0] is op and found[1] is profile:
        _remember_last(found)
        return found[2]
    source, constants = _generate(spec, op, profile)
    namespace = dict(constants)
    exec(compile(source, f"<header check of {op.operation_id}>", "exec"), namespace)  # noqa: S102 - generated above
    if len(cache) >= _COMPILED_BOUND:
        cache.clear()
    cache[key] = found = (op, profile, namespace["check"])
    _remember_last(found)
    return namespace["check"]


_LAST_COMPILED: tuple = (None, None, None)  # (operation, profile, compiled check) last handed out


def _remember_last(found: tuple) -> None:
    global _LAST_COMPILED
    _LAST_COMPILED = found
