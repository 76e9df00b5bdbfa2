"""What a conforming implementation answers a request: the statuses (and codes) the validator predicts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class _Answer(Protocol):
    status: int | None
    code: str | None


@dataclass(frozen=True)
class Expected:
    """What a conforming implementation answers: any of ``statuses`` (with one of ``codes`` when given)."""

    statuses: tuple[int, ...]
    codes: tuple[str, ...] = ()
    why: str = ""
    codeless: tuple[int, ...] = ()   # further statuses allowed without a code decided (HTTP's own, e.g. a 405)

    def allows(self, answer: _Answer) -> bool:
        if answer.status in self.codeless:
            return True
        if answer.status not in self.statuses:
            return False
        return not self.codes or answer.code in self.codes

    def as_dict(self) -> dict[str, Any]:
        return {"statuses": list(self.statuses), "codes": list(self.codes), "codeless": list(self.codeless)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Expected":
        return cls(tuple(int(s) for s in data["statuses"]), tuple(str(c) for c in data.get("codes", ())),
                   codeless=tuple(int(s) for s in data.get("codeless", ())))

    def describe(self) -> str:
        statuses = "/".join(str(s) for s in self.statuses)
        text = f"{statuses} {'/'.join(self.codes)}".strip()
        if self.codeless:
            text += " or " + "/".join(str(s) for s in self.codeless) + " (no code decided)"
        return text
