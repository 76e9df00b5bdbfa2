"""The ``request`` kind: parsing, operation resolution, header/query/body rules driven by the spec's parameters,
request signing, the envelope and .http forms, and robustness against garbage."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from cryptography.hazmat.primitives import serialization
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import validator
from validator import Validator
from validator.checks.identity import norwegian_identity_control_digits
from validator.context import Profile
from validator.engine import PayloadValidator
from validator.findings import Finding
from validator.request.build import build_request
from validator.request.message import HttpRequest
from validator.request.parse import parse_envelope, parse_http
from validator.request.resolve import resolve_operation
from validator.request.shape import REQUEST_KIND, looks_like_envelope, looks_like_http
from validator.request.sign import RequestError, keygen, sign_envelope
from validator.signing import SIGNATURE_RULES, generate_test_identity
from validator.spec import SpecError, as_tuple, load_spec

SPEC = load_spec()
NOW = dt.datetime(2026, 7, 1, 10, 0, tzinfo=dt.timezone.utc)
BAD_TEXT = "not valid ¿"  # no UUID, no enum member, not 11 digits, not an absolute URI, not an IP address
DOCUMENTED = sorted(op.operation_id for op in SPEC.operations.values() if op.header_table_column is not None)
A8 = "A8"


@pytest.fixture(scope="module")
def identity():
    """One RSA-2048 identity for the module (key generation is slow), valid around NOW."""
    key, cert = generate_test_identity(not_before=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
                                       not_after=dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key_pem, cert.public_bytes(serialization.Encoding.PEM)


def signed(identity, operation_id, *, set=(), query=None, after=(), paths=None, **kw) -> dict:
    env = build_request(SPEC, operation_id, query=query, paths=paths, **kw)
    for name, value in set:
        if value is None:
            env["headers"].pop(name, None)
        else:
            env["headers"][name] = value
    env = sign_envelope(env, *identity, now=NOW, spec=SPEC, paths=paths)
    for key, value in after:
        env[key] = value
    return env


def check(payload, **kw):
    return Validator(now=NOW, **kw).validate(payload, REQUEST_KIND)


def of(report, rule):
    return [f for f in report.findings if f.rule == rule]


def summary(report):
    return sorted((f.rule, f.severity, f.pointer, f.code, f.status) for f in report.findings)


def to_http(env: dict, newline: str = "\r\n") -> bytes:
    headers = env["headers"].items() if isinstance(env["headers"], dict) else env["headers"]
    head = [f"{env['method']} {env['path']} HTTP/1.1"] + [f"{n}: {v}" for n, v in headers]
    return (newline.join(head) + newline + newline).encode("utf-8") + env.get("body", "").encode("utf-8")


def header_params(op, *, required=None):
    return [p for p in op.header_parameters if required is None or p.required == required]


def is_a8(p):
    return A8 in as_tuple(p.raw.get("x-assumption"))


# ============================================================ parsing
def test_envelope_parses_into_request():
    env = {"method": "GET", "path": "/v1/sandbox/accounts/a%20b/transactions?fromDate=2026-06-01&x=%C3%A6+1&x=2",
           "headers": [["X-Request-ID", " 1 "], ["Accept", "a"], ["accept", "b"]], "body": None}
    parsed = parse_envelope(env)
    assert parsed.problems == []
    req = parsed.request
    assert isinstance(req, HttpRequest)
    assert req.target == env["path"] and req.path == "/v1/sandbox/accounts/a%20b/transactions"
    assert req.query == [("fromDate", "2026-06-01"), ("x", "æ 1"), ("x", "2")]
    assert req.headers == [("X-Request-ID", "1"), ("Accept", "a"), ("accept", "b")]
    assert req.body == b"" and req.body_is_exact and not req.has_body


def test_envelope_header_object_with_list_value_and_json_body():
    parsed = parse_envelope({"method": "POST", "path": "/x", "headers": {"Accept": ["a", "b"]}, "body": {"k": 1}})
    assert parsed.request.headers == [("Accept", "a"), ("Accept", "b")]
    assert parsed.request.body is None and not parsed.request.body_is_exact and parsed.request.body_value == {"k": 1}


def test_http_parses_crlf_and_lf_and_drops_editor_newline():
    body = b'{"a":1}'
    for nl in (b"\r\n", b"\n"):
        data = b"POST /v1/x?q=1 HTTP/1.1" + nl + b"Content-Length: 7" + nl + b"Digest: d" + nl + nl + body + b"\n"
        parsed = parse_http(data)
        assert parsed.problems == []
        req = parsed.request
        assert (req.method, req.target, req.query, req.version) == ("POST", "/v1/x?q=1", [("q", "1")], "HTTP/1.1")
        assert req.body == body and req.newline == nl.decode()


def test_http_absolute_form_and_missing_version():
    req = parse_http(b"GET https://bank.example/v1/sandbox/customers?withAccounts=true\r\nHost: bank.example\r\n\r\n").request
    assert req.target == "/v1/sandbox/customers?withAccounts=true" and req.version is None and req.body == b""


@pytest.mark.parametrize("env,pointer", [
    ([], ""),
    ({"method": "POST", "headers": {}}, "/path"),
    ({"method": "PO ST", "path": "/x", "headers": {}}, "/method"),
    ({"method": "POST", "path": "x/y", "headers": {}}, "/path"),
    ({"method": "POST", "path": "/x#frag", "headers": {}}, "/path"),
    ({"method": "POST", "path": "/x y", "headers": {}}, "/path"),
    ({"method": "GET", "path": "/x?a=%FF", "headers": {}}, "/query"),
    ({"method": "GET", "path": "/x", "headers": "Accept: a"}, "/headers"),
    ({"method": "GET", "path": "/x", "headers": [["a"]]}, "/headers/0"),
    ({"method": "GET", "path": "/x", "headers": {"A": 5}}, "/headers/A"),
])
def test_envelope_problems_are_request_malformed(env, pointer):
    report = check(env)
    assert pointer in [f.pointer for f in of(report, "request-malformed")], summary(report)
    assert not report.valid


@pytest.mark.parametrize("data,rule", [
    (b"", "request-malformed"),
    (b"POST\r\n\r\n", "request-malformed"),
    (b"POST /x HTTP/2\r\n\r\n", "request-malformed"),
    (b"POST /x HTTP/1.1\r\nContent-Length: 99\r\n\r\n{}", "request-malformed"),
    (b"POST /x HTTP/1.1\r\nBad Name: v\r\n\r\n", "header-malformed"),
    (b"POST /x HTTP/1.1\r\nNoColon\r\n\r\n", "header-malformed"),
    (b"POST /x HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "header-malformed"),
    (b"POST /x HTTP/1.1\r\nA: b\x00c\r\n\r\n", "header-malformed"),
])
def test_http_problems(data, rule):
    assert of(Validator(now=NOW).validate_bytes(data, REQUEST_KIND), rule)


def test_unknown_envelope_member_is_a_warning(identity):
    env = signed(identity, "listSandboxCustomers")
    env["extra"] = 1
    report = check(env)
    assert [(f.severity, f.pointer) for f in of(report, "request-malformed")] == [("warning", "/extra")]
    assert report.valid


# ============================================================ operation resolution
@pytest.mark.parametrize("op", sorted(SPEC.operations), ids=str)
def test_every_operation_path_resolves_to_its_operation(op):
    env = build_request(SPEC, op)
    path = env["path"].split("?")[0]
    assert resolve_operation(SPEC, SPEC.operation(op).method, path).operation.operation_id == op


@pytest.mark.parametrize("method,path,rule,code,status", [
    ("GET", "/v1/payments/sepa-credit-transfers/P1/status", None, None, None),
    ("GET", "/v1/payments/instant-transfers/P1/status", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/loans/sepa-credit-transfers/P1/status", "path-unknown", "RESOURCE_UNKNOWN", 404),
    ("POST", "/v1/payments/instant-sepa-credit-transfers", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("POST", "/v1/payments/norwegian-domestic-credit-transfers", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("POST", "/v1/periodic-payments/sepa-credit-transfers", "product-unknown", "PRODUCT_UNKNOWN", 404),  # A31
    ("POST", "/v1/standing-orders/norwegian-domestic-credit-transfers", "path-unknown", "RESOURCE_UNKNOWN", 404),
    ("POST", "/v1/payments/sepa-credit-transfers/", "path-unknown", "RESOURCE_UNKNOWN", 404),
    ("POST", "/v2/payments/sepa-credit-transfers", "path-unknown", "RESOURCE_UNKNOWN", 404),
    ("PUT", "/v1/payments/sepa-credit-transfers", "method-not-allowed", "BAD_REQUEST", 405),
    ("post", "/v1/payments/sepa-credit-transfers", "method-not-allowed", "BAD_REQUEST", 405),
    ("GET", "/v1/payments/sepa-credit-transfers//status", "path-unknown", "RESOURCE_UNKNOWN", 404),
    # a payment's own paths take only the service x product pairs the interface's creation paths offer (A7)
    ("GET", "/v1/payments/norwegian-domestic-credit-transfers/P1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/payments/norwegian-domestic-credit-transfers/P1/status", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("DELETE", "/v1/payments/norwegian-domestic-credit-transfers/P1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("POST", "/v1/payments/norwegian-domestic-credit-transfers/P1/authorisations", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/payments/norwegian-domestic-credit-transfers/P1/authorisations/A1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/bulk-payments/sepa-credit-transfers/P1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/bulk-payments/sepa-credit-transfers/P1/status", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("DELETE", "/v1/bulk-payments/sepa-credit-transfers/P1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("POST", "/v1/bulk-payments/sepa-credit-transfers/P1/authorisations", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/bulk-payments/sepa-credit-transfers/P1/authorisations/A1", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/periodic-payments/sepa-credit-transfers/P1/status", "product-unknown", "PRODUCT_UNKNOWN", 404),
    ("GET", "/v1/payments/sepa-credit-transfers/P1", None, None, None),
    ("DELETE", "/v1/bulk-payments/norwegian-domestic-credit-transfers/P1", None, None, None),
    ("POST", "/v1/periodic-payments/norwegian-domestic-credit-transfers/P1/authorisations", None, None, None),
    ("GET", "/v1/bulk-payments/norwegian-domestic-credit-transfers/P1/authorisations/A1", None, None, None),
])
def test_resolution_findings(method, path, rule, code, status):
    report = check({"method": method, "path": path, "headers": {}})
    resolution_rules = {"product-unknown", "path-unknown", "method-not-allowed"}
    found = [f for f in report.findings if f.rule in resolution_rules]
    if rule is None:
        assert found == []
    else:
        assert [(f.rule, f.code, f.status, f.pointer) for f in found] == [(rule, code, status, "/method" if status == 405 else "/path")]


def test_enum_path_parameters_resolve_with_values():
    res = resolve_operation(SPEC, "DELETE", "/v1/bulk-payments/norwegian-domestic-credit-transfers/enc%21%21QQ%3D%3D")
    assert res.operation.operation_id == "deletePayment"
    assert res.path_values == {"payment-service": "bulk-payments", "payment-product": "norwegian-domestic-credit-transfers", "paymentId": "enc!!QQ=="}


@pytest.mark.parametrize("service,product", [
    ("payments", "norwegian-domestic-credit-transfers"), ("bulk-payments", "sepa-credit-transfers"),
    ("periodic-payments", "sepa-credit-transfers")])
@pytest.mark.parametrize("method,tail", [("GET", ""), ("GET", "/status"), ("DELETE", ""), ("POST", "/authorisations"),
                                         ("GET", "/authorisations/A1")])
def test_a_pair_the_interface_does_not_offer_resolves_to_no_operation(service, product, method, tail):
    """Both values are members of their enumerations, but no creation path of the spec offers the pair: the read,
    status, cancellation and authorisation paths answer 404 PRODUCT_UNKNOWN as the creation does (A7), and no
    operation is resolved (so no answer is judged by another product's schema)."""
    path = f"/v1/{service}/{product}/P1{tail}"
    res = resolve_operation(SPEC, method, path)
    assert (res.operation, res.template, res.path_values) == (None, None, {})
    assert [(p.rule, p.pointer) for p in res.problems] == [("product-unknown", "/path")]
    message = res.problems[0].message
    assert f'"{product}" is not offered as {service}' in message
    offered = message.split("this interface offers ", 1)[1].split(", ")
    assert offered == ["bulk-payments/norwegian-domestic-credit-transfers", "payments/sepa-credit-transfers",
                       "periodic-payments/norwegian-domestic-credit-transfers"]


@pytest.mark.parametrize("service,product", [
    ("payments", "sepa-credit-transfers"), ("bulk-payments", "norwegian-domestic-credit-transfers"),
    ("periodic-payments", "norwegian-domestic-credit-transfers")])
@pytest.mark.parametrize("op", ["getPayment", "getPaymentStatus", "deletePayment", "startPaymentAuthorisation",
                                "getPaymentAuthorisationStatus"])
def test_the_pairs_the_interface_offers_resolve_with_their_values(service, product, op):
    operation = SPEC.operation(op)
    path = operation.path.replace("{payment-service}", service).replace("{payment-product}", product) \
        .replace("{paymentId}", "P1").replace("{authorisationId}", "A1")
    res = resolve_operation(SPEC, operation.method, path)
    assert res.operation is operation and res.problems == []
    assert (res.path_values["payment-service"], res.path_values["payment-product"]) == (service, product)


def test_the_offered_pairs_are_the_creation_paths_as_the_profile_leaves_them():
    """The pairs come from the creation paths: a profile serving the SEPA creation elsewhere (paths) moves the pair
    with it; without the periodic creation (absent) the periodic reads are an unknown product too."""
    read = "/v1/payments/sepa-credit-transfers/P1/status"
    moved = {"createSepaCreditTransfer": "/v1/payments/norwegian-domestic-credit-transfers"}
    assert resolve_operation(SPEC, "GET", read, paths=moved).problems[0].rule == "product-unknown"
    res = resolve_operation(SPEC, "GET", "/v1/payments/norwegian-domestic-credit-transfers/P1/status", paths=moved)
    assert res.operation.operation_id == "getPaymentStatus" and res.problems == []
    periodic = "/v1/periodic-payments/norwegian-domestic-credit-transfers/P1"
    assert resolve_operation(SPEC, "GET", periodic).operation.operation_id == "getPayment"
    absent = resolve_operation(SPEC, "GET", periodic, absent=frozenset({"createPeriodicPayment"}))
    assert absent.operation is None and [p.rule for p in absent.problems] == ["product-unknown"]
    assert absent.problems[0].message.endswith("this interface offers bulk-payments/norwegian-domestic-credit-transfers, "
                                               "payments/sepa-credit-transfers")


def test_literal_segments_win_over_templated_and_profile_paths_move_operations(identity):
    paths = {"createSandboxCustomer": "/v1/sandbox/{anything}", "createSigningBasket": "/v1/baskets"}
    assert resolve_operation(SPEC, "POST", "/v1/sandbox/initialize", paths=paths).operation.operation_id == "initializeSandbox"
    assert resolve_operation(SPEC, "POST", "/v1/sandbox/people", paths=paths).operation.operation_id == "createSandboxCustomer"
    assert resolve_operation(SPEC, "POST", "/v1/baskets", paths=paths).operation.operation_id == "createSigningBasket"
    assert resolve_operation(SPEC, "POST", "/v1/signing-baskets", paths=paths).operation is None
    # through the validator: the profile's paths are honoured
    profile = Profile.from_mapping({"paths": {"createSigningBasket": "/v1/baskets"}})
    env = signed(identity, "createSigningBasket", paths={"createSigningBasket": "/v1/baskets"})
    assert env["path"] == "/v1/baskets"
    assert check(env, profile=profile).findings == []
    assert of(check(env), "path-unknown")


# ============================================================ headers, driven by the spec's parameters
REQUIRED_HEADERS = [(op.operation_id, p) for op in SPEC.operations.values() for p in header_params(op, required=True)]
A8_ABSENT = {"signature": "signature-missing", "tpp-signature-certificate": "certificate-missing", "digest": "digest-missing"}


@pytest.mark.parametrize("op_id,param", REQUIRED_HEADERS, ids=[f"{o}-{p.name}" for o, p in REQUIRED_HEADERS])
def test_removing_a_required_header(identity, op_id, param):
    env = signed(identity, op_id)
    removed = {k: v for k, v in env["headers"].items() if k.lower() != param.key}
    assert len(removed) == len(env["headers"]) - 1
    report = check({**env, "headers": removed})
    at = [f for f in report.findings if f.pointer == f"/headers/{param.name}"]
    if is_a8(param):  # presence of the signing headers: A8's codes
        rule = SIGNATURE_RULES[A8_ABSENT[param.key]]
        assert (rule.id, rule.code, rule.status) in [(f.rule, f.code, f.status) for f in at], summary(report)
    else:
        assert [(f.rule, f.code, f.status) for f in at] == [("header-required", "HTTP_HEADER_REQUIRED", 400)], summary(report)
    assert not report.valid


def _constrained(p) -> bool:
    schema = SPEC.deref(p.schema)
    return any(k in schema for k in ("format", "enum", "pattern", "anyOf")) and not p.raw.get("x-code-set") and not is_a8(p)


FORMAT_HEADERS = [(op.operation_id, p) for op in SPEC.operations.values() for p in header_params(op) if _constrained(p)]


def test_format_headers_cover_the_documented_formats():
    names = {p.name for _o, p in FORMAT_HEADERS}
    assert {"PSU-ID", "PSU-IP-Address", "PSU-Device-ID", "PSU-Context", "PSU-HTTP-Method", "TPP-Redirect-URI",
            "TPP-Redirect-Preferred", "X-PSU-IDENTITY"} <= names


@pytest.mark.parametrize("op_id,param", FORMAT_HEADERS, ids=[f"{o}-{p.name}" for o, p in FORMAT_HEADERS])
def test_bad_header_value_is_format_error(identity, op_id, param):
    env = signed(identity, op_id, set=[(param.name, BAD_TEXT)])
    report = check(env)
    at = [(f.rule, f.code, f.status) for f in report.findings if f.pointer == f"/headers/{param.name}"]
    assert ("header-format", "FORMAT_ERROR", 400) in at, summary(report)


@pytest.mark.parametrize("op_id,param", FORMAT_HEADERS, ids=[f"{o}-{p.name}" for o, p in FORMAT_HEADERS])
def test_sample_header_value_passes(identity, op_id, param):
    from validator.request.build import sample_value

    value = "15038545660" if param.key == "x-psu-identity" else sample_value(SPEC, param.schema)
    report = check(signed(identity, op_id, set=[(param.name, value)]))
    assert not [f for f in report.findings if f.pointer == f"/headers/{param.name}"], summary(report)


@pytest.mark.parametrize("value,ok", [("192.0.2.17", True), ("2001:db8::17", True), ("192.0.2.256", False), ("localhost", False)])
def test_psu_ip_address(identity, value, ok):
    report = check(signed(identity, "createBulkPayment", set=[("PSU-IP-Address", value)]))
    assert (not of(report, "header-format")) == ok


def _synthetic_nin() -> str:
    for individual in range(100, 500):
        first9 = f"1583{85}{individual:03d}"  # month 03 + 80: a synthetic test number
        digits = norwegian_identity_control_digits(first9)
        if digits:
            return first9 + digits
    raise AssertionError("no synthetic number found")


@pytest.mark.parametrize("value,rule", [
    ("15038545660", None), (_synthetic_nin(), None), ("15038545661", "psu-identity-invalid"),
    ("31023012345", "psu-identity-invalid"), ("1503854566", "header-format"), ("1503854566x", "header-format"),
])
def test_x_psu_identity(identity, value, rule):
    report = check(signed(identity, "createSepaCreditTransfer", set=[("X-PSU-IDENTITY", value)]))
    rules = [f.rule for f in report.findings if f.pointer == "/headers/X-PSU-IDENTITY"]
    assert rules == ([rule] if rule else []), summary(report)
    if rule:
        assert report.findings[0].code == "FORMAT_ERROR" and not report.valid


def test_x_request_id_not_uuid_is_a_warning(identity):
    report = check(signed(identity, "listSandboxCustomers", set=[("X-Request-ID", "req-1")]))
    assert [(f.rule, f.severity) for f in report.findings] == [("header-recommended-format", "warning")]
    assert report.valid
    assert of(check(signed(identity, "listSandboxCustomers", set=[("X-Request-ID", "")])), "header-format")


@pytest.mark.parametrize("op_id,value,expected", [
    ("createSepaCreditTransfer", "amount-as-string", []),
    ("createSepaCreditTransfer", "longer-names, cash-account-type-iso", []),
    ("createSepaCreditTransfer", "amount-as-string,bogus", [("accept-fix-unknown", "warning")]),
    # RFC 9110 section 5.6.1: empty list elements are ignored
    ("createSepaCreditTransfer", "amount-as-string,,longer-name", []),
    ("createSepaCreditTransfer", ", amount-as-string, ,", []),
    ("createSigningBasket", "longer-name,, amount-as-string", []),
    ("createSigningBasket", "longer-name,,", [("accept-fix-required", "error")]),
    ("createSigningBasket", "longer-name, amount-as-string", []),
    ("createSigningBasket", "longer-name", [("accept-fix-required", "error")]),
    ("createSigningBasket", "amount-as-strings", [("accept-fix-required", "error"), ("accept-fix-unknown", "warning")]),
    ("createBulkPayment", "cardaccount-switch-originalamount-and-transactionamount", []),
])
def test_x_accept_fix(identity, op_id, value, expected):
    report = check(signed(identity, op_id, set=[("x-accept-fix", value)]))
    assert sorted((f.rule, f.severity) for f in report.findings) == sorted(expected), summary(report)


def test_repeated_x_accept_fix_is_one_list(identity):
    env = signed(identity, "createSigningBasket")
    env["headers"] = [[k, v] for k, v in env["headers"].items() if k != "x-accept-fix"] + [["x-accept-fix", "longer-name"], ["x-accept-fix", "amount-as-string"]]
    assert check(env).findings == []


CORPORATE_OPS = sorted(op.operation_id for op in SPEC.operations.values() if any(p.key == "psu-corporate-id" for p in op.header_parameters))


@pytest.mark.parametrize("op_id", CORPORATE_OPS)
def test_corporate_psu_without_corporate_id(identity, op_id):
    report = check(signed(identity, op_id, set=[("PSU-Context", "CORPORATE")]))
    found = of(report, "corporate-id-required")
    assert [(f.pointer, f.code, f.status) for f in found] == [("/headers/PSU-Corporate-ID", "HTTP_HEADER_REQUIRED", 400)]
    with_id = check(signed(identity, op_id, set=[("PSU-Context", "CORPORATE"), ("PSU-Corporate-ID", "AGR-1")]))
    assert not of(with_id, "corporate-id-required")
    assert not of(check(signed(identity, op_id, set=[("PSU-Context", "PRIVATE")])), "corporate-id-required")


@pytest.mark.parametrize("name, value", [("User-Agent", "curl/8.5.0"), ("Expect", "100-continue"), ("TE", "trailers"),
                                         ("Via", "1.1 proxy.tpp.example"), ("Connection", "keep-alive")])
def test_http_metadata_is_never_not_accepted(identity, name, value):
    # A33, x-http-metadata-headers: what an HTTP client or proxy sends by protocol is no interface parameter; an
    # undeclared header of the TPP's own choosing still is
    for op_id in ("createSepaCreditTransfer", "listSandboxCustomers"):
        assert check(signed(identity, op_id, set=[(name, value)])).findings == []
        report = check(signed(identity, op_id, set=[(name, value), ("X-Debug", "1")]))
        assert [(f.rule, f.pointer) for f in report.findings] == [("header-not-accepted", "/headers/X-Debug")]


def test_headers_not_accepted(identity):
    report = check(signed(identity, "createSepaCreditTransfer", set=[("Content-Type", "application/json"), ("X-Debug", "1"), ("Content-Length", "5")]))
    # Content-Type naming JSON on a JSON body is HTTP metadata (A33), like Content-Length
    assert sorted((f.rule, f.pointer, f.severity) for f in report.findings) == [
        ("header-not-accepted", "/headers/X-Debug", "warning")]
    report = check(signed(identity, "listSandboxCustomers", set=[("Content-Type", "application/json")]))
    assert [(f.rule, f.pointer) for f in report.findings] == [("header-not-accepted", "/headers/Content-Type")]
    # PSU-ID is a header of the payment operations but not of the sandbox lists
    report = check(signed(identity, "listSandboxCustomers", set=[("PSU-ID", "3d9a8e42-7b1c-4c5e-9f2a-6b8d0e1f2a3c")]))
    assert [(f.rule, f.pointer) for f in report.findings] == [("header-not-accepted", "/headers/PSU-ID")]
    # Content-Type is accepted on sandbox card transaction creation; Date (signed) everywhere
    report = check(signed(identity, "createSandboxCardTransactions", set=[("Content-Type", "application/json")]))
    assert report.findings == []


def test_duplicate_single_valued_header(identity):
    env = signed(identity, "createSepaCreditTransfer")
    pairs = list(env["headers"].items())
    env["headers"] = pairs + [("tpp-session-id", "other"), ("Accept-Language", "nb"), ("accept-language", "en")]
    report = check(env)
    assert [(f.rule, f.pointer, f.code) for f in report.findings] == [("header-duplicate", "/headers/TPP-Session-ID", "FORMAT_ERROR")]


# ============================================================ query parameters
QUERY_CASES = [
    ("createSepaCreditTransfer", {"allowLogicalDuplicate": "true"}, []),
    ("createSepaCreditTransfer", {"allowLogicalDuplicate": "yes"}, [("query-format", "/query/allowLogicalDuplicate")]),
    ("createBulkPayment", {"allowLogicalDuplicate": "True"}, [("query-format", "/query/allowLogicalDuplicate")]),
    ("listSandboxCustomers", {"withAccounts": "false", "withAgreements": "true"}, []),
    ("listSandboxCustomers", {"withAccounts": "1"}, [("query-format", "/query/withAccounts")]),
    ("listSandboxCustomers", {"withAgreements": ""}, [("query-format", "/query/withAgreements")]),
    ("listSandboxAccountTransactions", {"fromDate": "2026-06-01", "toDate": "2026-06-01", "offset": "0", "limit": "1"}, []),
    ("listSandboxAccountTransactions", {"fromDate": "2026-02-30"}, [("query-format", "/query/fromDate")]),
    ("listSandboxAccountTransactions", {"toDate": "01.06.2026"}, [("query-format", "/query/toDate")]),
    ("listSandboxAccountTransactions", {"offset": "-1"}, [("query-format", "/query/offset")]),
    ("listSandboxAccountTransactions", {"offset": "ten"}, [("query-format", "/query/offset")]),
    ("listSandboxAccountTransactions", {"limit": "0"}, [("query-format", "/query/limit")]),
    ("listSandboxAccountTransactions", {"limit": "2147483648"}, [("query-format", "/query/limit")]),
    ("listSandboxAccountTransactions", {"fromDate": "2026-06-30", "toDate": "2026-06-01"}, [("query-date-order", "/query/fromDate")]),
    ("listSandboxCardTransactions", {"bookingStatus": "both", "offset": "5", "limit": "10"}, []),
    ("listSandboxCardTransactions", {"bookingStatus": "all"}, [("query-format", "/query/bookingStatus")]),
    ("listSandboxCardTransactions", {"limit": "5"}, [("query-required", "/query/bookingStatus")]),
    ("listSandboxCardTransactions", {"bookingStatus": "booked", "fromDate": "2026-06-30", "toDate": "2026-06-29"}, [("query-date-order", "/query/fromDate")]),
    ("listSandboxCustomers", {"withAccount": "true"}, [("query-unknown", "/query/withAccount")]),
]


@pytest.mark.parametrize("op_id,query,expected", QUERY_CASES)
def test_query_rules(identity, op_id, query, expected):
    report = check(signed(identity, op_id, query=query))
    assert [(f.rule, f.pointer) for f in report.findings] == expected, summary(report)
    for f in report.findings:
        rule = {"query-format": ("FORMAT_ERROR", 400), "query-date-order": ("FORMAT_ERROR", 400),
                "query-required": ("QUERY_PARAMETER_REQUIRED", 400), "query-unknown": (None, None)}[f.rule]
        assert (f.code, f.status) == rule


def test_every_query_parameter_of_the_spec_is_checked(identity):
    """Each query parameter with a typed schema refuses a value of the wrong form (driven by the spec)."""
    for op in SPEC.operations.values():
        for p in op.query_parameters:
            required = {q.name: "booked" for q in op.query_parameters if q.required and q.name != p.name}
            report = check(signed(identity, op.operation_id, query={**required, p.name: BAD_TEXT}))
            assert [(f.rule, f.pointer) for f in report.findings] == [("query-format", f"/query/{p.name}")], (op.operation_id, p.name)


def test_duplicate_query_parameter_and_percent_decoding(identity):
    env = signed(identity, "createSepaCreditTransfer")
    env["path"] += "?allowLogicalDuplicate=true&allow%4CogicalDuplicate=false"
    env = sign_envelope(env, *identity, now=NOW, spec=SPEC)
    report = check(env)
    assert [(f.rule, f.pointer) for f in report.findings] == [("query-duplicate", "/query/allowLogicalDuplicate")]


# ============================================================ body
def test_body_findings_pass_through_with_body_prefix(identity):
    body = json.loads(build_request(SPEC, "createSepaCreditTransfer")["body"])
    del body["creditorName"]
    body["creditorAccount"]["iban"] = "NO9386011117948"
    report = check(signed(identity, "createSepaCreditTransfer", body=body))
    pointers = {(f.rule, f.pointer) for f in report.findings}
    assert ("schema-required", "/body/creditorName") in pointers
    assert any(r == "iban-invalid" and p == "/body/creditorAccount/iban" for r, p in pointers), pointers
    assert all(f.pointer.startswith("/body/") for f in report.findings)


def test_body_kind_semantic_rules_run(identity):
    body = json.loads(build_request(SPEC, "createBulkPayment")["body"])
    body["payments"][0]["remittanceInformationStructuredArray"][0]["reference"] = "1234567890127"
    report = check(signed(identity, "createBulkPayment", body=body))
    assert [(f.rule, f.pointer, f.code) for f in report.findings] == [
        ("kid-invalid", "/body/payments/0/remittanceInformationStructuredArray/0/reference", "KID_INVALID")]


def test_body_not_json_and_missing_and_unexpected(identity):
    report = check(signed(identity, "createSigningBasket", body='{"paymentIds": [1,]}'))
    assert [(f.rule, f.pointer) for f in report.findings] == [("json-syntax", "/body")]
    assert report.findings[0].line == 1
    report = check(signed(identity, "createSigningBasket", body=None))
    assert [(f.rule, f.pointer, f.code) for f in report.findings] == [("body-required", "/body", "FORMAT_ERROR")]
    report = check(signed(identity, "listSandboxCardTransactions", body="{}"))
    assert [(f.rule, f.pointer, f.severity) for f in report.findings] == [("body-not-accepted", "/body", "warning")]


def test_json_value_body_warns_that_digest_is_not_byte_exact(identity):
    env = signed(identity, "createSepaCreditTransfer")
    env["body"] = json.loads(env["body"])
    report = check(env)
    assert [(f.rule, f.severity, f.pointer) for f in report.findings] == [("digest-unverifiable", "warning", "/headers/Digest")]
    env["body"]["creditorName"] = 5
    assert ("schema-type", "/body/creditorName") in {(f.rule, f.pointer) for f in check(env).findings}


# ============================================================ the documented operations, signed
@pytest.mark.parametrize("op_id", DOCUMENTED)
def test_valid_signed_request_of_each_documented_operation(identity, op_id):
    env = signed(identity, op_id)
    report = check(env)
    assert report.kind == REQUEST_KIND
    assert report.findings == [], summary(report)
    http = Validator(now=NOW).validate_bytes(to_http(env), REQUEST_KIND)
    assert http.findings == [], summary(http)


def test_there_are_seven_documented_operations():
    assert len(DOCUMENTED) == 7


@pytest.mark.parametrize("change", ["none", "missing-header", "bad-query", "tampered-body", "bad-psu-id", "garbage-cert", "dup-signature"])
@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_http_and_envelope_give_the_same_findings(identity, change, newline):
    op_id = "createBulkPayment"
    env = signed(identity, op_id)
    if change == "missing-header":
        env["headers"].pop("TPP-Session-ID")
    elif change == "bad-query":
        env["path"] += "?allowLogicalDuplicate=maybe&zzz=1"
    elif change == "tampered-body":
        env["body"] = env["body"].replace("Kari", "Kåre")
    elif change == "bad-psu-id":
        env["headers"]["PSU-ID"] = "12345"
    elif change == "garbage-cert":
        env["headers"]["TPP-Signature-Certificate"] = "%%%"
    elif change == "dup-signature":
        env["headers"] = list(env["headers"].items()) + [("signature", 'keyId="x"')]
    from_env = check(env)
    from_http = Validator(now=NOW).validate_bytes(to_http(env, newline), REQUEST_KIND)
    assert summary(from_env) == summary(from_http)
    assert (change == "none") == from_env.valid


# ============================================================ signing and keys
def test_sign_envelope_keeps_the_form(identity):
    env = build_request(SPEC, "createSepaCreditTransfer")
    as_list = {**env, "headers": [[k, v] for k, v in env["headers"].items()]}
    signed_dict = sign_envelope(env, *identity, now=NOW, spec=SPEC)
    signed_list = sign_envelope(as_list, *identity, now=NOW, spec=SPEC)
    signed_http = sign_envelope(to_http(env), *identity, now=NOW, spec=SPEC)
    signed_json = sign_envelope(json.dumps(env).encode(), *identity, now=NOW, spec=SPEC)
    assert isinstance(signed_dict["headers"], dict) and isinstance(signed_list["headers"], list)
    assert env["headers"].get("Signature") is None  # the input is not changed
    assert isinstance(signed_http, bytes) and signed_http.startswith(b"POST /v1/payments/sepa-credit-transfers HTTP/1.1\r\n")
    assert json.loads(signed_json)["headers"]["Signature"] == signed_dict["headers"]["Signature"]
    assert signed_dict["headers"]["Date"] == "Wed, 01 Jul 2026 10:00:00 GMT"
    for result in (check(signed_dict), check(signed_list), Validator(now=NOW).validate_bytes(signed_http, REQUEST_KIND)):
        assert result.findings == [], summary(result)


def test_sign_envelope_adds_digest_only_where_the_operation_takes_it(identity):
    assert "Digest" in sign_envelope(build_request(SPEC, "createSandboxCardTransactions"), *identity, now=NOW, spec=SPEC)["headers"]
    assert "Digest" not in sign_envelope(build_request(SPEC, "listSandboxCustomers"), *identity, now=NOW, spec=SPEC)["headers"]


def test_sign_envelope_refuses_unparseable_requests(identity):
    with pytest.raises(RequestError):
        sign_envelope({"method": "POST", "path": "nope", "headers": {}}, *identity, now=NOW, spec=SPEC)
    with pytest.raises(RequestError):
        sign_envelope(b"\x00\x01", *identity, now=NOW, spec=SPEC)


def test_keygen_writes_a_working_identity(tmp_path):
    key_path, cert_path = keygen(tmp_path, organization_identifier="PSDNO-FSA-123456")
    assert key_path.stat().st_mode & 0o077 == 0
    assert b"BEGIN CERTIFICATE" in cert_path.read_bytes()
    from validator.signing.certificate import load_certificate

    assert "PSDNO-FSA-123456" in load_certificate(cert_path.read_bytes()).subject.rfc4514_string()
    now = dt.datetime.now(dt.timezone.utc)
    env = sign_envelope(build_request(SPEC, "listSandboxCustomers"), key_path.read_bytes(), cert_path.read_bytes(), now=now, spec=SPEC)
    assert Validator(now=now).validate(env, REQUEST_KIND).findings == []
    with pytest.raises(FileExistsError):
        keygen(tmp_path)


def test_clock(identity):
    env = signed(identity, "listSandboxCustomers")
    assert of(Validator(now=NOW + dt.timedelta(minutes=10)).validate(env, REQUEST_KIND), "signature-date-window")
    assert Validator(now=NOW + dt.timedelta(minutes=4)).validate(env, REQUEST_KIND).findings == []
    assert Validator(now="2026-07-01T10:01:00Z").validate(env, REQUEST_KIND).findings == []
    # only a day: no window, the certificate checked at the Date header's time
    assert Validator(today="2026-07-01").validate(env, REQUEST_KIND).findings == []
    # no clock at all: the real time (the request was signed for 2026-07-01)
    real = Validator().validate(env, REQUEST_KIND)
    assert all(f.rule in ("signature-date-window", "certificate-expired", "certificate-not-yet-valid") for f in real.findings)


def test_profile_overrides_signature_codes_and_severity(identity):
    env = signed(identity, "listSandboxCustomers")
    env["headers"].pop("Signature")
    profile = Profile.from_mapping({"rules": {"signature-missing": {"code": "FORMAT_ERROR", "status": 400},
                                              "header-not-accepted": {"severity": "off"}}})
    env["headers"]["X-Debug"] = "1"
    report = check(env, profile=profile)
    assert [(f.rule, f.code, f.status) for f in report.findings] == [("signature-missing", "FORMAT_ERROR", 400)]
    profile = Profile.from_mapping({"signature": {"algorithms": ["hs2019"]}})
    assert of(check(signed(identity, "listSandboxCustomers"), profile=profile), "signature-algorithm")


# ============================================================ engine integration
def test_kind_detection_and_entry_points(identity, tmp_path):
    env = signed(identity, "createSigningBasket")
    assert looks_like_envelope(env)
    v = Validator(now=NOW)
    assert v.validate(env).kind == REQUEST_KIND and v.validate(env).findings == []
    assert v.validate_bytes(json.dumps(env).encode()).kind == REQUEST_KIND
    assert v.validate_bytes(to_http(env)).findings == []
    path = tmp_path / "basket.http"
    path.write_bytes(to_http(env))
    [report] = v.validate_path(path)
    assert (report.kind, report.findings, report.source) == (REQUEST_KIND, [], str(path))
    json_path = tmp_path / "basket.json"
    json_path.write_text(json.dumps(env))
    assert v.validate_path(json_path)[0].kind == REQUEST_KIND
    # a body kind is still detected as before
    assert v.validate(json.loads(env["body"])).kind == "signing-basket"


def test_requests_are_routed_above_the_payload_engine(identity, tmp_path):
    """The payload engine knows no kind ``request``; the public entry points route requests, JSONL lines included."""
    env = signed(identity, "createSigningBasket")
    engine = PayloadValidator(now=NOW)
    with pytest.raises(SpecError, match="unknown kind 'request'"):
        engine.validate(env, REQUEST_KIND)
    assert engine.validate(env).kind != REQUEST_KIND
    lines = tmp_path / "mixed.jsonl"
    lines.write_text(json.dumps(env) + "\n" + env["body"] + "\n")
    assert [r.kind for r in validator.validate_file(lines)] == [REQUEST_KIND, "signing-basket"]
    assert validator.validate(env).kind == validator.validate_bytes(to_http(env)).kind == REQUEST_KIND

def test_duplicate_keys_in_a_json_envelope_are_reported(identity):
    env = signed(identity, "listSandboxCustomers")
    data = json.dumps(env)[:-1] + ', "method": "GET"}'
    report = Validator(now=NOW).validate_bytes(data.encode(), REQUEST_KIND)
    assert [f.rule for f in report.findings] == ["json-duplicate-key"]


# ============================================================ robustness: findings, never exceptions
def _assert_findings(report):
    assert all(isinstance(f, Finding) for f in report.findings)
    assert not any(f.rule == "internal-error" for f in report.findings), report.findings


VALIDATOR = Validator(now=NOW)
header_names = st.sampled_from([p.name for op in SPEC.operations.values() for p in op.header_parameters] + ["Date", "Content-Length", "X-Foo"]) | st.text(max_size=12)
header_values = (st.text(max_size=40) | st.sampled_from(["", "CORPORATE", "true", "SHA-256=", "=?utf-8?B?%%?=", "amount-as-string,"])
                 | st.integers(0, 20000).map(lambda n: "A" * n))
paths = st.sampled_from([op.path for op in SPEC.operations.values()] + ["/v1/payments/x", "/", "", "/v1/sandbox/customers?withAccounts=%FF"]) | st.text(max_size=30)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=10)
envelopes = st.fixed_dictionaries(
    {"method": st.sampled_from(["GET", "POST", "DELETE", "PUT", "post", ""]) | json_values, "path": paths | json_values,
     "headers": st.dictionaries(header_names, header_values | st.lists(header_values, max_size=3), max_size=8)
     | st.lists(st.tuples(header_names, header_values), max_size=8) | json_values},
    optional={"body": st.text(max_size=40) | json_values, "extra": json_values})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env=envelopes | json_values)
def test_garbage_envelopes_give_findings(env):
    _assert_findings(VALIDATOR.validate(env, REQUEST_KIND))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400) | st.builds(lambda m, p, hs, b: (f"{m} {p} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in hs) + "\r\n").encode("utf-8", "surrogatepass") + b,
                                               st.sampled_from(["GET", "POST", "X"]), paths, st.lists(st.tuples(header_names, header_values), max_size=6), st.binary(max_size=60)))
def test_garbage_http_bytes_give_findings(data):
    _assert_findings(VALIDATOR.validate_bytes(data, REQUEST_KIND))
    _assert_findings(VALIDATOR.validate_bytes(data))


@pytest.fixture(scope="module")
def valid_sepa(identity):
    return signed(identity, "createSepaCreditTransfer")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(extra=st.lists(st.tuples(header_names, header_values), max_size=6), replace=st.booleans())
def test_garbage_headers_on_a_signed_request(valid_sepa, extra, replace):
    pairs = list(valid_sepa["headers"].items())
    if replace:
        names = {n.lower() for n, _ in extra}
        pairs = [(n, v) for n, v in pairs if n.lower() not in names]
    _assert_findings(check({**valid_sepa, "headers": pairs + extra}))


@pytest.mark.parametrize("name,value,rule", [
    ("TPP-Session-ID", "abc\x07def", "header-malformed"),
    ("TPP-Signature-Certificate", "@@not base64@@", "certificate-invalid"),
    ("Signature", 'keyId="SN=1,CA=CN=x", algorithm="rsa-sha256", headers="date", headers="date", signature="AAAA"', "signature-malformed"),
    ("Signature", 'keyId="SN=1,CA=CN=x"', "signature-malformed"),
    ("Signature", "=?utf-8?B?not-base64?=", "signature-malformed"),
    ("Digest", "SHA-256=" + "A" * 50_000, "digest-malformed"),
])
def test_garbage_header_values_give_their_finding(valid_sepa, name, value, rule):
    pairs = [(n, v) for n, v in valid_sepa["headers"].items() if n != name] + [(name, value)]
    report = check({**valid_sepa, "headers": pairs})
    _assert_findings(report)
    assert of(report, rule), summary(report)
    assert not report.valid


def test_an_oversized_header_the_signature_does_not_need_is_a_warning(valid_sepa):
    """A33: no header length is documented; the value is not read further, the request stays valid."""
    pairs = list(valid_sepa["headers"].items()) + [("PSU-User-Agent", "A" * 100_000)]
    report = check({**valid_sepa, "headers": pairs})
    assert [(f.rule, f.severity) for f in report.findings] == [("header-oversized", "warning")], summary(report)
    assert report.valid


def test_content_type_of_a_json_body(valid_sepa):
    """A33: Content-Type naming JSON is accepted silently, another media type is a warning, none is accepted; on an
    operation without a body it is not accepted (a warning)."""
    def with_content_type(value):
        pairs = [(n, v) for n, v in valid_sepa["headers"].items()] + ([("Content-Type", value)] if value else [])
        return check({**valid_sepa, "headers": pairs})

    for value in ("application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.x+json", None):
        assert with_content_type(value).findings == [], (value, summary(with_content_type(value)))
    for value in ("text/plain", "application/x-www-form-urlencoded", "application/jsonx"):
        report = with_content_type(value)
        assert [(f.rule, f.severity) for f in report.findings] == [("content-type-not-json", "warning")], value
        assert report.valid


def test_duplicated_signing_headers_give_findings(valid_sepa):
    for name, rule in (("Signature", "signature-malformed"), ("TPP-Signature-Certificate", "certificate-invalid"), ("Date", "date-malformed")):
        pairs = list(valid_sepa["headers"].items()) + [(name.lower(), valid_sepa["headers"][name])]
        report = check({**valid_sepa, "headers": pairs})
        assert of(report, rule) and not report.valid


# ============================================================ every operation, signed from the spec
@pytest.mark.parametrize("op", sorted(SPEC.operations), ids=str)
def test_every_operation_built_and_signed_from_the_spec_is_clean(identity, op):
    """The lifecycle operations (A23-A32) included: what the spec documents, signed, has no finding."""
    report = check(signed(identity, op))
    assert report.findings == [], [(f.rule, f.pointer, f.message) for f in report.findings]


def test_a_request_line_is_looked_for_in_the_first_8_kib_only():
    line = b"POST /v1/payments/sepa-credit-transfers HTTP/1.1\r\n"
    assert looks_like_http(line) and looks_like_http(bytearray(b"\r\n" + line))
    assert looks_like_http(b"GET /" + b"a" * (8192 - 6) + b"\n")  # its "\n" is the 8,192nd byte
    assert not looks_like_http(b"GET /" + b"a" * (8192 - 5) + b"\n")  # one byte more
    assert not looks_like_http(b'{"method": "POST"}\n')
    assert not looks_like_envelope({"method": "POST", "path": "/v1/x"}) and looks_like_envelope({"method": "POST", "path": "/v1/x", "headers": {}})
