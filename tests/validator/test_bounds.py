"""Time and memory stay bounded by the input's size (issue 8): asserted on counts and structure,
never on timings."""
from __future__ import annotations

import json

from validator import locate
from validator import Validator
from validator.engine import FINDINGS_LIMITED
from validator.rules import accounts as account_rules
from validator.rules import amounts as amount_rules
from validator.rules.examples import spec_example
from validator.schema import _all_distinct, checker_for, short_value
from validator.spec import load_spec

SPEC = load_spec()
VALIDATOR = Validator(today=SPEC.example_today)


def test_unique_items_never_reach_the_compiled_engine():
    # jsonschema-rs compares NaN pairwise under uniqueItems (30,000 NaN ids: seconds); hashing is linear.
    checker = checker_for(SPEC, "SigningBasketRequest")
    assert "uniqueItems" not in json.dumps(checker._checked)
    assert checker._unique  # ... and the checker tests it itself
    assert not checker.is_valid({"paymentIds": ["a", "a"]})
    assert checker.is_valid({"paymentIds": ["a", "b"]})
    assert not _all_distinct([1, 1.0]) and _all_distinct([True, 1]) and _all_distinct([[1, 2], [2, 1]])
    assert not _all_distinct([{"a": 1, "b": [2]}, {"b": [2], "a": 1}])
    report = VALIDATOR.validate_bytes(b'{"paymentIds": [' + b",".join([b"NaN"] * 3000) + b"]}", "signing-basket")
    decoding = [f for f in report.findings if f.rule == "json-non-finite"]  # the loader's own, capped at 100
    assert len(report.findings) == VALIDATOR.max_findings + len(decoding) + 1
    assert [f.rule for f in report.findings].count(FINDINGS_LIMITED) == 1


def test_schema_findings_are_capped_and_the_rest_counted():
    validator = Validator(today=SPEC.example_today, max_findings=50)
    report = validator.validate(list(range(5000)), "card-transactions")
    assert len(report.findings) == 51
    last = _limited(report)
    assert (last.severity, last.pointer) == ("error", "")
    assert last.message.startswith("4,950 more findings not listed (4,950 of them errors)")


def test_rule_findings_are_capped_and_counted_not_built():
    bulk = spec_example(SPEC, "createBulkPayment request invoicesWithKid")
    bulk["payments"] = [dict(bulk["payments"][0], creditorNaem=f"n{i}") for i in range(300)]
    report = Validator(today=SPEC.example_today, max_findings=10).validate(bulk, "bulk-payment")
    assert len(report.findings) == 11
    assert _limited(report).severity == "warning"  # only warnings were left out: the verdict stands
    assert report.valid
    assert _limited(report).message.startswith("290 more findings not listed (0 of them errors)")


def _limited(report):
    (found,) = [f for f in report.findings if f.rule == FINDINGS_LIMITED]
    return found


def test_messages_cost_the_same_for_huge_and_deep_values():
    deep: list = []
    for i in range(100_000):  # repr() of it would raise RecursionError, and cost its size
        deep = [deep, i]
    assert len(short_value(deep)) <= 60
    assert short_value(10**5000) == "a very long integer"
    # the compiled engine's own messages never quote the instance (they would cost size x depth)
    checker = checker_for(SPEC, SPEC.kind("card-transactions").schema_name)
    errors = list(checker._fast.iter_errors([[list(range(1000))]]))
    assert errors and all("999" not in e.message for e in errors)


def test_caches_hold_no_input_values_beyond_a_bound():
    long_iban = "DE" + "1" * 5000
    before = account_rules.check_iban.cache_info().currsize
    VALIDATOR.validate({"creditorAccount": {"iban": long_iban}}, "sepa-credit-transfer")
    assert account_rules.check_iban.cache_info().currsize == before  # a long value is checked, not kept
    assert account_rules.check_iban.cache_info().maxsize <= 256
    assert amount_rules._split_cached.cache_info().maxsize <= 256
    escaped = len(locate._ESCAPED)
    for i in range(200):  # map keys come from the input: escaping them must not be remembered
        VALIDATOR.validate({"transactionStatus": "RCVD", "paymentId": "p", "_links": {f"key{i}": {"href": "https://x.example/"}}}, "payment-response")
    assert len(locate._ESCAPED) == escaped
