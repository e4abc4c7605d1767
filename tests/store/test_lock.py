"""control_room.store.lock: take, is_free, held across processes (dies with them), the sibling .NAME.lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from control_room.errors import ConflictError, RoomInvalidError
from control_room.store import lock

# A second process: holds the lock file argv[1] (lock.held) until its stdin closes.
HOLDER = """
import sys
from pathlib import Path
from control_room.store import lock

with lock.held(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def start_holder(path: Path) -> subprocess.Popen[str]:
    """A process holding lock file ``path``; returns once it holds it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "held\n"
    return proc


def test_take_returns_a_held_fd_and_a_second_take_gets_none(tmp_path: Path) -> None:
    path = tmp_path / ".slot-1.lock"
    first = lock.take(path)
    assert isinstance(first, int)
    try:
        assert lock.take(path) is None
        assert lock.take(path) is None  # still held: refusing does not free it
    finally:
        os.close(first)
    second = lock.take(path)
    assert isinstance(second, int)
    os.close(second)


def test_take_creates_the_lock_file(tmp_path: Path) -> None:
    path = tmp_path / ".slot-1.lock"
    fd = lock.take(path)
    assert fd is not None
    os.close(fd)
    assert path.is_file()
    assert path.read_bytes() == b""


def test_is_free(tmp_path: Path) -> None:
    path = tmp_path / ".slot-1.lock"
    assert lock.is_free(path) is True
    assert lock.is_free(path) is True  # testing it does not keep it
    fd = lock.take(path)
    assert fd is not None
    assert lock.is_free(path) is False
    os.close(fd)
    assert lock.is_free(path) is True


def test_is_free_is_false_when_the_lock_file_cannot_be_opened(tmp_path: Path) -> None:
    assert lock.is_free(tmp_path / "no-such-folder" / ".slot-1.lock") is False


def test_held_in_another_process_blocks_take_until_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".claim.lock"
    proc = start_holder(path)
    try:
        assert lock.take(path) is None
        assert lock.is_free(path) is False
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the holder leaves its with block and exits
        assert proc.wait(timeout=60) == 0
    fd = lock.take(path)
    assert isinstance(fd, int)
    os.close(fd)


def test_a_lock_dies_with_its_process(tmp_path: Path) -> None:
    path = tmp_path / ".claim.lock"
    proc = start_holder(path)
    try:
        assert lock.take(path) is None
    finally:
        proc.kill()  # SIGKILL: the holder never reaches its finally
        proc.wait(timeout=60)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
    assert proc.returncode == -9
    fd = lock.take(path)
    assert isinstance(fd, int)
    os.close(fd)


def test_held_waits_for_the_other_process_then_holds(tmp_path: Path) -> None:
    path = tmp_path / ".claim.lock"
    proc = start_holder(path)
    assert proc.stdin is not None
    proc.stdin.close()  # lets go at some point; held must wait for it, however long
    with lock.held(path):
        assert lock.take(path) is None  # ours now: another open file description is refused
    assert proc.wait(timeout=60) == 0
    assert lock.is_free(path) is True


def test_sibling_is_the_hidden_dot_name_lock_beside_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "control-room"
    folder.mkdir()
    path = folder / "ROUTES.md"
    with lock.sibling(path, timeout=0):
        assert sorted(p.name for p in folder.iterdir()) == [".ROUTES.md.lock"]
        assert lock.take(folder / ".ROUTES.md.lock") is None
    assert path.exists() is False  # the file itself is not touched
    assert lock.is_free(folder / ".ROUTES.md.lock") is True


def test_sibling_refuses_at_once_while_another_process_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "ROUTES.md"
    proc = start_holder(tmp_path / ".ROUTES.md.lock")
    try:
        with pytest.raises(ConflictError) as err, lock.sibling(path, timeout=0):
            pytest.fail("the block ran without the lock")
        assert str(err.value) == f"{path}: another control-room process holds its lock (waited 0s)"
        assert err.value.exit_code == 5
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    with lock.sibling(path, timeout=0):
        assert lock.is_free(tmp_path / ".ROUTES.md.lock") is False


def test_sibling_releases_when_the_block_raises(tmp_path: Path) -> None:
    path = tmp_path / "CONTROL.md"
    with pytest.raises(RuntimeError), lock.sibling(path, timeout=0):
        raise RuntimeError("boom")
    assert lock.is_free(tmp_path / ".CONTROL.md.lock") is True


def test_a_lock_file_that_is_a_link_is_refused_never_created_through(tmp_path: Path) -> None:
    path = tmp_path / ".claim.lock"
    path.symlink_to(tmp_path / "outside" / "made")  # dangling: opening it O_CREAT would make it
    (tmp_path / "outside").mkdir()
    linked = r"\.claim\.lock is a link \(to .*/outside/made\), not a file"
    with pytest.raises(RoomInvalidError, match=linked), lock.held(path):
        pass
    with pytest.raises(RoomInvalidError):
        lock.take(path)
    assert list((tmp_path / "outside").iterdir()) == []
