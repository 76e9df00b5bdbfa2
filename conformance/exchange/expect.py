"""What a conforming implementation answers a request: the statuses (and codes) the validator predicts, and the basis
of that expectation -- the interface document's own words, or a decision of ours for a point it leaves open
(:mod:`.basis`).

Two tiers (issue 27): an answer the expectation does not allow is a **failure** when it contradicts the document, and
a **difference** when it follows another reading of a point the document leaves open: each of ``readings`` is what
another reading allows, with the decision it differs from and the profile line that would state the target's choice.
A profile that pins the decision (or states the point) marks its readings pinned: an answer they allow is then a
failure naming the decision.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

FAILURE, DIFFERENCE = "failure", "difference"


class _Answer(Protocol):
    status: int | None
    code: str | None


@dataclass(frozen=True)
class Expected:
    """What a conforming implementation answers: any of ``statuses`` (with one of ``codes`` when given).

    ``readings``: what other readings of the open points behind the expectation allow, each with its ``decision``
    (the decision it differs from) and ``profile_line`` (the profile text stating that choice, ``{status}`` and
    ``{code}`` standing for the answer's)."""

    statuses: tuple[int, ...]
    codes: tuple[str, ...] = ()
    why: str = ""
    codeless: tuple[int, ...] = ()   # further statuses allowed without a code decided (HTTP's own, e.g. a 405)
    readings: tuple["Expected", ...] = ()
    decision: str | None = None      # of a reading: the decision it differs from
    profile_line: str | None = None  # of a reading: the profile line stating it
    pinned: bool = False             # of a reading: the profile pins the decision or states the point otherwise

    def allows(self, answer: _Answer) -> bool:
        if answer.status in self.codeless:
            return True
        if answer.status not in self.statuses:
            return False
        return not self.codes or answer.code in self.codes

    def reading(self, answer: _Answer) -> "Expected | None":
        """The other reading that allows an answer this expectation does not (None: none does)."""
        return next((r for r in self.readings if r.allows(answer)), None)

    def tier(self, answer: _Answer) -> str | None:
        """None when the answer agrees; :data:`DIFFERENCE` when another reading of a point the document leaves open
        allows it (a reading the profile pins: :data:`FAILURE`, naming the decision); :data:`FAILURE` otherwise."""
        if self.allows(answer):
            return None
        reading = self.reading(answer)
        return DIFFERENCE if reading is not None and not reading.pinned else FAILURE

    def line(self, answer: _Answer) -> str | None:
        """This reading's profile line for the answer (None: no profile key states it)."""
        if self.profile_line is None:
            return None
        return self.profile_line.replace("{status}", str(answer.status)).replace("{code}", answer.code or "<code>")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"statuses": list(self.statuses), "codes": list(self.codes),
                               "codeless": list(self.codeless)}
        if self.readings:
            out["readings"] = [r.as_dict() for r in self.readings]
        if self.decision is not None:
            out["decision"] = self.decision
        if self.profile_line is not None:
            out["profile_line"] = self.profile_line
        if self.pinned:
            out["pinned"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Expected":
        return cls(tuple(int(s) for s in data["statuses"]), tuple(str(c) for c in data.get("codes", ())),
                   codeless=tuple(int(s) for s in data.get("codeless", ())),
                   readings=tuple(cls.from_dict(r) for r in data.get("readings", ()) if isinstance(r, dict)),
                   decision=data.get("decision"), profile_line=data.get("profile_line"),
                   pinned=bool(data.get("pinned", False)))

    def describe(self) -> str:
        statuses = "/".join(str(s) for s in self.statuses)
        text = f"{statuses} {'/'.join(self.codes)}".strip()
        if self.codeless:
            text += " or " + "/".join(str(s) for s in self.codeless) + " (no code decided)"
        return text
