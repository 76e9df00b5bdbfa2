"""``@record``: the immutable records of obvalidate (a kind, a rule, an issue, a detection ...), written as annotated
classes and made into named tuples.

A record is what ``collections.namedtuple`` makes (fields, defaults, ``_replace``, ``_asdict``, ``_make``, the same
``repr``, pickling), made for less: a command's start defines some thirty records. ``typing.NamedTuple`` compiles each
field's annotation (a string under ``from __future__ import annotations``) and a dataclass generates and compiles its
methods; ``namedtuple`` compiles a ``__new__`` for each class and makes a class of its own under the record's. Here
the methods are shared by every record (they read the class's ``_fields``), and ``__new__`` is a copy of a function
compiled with this module for that number of fields, its parameters renamed to the fields: about a quarter of what
``namedtuple`` costs (instruction counts of a start), and the same ``__new__`` bytecode it would have generated.
"""
from __future__ import annotations

from operator import itemgetter
from typing import TypeVar

try:
    from _collections import _tuplegetter  # what namedtuple's fields are (CPython)
except ImportError:  # pragma: no cover - another Python
    def _tuplegetter(index: int, doc: str):
        return property(itemgetter(index), doc=doc)

T = TypeVar("T")
_tuple_new = tuple.__new__

# __new__ for n fields (key n); each record's is a copy with the parameters named after its fields.
_NEW = {
    0: lambda _cls: _tuple_new(_cls, ()),
    1: lambda _cls, a: _tuple_new(_cls, (a,)),
    2: lambda _cls, a, b: _tuple_new(_cls, (a, b)),
    3: lambda _cls, a, b, c: _tuple_new(_cls, (a, b, c)),
    4: lambda _cls, a, b, c, d: _tuple_new(_cls, (a, b, c, d)),
    5: lambda _cls, a, b, c, d, e: _tuple_new(_cls, (a, b, c, d, e)),
    6: lambda _cls, a, b, c, d, e, f: _tuple_new(_cls, (a, b, c, d, e, f)),
    7: lambda _cls, a, b, c, d, e, f, g: _tuple_new(_cls, (a, b, c, d, e, f, g)),
    8: lambda _cls, a, b, c, d, e, f, g, h: _tuple_new(_cls, (a, b, c, d, e, f, g, h)),
}


def _new_for(count: int):
    """The template of ``__new__`` for ``count`` fields; a larger record's is compiled once (as namedtuple does)."""
    if count not in _NEW:
        names = ", ".join(f"a{i}" for i in range(count))
        _NEW[count] = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({names},))", {"_tuple_new": _tuple_new})  # noqa: S307
    return _NEW[count]


class _Record(tuple):
    """What every record shares: namedtuple's methods, reading the record's ``_fields``."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    @classmethod
    def _make(cls, iterable):
        result = _tuple_new(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _replace(self, /, **changes):
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def _asdict(self) -> dict:
        return dict(zip(self._fields, self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in zip(self._fields, self))})"

    def __getnewargs__(self) -> tuple:
        return tuple(self)


def record(cls: type[T]) -> type[T]:
    """The annotated fields of ``cls`` in order (those with a value have it as default) as a named tuple; its
    docstring, methods and properties are kept. Equality, hashing, ``repr`` and ``_replace`` are the tuple's."""
    fields = tuple(cls.__dict__.get("__annotations__", {}))
    namespace = {name: value for name, value in cls.__dict__.items() if name not in ("__dict__", "__weakref__")}
    defaults = tuple(namespace.pop(name) for name in fields if name in namespace)
    if any(name in cls.__dict__ for name in fields[: len(fields) - len(defaults)]):
        raise TypeError(f"{cls.__name__}: a field without a default follows one with a default")
    template = _new_for(len(fields))
    code = template.__code__.replace(co_varnames=("_cls", *fields), co_name="__new__",
                                     co_qualname=f"{cls.__qualname__}.__new__")
    new = type(template)(code, template.__globals__, "__new__", defaults or None)
    new.__doc__ = f"Create new instance of {cls.__name__}({', '.join(fields)})"
    namespace.update(__slots__=(), _fields=fields, __new__=new, __match_args__=fields,
                     _field_defaults=dict(zip(fields[len(fields) - len(defaults):], defaults)))
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    return type(cls.__name__, (_Record,), namespace)  # type: ignore[return-value]
