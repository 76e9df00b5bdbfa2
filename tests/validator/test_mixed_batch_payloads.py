"""The mixed SEPA batch of the benchmarks (tools/bench_payloads.py, issue 22): distinct lines, every third broken,
the five defect classes in turn, each broken line exactly the one error its class is about (kind detected)."""
from __future__ import annotations

from tool_modules import load_tool
from validator import Validator
from validator.spec import load_spec

_payloads = load_tool("bench_payloads")
Payloads, encoded = _payloads.Payloads, _payloads.encoded

SPEC = load_spec()
EXPECTED_ERRORS = {
    "amount-minor-units": ["amount-minor-units"],
    "iban-check-digits": ["iban-invalid"],
    "creditorName-missing": ["schema-required"],
    "currency-code": ["schema-enum"],
    "execution-date-past": ["execution-date-past"],
}


def test_every_third_line_is_broken_in_the_five_classes_in_turn():
    today = SPEC.example_today
    validator = Validator(spec=SPEC, today=today)
    lines = list(Payloads(seed=3, spec=SPEC).mixed_sepa(30, today))
    assert len({encoded(payload) for _defect, payload in lines}) == len(lines)  # distinct
    assert [defect for defect, _payload in lines[2::3]] == list(Payloads.SEPA_DEFECTS) * 2
    assert all(defect is None for n, (defect, _p) in enumerate(lines) if n % 3 != 2)
    for defect, payload in lines:
        report = validator.validate_bytes(encoded(payload))
        assert report.kind == "sepa-credit-transfer"
        assert [f.rule for f in report.errors] == EXPECTED_ERRORS.get(defect, []), (defect, report.findings)
