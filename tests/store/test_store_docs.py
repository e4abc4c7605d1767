"""control_room.store.docs (named apart from house/test_docs.py): strict split, render, flow, plain, read."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from control_room.errors import InvalidError, NotFoundError
from control_room.store import cache, docs

# split ------------------------------------------------------------------------------------


def test_split_without_front_matter_gives_an_empty_mapping_and_the_text() -> None:
    text = "# A title\n\nsome body text"
    assert docs.split(text, "a.md") == ({}, text)


def test_split_good_front_matter() -> None:
    text = "---\nrole: engineer\nmay_edit: [src/, tests/]\nwrites_tasks: false\nmodel:\n---\n# Role\n\nbody\n"
    meta, body = docs.split(text, "agents/engineer.md")
    assert meta == {"role": "engineer", "may_edit": ["src/", "tests/"], "writes_tasks": False, "model": None}
    assert list(meta) == ["role", "may_edit", "writes_tasks", "model"]
    assert body == "# Role\n\nbody"


def test_split_empty_front_matter() -> None:
    assert docs.split("---\n---\nbody", "a.md") == ({}, "body")


def test_split_unclosed_front_matter() -> None:
    with pytest.raises(InvalidError) as err:
        docs.split("---\nrole: engineer\nbody without a close\n", "agents/x.md")
    assert str(err.value) == "agents/x.md: the front matter opened on line 1 is never closed with ---"


def test_split_broken_yaml_names_the_file_and_the_line() -> None:
    with pytest.raises(InvalidError) as err:
        docs.split('---\nreason: "never closed\n---\nbody\n', "graveyard/x.md")
    message = str(err.value)
    assert message.startswith("graveyard/x.md: line 2: front matter is not valid YAML: ")
    assert message == "graveyard/x.md: line 2: front matter is not valid YAML: found unexpected end of stream"
    assert "\n" not in message


def test_split_broken_yaml_on_a_later_line() -> None:
    with pytest.raises(InvalidError) as err:
        docs.split("---\na: 1\n  b: 2\n---\n", Path("CONTROL.md"))
    assert (
        str(err.value)
        == "CONTROL.md: line 3: front matter is not valid YAML: mapping values are not allowed here"
    )


@pytest.mark.parametrize("front", ["- a\n- b", "42", "just a string"])
def test_split_front_matter_that_is_not_a_mapping(front: str) -> None:
    with pytest.raises(InvalidError) as err:
        docs.split(f"---\n{front}\n---\nbody\n", "CONTROL.md")
    assert str(err.value) == "CONTROL.md: front matter must be a mapping of keys to values"


def test_has_front_matter() -> None:
    assert docs.has_front_matter("---\na: 1\n---\n") is True
    assert docs.has_front_matter("\ufeff---\na: 1\n---\n") is True
    assert docs.has_front_matter("# title\n---\n") is False


# render, flow, plain ------------------------------------------------------------------------


def test_render_then_split_round_trips_keeping_the_order() -> None:
    meta = {"zeta": 1, "alpha": "two words", "items": [1, "x"], "nested": {"b": True, "a": None}}
    text = docs.render(meta, "# Body\n\nline")
    assert text == (
        "---\nzeta: 1\nalpha: two words\nitems:\n- 1\n- x\n"
        "nested:\n  b: true\n  a: null\n---\n\n# Body\n\nline\n"
    )
    back, body = docs.split(text, "a.md")
    assert back == meta
    assert list(back) == ["zeta", "alpha", "items", "nested"]
    assert body == "# Body\n\nline"


def test_flow_is_one_line_yaml() -> None:
    assert docs.flow([]) == "[]"
    assert docs.flow({}) == "{}"
    assert docs.flow([{"a": 1, "b": "x y"}, {"c": [1, 2]}]) == "[{a: 1, b: x y}, {c: [1, 2]}]"
    assert docs.flow("text") == "text"
    assert docs.flow(None) == "null"
    long = ["word"] * 200
    assert "\n" not in docs.flow(long)


def test_plain_turns_dates_into_strings() -> None:
    meta = {
        "killed": datetime.date(2024, 1, 2),
        "n": 3,
        "x": 0.5,
        "ok": True,
        "l": [1],
        "d": {"a": 1},
        "none": None,
    }
    assert docs.plain(meta) == {
        "killed": "2024-01-02", "n": 3, "x": 0.5, "ok": True, "l": [1], "d": {"a": 1}, "none": None,
    }  # fmt: skip


def test_plain_of_a_parsed_yaml_date() -> None:
    meta, _ = docs.split("---\nkilled: 2024-01-02\n---\nbody\n", "t.md")
    assert meta == {"killed": datetime.date(2024, 1, 2)}
    assert docs.plain(meta) == {"killed": "2024-01-02"}


def test_plain_turns_dates_into_strings_at_every_depth() -> None:
    """Found by the fuzz tests: `evidence: [2024-01-02]` in a tombstone kept its date, and
    `graveyard list --json` died on it (a date is no JSON)."""
    meta, _ = docs.split("---\nl: [2024-01-02]\nd: {1: 2024-01-02}\n---\n", "t.md")
    assert docs.plain(meta) == {"l": ["2024-01-02"], "d": {"1": "2024-01-02"}}


def test_split_yaml_that_libyaml_refuses_is_one_line_naming_the_file() -> None:
    """Found by the fuzz tests: an escape of a lone surrogate passes PyYAML's check, and the
    front matter parser's libyaml then raised its ScannerError past every caller."""
    with pytest.raises(InvalidError) as err:
        docs.split('---\n{"\\uD800": 1}\n---\nbody\n', "graveyard/x.md")
    message = str(err.value)
    assert message.startswith("graveyard/x.md: line ") and "front matter is not valid YAML: " in message
    assert "\n" not in message


# read ------------------------------------------------------------------------------------


def test_read_with_a_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "tomb.md"
    cache_file = tmp_path / ".cache" / "tomb-x"
    path.write_text("---\nroute: x\nkilled: 2024-01-02\n---\nwhy it died\n", encoding="utf-8")
    first = docs.read(path, cache_file)
    assert first == ({"route": "x", "killed": "2024-01-02"}, "why it died")
    assert cache.load(cache_file) == {
        "source": cache.fingerprint(path), "value": [{"route": "x", "killed": "2024-01-02"}, "why it died"],
    }  # fmt: skip
    assert docs.read(path, cache_file) == first
    path.write_text("---\nroute: x\nreason: a longer reason now\n---\nrewritten body\n", encoding="utf-8")
    assert docs.read(path, cache_file) == ({"route": "x", "reason": "a longer reason now"}, "rewritten body")


def test_read_without_a_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("---\na: 1\n---\nb\n", encoding="utf-8")
    assert docs.read(path) == ({"a": 1}, "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]


def test_read_of_a_broken_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "CONTROL.md"
    path.write_text("---\na: [\n", encoding="utf-8")
    with pytest.raises(InvalidError) as err:
        docs.read(path, tmp_path / "cache")
    assert str(err.value) == f"{path}: the front matter opened on line 1 is never closed with ---"


def test_read_of_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "gone.md"
    with pytest.raises(NotFoundError) as err:
        docs.read(path, tmp_path / "cache", missing="no tombstone for route x")
    assert str(err.value) == "no tombstone for route x"
    with pytest.raises(NotFoundError) as err:
        docs.read(path)
    assert str(err.value) == f"{path} is missing"
    assert (tmp_path / "cache").exists() is False


def test_render_split_round_trip_with_content_and_handler_keys() -> None:
    """python-frontmatter's Post takes these two names as arguments: they must stay data."""
    meta = {"b": 1, "content": "c", "handler": "h"}
    assert docs.split(docs.render(meta, "body"), "x.md") == (meta, "body")


def test_a_byte_order_mark_does_not_hide_the_front_matter() -> None:
    assert docs.split("\ufeff---\na: 1\n---\nbody\n", "CONTROL.md") == ({"a": 1}, "body")


def test_a_yaml_error_without_a_line_says_so_in_one_clean_line() -> None:
    with pytest.raises(InvalidError) as err:
        docs.split("---\na: \x07\n---\n", "w.md")
    assert str(err.value).startswith("w.md: front matter is not valid YAML: ")


# what a person or an agent wrote cannot break the front matter -----------------------------

MARKERS = {
    "verdict": "no gain\n---\nreopen_if: forged",
    "dots": "a\n...\nb",
    "indented": "a\n  ---\n\tb  \n\n",
    "breaks": "a\r\nb\x85c\u2028d\u2029e",
    "alone": "---",
    "items": ["x\n---\ny", {"k": "...\n---"}],
}


def test_a_text_with_marker_lines_is_written_on_its_keys_line_and_reads_back_exactly() -> None:
    text = docs.render(MARKERS, "# Body\n\n---\n\nmore")
    block = text.split("\n---\n", 1)[0].splitlines()[1:]
    assert not any(line.rstrip() in ("---", "...") for line in block)
    assert block[0] == 'verdict: "no gain\\n---\\nreopen_if: forged"'
    assert docs.split(text, "a.md") == (MARKERS, "# Body\n\n---\n\nmore")
    line = docs.flow(MARKERS)
    assert "\n" not in line and docs.split(f"---\nx: {line}\n---\n", "a.md")[0] == {"x": MARKERS}


def test_a_value_indented_under_its_key_never_ends_the_front_matter() -> None:
    written_before = "---\ncandidate: r\nverdict: 'a\n\n  ---\n\n  b'\nwhy: 'c\n\n  ...\n\n  d'\n---\n\n# r\n"
    assert docs.split(written_before, "graveyard/r.md") == ({"candidate": "r", "verdict": "a\n---\nb",
                                                             "why": "c\n...\nd"}, "# r")  # fmt: skip
