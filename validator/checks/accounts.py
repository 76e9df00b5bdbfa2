"""IBAN (ISO 13616) and Norwegian BBAN checks -- decision A12.

IBAN, in this order:

1. electronic form -- upper case, no spaces (the paper form ``NO93 8601 1117 947``
   and lower case are errors with a message saying so; the remaining checks are
   still run on the normalised value so the user learns everything at once);
2. only letters and digits, two letters then two digits;
3. registry country (the python-stdnum copy of the SWIFT IBAN registry) and length;
4. the BBAN's structure per the registry (e.g. a Norwegian BBAN is 11 digits);
5. check digits ``00``, ``01`` and ``99`` are forbidden by ISO 13616 even though
   they can satisfy mod-97 (they are 97, 98 and 2 plus or minus 97);
6. ISO 7064 mod-97-10 -- error;
7. the national check digit inside the BBAN (Norwegian MOD11; for BE, ES and ME the
   python-stdnum country rules) -- **warning** only.

Norwegian BBAN (``bban`` fields in the domestic products): exactly 11 digits, else an
error; a failing MOD11 check digit is a **warning** only (the bank accepts some
internal accounts, and the vendor's sandbox data fails MOD11).

MOD11 for Norwegian accounts: weights 5, 4, 3, 2, 7, 6, 5, 4, 3, 2 over the first ten
digits; r = sum % 11; check = 0 when r == 0, else 11 - r; when that is 10 no valid
account number exists with those ten digits.
"""
from __future__ import annotations

import re

from . import OK, Problem, WARNING, describe, error

IBAN_TYPE = "iban-type"
IBAN_ELECTRONIC_FORM = "iban-electronic-form"
IBAN_FORMAT = "iban-format"
IBAN_COUNTRY = "iban-country"
IBAN_LENGTH = "iban-length"
IBAN_BBAN_FORMAT = "iban-bban-format"
IBAN_RESERVED_CHECK_DIGITS = "iban-reserved-check-digits"
IBAN_CHECKSUM = "iban-checksum"
IBAN_NATIONAL_CHECK_DIGIT = "iban-national-check-digit"

BBAN_TYPE = "bban-type"
BBAN_FORMAT = "bban-format"
BBAN_CHECK_DIGIT = "bban-check-digit"

RESERVED_CHECK_DIGITS = frozenset({"00", "01", "99"})

_STRUCT_PART = re.compile(r"([1-9][0-9]*)!([nac])")
_STRUCT_CLASS = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Za-z0-9]"}
_ALL_DIGITS = re.compile(r"[0-9]+")  # marker: the BBAN is all digits

# Letters as ISO 7064 digits: A=10 ... Z=35.
_LETTER_VALUE = {chr(c): str(c - 55) for c in range(ord("A"), ord("Z") + 1)}
_TO_DIGITS = str.maketrans(_LETTER_VALUE)
_LETTER_BYTES = {letter: value.encode() for letter, value in _LETTER_VALUE.items()}  # "N" -> b"23"

# Registry cache: country code -> (IBAN length, compiled BBAN pattern, country name),
# or None for a code the registry does not have.
_REGISTRY: dict[str, tuple[int, re.Pattern[str], str] | None] = {}
_NATIONAL_MODULES: dict[str, object] = {}
_TABLE: dict | None = None


def _registry_table() -> dict:
    """``{"countries": {code: [BBAN structure, country name]}, "national": [codes with a python-stdnum IBAN module]}``
    from python-stdnum's copy of the IBAN registry, kept in the user cache named by the registry file it was read
    from: importing stdnum and parsing its registry takes longer than checking a payload (cold start)."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    import importlib.util
    from pathlib import Path

    from ..cache import read_json, source_key, write_json

    found = importlib.util.find_spec("stdnum")  # the package's place, without importing it
    package = Path(found.origin).parent if found and found.origin else None
    name = None
    if package is not None:
        try:
            stat = (package / "iban.dat").stat()
            source = f"{package}|{stat.st_size}|{stat.st_mtime_ns}"
            name = f"iban-registry-{source_key(source.encode())}.json"
        except OSError:
            pass
    table = read_json(name) if name else None
    if not (isinstance(table, dict) and isinstance(table.get("countries"), dict) and isinstance(table.get("national"), list)):
        table = _read_registry(package)
        if name:
            write_json(name, table)
    _TABLE = table
    return table


def _read_registry(package) -> dict:
    from stdnum import numdb

    db = numdb.get("iban")
    countries = {}
    for first in _UPPER:
        for second in _UPPER:
            code = first + second
            info = db.info(code)
            props = info[0][1] if info and info[0][0] == code else {}
            if props.get("bban"):
                countries[code] = [props["bban"], props.get("country", code)]
    national = sorted(code for code in countries
                      if package is not None and (package / code.lower() / "iban.py").is_file())
    return {"countries": countries, "national": national}


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _registry_entry(country: str) -> tuple[int, re.Pattern[str], str] | None:
    try:
        return _REGISTRY[country]
    except KeyError:
        pass
    entry = None
    found = _registry_table()["countries"].get(country) if len(country) == 2 else None
    if found:
        structure, name = found
        parts = _STRUCT_PART.findall(structure)
        length = 4 + sum(int(n) for n, _ in parts)
        if all(k == "n" for _, k in parts):
            pattern = _ALL_DIGITS  # checked with str.isdigit, no regex needed
        else:
            pattern = re.compile("".join(f"{_STRUCT_CLASS[k]}{{{n}}}" for n, k in parts))
        entry = (length, pattern, name)
    if len(_REGISTRY) < 1024:  # bounded: only two-letter codes are ever looked up in the table
        _REGISTRY[country] = entry
    return entry


def iban_length(country: str) -> int | None:
    """The registry length of ``country``'s IBANs, or None for a non-IBAN country."""
    entry = _registry_entry(country)
    return entry[0] if entry else None


def _mod97(iban: str) -> int:
    """ISO 7064 mod-97-10 remainder of an (upper-case, alphanumeric) IBAN."""
    bban = iban[4:]
    if bban.isdigit():  # the common case: only the country code needs converting
        return int(bban + _LETTER_VALUE[iban[0]] + _LETTER_VALUE[iban[1]] + iban[2:4]) % 97
    return int((bban + iban[:4]).translate(_TO_DIGITS)) % 97


def make_iban(country: str, bban: str) -> str:
    """The IBAN for ``bban`` in ``country`` with correctly computed check digits."""
    country = country.upper()
    bban = bban.replace(" ", "").upper()
    if not (len(country) == 2 and country.isascii() and country.isalpha()):
        raise ValueError(f"country must be two letters, got {country!r}")
    if not (bban.isascii() and bban.isalnum()):
        raise ValueError(f"BBAN must be letters and digits, got {bban!r}")
    check = 98 - _mod97(country + "00" + bban)
    return f"{country}{check:02d}{bban}"


def norwegian_bban_check_digit(first10: str) -> str | None:
    """The MOD11 check digit for a Norwegian account's first ten digits.

    None when the weighted sum leaves remainder 1 (check value 10): no valid account
    number starts with those ten digits.
    """
    if not (isinstance(first10, str) and len(first10) == 10 and first10.isascii() and first10.isdigit()):
        raise ValueError(f"expected ten digits, got {describe(first10)}")
    return _bban_check(first10.encode("ascii"))


def _bban_check(d: bytes) -> str | None:
    # weights 5 4 3 2 7 6 5 4 3 2 (digits of one weight added first); 48 * 41 removes the ASCII offset of '0'.
    total = 5 * (d[0] + d[6]) + 4 * (d[1] + d[7]) + 3 * (d[2] + d[8]) + 2 * (d[3] + d[9]) + 7 * d[4] + 6 * d[5] - 1968
    r = total % 11
    if r == 0:
        return "0"
    if r == 1:
        return None
    return "0123456789"[11 - r]


def _bban_mod11_problem(bban: str, iban: str | None = None) -> str | None:
    """Message when the 11-digit Norwegian account's MOD11 check digit fails."""
    expected = _bban_check(bban.encode("ascii"))
    if expected == bban[10]:
        return None
    where = "account number" if iban is None else f"IBAN {iban}: the Norwegian account number"
    if expected is None:
        return (
            f"{where} {bban} fails the Norwegian MOD11 account check: no check digit is "
            f"valid after {bban[:10]} (the weighted sum leaves remainder 1)"
        )
    return (
        f"{where} {bban} fails the Norwegian MOD11 account check: "
        f"check digit is {bban[10]}, expected {expected}"
    )


def check_norwegian_bban(value: object) -> tuple[Problem, ...]:
    """Problems with ``value`` as an 11-digit Norwegian account number (BBAN)."""
    if not isinstance(value, str):
        return error(BBAN_TYPE, f"a Norwegian account number must be a string of 11 digits, got {type(value).__name__}")
    if len(value) != 11 or not (value.isascii() and value.isdigit()):
        if value.isascii() and value.isdigit():
            detail = f"got {len(value)} digits"
        elif any(c in " ." for c in value):
            detail = "written with separators; send the 11 digits without spaces or dots"
        else:
            detail = f"got {describe(value)}"
        return error(BBAN_FORMAT, f"a Norwegian account number (BBAN) is exactly 11 digits: {detail}")
    message = _bban_mod11_problem(value)
    if message is None:
        return OK
    return (Problem(BBAN_CHECK_DIGIT, message, WARNING),)


def bban_passes(value: str) -> bool:
    """Whether :func:`check_norwegian_bban` finds nothing in the string ``value`` (11 digits, MOD11 check digit
    right), answered without building problems: the compiled rule pass's test for bban-format and
    bban-check-digit (validator/compiled.py), which call the rules only when it fails."""
    if len(value) != 11 or not value.isascii():
        return False
    digits = value.encode()  # bytes.isdigit is cheaper per character than str.isdigit
    return digits.isdigit() and _bban_check(digits) == value[10]


def iban_passes(value: str) -> bool:
    """Whether :func:`check_iban` finds nothing in the string ``value`` (neither error nor warning), answered
    without building problems: the compiled rule pass's test for iban-invalid and iban-national-check. The common
    IBAN, of a registry country whose BBAN is all digits and without a python-stdnum national rule, is decided
    here; any other value by check_iban itself."""
    entry = _REGISTRY.get(value[:2])  # filled by check_iban: a country not met yet is checked there first
    if not (entry is not None and entry[1] is _ALL_DIGITS and len(value) == entry[0] and value.isascii()):
        return not check_iban(value)
    digits = value.encode()
    if not digits[2:].isdigit():
        return not check_iban(value)
    # mod-97 of the account part, the country's letters as digits and the check digits (int reads bytes directly).
    number = int(digits[4:] + _LETTER_BYTES[value[0]] + _LETTER_BYTES[value[1]] + digits[2:4])
    if number % 97 != 1 or value[2:4] in RESERVED_CHECK_DIGITS:
        return False
    country = value[:2]
    if country == "NO":
        return _bban_check(digits[4:]) == value[14]  # as _national_problem reads it
    return country not in _registry_table()["national"] or not check_iban(value)


def _national_problem(iban: str) -> Problem | None:
    country = iban[:2]
    if country == "NO":
        message = _bban_mod11_problem(iban[4:], iban)
        return None if message is None else Problem(IBAN_NATIONAL_CHECK_DIGIT, message, WARNING)
    if country not in _registry_table()["national"]:
        return None  # no country rule in python-stdnum: nothing to import
    try:
        module = _NATIONAL_MODULES[country]
    except KeyError:
        from stdnum.util import get_cc_module

        module = _NATIONAL_MODULES[country] = get_cc_module(country.lower(), "iban")
    if module is None:
        return None
    from stdnum.exceptions import ValidationError

    try:
        module.validate(iban)
    except ValidationError as exc:
        return Problem(
            IBAN_NATIONAL_CHECK_DIGIT,
            f"IBAN {iban}: the national account number inside fails {country}'s own check ({exc.message})",
            WARNING,
        )
    return None


def check_iban(value: object) -> tuple[Problem, ...]:
    """Problems with ``value`` as an IBAN in ISO 13616 electronic form."""
    if not isinstance(value, str):
        return error(IBAN_TYPE, f"an IBAN must be a string, got {type(value).__name__}")
    problems: list[Problem] = []
    iban = value
    if not (iban.isalnum() and iban.isupper()):
        # Slow path: something other than upper-case letters and digits.
        compact = "".join(iban.split())
        if compact != iban:
            problems.append(Problem(
                IBAN_ELECTRONIC_FORM,
                f"IBAN {describe(value)} must be in electronic form, without spaces "
                f"(ISO 13616): {compact.upper()}",
            ))
        upper = compact.upper()
        if upper != compact:
            problems.append(Problem(
                IBAN_ELECTRONIC_FORM,
                f"IBAN {describe(value)} must be in upper case in electronic form (ISO 13616): {upper}",
            ))
        iban = upper
    if not (iban.isascii() and iban[:2].isalpha() and iban[2:4].isdigit() and len(iban) > 4):
        problems.append(Problem(
            IBAN_FORMAT,
            f"{describe(value)} is not an IBAN: an IBAN is a two-letter country code, two check "
            f"digits and up to 30 letters and digits",
        ))
        return tuple(problems)
    country = iban[:2]
    entry = _REGISTRY.get(country) or _registry_entry(country)
    if entry is None:
        problems.append(Problem(IBAN_COUNTRY, f"IBAN {iban}: {country} is not a country in the IBAN registry"))
        return tuple(problems)
    length, pattern, _name = entry
    if len(iban) != length:
        problems.append(Problem(
            IBAN_LENGTH, f"{country} IBANs have {length} characters, got {len(iban)}"
        ))
        return tuple(problems)
    if not (iban[4:].isdigit() if pattern is _ALL_DIGITS else pattern.fullmatch(iban, 4)):
        problems.append(Problem(
            IBAN_BBAN_FORMAT,
            f"IBAN {iban}: the account part {iban[4:]} does not have the structure the IBAN "
            f"registry gives for {country}",
        ))
        return tuple(problems)
    check = iban[2:4]
    if check in RESERVED_CHECK_DIGITS:
        problems.append(Problem(
            IBAN_RESERVED_CHECK_DIGITS,
            f"IBAN {iban}: check digits {check} are never valid (ISO 13616 allows 02 to 98)",
        ))
    if _mod97(iban) != 1:
        expected = 98 - _mod97(country + "00" + iban[4:])
        problems.append(Problem(
            IBAN_CHECKSUM,
            f"IBAN {iban} fails the mod-97 check (check digits {check}, expected {expected:02d})",
        ))
        return tuple(problems)
    national = _national_problem(iban)
    if national is not None:
        problems.append(national)
    return tuple(problems) if problems else OK


def is_valid_iban(value: object) -> bool:
    """True when ``value`` is an IBAN without errors (warnings do not count)."""
    return not any(p.severity != WARNING for p in check_iban(value))


__all__ = [
    "IBAN_TYPE", "IBAN_ELECTRONIC_FORM", "IBAN_FORMAT", "IBAN_COUNTRY", "IBAN_LENGTH",
    "IBAN_BBAN_FORMAT", "IBAN_RESERVED_CHECK_DIGITS", "IBAN_CHECKSUM",
    "IBAN_NATIONAL_CHECK_DIGIT", "BBAN_TYPE", "BBAN_FORMAT", "BBAN_CHECK_DIGIT",
    "RESERVED_CHECK_DIGITS", "check_iban", "is_valid_iban", "iban_length", "make_iban",
    "check_norwegian_bban", "norwegian_bban_check_digit", "bban_passes", "iban_passes",
]
