import uuid

import pytest
from hypothesis import given, strategies as st
from stdnum.no import fodselsnummer

from validator.checks import ERROR
from validator.checks.identity import (
    NIN_CHECK_DIGIT, NIN_DATE, NIN_FORMAT, NIN_TYPE, check_norwegian_identity_number,
    identity_number_kind, is_uuid, norwegian_identity_control_digits,
)


def make(ddmmyy: str, individual: str) -> str:
    first9 = ddmmyy + individual
    control = norwegian_identity_control_digits(first9)
    assert control is not None, first9
    return first9 + control


def kinds(problems):
    return [p.kind for p in problems]


@pytest.mark.parametrize("number", [
    "15108695088",  # python-stdnum's documented example
    "13039319955", "12085592767",  # EVRY sandbox default private customers
])
def test_known_birth_numbers(number):
    assert check_norwegian_identity_number(number) == ()
    assert fodselsnummer.is_valid(number)


def find(ddmmyy: str) -> str:
    for individual in range(1000):
        first9 = ddmmyy + f"{individual:03d}"
        control = norwegian_identity_control_digits(first9)
        if control is not None and (
            individual < 500 or (ddmmyy[4:] < "40" and individual >= 500)
        ):
            return first9 + control
    raise AssertionError(ddmmyy)


def test_d_number():
    number = find("550586")  # born 15.05.1986, day + 40
    assert check_norwegian_identity_number(number) == ()
    assert identity_number_kind(number) == "D-number"
    assert fodselsnummer.is_valid(number)


def test_h_number():
    number = find("154586")  # month + 40
    assert check_norwegian_identity_number(number) == ()
    assert identity_number_kind(number) == "H-number"
    assert fodselsnummer.is_valid(number)


def test_synthetic_tenor_numbers():
    number = find("158586")  # month + 80
    assert check_norwegian_identity_number(number) == ()
    assert identity_number_kind(number) == "synthetic test birth number"
    assert not fodselsnummer.is_valid(number)  # python-stdnum does not know them
    d_number = find("558586")
    assert check_norwegian_identity_number(d_number) == ()
    assert identity_number_kind(d_number) == "synthetic test D-number"


def test_leap_day_depends_on_century():
    assert check_norwegian_identity_number(make("290200", "500")) == ()  # 2000: leap year
    problems = check_norwegian_identity_number(make("290200", "100"))  # 1900: not leap
    assert kinds(problems) == [NIN_DATE]
    assert check_norwegian_identity_number(make("298200", "600")) == ()  # synthetic, 2000


@pytest.mark.parametrize("ddmmyy", ["320186", "001086", "151386", "150086", "159386", "720186"])
def test_impossible_dates(ddmmyy):
    number = find(ddmmyy)
    problems = check_norwegian_identity_number(number)
    assert kinds(problems) == [NIN_DATE] and problems[0].severity == ERROR


def test_individual_number_without_century():
    # individual numbers 500-749 with year 40-53 were never issued
    number = next(
        "150545" + f"{i}" + c for i in range(500, 750)
        if (c := norwegian_identity_control_digits(f"150545{i}")) is not None
    )
    assert fodselsnummer.is_valid(number) is False
    problems = check_norwegian_identity_number(number)
    assert kinds(problems) == [NIN_DATE] and "no birth century" in problems[0].message


def test_wrong_control_digits():
    problems = check_norwegian_identity_number("15108695077")
    assert kinds(problems) == [NIN_CHECK_DIGIT]
    assert "expected 88" in problems[0].message
    problems = check_norwegian_identity_number("11111111111")  # Tink's placeholder
    assert kinds(problems) == [NIN_CHECK_DIGIT]


@pytest.mark.parametrize("value, kind", [
    ("1510869508", NIN_FORMAT), ("151086950881", NIN_FORMAT), ("151086 95088", NIN_FORMAT),
    ("1510869508a", NIN_FORMAT), ("", NIN_FORMAT), (15108695088, NIN_TYPE),
])
def test_format_errors(value, kind):
    assert kinds(check_norwegian_identity_number(value)) == [kind]


@given(
    st.integers(1, 28), st.integers(1, 12), st.integers(0, 99), st.integers(0, 499),
    st.sampled_from([0, 40]), st.sampled_from([0, 40, 80]),
)
def test_generated_numbers_validate_and_single_digit_changes_are_caught(day, month, yy, ind, dd, mm):
    first9 = f"{day + dd:02d}{month + mm:02d}{yy:02d}{ind:03d}"
    control = norwegian_identity_control_digits(first9)
    if control is None:
        return
    number = first9 + control
    assert check_norwegian_identity_number(number) == ()
    if mm != 80:
        assert fodselsnummer.is_valid(number)
    for i in range(11):
        for d in "0123456789":
            if d != number[i]:
                changed = number[:i] + d + number[i + 1:]
                assert check_norwegian_identity_number(changed) != (), changed


def test_is_uuid():
    assert is_uuid(str(uuid.uuid4()))
    assert is_uuid("123E4567-E89B-12D3-A456-426614174000")
    assert is_uuid("00000000-0000-0000-0000-000000000000")
    for bad in ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}",
                "123e4567-e89b-12d3-a456-42661417400g", "123e4567-e89b-12d3-a456-4266141740000",
                "123e4567-e89b-12d3-a456-426614174000\n", "", "dummyPsuId", None, 5,
                "123e4567-e89b-12d3-a456_426614174000"]:
        assert not is_uuid(bad), bad


@given(st.uuids())
def test_any_uuid_version(value):
    assert is_uuid(str(value)) and is_uuid(str(value).upper())
