"""The header checks of the ``request`` kind: each header the operation declares (presence, repeats, schema,
recommended format, code lists such as X-Accept-Fix, national identity numbers), PSU-Corporate-ID for a corporate
PSU, and headers the operation does not accept. Digest, Signature and TPP-Signature-Certificate (A8) belong to the
signature verifier."""
from __future__ import annotations

from ..findings import WARNING
from ..schema import FORMAT_CHECKS
from ..schema import short_value as _short
from ..spec import Operation, Parameter, Spec, as_tuple
from .message import HttpRequest, Problems, header_pointer
from .parameters import owned_by_verifier, parameter_validator, schema_problem

HEADER_REQUIRED = "header-required"
HEADER_FORMAT = "header-format"
HEADER_RECOMMENDED_FORMAT = "header-recommended-format"
PSU_IDENTITY_INVALID = "psu-identity-invalid"
ACCEPT_FIX_UNKNOWN = "accept-fix-unknown"
ACCEPT_FIX_REQUIRED = "accept-fix-required"
CORPORATE_ID_REQUIRED = "corporate-id-required"
HEADER_NOT_ACCEPTED = "header-not-accepted"
HEADER_DUPLICATE = "header-duplicate"

# A7: a corporate PSU (PSU-Context: CORPORATE) must send PSU-Corporate-ID
SIGNATURE_CONTEXT_HEADER = "psu-context"
CORPORATE_CONTEXT = "CORPORATE"
CORPORATE_ID_HEADER = "psu-corporate-id"
PSU_IDENTITY_HEADER = "x-psu-identity"

# HTTP/1.1 message framing (RFC 9112), not interface parameters: never "not accepted".
FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
# Headers defined as comma-separated lists (RFC 9110 content negotiation, forwarded PSU values, RFC 3230 Digest):
# repeating them is legitimate. x-accept-fix is a list too (A18): parameters with x-code-set.
LIST_HEADERS = frozenset({
    "accept", "accept-charset", "accept-encoding", "accept-language",
    "psu-accept", "psu-accept-charset", "psu-accept-encoding", "psu-accept-language", "digest",
})
MAX_HEADER_LENGTH = 8192  # the verifier's default; longer values are reported by it (header-oversized)


def _is_list_header(param: Parameter | None, lname: str) -> bool:
    return lname in LIST_HEADERS or (param is not None and bool(param.raw.get("x-code-set")))


def check_headers(spec: Spec, op: Operation, req: HttpRequest, out: Problems, max_length: int) -> None:
    index: dict[str, list[tuple[str, str]]] = {}
    for name, value in req.headers:
        index.setdefault(name.lower(), []).append((name, value))
    params = {p.key: p for p in op.header_parameters}
    for key, p in params.items():
        present = index.get(key)
        pointer = header_pointer(p.name)
        if not present:
            if p.required and not owned_by_verifier(p):
                out.add(HEADER_REQUIRED, pointer, f"{p.name} is required for {op.operation_id} but absent")
            continue
        if owned_by_verifier(p):
            continue  # presence, format and repeats: the signature verifier (A8)
        values = [v for _n, v in present]
        listed = _is_list_header(p, key)
        if len(values) > 1 and not listed:
            out.add(HEADER_DUPLICATE, pointer, f"{p.name} occurs {len(values)} times; it takes one value")
        if any(len(v) > max_length for v in values):
            continue  # header-oversized (verifier); not parsed further
        for value in ([", ".join(values)] if listed else values):
            _check_header_value(spec, op, p, value, out)
    # A7: a corporate PSU needs PSU-Corporate-ID
    contexts = [v for _n, v in index.get(SIGNATURE_CONTEXT_HEADER, ())]
    if CORPORATE_ID_HEADER in params and CORPORATE_CONTEXT in contexts and CORPORATE_ID_HEADER not in index:
        out.add(CORPORATE_ID_REQUIRED, header_pointer(params[CORPORATE_ID_HEADER].name),
                f"PSU-Context is {CORPORATE_CONTEXT}: a corporate PSU must send {params[CORPORATE_ID_HEADER].name}")
    # headers the operation does not accept
    content = {name.lower(): (name, meta or {}) for name, meta in op.content_headers.items()}
    for lname, occurrences in index.items():
        if lname in params or lname in FRAMING_HEADERS or lname in _signing_only_headers(spec):
            continue
        wire = occurrences[0][0]
        if lname in content:
            name, meta = content[lname]
            if meta.get("accepted", True) is not False:
                continue
            why = meta.get("description") or "not accepted"
            out.add(HEADER_NOT_ACCEPTED, header_pointer(name), f"{name} is not accepted by {op.operation_id}: {why}")
        else:
            out.add(HEADER_NOT_ACCEPTED, header_pointer(wire), f"{wire} is not a header of {op.operation_id} (header table, column {op.header_table_column or 'none'}); it is ignored")


def _signing_only_headers(spec: Spec) -> frozenset[str]:
    """Headers the signature covers that no operation declares ("date": signed, never a parameter)."""
    found = spec._cache.get("request-signing-only-headers")
    if found is None:
        from ..signing import PROFILE_SIGNED_HEADERS

        parameters = {p.key for op in spec.operations.values() for p in op.header_parameters}
        found = spec._cache["request-signing-only-headers"] = frozenset(h for h in PROFILE_SIGNED_HEADERS if h not in parameters)
    return found


def _check_header_value(spec: Spec, op: Operation, p: Parameter, value: str, out: Problems) -> None:
    pointer = header_pointer(p.name)
    code_set = p.raw.get("x-code-set")
    # A list of code-set names: its content is worded by the accept-fix rules, not by a pattern.
    problem = schema_problem(parameter_validator(spec, p, drop=("pattern",) if code_set else ()), value)
    if problem:
        out.add(HEADER_FORMAT, pointer, f"{p.name}: {problem}")
        return
    recommended = p.schema.get("x-recommended-format") if isinstance(p.schema, dict) else None
    if recommended and not _conforms(recommended, value):
        out.add(HEADER_RECOMMENDED_FORMAT, pointer, f"{p.name} {_short(value)} is not a {recommended}; a {recommended} is recommended", WARNING)
    if p.key == PSU_IDENTITY_HEADER:
        from ..checks.identity import check_norwegian_identity_number

        for issue in check_norwegian_identity_number(value):
            out.add(PSU_IDENTITY_INVALID, pointer, f"X-PSU-IDENTITY: {issue.message}")
    if code_set:
        _check_code_list(spec, op, p, code_set, value, out)


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
    names = [n.strip(" \t") for n in value.split(",")]
    if any(not n for n in names):
        out.add(HEADER_FORMAT, pointer, f"{p.name} {_short(value)} has an empty name in its comma-separated list")
    given = set()
    for n in names:
        if not n:
            continue
        canonical = aliases.get(n, n)
        given.add(canonical)
        if canonical not in known:
            out.add(ACCEPT_FIX_UNKNOWN, pointer, f"{p.name}: {n!r} is not a published change name ({', '.join(known)}); it has no effect", WARNING)
    required = (schema.get("x-required-on") or {}).get(op.operation_id)
    for needed in as_tuple(required):
        if needed not in given:
            out.add(ACCEPT_FIX_REQUIRED, pointer, f"{p.name} on {op.operation_id} must contain {needed!r}, got {_short(value)}")

