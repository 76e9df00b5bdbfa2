"""Rules of the ``request`` kind (a whole HTTP request; checked in validator/request/checker.py) and the request-signing
rules of validator/signing (checked by ``verify_request``), registered so that ``rules``/``explain`` list them
and the catalogue tests run their examples.

Examples are *recipes* (``{"x-example": {...}}``, see ``validator.request.examples.materialize_example``): the envelope is
built from the spec's parameters for the named operation and signed when materialised, with the signing
reference's deterministic test-vector identity (derived from SHAKE256, nothing stored; its certificate is valid
2025-01-01..2030-01-01, around the spec's ``x-example-today``) and Date = 10:00 UTC on that day. ``set`` patches
the envelope before signing, ``after`` after signing (to show what a verifier must refuse).
"""
from __future__ import annotations

from ..findings import WARNING
from ..signing.rules import SIGNATURE_RULES
from . import Example, engine_rule

SEPA = "createSepaCreditTransfer"
BULK = "createBulkPayment"
PERIODIC = "createPeriodicPayment"
BASKET = "createSigningBasket"
CUSTOMERS = "listSandboxCustomers"
ACCOUNT_TX = "listSandboxAccountTransactions"
CARD_TX = "listSandboxCardTransactions"
CARD_TX_CREATE = "createSandboxCardTransactions"

REF_HEADERS = "Endpoints › Header parameters"
REF_PSU = "Authentication › PSU authentication"
REF_SIGNING = "Authentication › Request signing (all operations)"
VALID_NIN = "15038545660"  # birth number 15.03.85, individual number 454, control digits 60


def recipe(operation: str, pointer: str | None = None, **members) -> Example:
    """An Example of kind request built from the spec for ``operation`` (members: see materialize_example)."""
    spec = {"operation": operation}
    spec.update({k.replace("_", "-"): v for k, v in members.items()})
    return Example("request", payload={"x-example": spec}, pointer=pointer)


GOOD = recipe(SEPA)


def _rule(id: str, name: str, summary: str, *, ref: str, good: Example = GOOD, bad: Example, severity: str = "error",
          code: str | None = "FORMAT_ERROR", status: int | None = 400, assumptions=()) -> None:
    engine_rule(id, name=name, summary=summary, ref=ref, severity=severity, code=code, status=status,
                group="request", assumptions=assumptions, good=good, bad=bad, direction="request")


# ---------------------------------------------------------------- the request itself
_rule("request-malformed", "Request readable",
      "The request envelope or HTTP/1.1 text cannot be read: not an object with method, path, headers and body; "
      "a method that is not an HTTP token; a path that does not start with '/', carries white space, control "
      "characters or a fragment; a query string whose percent-encoded bytes are not UTF-8; a request line that is "
      "not 'METHOD target HTTP/1.1'; a Content-Length that disagrees with the body. Unknown envelope members are "
      "reported as a warning and ignored.",
      ref="Endpoints",
      bad=Example("request", payload={"method": "POST", "path": "v1/payments/sepa-credit-transfers", "headers": {}}, pointer="/path"))
_rule("header-malformed", "Header lines well formed",
      "A header name must be an HTTP token and a value must not contain control characters (CR, LF, NUL, ...; "
      "RFC 9110 §5.5); obsolete line folding is refused. Such a header cannot be forwarded or signed reliably.",
      ref=REF_HEADERS,
      bad=recipe(SEPA, "/headers/TPP-Session-ID", set=[["/headers/TPP-Session-ID", "session\u0001one"]]))
_rule("path-unknown", "Path of an operation",
      "Method and path are resolved against the spec's path templates (literal segments before templated ones, "
      "enumerated path parameters such as payment-service must be members of their set; an implementer profile "
      "may move operations: A1, A15). A path no operation has is an unknown resource: 404 RESOURCE_UNKNOWN (A7).",
      ref="Endpoints", code="RESOURCE_UNKNOWN", status=404, assumptions=["A7", "A1", "A15"],
      bad=recipe(SEPA, "/path", set=[["/path", "/v1/paymentz/sepa-credit-transfers"]]))
_rule("product-unknown", "Payment product offered",
      "A path that is an operation's path except for the payment product (sepa-credit-transfers, "
      "norwegian-domestic-credit-transfers) names a product the interface does not offer there: 404 "
      "PRODUCT_UNKNOWN (A7). So does a payment's read, status, cancellation or authorisation path whose "
      "payment-service and payment-product are not a pair a creation path offers (a single Norwegian domestic "
      "payment, a SEPA bulk).",
      ref="Endpoints", code="PRODUCT_UNKNOWN", status=404, assumptions=["A7"],
      bad=recipe(SEPA, "/path", set=[["/path", "/v1/payments/instant-sepa-credit-transfers"]]))
_rule("product-not-offered", "Payment product offered by this implementation",
      "A payment product of the interface that the implementer's profile lists under products-not-offered (e.g. "
      "periodic payments, A31): every operation of that product (its creation, and the payment-service / "
      "payment-product paths) answers 403 PRODUCT_INVALID, the bulk operation's documented 403. A product the "
      "interface does not know at all stays 404 PRODUCT_UNKNOWN. Never raised without such a profile.",
      ref="Errors", code="PRODUCT_INVALID", status=403, assumptions=["A31"],
      good=recipe(PERIODIC),
      bad=recipe(PERIODIC, "/path")._replace(options={"profile": {
          "products-not-offered": ["periodic-payments/norwegian-domestic-credit-transfers"]}}))
_rule("method-not-allowed", "Method of the operation",
      "The path is an operation's path but no operation there takes this method (methods are case-sensitive): "
      "405. The document's code set has no code of its own for this; BAD_REQUEST is answered (Berlin Group uses "
      "SERVICE_INVALID; a profile can set another code).",
      ref="Endpoints", code="BAD_REQUEST", status=405,
      bad=recipe(SEPA, "/method", set=[["/method", "PUT"]]))

# ---------------------------------------------------------------- headers, from the operation's parameters
_rule("header-required", "Required header present",
      "A header the operation's parameters mark required (the header table's R column) is absent: 400 "
      "HTTP_HEADER_REQUIRED (A7). Signature, TPP-Signature-Certificate and Digest are checked by the signature "
      "rules with the codes of A8.",
      ref=REF_HEADERS, code="HTTP_HEADER_REQUIRED", assumptions=["A7"],
      bad=recipe(SEPA, "/headers/TPP-Session-ID", set=[["/headers/TPP-Session-ID", None]]))
_rule("header-format", "Header value in its format",
      "A header value is checked against its parameter schema in the spec (format, enumeration, pattern, minimum "
      "length): PSU-ID and PSU-Device-ID are UUIDs, PSU-IP-Address IPv4 or IPv6, PSU-Context PRIVATE or CORPORATE, "
      "PSU-HTTP-Method an HTTP method, TPP-Redirect-URI an absolute URI, TPP-Redirect-Preferred true or false, "
      "X-PSU-IDENTITY 11 digits. Otherwise 400 FORMAT_ERROR with a descriptive text (A7, A16).",
      ref=REF_HEADERS, assumptions=["A7", "A16"],
      bad=recipe(SEPA, "/headers/PSU-ID", set=[["/headers/PSU-ID", "31125461118"]]))
_rule("header-recommended-format", "Header value in its recommended format",
      "X-Request-ID is required and non-empty; a value that is not a UUID is accepted but reported as a warning "
      "(A17).",
      ref=REF_HEADERS, severity=WARNING, assumptions=["A17"],
      bad=recipe(SEPA, "/headers/X-Request-ID", set=[["/headers/X-Request-ID", "req-2026-07-01-0001"]]))
_rule("psu-identity-invalid", "X-PSU-IDENTITY a valid national identity number",
      "X-PSU-IDENTITY carries a Norwegian national identity number, D-number or H-number whose two MOD11 control "
      "digits are right and whose date exists; synthetic test numbers (month + 80) are accepted (A16), unless the "
      "profile says synthetic-identity-numbers: refused. Otherwise 400 FORMAT_ERROR.",
      ref=REF_PSU, assumptions=["A16"],
      good=recipe(SEPA, set=[["/headers/X-PSU-IDENTITY", VALID_NIN]]),
      bad=recipe(SEPA, "/headers/X-PSU-IDENTITY", set=[["/headers/X-PSU-IDENTITY", VALID_NIN[:-1] + "1"]]))
_rule("accept-fix-unknown", "x-accept-fix names a published change",
      "x-accept-fix is a comma-separated list of published change names (amount-as-string, longer-name — also "
      "written longer-names —, cash-account-type-iso, cardaccount-switch-originalamount-and-transactionamount). An "
      "unknown name has no effect and is reported as a warning (A18).",
      ref="Versioning", severity=WARNING, assumptions=["A18"],
      good=recipe(SEPA, set=[["/headers/x-accept-fix", "amount-as-string, longer-names"]]),
      bad=recipe(SEPA, "/headers/x-accept-fix", set=[["/headers/x-accept-fix", "amount-as-string, shiny-new-thing"]]))
_rule("accept-fix-required", "x-accept-fix carries the names an operation needs",
      "On the signing basket operation x-accept-fix must contain amount-as-string (temporarily required until "
      "the string form is the default; the spec's x-required-on). Otherwise 400 FORMAT_ERROR (A18).",
      ref=REF_HEADERS, assumptions=["A18"],
      good=recipe(BASKET),
      bad=recipe(BASKET, "/headers/x-accept-fix", set=[["/headers/x-accept-fix", "longer-name"]]))
_rule("corporate-id-required", "Corporate PSU sends PSU-Corporate-ID",
      "A request with PSU-Context CORPORATE is made for a corporate PSU, which must also send PSU-Corporate-ID. "
      "A corporate request without it is 400 HTTP_HEADER_REQUIRED (A7).",
      ref=REF_PSU, code="HTTP_HEADER_REQUIRED", assumptions=["A7"],
      good=recipe(SEPA, set=[["/headers/PSU-Context", "CORPORATE"], ["/headers/PSU-Corporate-ID", "AGR-0042"]]),
      bad=recipe(SEPA, "/headers/PSU-Corporate-ID", set=[["/headers/PSU-Context", "CORPORATE"]]))
_rule("header-not-accepted", "Header accepted by the operation",
      "A header that is not a parameter of the operation (the header table's '-'), not in its x-headers, or "
      "marked accepted: false there (Content-Type on an operation without a body) is ignored by the "
      "service; reported as a warning. Date (signed by the signing profile), HTTP framing headers "
      "(Content-Length, Transfer-Encoding, Connection) and Content-Type on a JSON body (A33) are always accepted.",
      ref=REF_HEADERS, severity=WARNING,
      good=recipe(CARD_TX_CREATE, set=[["/headers/Content-Type", "application/json"]]),
      bad=recipe(CUSTOMERS, "/headers/Content-Type", set=[["/headers/Content-Type", "application/json"]]))
_rule("content-type-not-json", "Content-Type of a JSON body names JSON",
      "Content-Type is HTTP metadata of the body (RFC 9110 section 8.3), not an interface parameter: on an operation "
      "that takes a JSON body, application/json (or a +json type; parameters such as charset aside) is accepted "
      "silently, like Content-Length, and a body without Content-Type is accepted too. Another media type is "
      "reported as a warning: the service reads the body as JSON whatever it is labelled, though HTTP lets a "
      "server refuse a media type it does not take with 415 (A33).",
      ref=REF_HEADERS, severity=WARNING, assumptions=["A33"],
      good=recipe(SEPA, set=[["/headers/Content-Type", "application/json; charset=utf-8"]]),
      bad=recipe(SEPA, "/headers/Content-Type", set=[["/headers/Content-Type", "text/plain"]]))
_rule("redirect-target-unsafe", "TPP-Redirect-URI a safe redirect target",
      "The SCA page sends the PSU's browser, with psu-id, to TPP-Redirect-URI: it must be an absolute https URI "
      "with a host, or http to a loopback host (localhost, 127.0.0.0/8, [::1]) for a TPP testing on its own "
      "machine (x-redirect-target). javascript:, data:, vbscript:, file:, http to another host and URIs without a "
      "host are refused when the payment, basket or authorisation is created: 400 FORMAT_ERROR (A37).",
      ref=REF_HEADERS, assumptions=["A37"],
      good=recipe("startPaymentAuthorisation", set=[["/headers/TPP-Redirect-URI", "http://127.0.0.1:8000/callback"]]),
      bad=recipe(SEPA, "/headers/TPP-Redirect-URI", set=[["/headers/TPP-Redirect-URI", "javascript:alert(1)"]]))
_rule("header-duplicate", "Single-valued header once",
      "A header that takes one value occurs more than once; which one the service reads is undefined. List "
      "headers (Accept*, PSU-Accept*, Digest, x-accept-fix) may repeat. 400 FORMAT_ERROR. A profile states the "
      "choice per header (repeated-headers: {X-Request-ID: accepted, Accept-Language: refused}).",
      ref=REF_HEADERS,
      good=recipe(SEPA, set=[["/headers/Accept-Language", "nb"], ["/headers/accept-language", "en;q=0.5"]]),
      bad=recipe(SEPA, "/headers/TPP-Session-ID", set=[["/headers/tpp-session-id", "another-session"]]))

# ---------------------------------------------------------------- query parameters
_rule("query-unknown", "Query parameter of the operation",
      "A query parameter the operation does not define is ignored by the service; reported as a warning.",
      ref="Endpoints", severity=WARNING,
      good=recipe(SEPA, query={"allowLogicalDuplicate": "true"}),
      bad=recipe(SEPA, "/query/allowDuplicates", query={"allowDuplicates": "true"}))
_rule("query-duplicate", "Query parameter once",
      "A query parameter occurs more than once; each takes one value. 400 FORMAT_ERROR.",
      ref="Endpoints",
      good=recipe(SEPA, query={"allowLogicalDuplicate": "false"}),
      bad=recipe(SEPA, "/query/allowLogicalDuplicate", set=[["/path", "/v1/payments/sepa-credit-transfers?allowLogicalDuplicate=true&allowLogicalDuplicate=false"]]))
_rule("query-format", "Query value in its format",
      "A query value is checked against its parameter schema: allowLogicalDuplicate, withAccounts and "
      "withAgreements are true or false; fromDate and toDate ISO 8601 dates; offset an int32 >= 0; limit an int32 "
      ">= 1; bookingStatus booked, pending or both. Otherwise 400 FORMAT_ERROR (A22).",
      ref="Endpoints › 5. List sandbox account transactions", assumptions=["A22"],
      good=recipe(ACCOUNT_TX, query={"offset": "0", "limit": "50"}),
      bad=recipe(ACCOUNT_TX, "/query/limit", query={"limit": "0"}))
_rule("query-required", "Required query parameter present",
      "A query parameter the operation requires is absent (bookingStatus on the card transaction list): 400 "
      "QUERY_PARAMETER_REQUIRED (A22).",
      ref="Endpoints › 7. List sandbox card transactions", code="QUERY_PARAMETER_REQUIRED", assumptions=["A22"],
      good=recipe(CARD_TX),
      bad=recipe(CARD_TX, "/query/bookingStatus", query={"fromDate": "2026-06-01"}))
_rule("query-date-order", "fromDate not after toDate",
      "The window of a transaction list is fromDate to toDate; fromDate after toDate is 400 FORMAT_ERROR (A22).",
      ref="Endpoints › 5. List sandbox account transactions", assumptions=["A22"],
      good=recipe(ACCOUNT_TX, query={"fromDate": "2026-06-01", "toDate": "2026-06-30"}),
      bad=recipe(ACCOUNT_TX, "/query/fromDate", query={"fromDate": "2026-06-30", "toDate": "2026-06-01"}))

# ---------------------------------------------------------------- body
_rule("body-required", "Body present",
      "The operation requires a JSON body (its request schema) and the request has none: 400 FORMAT_ERROR. A body "
      "that is present is checked by every rule of the operation's body kind, its findings under /body.",
      ref="Endpoints",
      bad=recipe(SEPA, "/body", body=None))
_rule("body-not-accepted", "No body where the operation takes none",
      "A body sent to an operation that takes none (the GET sandbox lists) is ignored; reported as a warning.",
      ref="Endpoints", severity=WARNING,
      good=recipe(CUSTOMERS),
      bad=recipe(CUSTOMERS, "/body", body={"withAccounts": True}))

# ---------------------------------------------------------------- request signing (validator/signing, A8)
_SIGNED_BAD = {
    "signature-missing": recipe(SEPA, "/headers/Signature", after=[["/headers/Signature", None]]),
    "signature-malformed": recipe(SEPA, "/headers/Signature", after=[["/headers/Signature", 'keyId="SN=1,CA=CN=x", headers="date", headers="digest", signature="AAAA"']]),
    "signature-algorithm": recipe(SEPA, "/headers/Signature", after=[["/headers/Signature", "@algorithm:hmac-sha256"]]),
    "signature-headers-incomplete": recipe(SEPA, "/headers/Signature", signed_headers=["date", "digest", "psu-id", "tpp-redirect-uri"]),
    "signature-invalid": recipe(SEPA, "/headers/Signature", after=[["/headers/PSU-ID", "0d6c2f4e-3a1b-4c5d-8e9f-a0b1c2d3e4f5"]]),
    "signature-keyid-mismatch": recipe(SEPA, "/headers/Signature", after=[["/headers/Signature", "@keyid-serial:1234"]]),
    "signature-header-injection": recipe(SEPA, "/headers/TPP-Redirect-URI", after=[["/headers/TPP-Redirect-URI", "https://tpp.example.no/callback\nx-request-id: forged"]]),
    "signature-date-window": Example("request", payload={"x-example": {"operation": SEPA}}, pointer="/headers/Date", options={"now": "2026-07-01T12:00:00Z"}),
    "date-malformed": recipe(SEPA, "/headers/Date", after=[["/headers/Date", "2026-07-01 10:00:00"]]),
    "certificate-missing": recipe(SEPA, "/headers/TPP-Signature-Certificate", after=[["/headers/TPP-Signature-Certificate", None]]),
    "certificate-invalid": recipe(SEPA, "/headers/TPP-Signature-Certificate", after=[["/headers/TPP-Signature-Certificate", "not*base64!"]]),
    "certificate-key-weak": recipe(SEPA, "/headers/TPP-Signature-Certificate", after=[["/headers/TPP-Signature-Certificate", "@ec-certificate"]]),
    "certificate-expired": recipe(SEPA, "/headers/TPP-Signature-Certificate", identity="expired"),
    "certificate-not-yet-valid": recipe(SEPA, "/headers/TPP-Signature-Certificate", identity="not-yet-valid"),
    "digest-missing": recipe(SEPA, "/headers/Digest", after=[["/headers/Digest", None]]),
    "digest-malformed": recipe(SEPA, "/headers/Digest", after=[["/headers/Digest", "SHA-256"]]),
    "digest-algorithm": recipe(SEPA, "/headers/Digest", after=[["/headers/Digest", "MD5=HUXZLQLMuI/KZ5KDcJPcOA=="]]),
    "digest-mismatch": recipe(SEPA, "/headers/Digest", after=[["/body", '{"creditorName":"Mallory"}']]),
    "digest-unverifiable": recipe(SEPA, "/headers/Digest", body_as_value=True),
    "header-oversized": recipe(SEPA, "/headers/PSU-User-Agent", set=[["/headers/PSU-User-Agent", "A" * 9000]]),
}
_SIGNED_GOOD = {
    "signature-date-window": Example("request", payload={"x-example": {"operation": SEPA}}, options={"now": "2026-07-01T10:02:00Z"}),
    "signature-headers-incomplete": recipe(SEPA, signed_headers=["(request-target)", "date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"]),
}

_SIGNED_ASSUMPTIONS = {"header-oversized": ["A33"]}  # a length the document does not state

for _id, _r in SIGNATURE_RULES.items():
    engine_rule(_id, name=_r.name, summary=_r.summary, ref=_r.ref, severity=_r.severity, code=_r.code,
                status=_r.status, group="signature", assumptions=_SIGNED_ASSUMPTIONS.get(_id, ["A8"]),
                good=_SIGNED_GOOD.get(_id, GOOD),
                bad=_SIGNED_BAD[_id], direction="request")
