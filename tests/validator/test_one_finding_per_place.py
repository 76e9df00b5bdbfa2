"""One finding per pointer and rule: a `_links` entry is a Link twice over in the spec (by `additionalProperties` in
one `allOf` branch, by `properties` in the other), so both schema engines report its missing `verbs` twice; the
report says it once, in position order. Distinct rules at one pointer all stay."""
from __future__ import annotations

import json

import pytest

from validator import Validator
from validator.rules.examples import spec_example
from validator.schema import SchemaChecker
from validator.spec import load_spec

SPEC = load_spec()
VALIDATOR = Validator(spec=SPEC, today=SPEC.example_today)


def _response_without_verbs() -> dict:
    answer = spec_example(SPEC, "createSepaCreditTransfer 201 received")
    del answer["_links"]["self"]["verbs"]
    del answer["_links"]["status"]["verbs"]
    answer["_links"]["startAuthorisation"]["verbs"] = "POST"
    return answer


EXPECTED = [
    ("schema-required", "/_links/self/verbs", "required property 'verbs' is missing"),
    ("schema-required", "/_links/status/verbs", "required property 'verbs' is missing"),
    ("schema-type", "/_links/startAuthorisation/verbs", 'expected array, got string "POST"'),
]


@pytest.fixture(params=["compiled", "python"])
def engine(request, monkeypatch):
    """Both schema engines: the compiled one, and python-jsonschema (which decides whenever the compiled engine's
    errors cannot be resolved, e.g. under anyOf)."""
    if request.param == "python":
        monkeypatch.setattr(SchemaChecker, "_resolved", lambda self, payload, raw: None)
    return request.param


def test_a_link_without_verbs_is_reported_once_per_pointer_in_text_order(engine) -> None:
    text = json.dumps(_response_without_verbs(), indent=2)
    report = VALIDATOR.validate_bytes(text.encode(), "payment-response")
    assert [(f.rule, f.pointer, f.message) for f in report.findings] == EXPECTED
    lines = [f.line for f in report.findings]
    assert lines == sorted(lines) and all(lines)
    assert text.splitlines()[lines[0] - 1].strip().startswith('"self"')


def test_a_decoded_answer_too(engine) -> None:
    findings = VALIDATOR.validate(_response_without_verbs(), "payment-response").findings
    assert sorted((f.rule, f.pointer, f.message) for f in findings) == sorted(EXPECTED)


@pytest.mark.parametrize("member, value, rules", [
    ("amount", "0.000", ["amount-minor-units", "amount-positive"]),  # two semantic rules
    ("currency", "EURO", ["currency-product-mismatch", "schema-enum"]),  # a semantic rule and a schema rule
])
def test_distinct_rules_at_one_pointer_all_stay(member, value, rules) -> None:
    payment = spec_example(SPEC, "createSepaCreditTransfer request rentToBerlin")
    payment["instructedAmount"][member] = value
    found = [(f.rule, f.pointer) for f in VALIDATOR.validate(payment, "sepa-credit-transfer").findings]
    assert sorted(found) == [(rule, f"/instructedAmount/{member}") for rule in rules]


def test_a_required_property_missing_in_two_places_is_two_findings() -> None:
    answer = spec_example(SPEC, "createSepaCreditTransfer 201 received")
    for name in ("self", "status", "startAuthorisation"):
        del answer["_links"][name]["href"]
    findings = VALIDATOR.validate(answer, "payment-response").findings
    assert sorted(f.pointer for f in findings if f.rule == "schema-required") == [
        "/_links/self/href", "/_links/startAuthorisation/href", "/_links/status/href"]
