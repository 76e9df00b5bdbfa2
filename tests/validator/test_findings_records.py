"""Finding and Report write out the methods @dataclass would generate for them (validator/findings.py says why): here
they are compared with the generated ones, field for field, so the two cannot drift apart."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from validator.findings import Finding, Report


def _generated(cls, **params):
    """The dataclass @dataclass(**params) makes of ``cls``'s fields (names, annotations, defaults)."""
    specs = [(f.name, f.type, dataclasses.field(default=f.default, default_factory=f.default_factory))
             for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, specs, **params)


def _parameters(cls) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


GeneratedFinding = _generated(Finding, frozen=True, slots=True)
GeneratedReport = _generated(Report, slots=True)
FINDINGS = [("r", "error", "/a", "m"), ("r", "warning", "", "m\n'x'", "FORMAT_ERROR", 400, "A § 1", 3, 7),
            ("json-syntax", "error", "", "Expecting value", None, None, None, 1, 1)]


@pytest.mark.parametrize("values", FINDINGS)
def test_a_finding_behaves_as_the_generated_dataclass(values) -> None:
    ours, theirs = Finding(*values), GeneratedFinding(*values)
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs) and ours == Finding(*values) and ours != theirs  # another class: not equal
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs) and dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert _parameters(Finding) == _parameters(GeneratedFinding)
    assert Finding.__match_args__ == GeneratedFinding.__match_args__
    moved = dataclasses.replace(ours, line=9, column=2)
    assert moved == Finding(*values[:7], *(None,) * (7 - len(values[:7])), 9, 2) and type(moved) is Finding
    for attempt in (lambda: setattr(ours, "rule", "x"), lambda: delattr(ours, "rule"), lambda: setattr(ours, "other", 1)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            attempt()
    assert pickle.loads(pickle.dumps(ours)) == ours and copy.deepcopy(ours) == ours
    assert (ours == 1) is False and (ours != values) is True


def test_a_report_behaves_as_the_generated_dataclass() -> None:
    findings = [Finding(*FINDINGS[1])]
    for args, kwargs in (((" s", None), {}), (("s", "sepa-credit-transfer", findings), {"candidates": ("a", "b")}),
                         (("s", "k"), {"findings": None, "detected": True})):
        ours, theirs = Report(*args, **kwargs), GeneratedReport(*args, **kwargs)
        assert repr(ours) == repr(theirs).replace(GeneratedReport.__qualname__, "Report")
        assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
        assert ours == Report(*args, **kwargs) and ours != theirs
    assert Report("s", None).findings == [] and Report("s", None).findings is not Report("s", None).findings
    ours, theirs = _parameters(Report), _parameters(GeneratedReport)
    assert [p[:2] for p in ours] == [p[:2] for p in theirs] and ours[3:] == theirs[3:]  # findings: a new list each
    assert Report.__hash__ is None and GeneratedReport.__hash__ is None
    assert Report.__match_args__ == GeneratedReport.__match_args__
    report = Report("s", None)
    report.kind = "k"  # a report is filled in as the checks go
    assert dataclasses.replace(report, detected=True) == Report("s", "k", [], (), True)
    assert pickle.loads(pickle.dumps(Report("s", "k", findings))) == Report("s", "k", findings)
