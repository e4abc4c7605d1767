"""control_room.room.scaffold: init lays out a room (SPEC §2) and never overwrites a file."""

from __future__ import annotations

import json
from pathlib import Path

from support import events

from control_room.room import scaffold, tasks
from control_room.room.layout import Room

EXPECTED_FILES = [
    "AGENTS.md", "CLAUDE.md", "GEMINI.md",
    "control-room/CURRENT_CONTEXT.md", "control-room/ROUTES.md", "control-room/LEDGER.md",
    "control-room/CONTROL.md", "control-room/DIGEST.md",
    "agents/dissector.md", "agents/engineer.md", "agents/analyst.md", "agents/scout.md",
    "agents/orchestrator.md", "agents/reviewer.md", "agents/arbiter.md",
    "agents/lenses/correctness.md", "agents/lenses/falsifier.md", "agents/lenses/security.md",
    "agents/lenses/claims.md", "agents/lenses/arbiter.md",
    "skills/report-format.md",
    "intelligence/levers.md", "intelligence/branches.md", "intelligence/FIELD_GUIDE.md",
    "graveyard/README.md", "swarm/README.md", "swarm/example-speedup.json",
]  # fmt: skip
EXPECTED_DIRS = ["control-room", "swarm", "swarm/queue", "swarm/running", "swarm/passed",
                 "swarm/to-test", "swarm/done",
                 "swarm/parked", "swarm/rejected", "swarm/cancelled", "swarm/outbox",
                 "swarm/results", "agents", "skills", "intelligence", "graveyard",
                 "agents/lenses"]  # fmt: skip


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under ``root``: its bytes (None for a folder) and its mtime."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[path.relative_to(root).as_posix()] = (
            None if path.is_dir() else path.read_bytes(),
            st.st_mtime_ns,
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
    created, kept, _ = scaffold.init(root)
    assert kept == []
    assert set(created) == {f"{d}/" for d in EXPECTED_DIRS} | {i.rel for i in scaffold.plan() if not i.is_dir}
    for rel in EXPECTED_FILES:
        assert (root / rel).is_file(), rel
    assert not (root / "STOP").exists()
    assert events(root / "control-room" / "LEDGER.md") == ["init"]


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "r"
    scaffold.init(root)
    before = snapshot(root)
    created, kept, _ = scaffold.init(root)
    assert created == []
    assert sorted(kept) == sorted(i.rel for i in scaffold.plan() if not i.is_dir)
    assert snapshot(root) == before


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "planned"
    created, kept, _ = scaffold.init(root, dry_run=True)
    assert not root.exists()
    assert kept == [] and set(EXPECTED_FILES) <= set(created)


def test_dry_run_on_a_room_writes_nothing(room: Room) -> None:
    (room.cr / "DIGEST.md").unlink()
    before = snapshot(room.root)
    created, _, _ = scaffold.init(room.root, dry_run=True)
    assert created == ["control-room/DIGEST.md"]
    assert snapshot(room.root) == before


def test_init_never_overwrites_an_edited_file(room: Room) -> None:
    (room.root / "AGENTS.md").write_text("our own protocol\n")
    (room.root / "agents" / "engineer.md").unlink()
    created, kept, _ = scaffold.init(room.root)
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
    created, kept, _ = scaffold.init(room.root)
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
