"""Reports every format test renders: one of each shape the formats must handle."""
from __future__ import annotations

from dataclasses import dataclass

from validator.findings import ERROR, WARNING, Finding, Report

TOOL_VERSION = "9.8.7-test"

# A message quoting a payload value with a bell, a newline, an ESC, a bidi override,
# XML specials, GitHub's escape character and property separators, and non-ASCII text.
NASTY = 'creditorName "Bl\x07å\nbær <&> \x1b[31mAS\u202e 100%: a,b" has a control character\r'


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    summary: str
    ref: str | None
    code: str | None
    status: int | None
    severity: str


CATALOGUE = {
    r.id: r
    for r in (
        Rule("amount-format", "AmountFormat", "Amounts are decimal strings with at most the currency's minor units",
             "§4.3.2", "FORMAT_ERROR", 400, ERROR),
        Rule("iban-checksum", "IbanChecksum", "IBANs pass the mod-97 check", "§4.2.1", "FORMAT_ERROR", 400, ERROR),
        Rule("remittance-length", "RemittanceLength", "Unstructured remittance is at most 140 characters",
             "§4.5", None, None, WARNING),
        Rule("json-syntax", "JsonSyntax", "The body is well-formed JSON", "§3.1", "FORMAT_ERROR", 400, ERROR),
        Rule("creditor-name", "CreditorName", "Creditor names hold printable characters only", "§4.4",
             "FORMAT_ERROR", 400, ERROR),
        Rule("response-status-enum", "ResponseStatusEnum", "transactionStatus is an ISO 20022 status", "§6.1",
             None, None, ERROR),
        Rule("never-fired", "NeverFired", "A rule no fixture breaks", "§9.9", "FORMAT_ERROR", 400, ERROR),
    )
}

UNKNOWN_RULE = "links-href-shape"  # not in CATALOGUE: formats must fall back


def make_reports() -> list[Report]:
    return [
        Report("examples/valid.json", "payment-initiation", []),
        Report("payments/bad.json", "payment-initiation", [
            Finding("amount-format", ERROR, "/instructedAmount/amount", "amount '12,5' is not a decimal string",
                    "FORMAT_ERROR", 400, "§4.3.2"),
            Finding("iban-checksum", ERROR, "/debtorAccount/iban", "IBAN NO9386011117948 fails the mod-97 check",
                    "FORMAT_ERROR", 400, "§4.2.1"),
        ]),
        Report("payments/warn.json", "payment-initiation", [
            Finding("remittance-length", WARNING, "/remittanceInformationUnstructured",
                    "remittance is 141 characters; at most 140 are kept", None, None, "§4.5"),
        ]),
        Report("broken.json", None, [
            Finding("json-syntax", ERROR, "", "Expecting ',' delimiter", "FORMAT_ERROR", 400, "§3.1",
                    line=3, column=17),
        ]),
        Report("links.json", "payment-initiation", [
            Finding(UNKNOWN_RULE, ERROR, "/_links/a~1b/href", "href is not a relative URI", "FORMAT_ERROR", 400),
            Finding(UNKNOWN_RULE, WARNING, "", "document has no _links.self"),
        ]),
        Report("dir with space/æøå,:%.json", "sandbox-psu", [
            Finding("creditor-name", ERROR, "/creditorName", NASTY, "FORMAT_ERROR", 400, "§4.4"),
            Finding("remittance-length", WARNING, "/remittanceInformationUnstructured",
                    "for <Ærlig & Redelig> 50% off,: now"),
        ]),
        Report("batch.jsonl:17", "payment-initiation", [
            Finding("iban-checksum", ERROR, "/creditorAccount/iban", "IBAN NO00 fails the mod-97 check",
                    "FORMAT_ERROR", 400),
            Finding("json-syntax", ERROR, "", "Expecting value", "FORMAT_ERROR", 400, line=1, column=5),
        ]),
        Report("-", "payment-initiation", [
            Finding("remittance-length", WARNING, "/remittanceInformationUnstructured", "too long"),
        ], candidates=("payment-initiation", "periodic-payment")),
        Report("response.json", "payment-status-response", [
            Finding("response-status-enum", ERROR, "/transactionStatus", "'DONE' is not an ISO 20022 status"),
        ]),
    ]
