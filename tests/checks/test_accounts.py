
import pytest
from hypothesis import given, strategies as st
from stdnum import iban as stdnum_iban
from stdnum.no import kontonr

from document import reference_path
from validator.checks import ERROR, WARNING
from validator.checks.accounts import (
    BBAN_CHECK_DIGIT, BBAN_FORMAT, BBAN_TYPE, IBAN_BBAN_FORMAT, IBAN_CHECKSUM, IBAN_COUNTRY,
    IBAN_ELECTRONIC_FORM, IBAN_FORMAT, IBAN_LENGTH, IBAN_NATIONAL_CHECK_DIGIT,
    IBAN_RESERVED_CHECK_DIGITS, IBAN_TYPE, check_iban, check_norwegian_bban, iban_length,
    is_valid_iban, make_iban, norwegian_bban_check_digit,
)

# The shared reference list (../shared/reference/iban-examples.txt); missing, the tests fail saying where.
IBAN_EXAMPLES = reference_path("iban-examples.txt").read_text().split()


def kinds(problems):
    return [p.kind for p in problems]


def test_reference_list_is_read():
    assert len(IBAN_EXAMPLES) == 20 and IBAN_EXAMPLES[0] == "NO9386011117947"


@pytest.mark.parametrize("iban", IBAN_EXAMPLES)
def test_reference_ibans_are_valid(iban):
    assert check_iban(iban) == ()
    assert stdnum_iban.is_valid(iban)  # the independent implementation agrees


@pytest.mark.parametrize("iban", IBAN_EXAMPLES)
def test_changing_one_digit_breaks_mod97(iban):
    i = max(j for j, c in enumerate(iban) if c.isdigit() and j >= 4)
    changed = iban[:i] + str((int(iban[i]) + 1) % 10) + iban[i + 1:]
    problems = check_iban(changed)
    assert IBAN_CHECKSUM in kinds(problems)
    assert all(p.severity == ERROR for p in problems if p.kind == IBAN_CHECKSUM)


def test_length_message():
    problems = check_iban("NO938601111794")
    assert kinds(problems) == [IBAN_LENGTH]
    assert problems[0].message == "NO IBANs have 15 characters, got 14"
    assert iban_length("NO") == 15 and iban_length("DE") == 22 and iban_length("US") is None


def test_paper_form_and_lower_case_are_errors():
    problems = check_iban("NO93 8601 1117 947")
    assert kinds(problems) == [IBAN_ELECTRONIC_FORM]
    assert "without spaces" in problems[0].message and "NO9386011117947" in problems[0].message
    problems = check_iban("no9386011117947")
    assert kinds(problems) == [IBAN_ELECTRONIC_FORM]
    assert "upper case" in problems[0].message
    # The rest is still checked on the normalised value.
    assert kinds(check_iban("no93 8601 1117 948")) == [IBAN_ELECTRONIC_FORM, IBAN_ELECTRONIC_FORM, IBAN_CHECKSUM]


@pytest.mark.parametrize("value, kind", [
    ("XX9386011117947", IBAN_COUNTRY),
    ("US12345678901234", IBAN_COUNTRY),
    ("NOAB86011117947", IBAN_FORMAT),
    ("1234", IBAN_FORMAT),
    ("", IBAN_FORMAT),
    ("NO93", IBAN_FORMAT),
    ("NO93860111179A7", IBAN_BBAN_FORMAT),
    ("NÖ9386011117947", IBAN_FORMAT),
    (86011117947, IBAN_TYPE),
])
def test_structural_errors(value, kind):
    problems = check_iban(value)
    assert kinds(problems) == [kind]
    assert problems[0].severity == ERROR


def _bban_with_check(target: int) -> str:
    """A MOD11-valid Norwegian BBAN whose correct IBAN check digits are ``target``."""
    for n in range(1_000_000_000, 1_000_100_000):
        first10 = str(n)
        check = norwegian_bban_check_digit(first10)
        if check is None:
            continue
        bban = first10 + check
        if make_iban("NO", bban)[2:4] == f"{target:02d}":
            return bban
    raise AssertionError("no BBAN found")


@pytest.mark.parametrize("correct, reserved", [(97, "00"), (98, "01"), (2, "99")])
def test_reserved_check_digits_rejected_even_when_mod97_passes(correct, reserved):
    bban = _bban_with_check(correct)
    iban = "NO" + reserved + bban
    # mod-97 alone is satisfied (reserved = correct +- 97) ...
    assert int((iban[4:] + "2324" + iban[2:4])) % 97 == 1
    # ... but ISO 13616 forbids these check digits.
    assert kinds(check_iban(iban)) == [IBAN_RESERVED_CHECK_DIGITS]
    assert check_iban("NO" + f"{correct:02d}" + bban) == ()


def test_national_check_digit_is_a_warning_only():
    iban = make_iban("NO", "33333333333")  # Tink's placeholder account: fails MOD11
    problems = check_iban(iban)
    assert kinds(problems) == [IBAN_NATIONAL_CHECK_DIGIT]
    assert problems[0].severity == WARNING
    assert is_valid_iban(iban)
    # The raw placeholder IBAN fails mod-97 too, which is an error.
    assert kinds(check_iban("NO3133333333333")) == [IBAN_CHECKSUM]


def test_national_check_of_other_countries_via_stdnum():
    good = "BE71096123456769"
    assert check_iban(good) == ()
    bad = make_iban("BE", "096123456768")  # mod-97 fixed up, Belgian mod-97 check broken
    problems = check_iban(bad)
    assert kinds(problems) == [IBAN_NATIONAL_CHECK_DIGIT] and problems[0].severity == WARNING


def test_make_iban():
    assert make_iban("NO", "86011117947") == "NO9386011117947"
    assert make_iban("de", "370400440532013000") == "DE89370400440532013000"
    with pytest.raises(ValueError):
        make_iban("N0", "123")


# --- Norwegian BBAN ------------------------------------------------------------------

@pytest.mark.parametrize("bban", ["12345678903", "86011117947", "95360573002"])
def test_valid_bbans(bban):
    assert check_norwegian_bban(bban) == ()
    assert kontonr.is_valid(bban)


def test_check_digit_helper():
    # 1*5+2*4+3*3+4*2+5*7+6*6+7*5+8*4+9*3+0*2 = 195; 195 % 11 = 8; 11 - 8 = 3
    assert norwegian_bban_check_digit("1234567890") == "3"
    assert norwegian_bban_check_digit("8601111794") == "7"
    # 0000000001: 1*2 = 2 -> 9; find a prefix whose remainder is 1 (no valid account)
    assert norwegian_bban_check_digit("0000000006") is None  # 6*2 = 12, 12 % 11 = 1


def test_bban_mod11_failure_is_warning():
    problems = check_norwegian_bban("12345678904")
    assert kinds(problems) == [BBAN_CHECK_DIGIT] and problems[0].severity == WARNING
    assert "expected 3" in problems[0].message
    problems = check_norwegian_bban("00000000060")
    assert kinds(problems) == [BBAN_CHECK_DIGIT] and "no check digit is valid" in problems[0].message


@pytest.mark.parametrize("value, fragment", [
    ("1234567890", "got 10 digits"),
    ("123456789031", "got 12 digits"),
    ("1234.56.78903", "separators"),
    ("1234 56 78903", "separators"),
    ("NO9386011117947", "NO9386011117947"),
    ("", "got ''"),
])
def test_bban_format_errors(value, fragment):
    problems = check_norwegian_bban(value)
    assert kinds(problems) == [BBAN_FORMAT] and problems[0].severity == ERROR
    assert fragment in problems[0].message


def test_bban_type_error():
    assert kinds(check_norwegian_bban(12345678903)) == [BBAN_TYPE]


# stdnum reads a leading "0000" as the old postgiro bank code and checks the rest as a 7-digit Luhn number.
first10s = st.text(alphabet="0123456789", min_size=10, max_size=10).filter(lambda s: not s.startswith("0000"))


@given(first10s)
def test_bban_helper_agrees_with_stdnum(first10):
    check = norwegian_bban_check_digit(first10)
    if check is None:
        assert not any(kontonr.is_valid(first10 + d) for d in "0123456789")
    else:
        assert kontonr.is_valid(first10 + check)
        assert check_norwegian_bban(first10 + check) == ()
        iban = make_iban("NO", first10 + check)
        assert check_iban(iban) == () and stdnum_iban.is_valid(iban)


@given(first10s, st.data())
def test_bban_single_digit_change_is_caught(first10, data):
    check = norwegian_bban_check_digit(first10)
    if check is None:
        return
    bban = first10 + check
    i = data.draw(st.integers(0, 10))
    new = data.draw(st.sampled_from([d for d in "0123456789" if d != bban[i]]))
    changed = bban[:i] + new + bban[i + 1:]
    assert kinds(check_norwegian_bban(changed)) == [BBAN_CHECK_DIGIT]
    # Inside an IBAN with recomputed check digits, the same change is a warning.
    assert kinds(check_iban(make_iban("NO", changed))) == [IBAN_NATIONAL_CHECK_DIGIT]
