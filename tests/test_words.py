"""control_room.words: count() agrees with its noun, with thousands separators."""

from __future__ import annotations

from control_room.words import count


def test_count_agrees_with_its_noun() -> None:
    assert [count(n, "run") for n in (0, 1, 2, 1234)] == ["0 runs", "1 run", "2 runs", "1,234 runs"]
    assert count(1, "older or smaller detail") == "1 older or smaller detail"
    assert count(3, "entry", "entries") == "3 entries"


def test_an_irregular_plural_is_used_only_for_a_count_other_than_one() -> None:
    assert count(1, "entry", "entries") == "1 entry"
    assert count(0, "entry", "entries") == "0 entries"
    assert count(-1, "line") == "-1 lines"


def test_large_counts_get_thousands_separators() -> None:
    assert count(1_000_000, "line") == "1,000,000 lines"
    assert count(999, "line") == "999 lines"
