"""The findings of the benchmark's invalid 10,000-entry bulk (1,000 errors of five rules), pinned: the speed work on
the invalid path (schema errors worded, findings placed in the text) must not change one of them."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from validator import Validator
from validator.positions import PositionIndex
from validator.spec import load_spec
from tool_modules import load_tool

SPEC = load_spec()
ENTRIES, ERRORS = 10_000, 1_000


def _payloads_tool():
    return load_tool("bench_payloads")


@pytest.fixture(scope="module")
def broken_bulk() -> dict:
    return _payloads_tool().Payloads(seed=22, spec=SPEC).broken_bulk(ENTRIES, ERRORS)


# What each of the generator's five breakers yields, in the order it applies them (entry 0, 10, 20, ...).
AMOUNT = "Resources and their fields › Amount"
EXPECTED = (
    ("amount-minor-units", "/instructedAmount/amount", AMOUNT, lambda value: "NOK allows at most 2 fraction digits, got 3"),
    ("bban-format", "/creditorAccount/bban", "Resources and their fields › Account reference",
     lambda value: "a Norwegian account number (BBAN) is exactly 11 digits: got 10 digits"),
    ("schema-length", "/creditorName", "Limits", lambda value: "71 characters; at most 70 allowed"),
    ("amount-grammar", "/instructedAmount/amount", AMOUNT, lambda value: f"{value!r} has a sign; amounts are written without one"),
    ("schema-enum", "/creditorAddress/country", "Resources and their fields › Code sets",
     lambda value: '"XX" is not in the country code set (249 values)'),
)


def _value_at(payload, pointer: str):
    for token in pointer.split("/")[1:]:
        payload = payload[int(token) if isinstance(payload, list) else token]
    return payload


@pytest.mark.parametrize("indent", [None, 1], ids=["compact", "indented"])
def test_the_invalid_bulk_reports_exactly_its_thousand_errors_in_text_order(broken_bulk, indent) -> None:
    text = json.dumps(broken_bulk, ensure_ascii=False, indent=indent)
    report = Validator(spec=SPEC, today=SPEC.example_today).validate_bytes(text.encode(), "bulk-payment")
    findings = report.findings
    assert len(findings) == ERRORS
    assert Counter(f.rule for f in findings) == {rule: ERRORS // 5 for rule, *_ in EXPECTED}
    step = ENTRIES // ERRORS
    for n, finding in enumerate(findings):
        rule, path, ref, message = EXPECTED[n % 5]
        pointer = f"/payments/{n * step}{path}"
        expected = {"rule": rule, "severity": "error", "pointer": pointer, "message": message(_value_at(broken_bulk, pointer)),
                    "code": "FORMAT_ERROR", "status": 400, "ref": ref}
        assert {k: v for k, v in finding.as_dict().items() if k not in ("line", "column")} == expected
    # Each finding's line and column are where its value starts, as a fresh index of the text finds it (one that
    # assumes nothing about the text), and the findings come in the order a reader meets them.
    reference = PositionIndex(text)
    decoder = json.JSONDecoder()
    for finding in findings[:: ERRORS // 50] + findings[-3:]:
        assert (finding.line, finding.column) == reference.position(finding.pointer)
        offset = reference.offset(finding.pointer)
        assert decoder.raw_decode(text, offset)[0] == _value_at(broken_bulk, finding.pointer)
    places = [(f.line, f.column) for f in findings]
    assert places == sorted(places) and len(set(places)) == len(places)


def test_the_sample_of_the_compact_bulk_is_where_it_was(broken_bulk) -> None:
    """Line and column pinned for a few findings of the compact text (the benchmark's form)."""
    text = json.dumps(broken_bulk, ensure_ascii=False)
    report = Validator(spec=SPEC, today=SPEC.example_today).validate_bytes(text.encode(), "bulk-payment")
    sample = [(f.rule, f.pointer, f.line, f.column) for f in report.findings[:5] + report.findings[-1:]]
    assert sample == [
        ("amount-minor-units", "/payments/0/instructedAmount/amount", 1, 226),
        ("bban-format", "/payments/10/creditorAccount/bban", 1, 4429),
        ("schema-length", "/payments/20/creditorName", 1, 8533),
        ("amount-grammar", "/payments/30/instructedAmount/amount", 1, 12674),
        ("schema-enum", "/payments/40/creditorAddress/country", 1, 16993),
        ("schema-enum", "/payments/9990/creditorAddress/country", 1, 4170613),
    ]
