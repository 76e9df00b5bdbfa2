"""``@record``: the immutable records of obvalidate (a kind, a rule, an issue, a detection ...), written as annotated
classes and made into named tuples.

It is ``typing.NamedTuple`` without the cost of its class creation: NamedTuple compiles each field's annotation (a
string under ``from __future__ import annotations``) and a dataclass generates and compiles its methods, while a
command's start defines some twenty-five records. Made this way they cost less than half of what NamedTuple costs
and about a fifth of what dataclasses cost (instruction counts of a start).
"""
from __future__ import annotations

from collections import namedtuple
from typing import TypeVar

T = TypeVar("T")


def record(cls: type[T]) -> type[T]:
    """The annotated fields of ``cls`` in order (those with a value have it as default) as a named tuple; its
    docstring, methods and properties are kept. Equality, hashing, ``repr`` and ``_replace`` are the tuple's."""
    fields = list(cls.__dict__.get("__annotations__", {}))
    namespace = {name: value for name, value in cls.__dict__.items() if name not in ("__dict__", "__weakref__")}
    defaults = [namespace.pop(name) for name in fields if name in namespace]
    if any(name in cls.__dict__ for name in fields[: len(fields) - len(defaults)]):
        raise TypeError(f"{cls.__name__}: a field without a default follows one with a default")
    base = namedtuple(cls.__name__, fields, defaults=defaults, module=cls.__module__)
    namespace["__slots__"] = ()
    return type(cls.__name__, (base,), namespace)  # type: ignore[return-value]
