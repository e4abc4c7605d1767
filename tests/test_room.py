"""Finding a room (SPEC §2) and laying one out with init."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from support import events

from control_room.errors import InvalidError, NoRoomError
from control_room.room import scaffold, tasks
from control_room.room.layout import STATES, Room, find_room

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
        "plain: not a control room (no control-room/ folder); "
        "create one with `control-room init plain`"
    )


def test_state_dir_refuses_an_unknown_state(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        room.state_dir("limbo")
    assert str(err.value) == (
        "unknown task state 'limbo' (valid: queue, running, done, parked, rejected, cancelled)"
    )


def test_counts_task_files_per_state(room: Room) -> None:
    queue = room.state_dir("queue")
    for name in ("a.json", "b.json", "not even json", ".a.json.lock", ".tmp-123"):
        (queue / name).write_text("{}")
    (room.state_dir("done") / "c.json").write_text("{}")
    rejected = room.state_dir("rejected")
    for name in ("d.json", "d.json.reason", ".hidden.reason"):
        (rejected / name).write_text("why")
    assert room.counts() == {"queue": 3, "running": 0, "done": 1, "parked": 0, "rejected": 1,
                             "cancelled": 0}  # fmt: skip


def test_stopped_is_the_existence_of_stop(room: Room) -> None:
    assert room.stopped() is False
    (room.root / "STOP").write_text("")
    assert room.stopped() is True
    (room.root / "STOP").unlink()
    (room.root / "STOP").symlink_to(room.root / "nowhere")  # even a dangling link brakes
    assert room.stopped() is True


# scaffold -------------------------------------------------------------------------------

EXPECTED_FILES = [
    "AGENTS.md", "CLAUDE.md", "GEMINI.md",
    "control-room/CURRENT_CONTEXT.md", "control-room/ROUTES.md", "control-room/LEDGER.md",
    "control-room/CONTROL.md", "control-room/DIGEST.md",
    "agents/dissector.md", "agents/engineer.md", "agents/analyst.md", "agents/scout.md",
    "agents/orchestrator.md", "agents/reviewer.md",
    "skills/report-format.md",
    "intelligence/levers.md", "intelligence/branches.md", "intelligence/FIELD_GUIDE.md",
    "graveyard/README.md", "swarm/README.md", "swarm/example-speedup.json",
]  # fmt: skip
EXPECTED_DIRS = ["control-room", "swarm", "swarm/queue", "swarm/running", "swarm/done",
                 "swarm/parked", "swarm/rejected", "swarm/cancelled", "swarm/outbox",
                 "swarm/results", "agents", "skills", "intelligence", "graveyard"]  # fmt: skip


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under ``root``: its bytes (None for a folder) and its mtime."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[path.relative_to(root).as_posix()] = (
            None if path.is_dir() else path.read_bytes(), st.st_mtime_ns
        )
    return out


def test_the_plan_holds_every_default_file() -> None:
    plan = scaffold.plan()
    files = {i.rel for i in plan if not i.is_dir}
    dirs = {i.rel for i in plan if i.is_dir}
    assert set(EXPECTED_FILES) <= files
    assert set(EXPECTED_DIRS) == dirs
    assert all(i.text for i in plan if not i.is_dir)


def test_init_lays_out_a_room(tmp_path: Path) -> None:
    root = tmp_path / "new"
    created, kept = scaffold.init(root)
    assert kept == []
    assert set(created) == {f"{d}/" for d in EXPECTED_DIRS} | {
        i.rel for i in scaffold.plan() if not i.is_dir
    }
    for rel in EXPECTED_FILES:
        assert (root / rel).is_file(), rel
    assert not (root / "STOP").exists()
    assert events(root / "control-room" / "LEDGER.md") == ["init"]


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "r"
    scaffold.init(root)
    before = snapshot(root)
    created, kept = scaffold.init(root)
    assert created == []
    assert sorted(kept) == sorted(i.rel for i in scaffold.plan() if not i.is_dir)
    assert snapshot(root) == before


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "planned"
    created, kept = scaffold.init(root, dry_run=True)
    assert not root.exists()
    assert kept == [] and set(EXPECTED_FILES) <= set(created)


def test_dry_run_on_a_room_writes_nothing(room: Room) -> None:
    (room.cr / "DIGEST.md").unlink()
    before = snapshot(room.root)
    created, _ = scaffold.init(room.root, dry_run=True)
    assert created == ["control-room/DIGEST.md"]
    assert snapshot(room.root) == before


def test_init_never_overwrites_an_edited_file(room: Room) -> None:
    (room.root / "AGENTS.md").write_text("our own protocol\n")
    (room.root / "agents" / "engineer.md").unlink()
    created, kept = scaffold.init(room.root)
    assert created == ["agents/engineer.md"]
    assert "AGENTS.md" in kept
    assert (room.root / "AGENTS.md").read_text() == "our own protocol\n"
    template = next(i.text for i in scaffold.plan() if i.rel == "agents/engineer.md")
    assert (room.root / "agents" / "engineer.md").read_text() == template
    assert events(room.ledger) == ["init", "init"]


def test_init_never_follows_or_replaces_a_symlink(room: Room, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("not yours\n")
    (room.root / "CLAUDE.md").unlink()
    (room.root / "CLAUDE.md").symlink_to(target)
    created, kept = scaffold.init(room.root)
    assert created == [] and "CLAUDE.md" in kept
    assert target.read_text() == "not yours\n"


def test_the_example_task_is_valid(room: Room) -> None:
    data = json.loads((room.root / "swarm" / "example-speedup.json").read_text())
    task, problems = tasks.validate(data, expected_id="example-speedup")
    assert problems == []
    assert task["id"] == "example-speedup"


def test_claude_and_gemini_point_at_agents_md(room: Room) -> None:
    for name in ("CLAUDE.md", "GEMINI.md"):
        text = (room.root / name).read_text()
        assert text.count("\n") == 1 and "AGENTS.md" in text


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
    assert room.counts() == {"queue": 2, "running": 0, "done": 0, "parked": 1, "rejected": 0, "cancelled": 0}
