"""`lessons.frozen.record` behaves as `dataclass(frozen=True)` does, for every use the project makes of it."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field

import pytest

from lessons.frozen import record


@record
class Point:
    """A record with required, defaulted and factory fields."""

    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False, repr=False)


@dataclasses.dataclass(frozen=True)
class SamePoint:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False, repr=False)


@record
class Checked:
    low: int
    high: int
    span: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low above high")
        object.__setattr__(self, "span", self.high - self.low)


@record
class Base:
    name: str


@record
class Derived(Base):
    size: int = 1


@record
class OwnEquality:
    value: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OwnEquality) and self.value.lower() == other.value.lower()


def test_construction_matches_a_frozen_dataclass() -> None:
    for cls in (Point, SamePoint):
        p = cls(1, y=2)
        assert (p.x, p.y, p.tags, p.note) == (1, 2, [], "")
        assert cls(1).tags is not cls(1).tags  # a factory per instance
        for wrong in (lambda: cls(), lambda: cls(1, 2, [], "", 5), lambda: cls(1, z=3), lambda: cls(1, x=1)):
            with pytest.raises(TypeError):
                wrong()


def test_assignment_and_deletion_are_refused() -> None:
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.y
    assert p.x == 1 and p.y == 0


def test_equality_hash_and_repr_follow_the_fields() -> None:
    assert Point(1, 2) == Point(1, 2, note="ignored by compare")
    assert Point(1, 2) != Point(1, 3)
    assert Point(1, 2) != SamePoint(1, 2)  # another class is never equal
    assert hash(Point(1, 2, ("a",))) == hash(Point(1, 2, ("a",)))  # type: ignore[arg-type]
    assert len({Point(1, 2, ()), Point(1, 2, ())}) == 1  # type: ignore[arg-type]
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=[])"
    assert repr(Point(1, 2)).replace("Point", "SamePoint") == repr(SamePoint(1, 2))


def test_post_init_and_fields_outside_init() -> None:
    assert Checked(2, 5).span == 3
    with pytest.raises(ValueError):
        Checked(5, 2)
    with pytest.raises(TypeError):
        Checked(1, 2, 3)  # type: ignore[call-arg]


def test_dataclass_functions_work_on_records() -> None:
    p = Point(1, 2, ["a"])
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "tags", "note"]
    assert dataclasses.replace(p, y=9) == Point(1, 9, ["a"])
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tags": ["a"], "note": ""}
    assert copy.deepcopy(p) == p and copy.copy(p) == p
    assert pickle.loads(pickle.dumps(p)) == p


def test_inheritance_adds_fields_in_order() -> None:
    d = Derived("n", 3)
    assert (d.name, d.size) == ("n", 3)
    assert Derived("n") == Derived("n", 1) and Derived("n") != Base("n")
    assert repr(d) == "Derived(name='n', size=3)"


def test_a_class_that_defines_its_own_equality_keeps_it_and_is_hashed_by_fields() -> None:
    assert OwnEquality("A") == OwnEquality("a")
    assert hash(OwnEquality("A")) == hash(OwnEquality("A"))


def test_fields_a_record_cannot_honour_are_refused() -> None:
    with pytest.raises(TypeError, match="kw_only"):
        @record
        class KeywordOnly:
            x: int = field(kw_only=True)
