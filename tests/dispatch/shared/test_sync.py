"""The git side of a shared room, on real repositories: commit, merge, push, claim."""

from __future__ import annotations

from pathlib import Path

import pytest
from machines import Machine, probe_tasks, shared_room
from support import git, set_gate

from control_room import errors
from control_room.dispatch.shared import claimrefs, sharing, sync
from control_room.room import settings as settings_file
from control_room.room.layout import Room


def share(m: Machine, monkeypatch: pytest.MonkeyPatch) -> sync.Shared:
    monkeypatch.setenv("CONTROL_ROOM_WRITER", m.host)
    found = sharing.shared(m.room, settings_file.load(m.room))
    assert found is not None
    return found


def test_a_claim_is_won_by_one_machine_and_refused_to_the_other(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1))
    s1, s2 = share(m1, monkeypatch), share(m2, monkeypatch)
    won = s1.claim("t001", "", 2e9, {"host": "m1"})
    assert won is not None and claimrefs.pending(m1.room) == {"t001": won}
    assert s2.claim("t001", "", 2e9, {"host": "m2"}) is None  # it exists already: refused
    s2.fetch()
    ref = s2.refs()["t001"]
    assert (ref.sha, ref.host, ref.live) == (won, "m1", True)
    # a take-over must name what it replaces: a stale expectation is refused too
    assert s2.claim("t001", "0" * 40, 2e9, {"host": "m2"}) is None
    assert s2.claim("t001", won, 2e9, {"host": "m2"}) is not None


def test_a_claim_is_kept_in_the_clone_before_its_push_and_a_refused_one_is_let_go(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed just after its push, a clone must know the claim for its own (it took it for another
    clone's with the same host id, and claimed nothing until the lease ran out, on the tree before:
    tests/reliability/test_crash_injection_git.py, ``claim.pushed``)."""
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(2))
    s1, s2 = share(m1, monkeypatch), share(m2, monkeypatch)
    kept: list[dict[str, str]] = []
    real = s1.git

    def git_run(*args: str, **kw: object) -> tuple[int, str, str]:  # what the clone keeps as a push goes out
        if args[0] == "push":
            kept.append(claimrefs.pending(m1.room))
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(s1, "git", git_run)
    won = s1.claim("t001", "", 2e9, {})
    assert won is not None and kept == [{"t001": won}]
    other = s2.claim("t002", "", 2e9, {})
    assert other is not None
    assert s1.claim("t002", "", 2e9, {}) is None and claimrefs.pending(m1.room) == {"t001": won}
    stale = git(m1.path, "rev-parse", "HEAD")  # (an expectation git knows here, not the ref's)
    assert s1.claim("t001", stale, 2e9, {"try": 2}) is None  # refused: the claim kept before stays kept
    assert claimrefs.pending(m1.room) == {"t001": won}


def test_a_push_finishing_a_claim_another_machine_took_is_refused_whole(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1))
    s1, s2 = share(m1, monkeypatch), share(m2, monkeypatch)
    mine = s1.claim("t001", "", 1.0, {})  # a lease long over
    assert mine is not None
    s2.fetch()
    assert s2.claim("t001", mine, 2e9, {}) is not None
    (m1.path / "note.md").write_text("m1's late work\n")
    assert s1.commit("late") is True
    before = git(remote, "rev-parse", "main")
    assert s1.push({"t001": mine}) is False  # the lease is stale: neither ref moves
    assert git(remote, "rev-parse", "main") == before
    assert git(remote, "log", "-1", "--format=%s", f"{claimrefs.PREFIX}t001").startswith(
        "control-room claim: t001 by m2 until "
    )


def test_moves_on_both_sides_merge_without_renames_and_a_conflict_keeps_the_remote(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(2))
    (m1.room.state_dir("passed") / "t001.json").write_text(
        (m1.room.state_dir("queue") / "t001.json").read_text()
    )
    (m1.room.state_dir("queue") / "t001.json").unlink()
    (m1.path / "shared.md").write_text("one\n")
    assert m1.cr("sync").returncode == 0
    assert m2.cr("sync").returncode == 0
    # m1 moves the only file out of passed/; m2 moves t002 into passed/ and edits shared.md too
    (m1.room.state_dir("to-test") / "t001.json").write_text(
        (m1.room.state_dir("passed") / "t001.json").read_text()
    )
    (m1.room.state_dir("passed") / "t001.json").unlink()
    (m1.path / "shared.md").write_text("m1\n")
    (m2.room.state_dir("passed") / "t002.json").write_text(
        (m2.room.state_dir("queue") / "t002.json").read_text()
    )
    (m2.room.state_dir("queue") / "t002.json").unlink()
    (m2.path / "shared.md").write_text("m2\n")
    assert m1.cr("sync").returncode == 0
    done = m2.cr("sync")
    assert done.returncode == 0, done.stderr
    assert "merge: both machines changed shared.md; kept the remote's version" in done.stdout
    assert (m2.path / "shared.md").read_text() == "m1\n"
    assert sorted(p.name for p in m2.room.state_dir("passed").iterdir() if p.suffix == ".json") == [
        "t002.json"
    ]
    assert sorted(p.name for p in m2.room.state_dir("to-test").iterdir() if p.suffix == ".json") == [
        "t001.json"
    ]
    conflict = [e for e in m2.ledger() if e.event == "sync-conflict"]
    assert [e.detail for e in conflict] == [
        "both machines changed shared.md; the remote's version was kept (ours stays in history)"]  # fmt: skip


def test_remote_on_a_room_that_is_no_git_work_tree_is_a_room_fault(run, inside: Room) -> None:  # type: ignore[no-untyped-def]
    set_gate(inside, "remote", "origin")
    done = run("cycle")
    assert done.exit_code == errors.ROOM_INVALID
    assert done.stderr == (
        f"Error: CONTROL.md remote: origin but {inside.root} is not a git work tree (clone the shared "
        "room, or `git init` it and add the remote; docs/many-machines.md)\n"
    )
    assert run("sync").exit_code == errors.ROOM_INVALID
