"""Which operation a request addresses: method + path matched against the spec's path templates, with an
implementer profile's ``paths`` overrides applied; literal segments win over templated ones (OpenAPI path
matching). An unknown payment product is 404 PRODUCT_UNKNOWN, any other unknown path 404 RESOURCE_UNKNOWN, a known
path with another method 405. A payment's own paths (read, status, cancel, authorisation) take a payment-service and
payment-product pair only where the interface offers it -- the pairs of its creation paths -- so a product known to
the interface addressed under another service (a single Norwegian domestic payment, a SEPA bulk) is 404
PRODUCT_UNKNOWN too, as its creation is (A7).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping
from urllib.parse import unquote

from ..schema import short_value as _short
from ..spec import Operation, Parameter, Spec
from .message import RequestProblem
from .parse import REQUEST_MALFORMED

PATH_UNKNOWN = "path-unknown"
PRODUCT_UNKNOWN = "product-unknown"
PRODUCT_NOT_OFFERED = "product-not-offered"
SERVICE_PARAMETER = "payment-service"
METHOD_NOT_ALLOWED = "method-not-allowed"
# The path parameter whose unknown value is 404 PRODUCT_UNKNOWN (A7); every other path mismatch is RESOURCE_UNKNOWN.
PRODUCT_PARAMETER = "payment-product"


@dataclass(frozen=True, init=False)
class Resolution:
    operation: Operation | None
    template: str | None
    path_values: dict[str, str]
    problems: list[RequestProblem]

    def __init__(self, operation: Operation | None, template: str | None, path_values: dict[str, str],
                 problems: list[RequestProblem]) -> None:
        # Into the instance's dict at once (a frozen dataclass's own __init__ calls object.__setattr__ per field):
        # one is made for every request.
        self.__dict__.update(operation=operation, template=template, path_values=path_values, problems=problems)


@dataclass(frozen=True)
class _Segment:
    literal: str | None          # None: a template parameter
    param: str | None            # parameter name of a template segment, or of the enum slot a literal fills
    enum: tuple[str, ...] | None


def _param_enum(spec: Spec, param: Parameter) -> tuple[str, ...] | None:
    schema = spec.deref(param.schema) if isinstance(param.schema, dict) else {}
    enum = schema.get("enum") if isinstance(schema, dict) else None
    return tuple(str(e) for e in enum) if enum else None


Pair = tuple[str, str]  # (payment-service, payment-product)
Route = tuple[Operation, str, tuple[_Segment, ...], "frozenset[Pair] | None"]


def _routes(spec: Spec, overrides: tuple[tuple[str, str], ...],
            absent: frozenset[str] = frozenset()) -> tuple[Route, ...]:
    """Every operation's path template as segments, but those a profile declares absent (A15, A25); built once per
    spec, set of path overrides and of absent operations. A template taking both the payment-service and the
    payment-product as parameters carries the pairs the interface offers (:func:`_offered_pairs`): another pair of
    the two enumerations is not a payment of the interface."""
    key = ("request-routes", overrides, absent)
    cached = spec._cache.get(key)
    if cached is not None:
        return cached
    slots: dict[str, tuple[str, tuple[str, ...]]] = {}  # literal value -> (parameter, enum) it is a member of
    for op in spec.operations.values():
        for p in op.path_parameters:
            enum = _param_enum(spec, p)
            for member in enum or ():
                slots.setdefault(member, (p.name, enum))
    paths = dict(overrides)
    routes = []
    for op in spec.operations.values():
        if op.operation_id in absent:
            continue
        template = paths.get(op.operation_id, op.path)
        params = {p.name: p for p in op.path_parameters}
        segments = []
        for token in template[1:].split("/"):
            if token.startswith("{") and token.endswith("}"):
                name = token[1:-1]
                segments.append(_Segment(None, name, _param_enum(spec, params[name]) if name in params else None))
            elif token in slots:
                segments.append(_Segment(token, *slots[token]))
            else:
                segments.append(_Segment(token, None, None))
        routes.append((op, template, tuple(segments)))
    pairs = _offered_pairs(routes)
    result = spec._cache[key] = tuple(
        (op, template, segs, pairs if {SERVICE_PARAMETER, PRODUCT_PARAMETER} <= {s.param for s in segs if s.literal is None} else None)
        for op, template, segs in routes)
    return result


def _offered_pairs(routes) -> frozenset[Pair]:
    """The payment-service x payment-product pairs the interface offers: those its creation paths name as literal
    segments (``/v1/payments/sepa-credit-transfers``), as the profile's path overrides and absent operations leave
    them -- the spec's paths, not a list of ours."""
    pairs = set()
    for _op, _template, segs in routes:
        named = {s.param: s.literal for s in segs if s.literal is not None and s.param is not None}
        if SERVICE_PARAMETER in named and PRODUCT_PARAMETER in named:
            pairs.add((named[SERVICE_PARAMETER], named[PRODUCT_PARAMETER]))
    return frozenset(pairs)


_FIXED_ROUTES_BOUND = 4096  # fixed paths are few (literal and enum segments only); the bound only guards the cache


def resolve_operation(spec: Spec, method: str, path: str, *, paths: Mapping[str, str] | None = None,
                      absent: frozenset[str] = frozenset()) -> Resolution:
    """The operation ``method path`` addresses; literal segments win over templated ones (OpenAPI path matching).
    Operations in ``absent`` (a profile's absent-operations) are not there: their path is unknown (404), or 405 where
    another operation shares it.

    A match whose every segment is literal or a member of an enumeration (creation paths) is remembered: there are
    only a few such paths, and they are what most requests address."""
    fixed = spec._cache.get("request-fixed-routes")  # no new empty dict per call (setdefault's default)
    if fixed is None:
        fixed = spec._cache.setdefault("request-fixed-routes", {})
    key = (method, path, tuple(sorted(paths.items())) if paths else (), absent)
    found = fixed.get(key)
    if found is not None:
        return Resolution(found.operation, found.template, dict(found.path_values), [])
    resolution = _resolve(spec, method, path, paths, absent)
    if resolution.operation is not None and len(fixed) < _FIXED_ROUTES_BOUND and _fixed(spec, resolution, paths, absent):
        fixed[key] = resolution
    return resolution


def _fixed(spec: Spec, resolution: Resolution, paths: Mapping[str, str] | None, absent: frozenset[str]) -> bool:
    """True when the matched template has no free parameter: every value the match took is an enumeration member."""
    key = tuple(sorted((paths or {}).items()))
    for op, template, segs, _pairs in _routes(spec, key, absent):
        if op is resolution.operation and template == resolution.template:
            return all(s.literal is not None or s.enum is not None for s in segs)
    return False


def resolve_path(spec: Spec, path: str) -> Resolution:
    """The operation whose path template ``path`` matches best whatever the method (a link's target: one of the
    operations at that path, with the path's values), or none (``operation`` None)."""
    try:
        segments = [unquote(s, errors="strict") if "%" in s else s for s in path[1:].split("/")]
    except UnicodeDecodeError:
        return Resolution(None, None, {}, [])
    exact, _near = _matches(_routes(spec, ()), segments)
    if not exact:
        return Resolution(None, None, {}, [])
    # the most literal template; among its operations the one a reader of the link uses first (GET)
    _rank, op, template, values = max(exact, key=lambda e: (e[0], e[1].method == "GET"))
    return Resolution(op, template, values, [])


def _matches(routes, segments: list[str]):
    """The routes ``segments`` match exactly (with each one's literal ranking and path values) and those it matches
    but for enumeration slots (with the mismatched parameter values, and the values it took): a payment-service x
    payment-product pair the interface does not offer is a mismatched payment-product."""
    exact: list[tuple[tuple[int, ...], Operation, str, dict[str, str]]] = []
    # (operation, [(parameter, value) of mismatched slots], the values matched)
    near: list[tuple[Operation, list[tuple[str, str]], dict[str, str]]] = []
    for op, template, segs, pairs in routes:
        if len(segs) != len(segments):
            continue
        values: dict[str, str] = {}
        mismatched: list[tuple[str, str]] = []
        ok = True
        for seg, value in zip(segs, segments):
            if seg.literal is not None:
                if value == seg.literal:
                    continue
                if seg.param is not None and value:
                    mismatched.append((seg.param, value))
                    continue
                ok = False
                break
            if not value:
                ok = False
                break
            if seg.enum is not None and value not in seg.enum:
                mismatched.append((seg.param or "", value))
                continue
            values[seg.param or ""] = value
        if not ok:
            continue
        if pairs is not None and not mismatched and (values[SERVICE_PARAMETER], values[PRODUCT_PARAMETER]) not in pairs:
            mismatched.append((PRODUCT_PARAMETER, values[PRODUCT_PARAMETER]))
        if mismatched:  # the values it took, the enumeration members its literal segments name among them
            named = {s.param: v for s, v in zip(segs, segments) if s.literal == v and s.param is not None}
            near.append((op, mismatched, {**named, **values}))
        else:
            exact.append((tuple(1 if s.literal is not None else 0 for s in segs), op, template, values))
    return exact, near


def _resolve(spec: Spec, method: str, path: str, paths: Mapping[str, str] | None, absent: frozenset[str]) -> Resolution:
    problems: list[RequestProblem] = []
    try:
        segments = [unquote(s, errors="strict") if "%" in s else s for s in path[1:].split("/")]
    except UnicodeDecodeError:
        problems.append(RequestProblem(REQUEST_MALFORMED, "/path", f"the path {_short(path)} has percent-encoded bytes that are not UTF-8"))
        return Resolution(None, None, {}, problems)
    routes = _routes(spec, tuple(sorted((paths or {}).items())), absent)
    exact, near = _matches(routes, segments)
    if exact:
        exact.sort(key=lambda e: e[0], reverse=True)
        for _rank, op, template, values in exact:
            if op.method == method:
                return Resolution(op, template, values, problems)
        best = exact[0][2]
        allowed = sorted({op.method for _r, op, t, _v in exact if t == best})
        problems.append(RequestProblem(METHOD_NOT_ALLOWED, "/method", f"{method} is not allowed on {best}; allowed: {', '.join(allowed)} (methods are case-sensitive)"))
        return Resolution(None, best, {}, problems)
    for op, mismatched, values in near:
        if op.method == method and all(name == PRODUCT_PARAMETER for name, _v in mismatched):
            value = mismatched[0][1]
            service = values.get(SERVICE_PARAMETER)
            where = f" as {service}" if service is not None else ""
            problems.append(RequestProblem(PRODUCT_UNKNOWN, "/path", f"payment product {_short(value)} is not offered{where} "
                                           f"at {_short(path, 120)}; this interface offers {_pair_list(routes)}"))
            return Resolution(None, None, {}, problems)
    problems.append(RequestProblem(PATH_UNKNOWN, "/path", f"no operation of the interface has the path {_short(path, 120)}"))
    return Resolution(None, None, {}, problems)


def _pair_list(routes: tuple[Route, ...]) -> str:
    pairs = next((pairs for *_rest, pairs in routes if pairs is not None), None) or _offered_pairs(
        [route[:3] for route in routes])
    return ", ".join(f"{service}/{product}" for service, product in sorted(pairs)) or "no payment products"


def creation_operation(spec: Spec, service: str, product: str) -> Operation | None:
    """The operation whose path creates payments of ``service`` x ``product`` (its creation path names both), or
    None when the interface offers no such pair."""
    for op, _template, segs, _pairs in _routes(spec, ()):
        named = {s.param: s.literal for s in segs if s.literal is not None and s.param is not None}
        if named.get(SERVICE_PARAMETER) == service and named.get(PRODUCT_PARAMETER) == product:
            return op
    return None


def product_of(resolution: Resolution) -> str | None:
    """The payment product a resolved request addresses, as payment-service/payment-product: the creation path's
    own segments, or the values of the payment-service and payment-product path parameters."""
    values = resolution.path_values
    if SERVICE_PARAMETER in values and PRODUCT_PARAMETER in values:
        return f"{values[SERVICE_PARAMETER]}/{values[PRODUCT_PARAMETER]}"
    op = resolution.operation
    parts = op.path.split("/") if op is not None else []
    if op is not None and op.method == "POST" and len(parts) == 4 and "{" not in op.path and op.path.endswith("-credit-transfers"):
        return f"{parts[2]}/{parts[3]}"
    return None


def product_not_offered(resolution: Resolution, not_offered) -> RequestProblem | None:
    """A31: a product of the interface the implementer's profile says is not offered is 403 PRODUCT_INVALID (the
    document's bulk table); a product the interface does not know stays 404 PRODUCT_UNKNOWN."""
    product = product_of(resolution) if not_offered else None
    if product is None or product not in not_offered:
        return None
    return RequestProblem(PRODUCT_NOT_OFFERED, "/path", f"payment product {product} is not offered by this "
                          "implementation (its profile's products-not-offered)")
