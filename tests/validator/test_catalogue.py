"""Every rule of the catalogue: its bad example is rejected by that rule (right code, status and
pointer), its good example is accepted. The catalogue and these tests come from one registry."""
from __future__ import annotations

import pytest

from validator.rules import catalogue
from validator.rule_examples import run_example
from validator.spec import load_spec

SPEC = load_spec()
RULES = sorted(catalogue().values(), key=lambda r: r.id)


def test_every_rule_has_good_and_bad_examples():
    missing = [r.id for r in RULES if r.good is None or r.bad is None]
    assert not missing, f"rules without a good and a bad example: {missing}"


def test_every_rule_is_documented():
    for r in RULES:
        assert r.name and len(r.summary) > 30, r.id
        assert r.ref, r.id
        assert r.severity in ("error", "warning"), r.id


def test_rule_ids_are_stable_kebab_case():
    import re

    for r in RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.id), r.id


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_bad_example_is_rejected_by_its_rule(rule):
    report = run_example(rule, rule.bad, SPEC)
    own = [f for f in report.findings if f.rule == rule.id]
    assert own, f"{rule.id}: bad example gave {[(f.rule, f.pointer, f.message) for f in report.findings]}"
    finding = own[0]
    assert finding.severity == rule.severity
    if rule.bad.pointer is not None:
        assert rule.bad.pointer in {f.pointer for f in own}, [f.pointer for f in own]
    expects_answer = rule.severity == "error" and rule.code is not None and (rule.bad.kind is None or _is_request(rule.bad.kind))
    if expects_answer:
        assert (finding.code, finding.status) == (rule.code, rule.status)
    else:
        assert (finding.code, finding.status) == (None, None)
    if rule.severity == "error":
        assert not report.valid


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_good_example_is_accepted(rule):
    report = run_example(rule, rule.good, SPEC)
    assert report.findings == [], [(f.rule, f.pointer, f.message) for f in report.findings]
    assert report.valid


def _is_request(kind: str) -> bool:
    return kind == "request" or SPEC.kind(kind).is_request


def test_every_schema_keyword_in_the_spec_has_a_rule():
    """The schema engine maps keywords to rules; none the spec uses may fall through. Keywords of a
    schema that carries x-rule are exempt: that schema's semantic rule words its findings."""
    from validator.schema import KEYWORD_RULES

    used: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if not node.get("x-rule"):
                used.update(k for k in node if k in VALIDATION_KEYWORDS)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(SPEC.schemas)
    assert used <= set(KEYWORD_RULES), used - set(KEYWORD_RULES)
    known = set(catalogue())
    assert set(KEYWORD_RULES.values()) <= known


VALIDATION_KEYWORDS = {
    "type", "enum", "const", "required", "maxLength", "minLength", "pattern", "format", "minItems", "maxItems",
    "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "maxProperties",
    "minProperties", "dependentRequired", "not", "if", "contains",
}


def test_profile_can_switch_a_rule_off_and_promote_a_warning():
    from validator.context import Profile
    from validator import Validator
    from validator.rule_examples import materialize

    rule = catalogue()["bban-check-digit"]
    payload = materialize(rule.bad, SPEC)
    promoted = Validator(profile=Profile.from_mapping({"rules": {"bban-check-digit": {"severity": "error", "code": "FORMAT_ERROR", "status": 422}}}), today=SPEC.example_today)
    finding = next(f for f in promoted.validate(payload, "bulk-payment").findings if f.rule == "bban-check-digit")
    assert (finding.severity, finding.code, finding.status) == ("error", "FORMAT_ERROR", 422)
    silenced = Validator(profile=Profile.from_mapping({"rules": {"bban-check-digit": {"severity": "off"}}}), today=SPEC.example_today)
    assert not silenced.validate(payload, "bulk-payment").findings


def test_profile_exact_amount_digits():
    from validator.context import Profile
    from validator import Validator
    from validator.rules.examples import spec_example

    payload = spec_example(SPEC, "createSepaCreditTransfer request minimal")  # "49.5" EUR
    assert Validator(today=SPEC.example_today).validate(payload, "sepa-credit-transfer").valid
    strict = Validator(profile=Profile.from_mapping({"amount-digits": "exact"}), today=SPEC.example_today)
    findings = strict.validate(payload, "sepa-credit-transfer").findings
    assert [f.rule for f in findings] == ["amount-minor-units"]
    assert "exactly 2" in findings[0].message


def test_profile_rejects_unknown_keys_and_rules():
    from validator.context import ConfigError, Profile

    with pytest.raises(ConfigError):
        Profile.from_mapping({"rulez": {}})
    with pytest.raises(ConfigError):
        Profile.from_mapping({"rules": {"no-such-rule": {"severity": "off"}}})


def test_every_rule_names_a_section_of_the_document():
    from document import load_document

    document = load_document()
    unknown = {r.id: r.ref for r in RULES if not document.has(r.ref)}
    assert not unknown, unknown
