"""KID (kundeidentifikasjon), the Norwegian structured payment reference -- decision A11.

A KID is 2 to 25 characters: digits, the last of which is a check digit computed
over the digits before it with either

* MOD10 -- the Luhn algorithm: from the right, every other payload digit doubled
  (starting with the rightmost), digit sums added; check = (10 - sum % 10) % 10; or
* MOD11 -- weights 2, 3, 4, 5, 6, 7, 2, 3, ... from the right over the payload;
  r = sum % 11; check = 0 when r == 0, else 11 - r, where the value 10 is written
  ``-``. So a MOD11 KID may end in ``-``.

A KID passes when its last character is a valid MOD10 *or* MOD11 check digit (the
payee's agreement with the bank fixes which one, and the payer cannot know it).
"""
from __future__ import annotations

from . import OK, Problem, describe, error

KID_TYPE = "kid-type"
KID_FORMAT = "kid-format"
KID_LENGTH = "kid-length"
KID_CHECK_DIGIT = "kid-check-digit"

MIN_LENGTH = 2
MAX_LENGTH = 25

_DIGITS = b"0123456789"
# bytes.translate tables: digit character -> its Luhn-doubled digit sum / its value times a MOD11 weight.
# ``sum(bytes)`` then adds in C (an untranslated digit adds its ASCII code, 48 more than its value).
_LUHN_DOUBLED = bytes.maketrans(_DIGITS, bytes((2 * d) // 10 + (2 * d) % 10 for d in range(10)))
_MOD11_WEIGHTED = tuple(
    bytes.maketrans(_DIGITS, bytes(d * w for d in range(10))) for w in (2, 3, 4, 5, 6, 7)
)


def _is_digits(text: str) -> bool:
    # ASCII digits; a str's isascii is a flag, and bytes.isdigit is cheaper per character than str.isdigit.
    return text.isascii() and text.encode().isdigit()


def _mod10(payload: str) -> str:
    digits = payload.encode("ascii")
    # From the right: the last digit and every other one before it doubled, the others as they are.
    total = sum(digits[::-2].translate(_LUHN_DOUBLED)) + sum(digits[-2::-2]) - 48 * (len(digits) // 2)
    return "0123456789"[-total % 10]


def _mod11(payload: str) -> str:
    d = payload.encode("ascii")
    w2, w3, w4, w5, w6, w7 = _MOD11_WEIGHTED
    # Weights 2, 3, 4, 5, 6, 7, 2, ... from the right: the digits of each weight a slice stepping back by six.
    total = (
        sum(d[::-6].translate(w2))
        + sum(d[-2::-6].translate(w3))
        + sum(d[-3::-6].translate(w4))
        + sum(d[-4::-6].translate(w5))
        + sum(d[-5::-6].translate(w6))
        + sum(d[-6::-6].translate(w7))
    )
    # r == 0 -> "0"; r == 1 -> 10 -> "-"; else 11 - r.
    return "0-987654321"[total % 11]


def _require_payload(payload: str) -> None:
    if not isinstance(payload, str) or not payload or not _is_digits(payload):
        raise ValueError(f"KID payload must be a non-empty string of digits, got {describe(payload)}")


def kid_check_digit_mod10(payload: str) -> str:
    """The MOD10 (Luhn) check digit to append to ``payload`` (digits)."""
    _require_payload(payload)
    return _mod10(payload)


def kid_check_digit_mod11(payload: str) -> str:
    """The MOD11 check digit to append to ``payload`` (digits): ``"0"``-``"9"`` or ``"-"``."""
    _require_payload(payload)
    return _mod11(payload)


def check_kid(reference: object) -> tuple[Problem, ...]:
    """Problems with ``reference`` as a KID; empty when it is a valid KID."""
    if not isinstance(reference, str):
        return error(KID_TYPE, f"a KID must be a string of digits, got {type(reference).__name__}")
    if not reference:
        return error(KID_LENGTH, f"a KID has {MIN_LENGTH} to {MAX_LENGTH} digits, got an empty string")
    last = reference[-1:]
    payload = reference[:-1]
    if not (
        (last == "-" or _is_digits(last)) and (_is_digits(payload) if payload else last != "-")
    ):
        for index, char in enumerate(reference):
            if not ("0" <= char <= "9") and not (char == "-" and index == len(reference) - 1):
                break
        if char.isspace():
            what = "a space" if char == " " else f"whitespace {char!r}"
        else:
            what = repr(char)
        return error(
            KID_FORMAT,
            f"a KID must consist of digits only (only a final MOD11 check digit may be '-'), "
            f"but {describe(reference)} contains {what} at position {index + 1}",
        )
    length = len(reference)
    if length < MIN_LENGTH or length > MAX_LENGTH:
        return error(
            KID_LENGTH,
            f"a KID has {MIN_LENGTH} to {MAX_LENGTH} digits, {describe(reference)} has {length}",
        )
    if last == "-":
        expected11 = _mod11(payload)
        if expected11 == "-":
            return OK
        return error(
            KID_CHECK_DIGIT,
            f"KID {reference} ends in '-', which is only valid as a MOD11 check digit, "
            f"but its MOD11 check digit is {expected11}",
        )
    expected10 = _mod10(payload)
    if last == expected10:
        return OK
    expected11 = _mod11(payload)
    if last == expected11:
        return OK
    return error(
        KID_CHECK_DIGIT,
        f"KID {reference}: check digit {last} fails both MOD10 (expected {expected10}) "
        f"and MOD11 (expected {expected11})",
    )


def kid_passes(reference: str, algorithms: tuple[str, ...]) -> bool:
    """Whether ``reference`` is a KID of 2 to 25 characters, digits but for a final MOD11 '-', whose last
    character is the check digit of one of ``algorithms`` ("mod10", "mod11") over the digits before it: the
    compiled rule pass's test for kid-invalid (validator/compiled.py), which calls the rule only when it fails.
    With both algorithms it is ``not check_kid(reference)``."""
    payload = reference[:-1]
    if not (MIN_LENGTH <= len(reference) <= MAX_LENGTH and _is_digits(payload)):
        return False
    last = reference[-1]
    return ("mod10" in algorithms and _mod10(payload) == last) or ("mod11" in algorithms and _mod11(payload) == last)


def is_valid_kid(reference: object) -> bool:
    return not check_kid(reference)


__all__ = [
    "KID_TYPE",
    "KID_FORMAT",
    "KID_LENGTH",
    "KID_CHECK_DIGIT",
    "MIN_LENGTH",
    "MAX_LENGTH",
    "check_kid",
    "is_valid_kid",
    "kid_passes",
    "kid_check_digit_mod10",
    "kid_check_digit_mod11",
]
