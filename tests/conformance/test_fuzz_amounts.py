"""The schema suite's amounts: Schemathesis draws AmountString as whole numbers (its custom format), and
``with_minor_units`` gives each its currency's minor-unit digits from the spec's ``x-minor-units`` (the currency is a
sibling property). Generated creations then carry amounts the validator accepts in every currency, non-integer
where the currency has minor units."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.gate.suites.fuzz import _SPECS, _schema, amount_objects, with_minor_units
from validator import Validator
from validator.spec import load_spec

SPEC = load_spec()
AMOUNT_RULES = {"amount-grammar", "amount-precision", "amount-minor-units", "amount-positive"}
CREATIONS = {"createSepaCreditTransfer": "sepa-credit-transfer"}  # the currency drawn from the whole set (bulk: slow to draw)


@pytest.mark.parametrize("currency", ["JPY", "BHD", "EUR", "NOK"])
@settings(max_examples=10, deadline=None)
@given(data=st.data(), whole=st.integers(1, 10**6))
def test_an_amount_gets_its_currencys_minor_units(currency, data, whole):
    body = {"instructedAmount": {"amount": str(whole), "currency": currency}}
    amount = with_minor_units(body, data)["instructedAmount"]["amount"]
    assert body["instructedAmount"]["amount"] == str(whole)  # a copy: the drawn body stays as drawn
    digits = SPEC.minor_units[currency]
    assert digits == {"JPY": 0, "BHD": 3, "EUR": 2, "NOK": 2}[currency]  # read from the spec, never a table here
    whole_part, _, fraction = amount.partition(".")
    assert whole_part == str(whole) and len(fraction) == digits and (not digits or fraction.strip("0"))


def _operation(operation_id: str):
    _SPECS[id(SPEC)] = SPEC
    schema = _schema(id(SPEC), "http://127.0.0.1:9")
    return next(r.ok() for r in schema.get_all_operations() if r.ok().definition.raw.get("operationId") == operation_id)


@pytest.mark.parametrize("operation_id", sorted(CREATIONS))
def test_generated_creations_carry_valid_amounts_with_minor_units(operation_id):
    from schemathesis import GenerationMode

    strategy = _operation(operation_id).as_strategy(generation_mode=GenerationMode.POSITIVE)
    validator = Validator(spec=SPEC)
    seen: list[tuple[str, str]] = []

    @settings(max_examples=12, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def draw(data):
        case = data.draw(strategy)
        case.body = with_minor_units(case.body, data)
        found = [f for f in validator.validate(case.body, CREATIONS[operation_id]).findings if f.rule in AMOUNT_RULES]
        assert not found, [(f.rule, f.pointer, f.message) for f in found]
        seen.extend((a["currency"], a["amount"]) for a in amount_objects(case.body))

    draw()
    with_units = [(c, a) for c, a in seen if SPEC.minor_units.get(c)]
    assert with_units and all(len(a.partition(".")[2]) <= SPEC.minor_units[c] for c, a in with_units)
    fractional = [(c, a) for c, a in with_units if a.partition(".")[2].strip("0")]
    exact = [(c, a) for c, a in fractional if len(a.partition(".")[2]) == SPEC.minor_units[c]]
    # the spec's own examples (14500.00, 49.5) are sent as written; every drawn amount has all its minor units
    assert len(exact) >= len(with_units) // 2, with_units
