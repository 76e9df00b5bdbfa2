"""validator.records.record: annotated classes as named tuples (the records defined at a command's start)."""
from __future__ import annotations

import pickle

import pytest

from validator.records import record
from validator.spec import Kind


@record
class Sample:
    """A record with a default, a method and a property."""

    name: str
    size: int = 0

    @property
    def empty(self) -> bool:
        return self.size == 0

    def grown(self, by: int) -> "Sample":
        return self._replace(size=self.size + by)


def test_fields_defaults_and_methods() -> None:
    s = Sample("a")
    assert (s.name, s.size, s.empty) == ("a", 0, True)
    assert s.grown(2) == Sample("a", 2) and isinstance(s.grown(2), Sample)
    assert Sample._fields == ("name", "size") and Sample.__doc__.startswith("A record")
    assert repr(Sample("a", 1)) == "Sample(name='a', size=1)"


def test_immutable_hashable_and_picklable() -> None:
    s = Sample("a", 1)
    with pytest.raises(AttributeError):
        s.size = 2  # type: ignore[misc]
    assert hash(s) == hash(Sample("a", 1))
    assert pickle.loads(pickle.dumps(s)) == s
    kind = Kind("sepa-credit-transfer", "request", "SepaCreditTransfer", ("createSepaCreditTransfer request",))
    assert pickle.loads(pickle.dumps(kind)) == kind and kind.is_request


def test_no_instance_dict() -> None:
    with pytest.raises(AttributeError):
        Sample("a").other = 1  # type: ignore[attr-defined]


def test_a_default_before_a_required_field_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default follows"):

        @record
        class Bad:
            first: int = 0
            second: int
