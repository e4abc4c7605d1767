"""control_room.room.results: a task's results folder, run-K archives, reading captured streams."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_room.errors import InvalidError
from control_room.room import results
from control_room.room.layout import Room


def tree(folder: Path) -> list[str]:
    """Every path under ``folder``, relative, sorted (folders end with /)."""
    return sorted(str(p.relative_to(folder)) + ("/" if p.is_dir() else "") for p in folder.rglob("*"))


def test_folder(room: Room) -> None:
    assert results.folder(room, "t1") == room.swarm / "results" / "t1"


@pytest.mark.parametrize("bad", ["../x", "a/b", "T1", ""])
def test_folder_refuses_a_bad_id(room: Room, bad: str) -> None:
    with pytest.raises(InvalidError) as err:
        results.folder(room, bad)
    assert str(err.value) == f"{bad!r} is not a task id (ids match [a-z0-9][a-z0-9._-]{{0,63}})"


def test_archive_of_a_missing_folder_creates_it_empty(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "t1"
    results.archive(folder)
    assert folder.is_dir()
    assert tree(folder) == []


def test_archive_of_an_empty_folder_does_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "t1"
    folder.mkdir()
    results.archive(folder)
    assert tree(folder) == []


def test_archive_moves_files_into_run_1_then_run_2(tmp_path: Path) -> None:
    folder = tmp_path / "t1"
    folder.mkdir()
    (folder / "prompt.md").write_text("first prompt")
    (folder / "meta.json").write_text("{}")
    results.archive(folder)
    assert tree(folder) == ["run-1/", "run-1/meta.json", "run-1/prompt.md"]
    assert (folder / "run-1" / "prompt.md").read_text() == "first prompt"

    results.archive(folder)  # only folders: nothing to keep
    assert tree(folder) == ["run-1/", "run-1/meta.json", "run-1/prompt.md"]

    (folder / "prompt.md").write_text("second prompt")
    (folder / "notes").mkdir()
    (folder / "notes" / "keep.txt").write_text("left alone")
    results.archive(folder)
    assert tree(folder) == [
        "notes/", "notes/keep.txt",
        "run-1/", "run-1/meta.json", "run-1/prompt.md",
        "run-2/", "run-2/prompt.md",
    ]  # fmt: skip
    assert (folder / "run-1" / "prompt.md").read_text() == "first prompt"
    assert (folder / "run-2" / "prompt.md").read_text() == "second prompt"
    assert (folder / "notes" / "keep.txt").read_text() == "left alone"


def test_read_capture_of_a_missing_file(tmp_path: Path) -> None:
    assert results.read_capture(tmp_path / "agent.stdout") == ""
    assert results.read_capture(tmp_path) == ""  # a folder reads as nothing too


def test_read_capture_reads_bytes_that_are_not_utf8_as_latin1_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "agent.stdout"
    path.write_bytes("café".encode("latin-1") + b" and " + "café".encode() + b"\n")  # mixed
    notes: list[str] = []
    assert results.read_capture(path, notes, "stdout") == "café and café\n"
    assert notes == ["stdout is not UTF-8: the bytes that are not were read as Latin-1"]


def test_read_capture_of_utf8_adds_no_note(tmp_path: Path) -> None:
    path = tmp_path / "agent.stdout"
    path.write_bytes("café\n".encode())
    notes: list[str] = []
    assert (results.read_capture(path, notes), notes) == ("café\n", [])


def test_read_capture_reads_text(tmp_path: Path) -> None:
    path = tmp_path / "agent.stderr"
    path.write_bytes("café\nline 2\n".encode())
    assert results.read_capture(path) == "café\nline 2\n"


def test_archive_after_a_gap_takes_the_next_number_after_the_highest(tmp_path: Path) -> None:
    (tmp_path / "run-2").mkdir()
    (tmp_path / "run-notes").mkdir()  # not a run: its name has no number
    (tmp_path / "prompt.md").write_text("x")
    results.archive(tmp_path)
    assert (tmp_path / "run-3" / "prompt.md").read_text() == "x"


def test_a_link_in_place_of_a_results_folder_is_removed_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "a-persons-folder"
    outside.mkdir()
    (outside / "notes.txt").write_text("keep me\n")
    folder = tmp_path / "results" / "t1"
    folder.parent.mkdir()
    folder.symlink_to(outside)  # as an agent planted it for the next run of t1
    results.archive(folder)
    assert folder.is_dir() and not folder.is_symlink() and list(folder.iterdir()) == []
    assert [p.name for p in outside.iterdir()] == ["notes.txt"]  # nothing moved into a run-1/ there
    (tmp_path / "elsewhere").mkdir()
    folder.rmdir()
    folder.parent.rename(tmp_path / "moved")
    folder.parent.symlink_to(tmp_path / "elsewhere")  # the whole of swarm/results/ linked out
    assert results.own(folder, linked_before=True) == folder  # a person's link: it stays
    assert results.parent_linked(folder) and (tmp_path / "elsewhere" / "t1").is_dir()
    (tmp_path / "elsewhere" / "t1").rmdir()
    assert results.own(folder, linked_before=False) == folder  # made by the agent's run: it goes
    assert not folder.parent.is_symlink() and folder.is_dir()
    assert list((tmp_path / "elsewhere").iterdir()) == []
