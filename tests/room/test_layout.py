"""control_room.room.layout: finding a room (SPEC §2), its state folders, STOP and the cached task counts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from control_room.errors import InvalidError, NoRoomError
from control_room.room import scaffold
from control_room.room.layout import STATES, Room, find_room
from control_room.store import cache

# find_room ------------------------------------------------------------------------------


def test_find_room_from_its_root(room: Room) -> None:
    os.chdir(room.root)
    assert find_room() == Room(room.root)


def test_find_room_from_a_nested_folder(room: Room) -> None:
    deep = room.root / "swarm" / "results" / "t1" / "deeper"
    deep.mkdir(parents=True)
    os.chdir(deep)
    assert find_room() == Room(room.root)
    assert find_room(cwd=deep) == Room(room.root)


def test_find_room_by_explicit_argument(room: Room, tmp_path: Path) -> None:
    assert find_room("room") == Room(room.root)  # relative to the cwd, tmp_path
    assert find_room(room.root) == Room(room.root)


def test_find_room_by_environment(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_ROOM", str(room.root))
    assert find_room() == Room(room.root)


def test_the_explicit_argument_wins_over_the_environment(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    scaffold.init(other)
    monkeypatch.setenv("CONTROL_ROOM", str(other))
    assert find_room(room.root) == Room(room.root)
    assert find_room() == Room(other)


def test_outside_a_room(tmp_path: Path) -> None:
    with pytest.raises(NoRoomError) as err:
        find_room()
    assert str(err.value) == (
        f"not inside a control room ({tmp_path} and its parents have no control-room/ folder); "
        "run `control-room init` or pass --room DIR"
    )
    assert err.value.exit_code == 3


def test_a_named_folder_that_is_not_a_room(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NoRoomError) as err:
        find_room("plain")
    assert str(err.value) == (
        "plain: not a control room (no control-room/ folder); create one with `control-room init plain`"
    )


# the room's folders and files -------------------------------------------------------------


def test_state_dir_refuses_an_unknown_state(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        room.state_dir("limbo")
    assert str(err.value) == (
        "unknown task state 'limbo' "
        "(valid: queue, running, passed, to-test, done, parked, rejected, cancelled)"
    )


def test_counts_task_files_per_state(room: Room) -> None:
    queue = room.state_dir("queue")
    for name in ("a.json", "b.json", "not even json", ".a.json.lock", ".tmp-123"):
        (queue / name).write_text("{}")
    (room.state_dir("done") / "c.json").write_text("{}")
    rejected = room.state_dir("rejected")
    for name in ("d.json", "d.json.reason", ".hidden.reason"):
        (rejected / name).write_text("why")
    assert room.counts() == {"queue": 3, "running": 0, "passed": 0, "to-test": 0, "done": 1, "parked": 0,
                             "rejected": 1, "cancelled": 0}  # fmt: skip


def test_stopped_is_the_existence_of_stop(room: Room) -> None:
    assert room.stopped() is False
    (room.root / "STOP").write_text("")
    assert room.stopped() is True
    (room.root / "STOP").unlink()
    (room.root / "STOP").symlink_to(room.root / "nowhere")  # even a dangling link brakes
    assert room.stopped() is True


def test_counts_are_cached_against_folder_mtimes_and_never_go_stale(room: Room) -> None:
    queue = room.state_dir("queue")
    for n in range(3):
        (queue / f"t{n}.json").write_text("{}")
    (queue / ".t0.json.lock").write_text("")
    old = time.time() - 60
    for state in STATES:
        os.utime(room.state_dir(state), (old, old))  # folders untouched for a minute
    assert room.counts()["queue"] == 3
    assert (room.cache / "counts").exists()  # kept: the mtimes are old enough
    os.unlink(queue / "t1.json")  # a name removed: the folder's mtime moves on
    assert room.counts()["queue"] == 2
    (room.state_dir("parked") / "p.json").write_text("{}")
    (room.state_dir("parked") / "p.reason").write_text("why")
    assert room.counts() == {
        "queue": 2,
        "running": 0,
        "passed": 0,
        "to-test": 0,
        "done": 0,
        "parked": 1,
        "rejected": 0,
        "cancelled": 0,
    }


def test_a_claim_beside_a_running_task_is_not_a_task(room: Room) -> None:
    running = room.state_dir("running")
    (running / "slow6.json").write_text("{}")
    (running / "slow6.claim").write_text("{}")  # which cycle runs it: dispatch/round/claims.py
    (room.state_dir("queue") / "odd.claim").write_text("{}")  # in the queue, a file the scan rejects
    assert room.counts() == {
        "queue": 1,
        "running": 1,
        "passed": 0,
        "to-test": 0,
        "done": 0,
        "parked": 0,
        "rejected": 0,
        "cancelled": 0,
    }


def test_counts_cached_before_claims_were_skipped_are_not_trusted(room: Room) -> None:
    running = room.state_dir("running")
    (running / "t.json").write_text("{}")
    (running / "t.claim").write_text("{}")
    old = time.time() - 60
    os.utime(running, (old, old))
    st = os.stat(running)
    cache.save(room.cache / "counts", {"running": ((st.st_mtime_ns, st.st_ino), 2)})  # the old format
    assert room.counts()["running"] == 1
