"""Remittance: structured xor unstructured, one structured form, KID check digits (A11, A20)."""
from __future__ import annotations

from ..checks.kid import check_kid, kid_check_digit_mod10, kid_check_digit_mod11
from . import Example, Issue, rule

REF = "Resources and their fields › Structured remittance entry"
BULK = "createBulkPayment request invoicesWithKid"
SINGLE = "remittanceInformationStructured"
ARRAY = "remittanceInformationStructuredArray"
TEXT = "remittanceInformationUnstructured"


@rule(
    "remittance-exclusive",
    name="Structured or unstructured remittance, not both",
    ref=REF,
    targets=["BulkEntry", "SepaCreditTransferRequest"],
    assumptions=["A20"],
    good=Example("bulk-payment", base=BULK),
    bad=Example(
        "bulk-payment",
        base=BULK,
        patch=(("/payments/0/" + TEXT, "Faktura 88213"),),
        pointer="/payments/0/" + TEXT,
    ),
)
def remittance_exclusive(entry, ctx, at):
    """A payment carries either structured remittance (an OCR/KID reference) or an unstructured
    message, never both; and only one of the two structured forms (the single object or the list)."""
    if not isinstance(entry, dict):
        return
    if SINGLE in entry and ARRAY in entry:
        yield Issue("/" + SINGLE, f"{SINGLE} and {ARRAY} together: send the references once, in the list form")
    if TEXT in entry and (SINGLE in entry or ARRAY in entry):
        structured = ARRAY if ARRAY in entry else SINGLE
        yield Issue("/" + TEXT, f"both {structured} (KID/OCR) and {TEXT}: send a structured reference or a message, not both")


def _kid_problem(reference: str, algorithms: tuple[str, ...]) -> str | None:
    problems = check_kid(reference)
    if set(algorithms) >= {"mod10", "mod11"} or (problems and problems[0].kind != "kid-check-digit"):
        return problems[0].message if problems else None
    payload, last = reference[:-1], reference[-1:]
    compute = {"mod10": kid_check_digit_mod10, "mod11": kid_check_digit_mod11}
    expected = {alg: compute[alg](payload) for alg in algorithms}
    if last in expected.values():
        return None
    wanted = " or ".join(f"{alg.upper()} {digit!r}" for alg, digit in expected.items())
    return f"KID {reference}: check digit {last!r} is not the expected {wanted}"


@rule(
    "kid-invalid",
    name="KID has a valid MOD10 or MOD11 check digit",
    ref=REF,
    targets=["RemittanceStructured"],
    kinds=["bulk-payment", "periodic-payment"],
    code="KID_INVALID",
    status=400,
    assumptions=["A11"],
    good=Example("bulk-payment", base=BULK),
    bad=Example(
        "bulk-payment",
        base=BULK,
        patch=(("/payments/0/" + ARRAY + "/0/reference", "99754667145676221"),),
        pointer="/payments/0/" + ARRAY + "/0/reference",
    ),
)
def kid_invalid(entry, ctx, at):
    """In a Norwegian domestic payment a structured reference whose referenceType is absent or SCOR
    is a KID: 2 to 25 digits whose last digit is a valid MOD10 (Luhn) or MOD11 check digit (MOD11's
    check value 10 is written '-'). Other reference types, such as CINV with an issuer, are not KIDs.
    KID errors are answered 400 KID_INVALID (release 1.7.0)."""
    if not isinstance(entry, dict) or entry.get("referenceType") not in ctx.profile.kid_reference_types:
        return
    reference = entry.get("reference")
    if not isinstance(reference, str) or not reference:
        return  # the schema reports a missing or mistyped reference
    problem = _kid_problem(reference, ctx.profile.kid_algorithms)
    if problem:
        yield Issue("/reference", problem)
