"""The git side of a shared room, on real repositories: commit, merge, push, claim."""

from __future__ import annotations

from pathlib import Path

import pytest
from machines import Machine, probe_tasks, shared_room
from support import git, set_gate
from test_sync_cost import counting

from control_room import errors
from control_room.dispatch.shared import claimrefs, sharing, sync
from control_room.room import settings as settings_file
from control_room.room import swarm
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
    won = claimrefs.claim(s1, "t001", "", 2e9, {"host": "m1"})
    assert won is not None and claimrefs.pending(m1.room) == {"t001": won}
    assert claimrefs.claim(s2, "t001", "", 2e9, {"host": "m2"}) is None  # it exists already: refused
    s2.fetch()
    ref = s2.refs()["t001"]
    assert (ref.sha, ref.host, ref.live) == (won, "m1", True)
    # a take-over must name what it replaces: a stale expectation is refused too
    assert claimrefs.claim(s2, "t001", "0" * 40, 2e9, {"host": "m2"}) is None
    assert claimrefs.claim(s2, "t001", won, 2e9, {"host": "m2"}) is not None


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
    won = claimrefs.claim(s1, "t001", "", 2e9, {})
    assert won is not None and kept == [{"t001": won}]
    other = claimrefs.claim(s2, "t002", "", 2e9, {})
    assert other is not None
    assert claimrefs.claim(s1, "t002", "", 2e9, {}) is None and claimrefs.pending(m1.room) == {"t001": won}
    stale = git(m1.path, "rev-parse", "HEAD")  # (an expectation git knows here, not the ref's)
    assert (
        claimrefs.claim(s1, "t001", stale, 2e9, {"try": 2}) is None
    )  # refused: the claim kept before stays kept
    assert claimrefs.pending(m1.room) == {"t001": won}


def test_a_push_finishing_a_claim_another_machine_took_is_refused_whole(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1))
    s1, s2 = share(m1, monkeypatch), share(m2, monkeypatch)
    mine = claimrefs.claim(s1, "t001", "", 1.0, {})  # a lease long over
    assert mine is not None
    s2.fetch()
    assert claimrefs.claim(s2, "t001", mine, 2e9, {}) is not None
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


def test_the_end_of_a_cycle_finishes_the_claims_whose_push_landed_without_a_fetch(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cycle's last sync trusts what the clone kept of its own claims (the push's leases check
    it on the remote): no fetch, no scan. A claim whose push may never have landed (kept ahead
    of it only) is left for a sync that fetches to tell."""
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    s1 = share(m1, monkeypatch)
    won = claimrefs.claim(s1, "t001", "", 2e9, {})
    assert won is not None
    claimrefs.remember(m1.room, "t002", "1" * 40)  # as if killed before its claim's push
    (m1.path / "result.md").write_text("t001's result\n")
    s1.ignore_local()  # (once a process: asked already by the cycle's start)
    asked = counting(monkeypatch)
    done = s1.sync(why="a cycle ended", optimistic=True, tries=sync.CYCLE_TRIES)
    assert done.pushed and not done.unpushed
    assert asked == ["add", "commit", "update-ref", "push"]
    main = git(remote, "rev-parse", "main")
    assert git(remote, "rev-parse", f"{claimrefs.PREFIX}t001") == main  # finished with the result
    assert git(m1.path, "rev-parse", f"{sync.TRACKING}main") == main  # our copy says what was pushed
    assert claimrefs.pending(m1.room) == {"t002": "1" * 40}  # not offered to the push: still kept


def test_a_claim_is_finished_only_by_a_push_whose_commit_holds_its_result(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another cycle of the clone finished its task between this sync's commit and its push:
    the push finished that task's claim with a commit still showing it queued, and the other
    machine, holding that commit, claimed and ran the task again (seen under load in
    tests/reliability/test_races.py, two clones of `run --parallel 3`)."""
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    s1 = share(m1, monkeypatch)
    won = claimrefs.claim(s1, "t001", "", 2e9, {})
    assert won is not None
    swarm.move(m1.room, "t001", "queue", "running")
    (m1.path / "other.md").write_text("another cycle's result\n")
    s1.ignore_local()
    real = s1.git

    def git_run(*args: str, **kw: object) -> tuple[int, str, str]:
        said = real(*args, **kw)  # type: ignore[arg-type]
        if args[0] == "commit" and swarm.state_of(m1.room, "t001") == "running":
            swarm.move(m1.room, "t001", "running", "done")  # t001's cycle ends, just after our commit
        return said

    monkeypatch.setattr(s1, "git", git_run)
    assert s1.sync(why="a cycle ended", optimistic=True, tries=sync.CYCLE_TRIES).pushed
    assert git(remote, "rev-parse", f"{claimrefs.PREFIX}t001") == won  # still a live claim
    assert claimrefs.pending(m1.room) == {"t001": won}
    assert s1.sync(why="a cycle ended", optimistic=True, tries=sync.CYCLE_TRIES).pushed  # the next
    main = git(remote, "rev-parse", "main")
    assert git(remote, "rev-parse", f"{claimrefs.PREFIX}t001") == main
    assert git(remote, "ls-tree", "--name-only", "main", "swarm/done/") == "swarm/done/t001.json"


def test_temp_files_and_briefs_never_go_to_the_branch(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither is state, and the room's top folder has no .gitignore of its own: a `stop` whose
    temp file git listed and then could not stat (renamed to STOP meanwhile) failed a cycle's
    `git add -A` (tests/reliability/test_races.py, three clones, under load)."""
    remote, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    s1 = share(m1, monkeypatch)
    for name in (".tmp-0123456789ab", "swarm/.tmp-0123456789ab", ".brief-t001.md", "note.md"):
        (m1.path / name).write_text("x\n")
    assert s1.sync(why="a test", views_alone=True).pushed
    pushed = git(remote, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert "note.md" in pushed
    assert [n for n in pushed if ".tmp-" in n or ".brief-" in n] == []


def test_a_refused_push_puts_our_copy_of_the_remote_branch_back(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1))
    s1, s2 = share(m1, monkeypatch), share(m2, monkeypatch)
    (m2.path / "m2.md").write_text("m2 pushed first\n")
    assert s2.commit("m2") and s2.push({})
    copy = f"{sync.TRACKING}main"
    seen = git(m1.path, "rev-parse", copy)
    (m1.path / "m1.md").write_text("m1's work\n")
    assert s1.commit("m1")
    assert s1.tracking() == seen  # scanned: put back as it was
    assert s1.push({}) is False
    assert git(m1.path, "rev-parse", copy) == seen
    fresh = share(m1, monkeypatch)  # never scanned: dropped (the next fetch writes it)
    assert fresh.push({}) is False
    assert git(m1.path, "for-each-ref", copy) == ""
    fresh.fetch()
    assert git(m1.path, "rev-parse", copy) == git(m2.path, "rev-parse", "HEAD")


def test_a_cycles_start_commits_the_views_alone_only_before_a_merge(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change of the views alone is never pushed alone: with nothing to merge it waits for
    the next commit; before a merge it is committed (a merge needs them committed)."""
    _, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], probe_tasks(1))
    digest = m1.room.cr / "DIGEST.md"
    digest.write_text(digest.read_text() + "refreshed\n")
    s1 = share(m1, monkeypatch)
    s1.fetch()
    head = git(m1.path, "rev-parse", "HEAD")
    assert not s1.sync(why="a cycle starts", fetched=True, tries=sync.CYCLE_TRIES).pushed
    assert git(m1.path, "rev-parse", "HEAD") == head  # nothing committed, nothing merged
    assert git(m1.path, "status", "--porcelain") == "M control-room/DIGEST.md"
    (m2.path / "m2.md").write_text("m2's work\n")
    assert m2.cr("sync").returncode == 0
    s1.fetch()
    s1.sync(why="a cycle starts", fetched=True, tries=sync.CYCLE_TRIES)
    assert git(m1.path, "status", "--porcelain") == ""  # committed, then m2's work merged
    assert (m1.path / "m2.md").exists() and digest.read_text().endswith("refreshed\n")
