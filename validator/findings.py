"""The data every check produces: findings, gathered into a report per input.

A finding says where (an RFC 6901 pointer into the checked document, or a header /
query location for whole requests), which rule, which document section, and what an
implementation must answer (HTTP status + tppMessages code; both ``None`` for findings
about a response, which no server answers).
"""
from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any, Iterable

ERROR = "error"
WARNING = "warning"
SEVERITIES = (ERROR, WARNING)


# Finding and Report are dataclasses (fields(), replace() and asdict() work on them) whose methods are written here
# rather than generated: @dataclass compiles each generated method from source when the class is made, which cost
# about 2 % of a command's start for these two classes (instruction counts). They are what @dataclass(frozen=True)
# and @dataclass would generate: the same __init__, __repr__, __eq__ and __hash__, and a Finding's fields cannot be
# assigned (FrozenInstanceError). tests/validator/test_findings_records.py compares them with generated ones.
_set = object.__setattr__
_NO_FINDINGS = object()  # Report's findings not given: a new list (field(default_factory=list))


@dataclass(slots=True, init=False, repr=False, eq=False)
class Finding:
    """One thing found in an input: the rule, its severity, where (a JSON pointer), the message, and the status and
    code an implementation must answer."""

    rule: str
    severity: str
    pointer: str
    message: str
    code: str | None = None
    status: int | None = None
    ref: str | None = None
    # Where in the raw input (1-based), when the finding is about the text itself.
    line: int | None = None
    column: int | None = None

    def __init__(self, rule: str, severity: str, pointer: str, message: str, code: str | None = None,
                 status: int | None = None, ref: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        _set(self, "rule", rule)
        _set(self, "severity", severity)
        _set(self, "pointer", pointer)
        _set(self, "message", message)
        _set(self, "code", code)
        _set(self, "status", status)
        _set(self, "ref", ref)
        _set(self, "line", line)
        _set(self, "column", column)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def _values(self) -> tuple:
        return (self.rule, self.severity, self.pointer, self.message, self.code, self.status, self.ref, self.line,
                self.column)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return (f"{self.__class__.__qualname__}(rule={self.rule!r}, severity={self.severity!r}, "
                f"pointer={self.pointer!r}, message={self.message!r}, code={self.code!r}, status={self.status!r}, "
                f"ref={self.ref!r}, line={self.line!r}, column={self.column!r})")

    def __reduce__(self):
        # Compact pickles: --jobs workers send many findings to the main process.
        return (Finding, (self.rule, self.severity, self.pointer, self.message, self.code, self.status, self.ref, self.line, self.column))

    def as_dict(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "severity": self.severity,
            "pointer": self.pointer,
            "message": self.message,
            "code": self.code,
            "status": self.status,
            "ref": self.ref,
        }
        if self.line is not None:
            out["line"] = self.line
            out["column"] = self.column
        return out



def place(finding: Finding, line: int, column: int | None) -> None:
    """Give ``finding`` its line and column in the input, in place: only for a finding just made that nothing
    else holds yet (the engine's, before its report is returned). Rebuilding the frozen record costs as much as
    making it again, for each of up to a thousand findings of a report."""
    _set(finding, "line", line)
    _set(finding, "column", column)

@dataclass(slots=True, init=False, repr=False, eq=False)
class Report:
    """Findings for one checked input (a file, one JSONL line, stdin, a request)."""

    source: str
    kind: str | None
    findings: list[Finding] = field(default_factory=list)
    # Kinds that fit equally when the kind was detected from the payload's shape.
    candidates: tuple[str, ...] = ()
    # True when the kind was detected from the input rather than given (--kind).
    detected: bool = False

    def __init__(self, source: str, kind: str | None, findings: list[Finding] = _NO_FINDINGS,  # type: ignore[assignment]
                 candidates: tuple[str, ...] = (), detected: bool = False) -> None:
        self.source = source
        self.kind = kind
        self.findings = [] if findings is _NO_FINDINGS else findings
        self.candidates = candidates
        self.detected = detected

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.source, self.kind, self.findings, self.candidates, self.detected) == (
                other.source, other.kind, other.findings, other.candidates, other.detected)  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment] - mutable, as @dataclass makes it

    def __repr__(self) -> str:
        return (f"{self.__class__.__qualname__}(source={self.source!r}, kind={self.kind!r}, findings={self.findings!r}, "
                f"candidates={self.candidates!r}, detected={self.detected!r})")

    def __reduce__(self):
        return (Report, (self.source, self.kind, self.findings, self.candidates, self.detected))

    @property
    def valid(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    def extend(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(findings)

    def as_dict(self) -> dict[str, Any]:
        out = {
            "source": self.source,
            "kind": self.kind,
            "detected": self.detected,
            "valid": self.valid,
            "findings": [f.as_dict() for f in self.findings],
        }
        if self.candidates:
            out["candidates"] = list(self.candidates)
        return out


def escape_pointer_token(token: str | int) -> str:
    """RFC 6901 escaping of one reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    return "".join("/" + escape_pointer_token(t) for t in tokens)


def join_pointer(base: str, *tokens: str | int) -> str:
    return base + pointer(*tokens)


def walk_json(node: Any, tokens: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """(reference tokens, value) for a JSON value and everything inside it, depth first."""
    yield tokens, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk_json(value, tokens + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk_json(value, tokens + (i,))
