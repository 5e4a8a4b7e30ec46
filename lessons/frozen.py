"""Frozen dataclasses that cost nothing to declare, for values a process makes a few of.

`dataclasses.dataclass(frozen=True)` compiles six methods for every class it makes
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`), about
50 µs each. The configuration model and the policy it holds declare some sixty such
classes, and every command loads them, a `status` included: a third of what such a
command adds to Python's own start was spent compiling methods nobody changed.

`record` makes the same dataclass — fields, defaults and factories, `__post_init__`,
`dataclasses.fields`, `replace` and `asdict`, `FrozenInstanceError` on assignment,
equality and hashing by fields — with methods shared by every record, which look up
the class's fields when called. Making an instance costs a few microseconds more than a
dataclass's, so `record` is for settings and rules, not for values made by the thousand.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, dataclass_transform

__all__ = ["record"]

T = TypeVar("T", bound=type)
_MISSING = dataclasses.MISSING
_SPEC = "__record_spec__"


class _Spec:
    """A record class's fields, read once, in the order its `__init__` takes them."""

    __slots__ = ("init_names", "fields", "shown", "compared")

    def __init__(self, fields: tuple[dataclasses.Field, ...]) -> None:
        self.init_names = tuple(f.name for f in fields if f.init)
        self.fields = tuple((f.name, f.init, f.default, f.default_factory) for f in fields)
        self.shown = tuple(f.name for f in fields if f.repr)  # in repr
        self.compared = tuple(f.name for f in fields if f.compare)  # in == and hash


def _spec(cls: type) -> _Spec:
    spec = cls.__dict__.get(_SPEC)
    if spec is None:
        spec = _Spec(dataclasses.fields(cls))
        type.__setattr__(cls, _SPEC, spec)
    return spec


def _init(self, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    spec = _spec(cls)
    if len(args) > len(spec.init_names):
        msg = f"{cls.__qualname__}() takes {len(spec.init_names)} positional arguments but {len(args)} were given"
        raise TypeError(msg)
    given = dict(zip(spec.init_names, args))
    for name, value in kwargs.items():
        if name not in spec.init_names:
            raise TypeError(f"{cls.__qualname__}() got an unexpected keyword argument {name!r}")
        if name in given:
            raise TypeError(f"{cls.__qualname__}() got multiple values for argument {name!r}")
        given[name] = value
    for name, init, default, factory in spec.fields:
        if init and name in given:
            value = given[name]
        elif factory is not _MISSING:
            value = factory()
        elif default is not _MISSING:
            value = default
        elif init:
            raise TypeError(f"{cls.__qualname__}() missing required argument: {name!r}")
        else:
            continue  # a field outside __init__ with no default stays unset, as in a dataclass
        object.__setattr__(self, name, value)
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _repr(self) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _spec(type(self)).shown)
    return f"{type(self).__qualname__}({shown})"


def _values(self) -> tuple:
    return tuple(getattr(self, name) for name in _spec(type(self)).compared)


def _eq(self, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self) -> int:
    return hash(_values(self))


def _setattr(self, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


_SHARED = {"__init__": _init, "__repr__": _repr, "__eq__": _eq, "__hash__": _hash,
           "__setattr__": _setattr, "__delattr__": _delattr}


@dataclass_transform(frozen_default=True)
def record(cls: T) -> T:
    """`cls` as a frozen dataclass whose methods are shared, not compiled for it (see above)."""
    own = {name for name in _SHARED if name in cls.__dict__}
    if cls.__dict__.get("__hash__", 0) is None and "__eq__" in own:
        own.discard("__hash__")  # the None Python sets beside a class's own __eq__: hashed by fields, as a dataclass
    documented = bool(cls.__dict__.get("__doc__"))
    if not documented:
        cls.__doc__ = cls.__qualname__  # else dataclass works one out through inspect, and compiles the tokenizer
    cls = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    if not documented:
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in dataclasses.fields(cls) if f.init)})"
    for field in dataclasses.fields(cls):
        if field.kw_only or field.hash is not None:
            raise TypeError(f"{cls.__qualname__}.{field.name}: a record has no kw_only or hash= fields")
    for name, method in _SHARED.items():
        if name not in own:
            type.__setattr__(cls, name, method)
    return cls
