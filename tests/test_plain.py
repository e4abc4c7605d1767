"""plain: records as plain classes, equal by their slots' values, shown by them, hashed when frozen."""

from __future__ import annotations

import pytest

from control_room.plain import Frozen, Plain


class Point(Plain):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: list[int]) -> None:
        self.x, self.y = x, y


class Key(Frozen):
    __slots__ = ("n", "name")

    def __init__(self, name: str, n: int = 0) -> None:
        self.name, self.n = name, n


class Other(Plain):
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: list[int]) -> None:
        self.x, self.y = x, y


def test_records_of_one_class_are_equal_when_their_slots_are() -> None:
    assert Point(1, [2]) == Point(1, [2])
    assert Point(1, [2]) != Point(1, [3])
    assert Point(1, [2]) != Other(1, [2])  # another class, the same values
    assert Point(1, [2]) != (1, [2])


def test_a_record_shows_its_slots_in_order() -> None:
    assert repr(Point(1, [2])) == "Point(x=1, y=[2])"
    assert repr(Key("a")) == "Key(n=0, name='a')"


def test_a_plain_record_is_no_key_and_a_frozen_one_is_hashed_by_value() -> None:
    with pytest.raises(TypeError):
        hash(Point(1, [2]))
    assert {Key("a", 1): "x"}[Key("a", 1)] == "x"
    assert len({Key("a"), Key("a"), Key("b")}) == 2
