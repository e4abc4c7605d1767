"""control_room.store.textmerge: read_sides and its error, merge3 (shortcuts, git, conflicts), split_at."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_room import errors, proc
from control_room.errors import InvalidError
from control_room.store.textmerge import PLACEHOLDER, merge3, read_sides, split_at

BASE = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"


def test_read_sides_gives_the_three_texts_in_order(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    for path, text in zip(paths, ("b\n", "o\n", "t\r\n"), strict=True):
        path.write_bytes(text.encode())
    assert read_sides(*paths) == ("b\n", "o\n", "t\r\n")


def test_read_sides_replaces_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    for name in ("base", "ours", "theirs"):
        (tmp_path / name).write_bytes(b"caf\xe9\n")
    assert read_sides(tmp_path / "base", tmp_path / "ours", tmp_path / "theirs") == ("caf\ufffd\n",) * 3


def test_read_sides_names_the_file_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "base").write_text("b\n")
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").write_text("t\n")
    with pytest.raises(InvalidError) as caught:
        read_sides(tmp_path / "base", tmp_path / "ours", tmp_path / "theirs")
    assert str(caught.value) == f"{tmp_path / 'ours'}: cannot read it: Is a directory"
    assert caught.value.exit_code == errors.INVALID
    with pytest.raises(InvalidError) as missing:
        read_sides(tmp_path / "base", tmp_path / "base", tmp_path / "gone")
    assert str(missing.value) == f"{tmp_path / 'gone'}: cannot read it: No such file or directory"


def test_one_side_unchanged_takes_the_other_without_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc, "which", lambda program, env=None: None)  # git is never needed here
    assert merge3(BASE, "ours\n", BASE) == "ours\n"  # theirs unchanged
    assert merge3(BASE, BASE, "theirs\n") == "theirs\n"  # ours unchanged
    assert merge3(BASE, "same\n", "same\n") == "same\n"  # both made the same change
    assert merge3("", "", "") == ""


def test_changes_to_different_lines_merge() -> None:
    ours = BASE.replace("two\n", "TWO (ours)\n")
    theirs = BASE.replace("six\n", "SIX (theirs)\n")
    assert merge3(BASE, ours, theirs) == "one\nTWO (ours)\nthree\nfour\nfive\nSIX (theirs)\nseven\n"


def test_colliding_changes_are_none_never_conflict_markers() -> None:
    assert merge3(BASE, BASE.replace("four", "4 (ours)"), BASE.replace("four", "4 (theirs)")) is None


def test_without_git_a_real_merge_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc, "which", lambda program, env=None: None)
    assert merge3(BASE, BASE.replace("two", "2"), BASE.replace("six", "6")) is None


def test_split_at_cuts_at_the_placeholder_line() -> None:
    text = f"before\n{PLACEHOLDER}\nafter\n"
    assert split_at(text) == ("before\n", "after\n")
    assert split_at(f"before\r\n{PLACEHOLDER}\r\nafter\r\n") == ("before\r\n", "after\r\n")
    assert split_at(PLACEHOLDER) == ("", "")  # the last line, without a line ending


def test_split_at_needs_the_placeholder_once_on_a_line_of_its_own() -> None:
    assert split_at("no placeholder\n") is None
    assert split_at(f"a\n{PLACEHOLDER}\nb\n{PLACEHOLDER}\n") is None  # twice
    assert split_at(f"a {PLACEHOLDER}\nb\n") is None  # inside a line
    assert split_at(f"{PLACEHOLDER}\nsays {PLACEHOLDER} again\n") is None  # once alone, once inside
