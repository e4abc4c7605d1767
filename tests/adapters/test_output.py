"""control_room.adapters.output: reading what a CLI printed, whatever it printed."""

from __future__ import annotations

from control_room.adapters.output import as_float, as_int, as_object, json_lines, last_json, last_line


def test_json_lines_yields_the_lines_that_are_json_objects() -> None:
    text = '{"a": 1}\nplain\n  {"b": [2]}  \n[1, 2]\n{broken\n"s"\n{"c": {"d": null}}\n'
    assert list(json_lines(text)) == [{"a": 1}, {"b": [2]}, {"c": {"d": None}}]
    assert list(json_lines("{" * 10_000)) == []  # too deep for json: skipped


def test_last_json_is_the_whole_text_else_its_last_object_line() -> None:
    assert last_json('{\n  "result": "x"\n}\n') == {"result": "x"}
    assert last_json('{"n": 1}\nnoise\n{"n": 2}\ntail\n') == {"n": 2}
    assert last_json('[{"n": 1}]') is None  # a list is no object, and no line starts one
    assert last_json("") is None
    assert last_json("[" * 100_000) is None


def test_last_line_is_the_last_non_blank_line_on_one_line_cut_at_200() -> None:
    assert last_line("first\n  second\t line  \n\n   \n") == "second line"
    assert last_line("") == ""
    assert last_line("x" * 300) == "x" * 200
    assert last_line("real cause\nWARN noise\nDEBUG more\n", skip=("WARN", "DEBUG")) == "real cause"
    assert last_line("WARN only\n", skip=("WARN",)) == ""


def test_as_int_takes_only_ints() -> None:
    assert [as_int(v) for v in (3, -1, 0)] == [3, -1, 0]
    assert [as_int(v) for v in (True, 3.0, "3", None)] == [None, None, None, None]


def test_as_float_takes_finite_numbers_only() -> None:
    assert [as_float(v) for v in (1.5, 2, 0)] == [1.5, 2.0, 0.0]
    assert isinstance(as_float(2), float)
    bad = (False, float("inf"), float("nan"), 10**400, "1.5", None)
    assert [as_float(v) for v in bad] == [None] * len(bad)


def test_as_object_is_a_line_that_is_a_json_object() -> None:
    assert as_object('{"a": 1}') == {"a": 1}
    assert [as_object(t) for t in ("[1]", "noise", '{"a": ', "{" * 10_000, "")] == [None] * 5
