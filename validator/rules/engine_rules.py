"""Rules the engine checks itself: JSON Schema keywords, input decoding, kind detection.

They have no rule function, but they are in the catalogue with the same metadata and examples as
every other rule, and the same tests run their examples.
"""
from __future__ import annotations

from ..findings import WARNING
from . import Example, REMOVE, engine_rule

SEPA = "createSepaCreditTransfer request rentToBerlin"
BULK = "createBulkPayment request invoicesWithKid"
GOOD_SEPA = Example("sepa-credit-transfer", base=SEPA)
SCHEMA_SUMMARY = "Checked by JSON Schema (Draft 2020-12) against the spec's component schema of the payload's kind."

# ---------------------------------------------------------------- JSON Schema keywords
engine_rule(
    "schema-required",
    name="Required property present",
    summary=f"A property the document marks R (required) is missing. {SCHEMA_SUMMARY}",
    ref="Resources and their fields",
    group="schema",
    good=GOOD_SEPA,
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorName", REMOVE),), pointer="/creditorName"),
)
engine_rule(
    "schema-type",
    name="Value has the documented JSON type",
    summary=f"A value has another JSON type than the document's (string, integer, boolean, object, array). {SCHEMA_SUMMARY}",
    ref="Resources and their fields",
    group="schema",
    good=GOOD_SEPA,
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorName", 4711),), pointer="/creditorName"),
)
engine_rule(
    "schema-length",
    name="Text within its length limits",
    summary=f"A text is longer than its maximum or shorter than its minimum (Limits: names <= 70, endToEndIdentification <= 35, remittance 1 to 140, ...). {SCHEMA_SUMMARY}",
    ref="Limits",
    group="schema",
    good=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorName", "A" * 70),)),
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorName", "A" * 71),), pointer="/creditorName"),
)
engine_rule(
    "schema-enum",
    name="Value from its code set",
    summary=f"A code is not a member of its code set (currencies, countries, purpose codes, statuses, message codes, ...). {SCHEMA_SUMMARY}",
    ref="Resources and their fields › Code sets",
    group="schema",
    good=GOOD_SEPA,
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/creditorAddress/country", "XX"),), pointer="/creditorAddress/country"),
)
engine_rule(
    "schema-format",
    name="Value in its format",
    summary=f"A date, UUID, URI or IP address is not well formed (ISO 8601 dates are YYYY-MM-DD and real days). {SCHEMA_SUMMARY}",
    ref="Resources and their fields",
    group="schema",
    good=GOOD_SEPA,
    bad=Example("sepa-credit-transfer", base=SEPA, patch=(("/requestedExecutionDate", "2026-02-30"),), pointer="/requestedExecutionDate"),
)
engine_rule(
    "schema-items",
    name="Array within its size limits",
    summary=f"An array has fewer or more items than allowed, or repeats an item where items must be unique. {SCHEMA_SUMMARY}",
    ref="Errors › Message code set (tppMessages code, SEPA credit transfer and bulk payment responses)",
    group="schema",
    code=None,
    status=None,
    direction="response",
    good=Example("tpp-messages-error", payload={"tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR"}]}),
    bad=Example("tpp-messages-error", payload={"tppMessages": []}, pointer="/tppMessages"),
)
engine_rule(
    "schema-range",
    name="Number within its range",
    summary=f"A number is outside its range: int32 sandbox amounts, offset >= 0, limit >= 1. {SCHEMA_SUMMARY}",
    ref="Resources and their fields › Sandbox card transaction (input)",
    group="schema",
    good=Example("card-transactions", base="createSandboxCardTransactions request groceriesAndHotel"),
    bad=Example(
        "card-transactions",
        base="createSandboxCardTransactions request groceriesAndHotel",
        patch=(("/0/transactionAmount/amount", 2**31),),
        pointer="/0/transactionAmount/amount",
    ),
)

# ---------------------------------------------------------------- decoding the input
DECODING_REF = "What the service does"
GOOD_BYTES = Example("signing-basket", raw=b'{"paymentIds": ["enc!!UEFZLTAwMQ=="]}')


def _decoding(rule_id: str, name: str, summary: str, raw: bytes, options: dict | None = None, pointer: str = "") -> None:
    engine_rule(
        rule_id,
        name=name,
        summary=summary,
        ref=DECODING_REF,
        group="input",
        good=GOOD_BYTES,
        bad=Example("signing-basket", raw=raw, pointer=pointer, options=options),
    )


_decoding("json-syntax", "Well-formed JSON", "The body is not well-formed JSON (RFC 8259); the finding gives line and column.", b'{"paymentIds": ["a",]}')
_decoding(
    "json-duplicate-key",
    "No duplicate object keys",
    "An object repeats a key. Parsers disagree on which value wins, so a signed body could mean two things: refused.",
    b'{"paymentIds": ["a"], "paymentIds": ["b"]}',
)
_decoding(
    "json-non-finite",
    "Numbers are finite",
    "NaN, Infinity or a number beyond the IEEE 754 double range is not JSON and cannot be represented by every parser.",
    b'{"paymentIds": ["a"], "n": NaN}',
    pointer="/n",
)
_decoding(
    "json-encoding",
    "UTF-8 without BOM",
    "JSON exchanged between systems is UTF-8 without a byte order mark (RFC 8259 §8.1); invalid UTF-8 or another encoding is refused.",
    b'\xef\xbb\xbf{"paymentIds": ["a"]}',
)
_decoding("json-empty", "Body present", "The input is empty or only white space.", b"  \n")
_decoding(
    "json-too-deep",
    "Nesting within limits",
    "The JSON nests deeper than the limit (default 512 levels); no payload of this interface nests more than a few levels.",
    b"[" * 600 + b"]" * 600,
)
_decoding(
    "json-too-large",
    "Size within limits",
    "The input is larger than the configured limit (default 50 MB, --max-bytes).",
    b'{"paymentIds": ["enc!!UEFZLTAwMQ=="]}',
    options={"max_bytes": 16},
)
_decoding(
    "json-binary",
    "Text, not binary data",
    "The input is binary data (NUL bytes, a compressed or image file), not JSON text.",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",
)

# ---------------------------------------------------------------- kind detection
engine_rule(
    "kind-ambiguous",
    name="Payload kind is unambiguous",
    summary="Without --kind, the kind is detected from the payload's shape (validator/detect.py); when several kinds fit, or none fits exactly and the closest is a guess, the candidates or the runner-up are named and the first is used (pass --kind to choose).",
    ref="Resources and their fields",
    group="input",
    severity=WARNING,
    code=None,
    status=None,
    good=Example(None, base=SEPA),
    bad=Example(None, payload={"transactionStatus": "RCVD"}, pointer=""),
)
engine_rule(
    "kind-undetected",
    name="Payload kind recognisable",
    summary="Without --kind, the kind is detected from the payload's shape; a payload that resembles no kind needs --kind.",
    ref="Resources and their fields",
    group="input",
    code=None,
    status=None,
    good=Example(None, base=BULK),
    bad=Example(None, payload=42, pointer=""),
)
