"""Norwegian national identity numbers (X-PSU-IDENTITY) and UUIDs (PSU-ID,
X-Request-ID) -- decisions A16 and A17.

A national identity number is 11 digits ``DDMMYYIIIKK``: a birth date, a three-digit
individual number and two MOD11 control digits (weights 3 7 6 1 8 9 4 5 2 for the
first, 5 4 3 2 7 6 5 4 3 2 for the second; control = 11 - sum % 11, 11 written 0,
10 meaning no valid number exists). Accepted kinds (python-stdnum's
``stdnum.no.fodselsnummer`` knows the first three, but not synthetic numbers, and it
rejects birth dates after the machine's today, which a pure check must not do):

* birth number (fødselsnummer);
* D-number: day + 40;
* H-number: month + 40 (NAV's synthetic test numbers use the same +40 month marker,
  so day + 40 together with month + 40 is accepted too);
* synthetic test number: month + 80, as Skatteetaten's Tenor test data issues them
  (alone or with day + 40).

The century follows from the individual number (000-499: 1900s; 500-749 with year
54-99: 1800s; 500-999 with year 00-39: 2000s; 900-999 with year 40-99: 1900s); the
date must exist in that century (29 February included). A number whose individual
number and year fit no century is an error. Whether the birth date lies in the future
is not checked (that needs a clock; see decision A13 for how dates get "today").
"""
from __future__ import annotations

import re

from . import OK, Problem, describe, error

NIN_TYPE = "nin-type"
NIN_FORMAT = "nin-format"
NIN_DATE = "nin-date"
NIN_CHECK_DIGIT = "nin-check-digit"

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_uuid(value: object) -> bool:
    """True for a UUID in canonical 8-4-4-4-12 hex form (any version, either case)."""
    return isinstance(value, str) and len(value) == 36 and _UUID.fullmatch(value) is not None


def _control_digits(d: bytes) -> tuple[int | None, int | None]:
    """The two control digits for ``d`` (11 ASCII digits); None where none exists."""
    # 48 * sum(weights) removes the ASCII offset of '0' (the weights over the first nine
    # digits sum to 45 and 39; the tenth digit is offset by hand).
    s1 = (
        3 * d[0] + 7 * d[1] + 6 * d[2] + 1 * d[3] + 8 * d[4]
        + 9 * d[5] + 4 * d[6] + 5 * d[7] + 2 * d[8] - 2160
    )
    k1 = (11 - s1 % 11) % 11
    s2 = (
        5 * d[0] + 4 * d[1] + 3 * d[2] + 2 * d[3] + 7 * d[4]
        + 6 * d[5] + 5 * d[6] + 4 * d[7] + 3 * d[8] + 2 * (d[9] - 48) - 1872
    )
    k2 = (11 - s2 % 11) % 11
    return (None if k1 == 10 else k1), (None if k2 == 10 else k2)


def norwegian_identity_control_digits(first9: str) -> str | None:
    """The two control digits for the first nine digits, or None when none exist."""
    if not (isinstance(first9, str) and len(first9) == 9 and first9.isascii() and first9.isdigit()):
        raise ValueError(f"expected nine digits, got {describe(first9)}")
    k1, _ = _control_digits((first9 + "00").encode("ascii"))
    if k1 is None:
        return None
    _, k2 = _control_digits((first9 + str(k1) + "0").encode("ascii"))
    if k2 is None:
        return None
    return f"{k1}{k2}"


def _birth_year(yy: int, individual: int) -> int | None:
    if individual < 500:
        return 1900 + yy
    if individual < 750 and yy >= 54:
        return 1800 + yy
    if yy < 40:
        return 2000 + yy
    if individual >= 900:
        return 1900 + yy
    return None


def identity_number_kind(value: str) -> str:
    """Which kind of number ``value`` (11 digits) claims to be, from its markers."""
    day, month = int(value[0:2]), int(value[2:4])
    kind = "D-number" if day > 40 else "birth number"
    if month > 80:
        kind = "synthetic test " + kind
    elif month > 40:
        kind = "H-number" if day <= 40 else "synthetic D-number"
    return kind


def check_norwegian_identity_number(value: object) -> tuple[Problem, ...]:
    """Problems with ``value`` as a Norwegian national identity number, D-number,
    H-number or synthetic test number; empty when it is valid."""
    if not isinstance(value, str):
        return error(NIN_TYPE, f"a national identity number must be a string of 11 digits, got {type(value).__name__}")
    if len(value) != 11 or not (value.isascii() and value.isdigit()):
        detail = f"got {len(value)} digits" if value.isascii() and value.isdigit() else f"got {describe(value)}"
        return error(NIN_FORMAT, f"a national identity number is exactly 11 digits: {detail}")
    d = value.encode("ascii")
    day = (d[0] - 48) * 10 + d[1] - 48
    month = (d[2] - 48) * 10 + d[3] - 48
    yy = (d[4] - 48) * 10 + d[5] - 48
    individual = (d[6] - 48) * 100 + (d[7] - 48) * 10 + d[8] - 48
    if day > 40:
        day -= 40
    if month > 80:
        month -= 80
    elif month > 40:
        month -= 40
    year = _birth_year(yy, individual)
    if year is None:
        return error(
            NIN_DATE,
            f"national identity number {value}: individual number {value[6:9]} with year "
            f"{value[4:6]} belongs to no birth century",
        )
    if not (1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month]):
        if not (month == 2 and day == 29 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
            return error(
                NIN_DATE,
                f"national identity number {value}: {value[0:2]}.{value[2:4]}.{value[4:6]} "
                f"is not a date (day {day}, month {month}, year {year} after removing the "
                f"D-, H- and synthetic-number markers)",
            )
    k1, k2 = _control_digits(d)
    if k1 != d[9] - 48 or k2 != d[10] - 48:
        if k1 is None:
            expected = "no valid first control digit exists for these nine digits"
        else:
            _, k2 = _control_digits(d[:9] + bytes((48 + k1,)) + b"0")
            expected = (
                f"expected {k1}{k2}" if k2 is not None
                else "no valid second control digit exists for these nine digits"
            )
        return error(
            NIN_CHECK_DIGIT,
            f"{identity_number_kind(value)} {value}: control digits {value[9:]} are wrong ({expected})",
        )
    return OK


SYNTHETIC_MONTH_OFFSET = 80


def is_synthetic_test_number(value: object) -> bool:
    """True for 11 digits whose month carries the synthetic test number marker (month + 80); whether the number is
    otherwise valid is :func:`check_norwegian_identity_number`'s to say."""
    return (isinstance(value, str) and len(value) == 11 and value.isascii() and value.isdigit()
            and int(value[2:4]) > SYNTHETIC_MONTH_OFFSET)


def is_valid_norwegian_identity_number(value: object) -> bool:
    return not check_norwegian_identity_number(value)


__all__ = [
    "NIN_TYPE", "NIN_FORMAT", "NIN_DATE", "NIN_CHECK_DIGIT", "is_uuid",
    "check_norwegian_identity_number", "is_valid_norwegian_identity_number",
    "identity_number_kind", "norwegian_identity_control_digits", "is_synthetic_test_number", "SYNTHETIC_MONTH_OFFSET",
]
