""""Did you mean": the closest known name to a misspelt one (profiles, rule ids, kind detection)."""
from __future__ import annotations

from typing import Iterable

# The similarity the unknown-property finding uses: "debtorAcount" is "debtorAccount", "id" is not "code".
NEAR_MISS = 0.7


def closest(word: str, choices: Iterable[str], cutoff: float = NEAR_MISS) -> str | None:
    """The known name ``word`` most probably means, or None."""
    choices = list(choices)
    if word in choices and 0.0 <= cutoff <= 1.0:  # the name itself: no other name is as close (ratio 1.0)
        return word
    import difflib  # only for a misspelt name: a valid payload's start does without it

    found = difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = NEAR_MISS) -> str:
    """``"; did you mean 'x'?"`` for the closest known name, else the empty string."""
    near = closest(word, choices, cutoff) if isinstance(word, str) else None
    return f"; did you mean {near!r}?" if near else ""
