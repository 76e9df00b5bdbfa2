import pytest
from hypothesis import given, strategies as st

from validator.checks import ERROR, Problem
from validator.checks.kid import (
    KID_CHECK_DIGIT, KID_FORMAT, KID_LENGTH, KID_TYPE, check_kid,
    kid_check_digit_mod10, kid_check_digit_mod11,
)

payloads = st.text(alphabet="0123456789", min_size=1, max_size=24)


def mod11_reference(payload: str) -> str:
    weights = [2, 3, 4, 5, 6, 7]
    total = sum(int(d) * weights[i % 6] for i, d in enumerate(reversed(payload)))
    r = total % 11
    return "0" if r == 0 else "-" if r == 1 else str(11 - r)


def luhn_reference(payload: str) -> str:
    total = 0
    for i, d in enumerate(reversed(payload)):
        v = int(d) * (2 if i % 2 == 0 else 1)
        total += v - 9 if v > 9 else v
    return str((10 - total % 10) % 10)


@pytest.mark.parametrize("kid", ["18", "1234567890123452", "00000000000000000000000000"[:25]])
def test_known_good_mod10(kid):
    assert check_kid(kid) == ()


def test_known_values():
    assert kid_check_digit_mod10("7992739871") == "3"  # the classic Luhn example
    assert kid_check_digit_mod11("12345") == "5"  # 5*2+4*3+3*4+2*5+1*6 = 50, 50 % 11 = 6
    assert kid_check_digit_mod11("0") == "0"


def test_vendor_sample_kid_fails_both():
    problems = check_kid("99754667145676221")
    assert [p.kind for p in problems] == [KID_CHECK_DIGIT]
    assert problems[0].severity == ERROR
    assert "MOD10" in problems[0].message and "MOD11" in problems[0].message


def test_mod11_dash_kid_passes():
    payload = "1236"  # 6*2+3*3+2*4+1*5 = 34, 34 % 11 = 1 -> check 10 -> '-'
    assert kid_check_digit_mod11(payload) == "-"
    assert check_kid(payload + "-") == ()


def test_dash_when_mod11_is_a_digit_fails():
    problems = check_kid("12345-")
    assert problems[0].kind == KID_CHECK_DIGIT
    assert "MOD11 check digit is 5" in problems[0].message


@pytest.mark.parametrize("value, kind, fragment", [
    ("12 34", KID_FORMAT, "a space at position 3"),
    ("12A4", KID_FORMAT, "'A' at position 3"),
    ("1-34", KID_FORMAT, "'-' at position 2"),
    ("١٢٣", KID_FORMAT, "digits only"),  # Arabic-Indic digits are not KID digits
    ("-", KID_FORMAT, "digits only"),
    ("1", KID_LENGTH, "has 1"),
    ("", KID_LENGTH, "empty"),
    ("1" * 26, KID_LENGTH, "has 26"),
    (12345, KID_TYPE, "int"),
    (None, KID_TYPE, "NoneType"),
])
def test_bad_kids(value, kind, fragment):
    problems = check_kid(value)
    assert len(problems) == 1 and isinstance(problems[0], Problem)
    assert problems[0].kind == kind
    assert fragment in problems[0].message


@given(payloads)
def test_helpers_match_reference(payload):
    assert kid_check_digit_mod10(payload) == luhn_reference(payload)
    assert kid_check_digit_mod11(payload) == mod11_reference(payload)


@given(payloads)
def test_payload_plus_check_digit_validates(payload):
    assert check_kid(payload + kid_check_digit_mod10(payload)) == ()
    assert check_kid(payload + kid_check_digit_mod11(payload)) == ()


@given(payloads, st.data())
def test_single_digit_change_is_caught_mod10(payload, data):
    kid = payload + kid_check_digit_mod10(payload)
    i = data.draw(st.integers(0, len(kid) - 1))
    new = data.draw(st.sampled_from([d for d in "0123456789" if d != kid[i]]))
    changed = kid[:i] + new + kid[i + 1:]
    # MOD10 catches every single-digit change; a change may still happen to satisfy
    # MOD11, which the KID rule accepts by design.
    body, last = changed[:-1], changed[-1]
    assert kid_check_digit_mod10(body) != last
    assert (check_kid(changed) == ()) == (kid_check_digit_mod11(body) == last)


@given(payloads, st.data())
def test_single_digit_change_is_caught_mod11(payload, data):
    kid = payload + kid_check_digit_mod11(payload)
    digits = [i for i, c in enumerate(kid) if c != "-"]
    i = data.draw(st.sampled_from(digits))
    new = data.draw(st.sampled_from([d for d in "0123456789" if d != kid[i]]))
    changed = kid[:i] + new + kid[i + 1:]
    body, last = changed[:-1], changed[-1]
    assert kid_check_digit_mod11(body) != last
    assert (check_kid(changed) == ()) == (kid_check_digit_mod10(body) == last)


@pytest.mark.parametrize("bad", ["", "12a", None, 5])
def test_helpers_reject_non_digits(bad):
    with pytest.raises(ValueError):
        kid_check_digit_mod10(bad)
    with pytest.raises(ValueError):
        kid_check_digit_mod11(bad)
