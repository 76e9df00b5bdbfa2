"""Fault switches: deliberately wrong variants of the sandbox that the conformance suites must catch.

Each switch is one realistic bug a bank could ship, named, documented with what it breaks, and consulted at
exactly one place in the sandbox (``where``). Switches that make the sandbox accept what the validator refuses
(``hides``) are consulted where findings become answers (:func:`conformance.sandbox.app.refusal`): they drop the
findings of the named rules, which is the only path by which a finding is not answered.

``obvalidate sandbox faults`` lists this registry; ``obvalidate sandbox serve --fault NAME`` turns switches on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Fault:
    name: str
    breaks: str          # what a conforming implementation does instead (decision or document section)
    bug: str             # what the faulty sandbox does
    where: str           # the one place that consults the switch
    hides: tuple[str, ...] = ()  # validator rule ids whose findings the switch drops
    # What the gate makes of the switch (issue 27, two tiers): None, it breaks the document (a failure); an A-number,
    # the decision of ours it departs from where the document leaves the point open (a difference from it, a failure
    # where a profile pins it); NOTE, an extension of the bank's (a difference naming no decision); ANY_READING, what
    # every reading accepts (no finding at all).
    decision: str | None = None


BASKET_OVER_LIMIT = "basket-over-limit"
BASKET_ACCEPTS_BULK = "basket-accepts-bulk"
MINOR_UNITS_IGNORED = "minor-units-ignored"
BASKET_BEST_CASE = "basket-best-case"
SIGNATURE_NOT_VERIFIED = "signature-not-verified"
DIGEST_NOT_CHECKED = "digest-not-checked"
LACK_OF_FUNDS_500 = "lack-of-funds-500"
PDNG_DELETION_ALLOWED = "pdng-deletion-allowed"
PAGINATION_OFF_BY_ONE = "pagination-off-by-one"
CREATED_200 = "created-200"
STATUS_MISSING = "transaction-status-missing"
PAST_EXECUTION_DATE = "past-execution-date-accepted"
FOREIGN_PAYMENT_READABLE = "foreign-payment-readable"
REQUEST_ID_REPLAY_DUPLICATES = "request-id-replay-duplicates"
WRITE_LOST = "write-lost-under-concurrency"
# Refusals of valid boundary values (issue 17, section 2): a gate whose fixtures sit on such a value would blame
# every rule it mutates for them; it must report the refusal once, as the valid request refused.
EMPTY_NAME_REFUSED = "empty-name-refused"
REQUEST_ID_NOT_UUID_REFUSED = "request-id-not-uuid-refused"
# Defects an implementation nobody here wrote showed the gate missing (issue 17, section 5).
REFUSAL_PATH_ELSEWHERE = "refusal-path-elsewhere"
DETAIL_OTHER_PAYMENT = "detail-other-payment"
DETAIL_AMOUNT_AS_SENT = "detail-amount-as-sent"
CANCELLATION_202_UNKNOWN_LINK = "cancellation-202-unknown-link"
UNKNOWN_ID_READABLE = "unknown-id-readable"
STATUS_LINK_UNRESOLVED = "status-link-unresolved"
SIGNED_HEADERS_PARTIAL = "signed-headers-partial"
# A fault of parts half checked (issue 27, section 3): the keyId's issuer compared, its serial not.
KEYID_SERIAL_NOT_CHECKED = "keyid-serial-not-checked"
# A refusal in a web framework's default error body (Express's, Prism's own): the gate reports the body once (A6),
# not once per rule whose refusal wears it.
ERROR_BODY_UNDOCUMENTED = "error-body-undocumented"
# An SCA that moves no payment reported as a success (issue 21, point 6).
SCA_SUCCESS_WITHOUT_EFFECT = "sca-success-without-effect"
# Other readings of points the document leaves open (issue 27): no defect, a difference from a decision of ours.
EMPTY_HEADER_ABSENT = "empty-header-absent"
UNLISTED_HEADERS_IGNORED = "unlisted-headers-ignored"
EXTRA_COLLECTION_READ = "extra-collection-read"
UNKNOWN_IDS_FIRST = "unknown-ids-first"
NOTE = "note"   # the decision field of a switch that departs from no decision: an extension the gate notes
ANY_READING = "any reading"   # ... of a switch every reading accepts: the gate finds nothing
# The header rules the two readings above concern, and the headers of the document's request signing, which it lists
# for every operation.
HEADER_FORMAT_RULES = ("header-format", "psu-identity-invalid")
SIGNING_HEADERS = frozenset({"x-request-id", "digest", "signature", "tpp-signature-certificate", "date"})

FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault(BASKET_OVER_LIMIT, "a signing basket holds at most 10 payments (Limits; 400 FORMAT_ERROR)",
          "an 11-payment basket is created", "app.refusal (finding filter)", hides=("basket-size",)),
    Fault(BASKET_ACCEPTS_BULK, "bulk and periodic payments cannot be in a basket (400 REFERENCE_MIX_INVALID)",
          "a basket with a bulk payment is created", "app.refusal (finding filter)",
          hides=("basket-reference-mix",)),
    Fault(MINOR_UNITS_IGNORED, "a request amount carries at most the currency's minor-unit digits (A9)",
          "100.001 EUR is accepted", "app.refusal (finding filter)", hides=("amount-minor-units",)),
    Fault(BASKET_BEST_CASE, "a basket's status is the worst case of its payments (A2)",
          "the basket reports the best case", "lifecycle.Lifecycle.basket_status"),
    Fault(SIGNATURE_NOT_VERIFIED, "a request whose Signature does not verify is 401 SIGNATURE_INVALID (A8)",
          "signatures are parsed but never verified", "app.refusal (finding filter)",
          hides=("signature-invalid", "signature-keyid-mismatch", "signature-headers-incomplete",
                 "signature-algorithm")),
    Fault(DIGEST_NOT_CHECKED, "a Digest not matching the body is 400 FORMAT_ERROR (A8)",
          "a body altered after signing is accepted", "app.refusal (finding filter)",
          hides=("digest-mismatch", "digest-missing", "digest-malformed", "digest-algorithm")),
    Fault(LACK_OF_FUNDS_500, "insufficient funds is 400 PAYMENT_FAILED, never 500 (A7, Errors 4)",
          "once a batch run has rejected a payment for lack of funds (RJCT, fundsAvailable false: a debit of the "
          "nearly empty account NO5297100512347), starting its authorisation again (POST .../authorisations) answers "
          "500 SYSTEM_ERROR", "app.refused_reply"),
    Fault(PDNG_DELETION_ALLOWED, "deleting a PDNG payment is 409 CONFLICT (A5, A27)",
          "a PDNG payment is cancelled with 204", "lifecycle.Lifecycle.cancel_payment"),
    Fault(PAGINATION_OFF_BY_ONE, "offset counts the transactions skipped before the limit (A22)",
          "one transaction too many is skipped", "domain.SandboxData.paginate"),
    Fault(CREATED_200, "a creation answers 201 (Endpoints; A15)", "creations answer 200",
          "app.created"),
    Fault(STATUS_MISSING, "the payment status response carries transactionStatus (A3)",
          "transactionStatus is left out of the status response", "lifecycle.Lifecycle.payment_status"),
    Fault(PAST_EXECUTION_DATE, "an execution date before today is 400 EXECUTION_DATE_INVALID (A7, A13)",
          "yesterday's execution date is accepted", "app.refusal (finding filter)",
          hides=("execution-date-past",)),
    Fault(FOREIGN_PAYMENT_READABLE, "another TPP's payment does not exist for a TPP: 404 RESOURCE_UNKNOWN (A28)",
          "any TPP reads any payment by id", "lifecycle.Lifecycle.find_payment"),
    Fault(REQUEST_ID_REPLAY_DUPLICATES, "a repeated X-Request-ID with the same request answers the first response (A29)",
          "the repeated request creates a second payment", "app._serve (X-Request-ID replay lookup)",
          decision="A29"),
    Fault(WRITE_LOST, "every 201 is stored exactly once, also under concurrent load",
          "the payment id is taken before the request is checked, so concurrent creations overwrite each other",
          "app.create_payment_endpoint"),
    Fault(EMPTY_HEADER_ABSENT, "an optional header sent with an empty value is refused, 400 FORMAT_ERROR (A41)",
          "an optional header sent empty (PSU-Corporate-ID: \"\") is read as absent", "app.check (other_readings)",
          decision="A41"),
    Fault(UNLISTED_HEADERS_IGNORED, "header formats are checked on every operation, those the header table does not "
          "list too (A42)", "an operation outside the document's header table (basket reads, deletion, "
          "authorisations, status reads) ignores the format of its optional headers", "app.check (other_readings)",
          decision="A42"),
    Fault(EXTRA_COLLECTION_READ, "a method the endpoint table does not list on a path is not an operation of the "
          "interface: 405 (RFC 9110), which the gate accepts with 404 and 501", "GET on the SEPA creation path "
          "answers 200 (an extra collection read, listing nothing)",
          "app.check (extra_collection_read)", decision=NOTE),
    Fault(UNKNOWN_IDS_FIRST, "the document states no order of checks: a request with a wrong value and an id nobody "
          "issued may be refused for either", "an id in the path that is not the TPP's is refused (404 "
          "RESOURCE_UNKNOWN) before the request's format is checked", "app.check (unknown_id_first)",
          decision=ANY_READING),
    Fault(EMPTY_NAME_REFUSED, "a payment whose creditorName is empty is valid: Max70Text has no minimum length",
          "a payment with an empty creditorName is refused with 400 FORMAT_ERROR", "app.check"),
    Fault(REQUEST_ID_NOT_UUID_REFUSED, "an X-Request-ID that is not a UUID is accepted with a warning (A17)",
          "an X-Request-ID that is not a UUID is refused with 400 FORMAT_ERROR", "app.check", decision="A17"),
    # issue 17, section 5
    Fault(REFUSAL_PATH_ELSEWHERE, "a refusal's tppMessage path points at what the request breaks (A6: path as the "
          "spec's examples, a pointer into the request)",
          "every refusal names /creditorName as its path (a copied default), whatever was wrong", "app.refusal"),
    Fault(DETAIL_OTHER_PAYMENT, "a payment's detail read is that payment's initiation body (A4)",
          "the detail read answers another stored payment of the same product and status",
          "app.get_payment"),
    Fault(DETAIL_AMOUNT_AS_SENT, "a read-back amount carries exactly its currency's minor-unit digits (A9)",
          "the detail read echoes the amount as sent (\"250\" for NOK)", "lifecycle.Lifecycle.payment_detail"),
    Fault(CANCELLATION_202_UNKNOWN_LINK, "deleting a RCVD payment is 204, or 202 with links to operations of the "
          "spec when the cancellation needs authorisation (A4, A27)",
          "every cancellation answers 202 with a startAuthorisation link to .../cancellation-authorisations, an "
          "operation the spec does not have", "app.delete_payment"),
    Fault(UNKNOWN_ID_READABLE, "an id nobody issued is 404 RESOURCE_UNKNOWN (A28, A7)",
          "a payment id nobody issued reads as the TPP's latest received payment", "lifecycle.Lifecycle.find_payment"),
    Fault(STATUS_LINK_UNRESOLVED, "every _links href leads to an operation of the spec with the resource's own ids "
          "(Endpoints; A23)", "a created payment's status link points at .../state, a path the spec does not have",
          "lifecycle.Lifecycle.creation_response"),
    Fault(SIGNED_HEADERS_PARTIAL, "each profile header present in a request is signed, else 401 SIGNATURE_INVALID "
          "(A8, Signing)", "only X-Request-ID, Date and Digest must be signed: PSU-ID and TPP-Redirect-URI left out "
          "of the signature are accepted", "app.refusal"),
    Fault(KEYID_SERIAL_NOT_CHECKED, "a keyId whose serial is not the certificate's is 401 SIGNATURE_INVALID (A8, "
          "Signing: keyId SN=<serial>,CA=<issuer DN>)", "only the keyId's issuer is compared with the certificate: "
          "another serial under the right issuer is accepted", "app.refusal"),
    Fault(ERROR_BODY_UNDOCUMENTED, "a refusal carries a documented error body, tppMessages or {id, system, status, "
          "code, message} (A6)", "every 4xx answers the web framework's default {\"error\": {\"message\": ...}}, "
          "which names no code", "app.serve"),
    Fault(SCA_SUCCESS_WITHOUT_EFFECT, "an authorisation completed after its payment left RCVD (cancelled, or authorised "
          "by another authorisation) fails: the redirect carries message, scaStatus failed, nothing moves (A35)",
          "the SCA form finalises the authorisation and redirects with psu-id although the payment stays CANC or "
          "was already PDNG", "lifecycle.Lifecycle.complete_sca"),
)}


def refused_boundary(faults: "ActiveFaults", headers: dict[str, str], body: bytes) -> str | None:
    """Why a boundary-value switch refuses a request the validator accepts (None: it does not): headers by their
    lower-case names, the body's bytes."""
    if REQUEST_ID_NOT_UUID_REFUSED in faults:
        import uuid

        try:
            uuid.UUID(headers.get("x-request-id", ""))
        except ValueError:
            return "X-Request-ID must be a UUID"
    if EMPTY_NAME_REFUSED in faults and b'"creditorName"' in body:
        import json

        try:
            value = json.loads(body)
        except ValueError:
            return None
        entries = [value] + (value.get("payments") if isinstance(value, dict) and isinstance(value.get("payments"), list) else [])
        if any(isinstance(e, dict) and e.get("creditorName") == "" for e in entries):
            return "creditorName must not be empty"
    return None


# A limit of one field moved by one (issue 27, section 4), named by a parameter, so not in FAULTS (whose switches
# the sweep and the gate's tests run one by one; tests/conformance/test_boundaries.py runs this one per field):
# limit-off-by-one:<operationId>:<pointer>:<keyword><+1|-1>, the pointer a JSON pointer into the body or
# /query/<parameter>, the keyword's value moved by one for that field of that operation alone -- maxLength+1 takes
# one character more, maxLength-1 refuses a value at the limit. The keywords are JSON Schema's limits of a length,
# a range and a number of items.
LIMIT_OFF_BY_ONE = "limit-off-by-one"
LIMIT_KEYWORDS = ("maxLength", "minLength", "maximum", "minimum", "maxItems", "minItems")
_MOVED_LIMIT = re.compile(rf"{LIMIT_OFF_BY_ONE}:(?P<operation>[A-Za-z0-9_]+):(?P<pointer>(/[^:]*)+):"
                          rf"(?P<keyword>{'|'.join(LIMIT_KEYWORDS)})(?P<by>[+-]1)")
PARAMETRISED = {LIMIT_OFF_BY_ONE: Fault(
    f"{LIMIT_OFF_BY_ONE}:<operationId>:<pointer>:<keyword>(+1|-1)",
    "each limit of a field is the spec's (Limits; 400 FORMAT_ERROR beyond it, the limit itself accepted)",
    "the named field of the named operation has its length, range or items limit moved by one (e.g. "
    f"{LIMIT_OFF_BY_ONE}:createSepaCreditTransfer:/creditorName:maxLength+1 takes 71 characters)",
    "app.check (finding filter and refusal)")}


@dataclass(frozen=True)
class MovedLimit:
    """One limit of one body field or query parameter of one operation moved by one (``limit-off-by-one:...``)."""

    operation: str
    pointer: str
    keyword: str
    by: int

    @classmethod
    def parse(cls, name: str) -> "MovedLimit | None":
        match = _MOVED_LIMIT.fullmatch(name)
        if match is None:
            return None
        return cls(match["operation"], match["pointer"], match["keyword"], int(match["by"]))

    @property
    def name(self) -> str:
        return f"{LIMIT_OFF_BY_ONE}:{self.operation}:{self.pointer}:{self.keyword}{self.by:+d}"

    def judged(self, limit: int | float, value: Any) -> tuple[bool, bool] | None:
        """(within the spec's limit, within the moved one) for the value at the field; None when the value is not
        one the keyword measures."""
        if self.keyword.endswith(("Length", "Items")):
            if not isinstance(value, (str, list)):
                return None
            measure = len(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            measure = value
        else:
            return None
        upper = self.keyword.startswith("max")
        return tuple((measure <= bound) if upper else (measure >= bound) for bound in (limit, limit + self.by))
def other_readings(findings: list, op, headers: dict[str, str], *, empty_absent: bool, unlisted_ignored: bool) -> list:
    """The findings without those another reading of an open point does not refuse (EMPTY_HEADER_ABSENT: an optional
    header sent empty is absent; UNLISTED_HEADERS_IGNORED: an operation outside the header table ignores its optional
    headers' formats); ``headers`` by their lower-case names."""
    if op is None or not (empty_absent or unlisted_ignored):
        return findings
    optional = {p.name.lower() for p in op.header_parameters if not p.required} - SIGNING_HEADERS

    def read_otherwise(f) -> bool:
        name = f.pointer[len("/headers/"):].lower() if f.pointer.startswith("/headers/") else None
        if f.rule not in HEADER_FORMAT_RULES or name not in optional:
            return False
        if empty_absent and not headers.get(name, "x").strip():
            return True
        return unlisted_ignored and op.raw.get("x-header-table-column") == "none"

    return [f for f in findings if not read_otherwise(f)]


class UnknownFault(ValueError):
    pass


@dataclass(frozen=True)
class ActiveFaults:
    """The switches a sandbox runs with (none: a faithful implementation)."""

    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, names: Iterable[str] = ()) -> "ActiveFaults":
        names = frozenset(names)
        unknown = sorted(n for n in names - FAULTS.keys() if MovedLimit.parse(n) is None)
        if unknown:
            raise UnknownFault(f"unknown fault switch {', '.join(unknown)} (known: {', '.join(FAULTS)}; and "
                               f"{PARAMETRISED[LIMIT_OFF_BY_ONE].name})")
        return cls(names)

    def __contains__(self, name: str) -> bool:
        return name in self.names

    @property
    def hidden_rules(self) -> frozenset[str]:
        return frozenset(rule for name in self.names if name in FAULTS for rule in FAULTS[name].hides)

    @property
    def moved_limits(self) -> tuple[MovedLimit, ...]:
        return tuple(moved for name in sorted(self.names) if (moved := MovedLimit.parse(name)) is not None)


NONE = ActiveFaults()
