"""The checks' quick value tests that the compiled rule pass calls instead of a rule (validator/compiled.py, written by
tools/compile_spec.py) say "passes" exactly when the check they stand for finds nothing: bban_passes is
``check_norwegian_bban(v) == ()``, iban_passes is ``check_iban(v) == ()`` (no error and no warning, so neither
iban-invalid nor iban-national-check finds anything), kid_passes is kid-invalid's own verdict under the profile's
algorithms. Good and bad examples of every kind of problem, and Hypothesis over generated digit strings."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from validator.checks import accounts
from validator.checks.accounts import bban_passes, check_iban, check_norwegian_bban, iban_passes, make_iban
from validator.checks.kid import check_kid, kid_check_digit_mod10, kid_check_digit_mod11, kid_passes
from validator.rules.remittance import _kid_problem

ALGORITHM_SETS = [("mod10", "mod11"), ("mod11", "mod10"), ("mod10",), ("mod11",), ()]


@pytest.mark.parametrize("value, passes", [
    ("12547919074", True),   # the spec's bulk example's creditor account
    ("86011117947", True),
    ("12547919075", False),  # MOD11 fails: a warning, still not "nothing"
    ("12547919070", False),
    ("1254791907", False),   # 10 digits
    ("125479190740", False),
    ("1503.39.82590", False),
    ("1254 7919074", False),
    ("１２５４７９１９０７４", False),  # full-width digits
    ("", False),
])
def test_bban_passes_examples(value, passes):
    assert bban_passes(value) is passes
    assert (check_norwegian_bban(value) == ()) is passes


@given(st.text(alphabet="0123456789", min_size=9, max_size=13))
def test_bban_passes_is_the_check_on_digit_strings(value):
    assert bban_passes(value) == (check_norwegian_bban(value) == ())


@given(st.text(alphabet="0123456789", min_size=10, max_size=10), st.text(alphabet="0123456789 .-x", max_size=2))
def test_bban_passes_is_the_check_on_near_accounts(first10, tail):
    digit = accounts.norwegian_bban_check_digit(first10)
    for value in (first10 + (digit or "0"), first10 + (digit or "0") + tail, first10[:5] + tail + first10[5:] + "0"):
        assert bban_passes(value) == (check_norwegian_bban(value) == ())


GOOD_IBANS = ["NO9386011117947", "DE89370400440532013000", "GB82WEST12345698765432", "BE71096123456769",
              "ES9121000418450200051332", "FR1420041010050500013M02606", "SE4550000000058398257466"]
BAD_IBANS = [
    "NO9386011117948",            # mod-97 fails
    "NO6686011117948",            # mod-97 holds, the Norwegian MOD11 fails: a warning
    "NO0086011117947", "NO0186011117947", "NO9986011117947",  # reserved check digits
    "NO938601111794",             # short
    "NO93860111179470",           # long
    "no9386011117947",            # lower case
    "NO93 8601 1117 947",         # paper form
    "XX9386011117947",            # not a registry country
    "NO93860111179A7",            # a letter where Norway has digits
    "DE89370400440532013001",
    "BE68539007547034",           # BE: mod-97 holds, Belgium's own check fails: a warning
    "BE71096123456768",           # BE: mod-97 fails
    "ES9121000418450200051331",
    "", "N", "NO", "NO93", "9386011117947NO", "ÑO9386011117947",
]


@pytest.mark.parametrize("value", GOOD_IBANS + BAD_IBANS)
def test_iban_passes_examples(value):
    assert iban_passes(value) == (check_iban(value) == ())
    assert iban_passes(value) == (value in GOOD_IBANS)


def test_iban_passes_before_any_check_filled_the_registry(monkeypatch):
    monkeypatch.setattr(accounts, "_REGISTRY", {})
    assert iban_passes("DE89370400440532013000") and not iban_passes("DE89370400440532013001")
    assert accounts._REGISTRY  # the check it fell back on filled it


@given(st.sampled_from(["NO", "DE", "BE", "ES", "FI", "DK", "SE", "PL", "NL", "GB", "FR"]), st.data())
def test_iban_passes_is_the_check_on_generated_ibans(country, data):
    entry = accounts._registry_entry(country)
    length, pattern = entry[0], entry[1]
    alphabet = "0123456789" if pattern is accounts._ALL_DIGITS else "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    bban = data.draw(st.text(alphabet=alphabet, min_size=length - 4, max_size=length - 4))
    iban = make_iban(country, bban)
    variants = [iban, iban.lower(), iban[:-1], iban + "0", iban[:2] + "00" + iban[4:], iban[:2] + "99" + iban[4:]]
    i = data.draw(st.integers(4, len(iban) - 1))
    variants.append(iban[:i] + data.draw(st.sampled_from("0123456789")) + iban[i + 1:])
    for value in variants:
        assert iban_passes(value) == (check_iban(value) == ()), value


@given(st.text(alphabet="0123456789", min_size=11, max_size=11), st.text(alphabet="0123456789", min_size=2, max_size=2))
def test_iban_passes_is_the_check_on_norwegian_digit_strings(bban, check):
    for value in ("NO" + check + bban, make_iban("NO", bban)):  # MOD11 right or wrong, mod-97 right or wrong
        assert iban_passes(value) == (check_iban(value) == ())


@given(st.text(alphabet="0123456789NODE -", max_size=24))
def test_iban_passes_is_the_check_on_any_text(value):
    assert iban_passes(value) == (check_iban(value) == ())


@pytest.mark.parametrize("value, passes", [
    ("1234567890123452", True),    # MOD10
    ("12345678903", True),         # MOD10 and MOD11 both 3
    ("99754667145676220", True), ("99754667145676223", True),  # MOD11 0; MOD10 3
    ("232", True), ("23-", True),  # MOD10; MOD11's check value 10
    ("12345678904", False), ("12345678901-", False),
    ("99754667145676221", False),  # neither check digit
    ("12A4", False), ("1-34", False), ("١٢٣", False), ("-", False), ("1", False), ("", False), ("1" * 26, False),
    ("00", True), ("0-", False),
])
def test_kid_passes_examples(value, passes):
    assert kid_passes(value, ("mod10", "mod11")) is passes
    assert (check_kid(value) == ()) is passes


@pytest.mark.parametrize("algorithms", ALGORITHM_SETS)
def test_kid_passes_under_each_profile(algorithms):
    for payload in ("1234567890", "000", "9", "123456789012345678901234"[:23]):
        for last in "0123456789-x":
            reference = payload + last
            assert kid_passes(reference, algorithms) == (_kid_problem(reference, algorithms) is None), (reference, algorithms)
    mod11_dash = next(p for p in (str(n) for n in range(10, 1000)) if kid_check_digit_mod11(p) == "-")
    assert kid_passes(mod11_dash + "-", algorithms) == ("mod11" in algorithms)


@given(st.text(alphabet="0123456789", min_size=1, max_size=26), st.sampled_from(ALGORITHM_SETS), st.data())
def test_kid_passes_is_the_rule_on_digit_strings(digits, algorithms, data):
    ends = [digits[-1], "-", kid_check_digit_mod10(digits), kid_check_digit_mod11(digits)]
    for reference in (digits, digits + data.draw(st.sampled_from(ends))):
        assert kid_passes(reference, algorithms) == (_kid_problem(reference, algorithms) is None), reference


@given(st.text(alphabet="0123456789- xA", min_size=1, max_size=27), st.sampled_from(ALGORITHM_SETS))
def test_kid_passes_is_the_rule_on_any_text(reference, algorithms):
    assert kid_passes(reference, algorithms) == (_kid_problem(reference, algorithms) is None)
