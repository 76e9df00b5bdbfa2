"""Pure, I/O-free checks of the identifiers the payment API carries.

Every check in this package has the same shape: it takes the raw value and returns a
``tuple[Problem, ...]`` that is **empty when the value is fine**. The tuple is ordered
most-fundamental-first (a format problem comes before a check-digit problem), so a
rule function that only wants one message can take ``problems[0]``.

``Problem.kind`` is a stable machine-readable id (the ``*-format`` / ``*-check-digit``
constants in each module), ``Problem.message`` is a plain English sentence that can be
used as a finding's message as it stands, and ``Problem.severity`` is ``"error"`` or
``"warning"`` (the same strings as :mod:`validator.findings`).

Modules:

* :mod:`validator.checks.kid` -- Norwegian KID (decision A11), MOD10/MOD11 helpers.
* :mod:`validator.checks.accounts` -- IBAN and Norwegian BBAN (decision A12).
* :mod:`validator.checks.identity` -- national identity numbers and UUIDs (A16, A17).

The functions are written for bulk use (10,000 payments per request): the common
valid case does no exception handling, no regex backtracking and no registry lookups
beyond a cached dictionary access.
"""
from __future__ import annotations

from ..records import record

ERROR = "error"
WARNING = "warning"

OK: tuple = ()


@record
class Problem:
    """One thing wrong with a checked value."""

    kind: str
    message: str
    severity: str = ERROR

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR


def error(kind: str, message: str) -> tuple[Problem, ...]:
    return (Problem(kind, message, ERROR),)


def warning(kind: str, message: str) -> tuple[Problem, ...]:
    return (Problem(kind, message, WARNING),)


def describe(value: object, limit: int = 40) -> str:
    """``repr`` of a value for messages, shortened so huge inputs stay readable."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 4] + "...'" if isinstance(value, str) else text[: limit - 3] + "..."
    return text


__all__ = ["ERROR", "WARNING", "OK", "Problem", "error", "warning", "describe"]
