"""control_room.store.files: atomic writes, exclusive creation, read-modify-write."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import refuse_new_files

from control_room.errors import IO_ERROR, ConflictError, ControlRoomError
from control_room.store.files import TMP_PREFIX, atomic_write, create_exclusive, update


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TMP_PREFIX))


# atomic_write ---------------------------------------------------------------------------


def test_atomic_write_creates_file_with_content(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    atomic_write(path, "héllo\nworld\n")
    assert path.read_bytes() == "héllo\nworld\n".encode()
    assert leftovers(tmp_path) == []


def test_atomic_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write(path, b"new bytes")
    assert path.read_bytes() == b"new bytes"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_atomic_write_explicit_mode(tmp_path: Path) -> None:
    path = tmp_path / "x.sh"
    atomic_write(path, "#!/bin/sh\n", mode=0o750)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750


# create_exclusive -----------------------------------------------------------------------


def test_create_exclusive_creates_a_new_file(tmp_path: Path) -> None:
    path = tmp_path / "STOP"
    assert create_exclusive(path, "first\n") is True
    assert path.read_text() == "first\n"
    assert leftovers(tmp_path) == []


def test_create_exclusive_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "STOP"
    path.write_text("a person's text\n")
    assert create_exclusive(path, "ours\n") is False
    assert path.read_text() == "a person's text\n"
    assert leftovers(tmp_path) == []


# update ---------------------------------------------------------------------------------


def test_update_applies_the_change(tmp_path: Path) -> None:
    path = tmp_path / "ROUTES.md"
    path.write_text("one\n")
    assert update(path, lambda t: t + "two\n") == "one\ntwo\n"
    assert path.read_text() == "one\ntwo\n"
    assert leftovers(tmp_path) == []


def test_update_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "new.md"
    update(path, lambda t: t + "made\n")
    assert path.read_text() == "made\n"


def test_update_without_change_does_not_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "same.md"
    path.write_text("same\n")
    inode = os.stat(path).st_ino
    update(path, lambda t: t)
    assert os.stat(path).st_ino == inode


def test_update_reapplies_after_a_concurrent_edit(tmp_path: Path) -> None:
    path = tmp_path / "ROUTES.md"
    path.write_text("base\n")
    calls: list[str] = []

    def change(text: str) -> str:
        calls.append(text)
        if len(calls) == 1:  # a person saves the file between our read and our write
            path.write_text("base\nperson's line\n")
        return text + "our line\n"

    result = update(path, change)
    assert calls == ["base\n", "base\nperson's line\n"]
    assert result == "base\nperson's line\nour line\n"
    assert path.read_text() == "base\nperson's line\nour line\n"


def test_update_gives_up_when_the_file_keeps_changing(tmp_path: Path) -> None:
    path = tmp_path / "ROUTES.md"
    path.write_text("v0\n")
    calls = 0

    def change(text: str) -> str:
        nonlocal calls
        calls += 1
        path.write_text(f"person's edit {calls}\n")
        return text + "ours\n"

    with pytest.raises(ConflictError) as err:
        update(path, change)
    assert str(err.value) == (
        f"{path}: it kept changing while control-room was writing it; nothing was written, try again"
    )
    assert calls == 3
    assert path.read_text() == "person's edit 3\n"
    assert leftovers(tmp_path) == []


# a write the system refuses names the file meant, never a temp or lock file -------------------


@pytest.mark.parametrize("write", [atomic_write, create_exclusive])
def test_a_refused_write_names_the_target_not_its_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: Callable[[Path, str], object]
) -> None:
    path = tmp_path / "ROUTES.md"
    refuse_new_files(monkeypatch, tmp_path)
    with pytest.raises(ControlRoomError) as err:
        write(path, "text\n")
    assert (str(err.value), err.value.exit_code) == (f"cannot write {path}: Read-only file system", IO_ERROR)
    assert list(tmp_path.iterdir()) == []


def test_a_refused_update_names_the_file_not_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sibling lock is the first file an update creates: its refusal names the file."""
    path = tmp_path / "ROUTES.md"
    refuse_new_files(monkeypatch, tmp_path)
    with pytest.raises(OSError) as err:
        update(path, lambda text: text + "row\n")
    assert (err.value.filename, err.value.strerror) == (str(path), "Read-only file system")
    assert list(tmp_path.iterdir()) == []


def test_update_waits_for_a_save_in_place_to_finish(tmp_path: Path) -> None:
    """An editor saving in place truncates, then writes: an update that read the empty file in
    between would merge nothing, and the person's save would land in the file its rename replaced."""
    import threading

    path = tmp_path / "CURRENT_CONTEXT.md"
    path.write_text("")  # mid-save: empty, saved a moment ago
    writer = threading.Timer(0.03, lambda: path.write_text("the person's notes\n"))
    writer.start()
    try:
        seen: list[str] = []
        update(path, lambda text: seen.append(text) or text + "auto\n")
    finally:
        writer.join()
    assert seen[-1] == "the person's notes\n" and path.read_text() == "the person's notes\nauto\n"
    path.write_text("")
    old = time.time() - 60
    os.utime(path, (old, old))  # empty for a minute: taken as empty at once
    assert update(path, lambda text: text + "auto\n") == "auto\n"


def test_text_with_a_lone_surrogate_is_written_with_the_replacement_character(tmp_path: Path) -> None:
    """Found by the fuzz tests: `stop --reason` with a byte that was not UTF-8 died on a
    UnicodeEncodeError (and so did `route add --title`): the store writes it as U+FFFD."""
    atomic_write(tmp_path / "a.md", "bad \udcff byte")
    assert create_exclusive(tmp_path / "b.md", "bad \ud800 one")
    assert update(tmp_path / "c.md", lambda _: "x\udcff") == "x\udcff"
    assert [(tmp_path / n).read_text(encoding="utf-8") for n in ("a.md", "b.md", "c.md")] == [
        "bad \ufffd byte", "bad \ufffd one", "x\ufffd",
    ]  # fmt: skip
