"""dispatch.shared.lost_claims: which claims are lost, set_aside, let_go, conflicts, on real git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support import entries, git, probe_task

from control_room.dispatch.round import claims
from control_room.dispatch.shared import claimrefs, lost_claims
from control_room.dispatch.shared.claimrefs import EMPTY_TREE, Ref
from control_room.room import scaffold
from control_room.room.layout import Room

OURS, THEIRS = "c" * 40, "d" * 40  # claim commits: ours (remembered here) and another machine's
REMOTE_TASK = json.dumps(probe_task("t1"))  # t1's file as the remote's branch has it


class Share:
    """What lost_claims uses of ``dispatch.shared.sync.Shared``: real git in the room's clone; the remote
    as last fetched (its claim refs, its branch's commit) is what the test says it is."""

    def __init__(self, room: Room, host: str, refs: dict[str, Ref], theirs: str | None = None) -> None:
        self.room, self.host, self.seen, self.theirs = room, host, refs, theirs

    def git(self, *args: str, timeout_s: float = 60.0) -> tuple[int, str, str]:
        done = subprocess.run(["git", "-C", str(self.room.root), *args], capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr

    def must(self, *args: str) -> str:
        code, out, err = self.git(*args)
        assert code == 0, err
        return out

    def refs(self) -> dict[str, Ref]:
        return self.seen

    def tracking(self) -> str | None:
        return self.theirs

    def commit(self, message: str) -> bool:
        self.must("add", "-A")
        if self.git("diff", "--cached", "--quiet")[0] == 0:
            return False
        self.must("commit", "-q", "-m", message)
        return True


@pytest.fixture(scope="module")
def clone_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A room that is a git work tree with one commit, the remote's branch: t1 queued, and its
    outbox note. Made once, copied for each test (a copy costs less than the git runs)."""
    root = tmp_path_factory.mktemp("clone") / "room"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONTROL_ROOM_WRITER", "tester")
        scaffold.init(root)
    room = Room(root)
    (room.state_dir("queue") / "t1.json").write_text(REMOTE_TASK)
    (room.swarm / "outbox" / "t1.md").write_text("the remote's prompt\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the remote's branch")
    return root


@pytest.fixture
def clone(clone_once: Path, tmp_path: Path) -> Room:
    return Room(shutil.copytree(clone_once, tmp_path / "room", symlinks=True))


def finished_by(room: Room, author: str) -> str:
    """A result commit (a finished claim) written by ``author``."""
    argv = ["-c", f"user.name={author}", "-c", "user.email=x@example.com", "commit-tree", EMPTY_TREE]
    return git(room.root, *argv, "-m", "control-room: a cycle ended")


def ran_here(room: Room) -> None:
    """This machine ran t1 to its end: the task passed, its note and results written, committed."""
    (room.state_dir("queue") / "t1.json").unlink()
    (room.state_dir("passed") / "t1.json").write_text(json.dumps(probe_task("t1", objective="ours")))
    (room.swarm / "outbox" / "t1.md").write_text("our prompt\n")
    (room.swarm / "results" / "t1").mkdir()
    (room.swarm / "results" / "t1" / "report.md").write_text("our report\n")
    git(room.root, "add", "-A")
    git(room.root, "commit", "-q", "-m", "our run of t1")


def swarm_files(room: Room) -> list[str]:
    """Every file in the swarm's folders (not swarm/README.md and the like)."""
    found = room.swarm.glob("*/**/*")
    return sorted(p.relative_to(room.swarm).as_posix() for p in found if p.is_file())


# lost ---------------------------------------------------------------------------------------------


def test_no_claim_of_ours_is_none_lost(room: Room) -> None:
    assert lost_claims.lost(Share(room, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)})) == {}


def test_a_claim_the_remote_still_holds_or_never_saw_is_not_lost(room: Room) -> None:
    claimrefs.remember(room, "t1", OURS)
    claimrefs.remember(room, "t2", OURS)
    share = Share(room, "m1", {"t1": Ref("t1", OURS, "m1", 2e9)})  # t1: ours still; t2: no ref
    assert lost_claims.lost(share) == {}
    assert claimrefs.pending(room) == {"t1": OURS, "t2": OURS}


def test_a_claim_another_machine_holds_now_is_lost_to_it(room: Room) -> None:
    claimrefs.remember(room, "t1", OURS)
    assert lost_claims.lost(Share(room, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)})) == {"t1": "m2"}
    assert claimrefs.pending(room) == {"t1": OURS}  # lost() only looks


def test_a_claim_finished_by_another_machine_is_lost_to_the_author_of_its_result(clone: Room) -> None:
    claimrefs.remember(clone, "t1", OURS)
    result = finished_by(clone, "control-room (m2)")
    assert lost_claims.lost(Share(clone, "m1", {"t1": Ref("t1", result, None, 0.0)})) == {"t1": "m2"}


def test_a_result_whose_author_is_unknown_is_lost_to_another_machine(clone: Room) -> None:
    claimrefs.remember(clone, "t1", OURS)
    claimrefs.remember(clone, "t2", OURS)
    by_hand = finished_by(clone, "a person")
    share = Share(clone, "m1", {"t1": Ref("t1", by_hand, None, 0.0), "t2": Ref("t2", "0" * 40, None, 0.0)})
    assert lost_claims.lost(share) == {"t1": "another machine", "t2": "another machine"}


def test_a_claim_we_finished_or_hold_anew_ourselves_is_forgotten_not_lost(clone: Room) -> None:
    claimrefs.remember(clone, "t1", OURS)
    claimrefs.remember(clone, "t2", OURS)
    claimrefs.remember(clone, "t3", OURS)
    mine = finished_by(clone, "control-room (m1)")  # a push of ours that died before we noted it
    refs = {
        "t1": Ref("t1", mine, None, 0.0),
        "t2": Ref("t2", THEIRS, "m1", 2e9),
        "t3": Ref("t3", THEIRS, "m2", 2e9),
    }
    assert lost_claims.lost(Share(clone, "m1", refs)) == {"t3": "m2"}
    assert claimrefs.pending(clone) == {"t3": OURS}


# set_aside ------------------------------------------------------------------------------------------


def test_a_lost_result_is_set_aside_its_files_the_remotes_again(clone: Room) -> None:
    theirs = git(clone.root, "rev-parse", "HEAD")
    ran_here(clone)
    claimrefs.remember(clone, "t1", OURS)
    share = Share(clone, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)}, theirs)
    assert lost_claims.set_aside(share) == ["claim on t1 lost to m2; this machine's result set aside"]
    assert swarm_files(clone) == ["outbox/t1.md", "queue/t1.json"]
    assert (clone.state_dir("queue") / "t1.json").read_text() == REMOTE_TASK
    assert (clone.swarm / "outbox" / "t1.md").read_text() == "the remote's prompt\n"
    [line] = entries(clone, "claim-lost")
    assert (line.writer, line.task, line.outcome, line.detail) == ("tester", "t1", "discarded", (
        "m2 took t1 over (this machine's lease ran out); this machine's result is set aside: its swarm "
        "files are the remote's again, its commits keep it in history"))  # fmt: skip
    set_aside = "control-room: t1's claim was lost on m1; its result set aside"
    assert git(clone.root, "log", "--format=%s").split("\n") == [
        set_aside,
        "our run of t1",
        "the remote's branch",
    ]
    assert git(clone.root, "status", "--porcelain") == ""
    assert claimrefs.pending(clone) == {}


def test_a_lost_task_still_running_here_is_left_to_its_cycle(clone: Room) -> None:
    theirs = git(clone.root, "rev-parse", "HEAD")
    ran_here(clone)
    (clone.state_dir("running") / "t1.json").write_text(REMOTE_TASK)
    claimrefs.remember(clone, "t1", OURS)
    before = swarm_files(clone)
    assert lost_claims.set_aside(Share(clone, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)}, theirs)) == []
    assert swarm_files(clone) == before
    assert entries(clone, "claim-lost") == []
    assert claimrefs.pending(clone) == {"t1": OURS}


def test_a_remote_without_the_branch_leaves_the_lost_task_no_files(clone: Room) -> None:
    ran_here(clone)
    claimrefs.remember(clone, "t1", OURS)
    said = lost_claims.set_aside(Share(clone, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)}, None))
    assert said == ["claim on t1 lost to m2; this machine's result set aside"]
    assert swarm_files(clone) == []


# let_go ---------------------------------------------------------------------------------------------


def test_a_dead_claim_another_machine_took_over_is_let_go(clone: Room) -> None:
    theirs = git(clone.root, "rev-parse", "HEAD")
    (clone.state_dir("queue") / "t1.json").rename(clone.state_dir("running") / "t1.json")  # a cycle took it
    claims.write_claim(clone, "t1", {"pid": 999_999_999})
    (clone.swarm / "outbox" / "t1.md").write_text("our prompt\n")
    claimrefs.remember(clone, "t1", OURS)
    share = Share(clone, "m1", {"t1": Ref("t1", THEIRS, "m2", 2e9)}, theirs)
    said = lost_claims.let_go(share, "t1", "m2", "its cycle died")
    assert said == "let go of t1: its cycle died; m2 took it over"
    assert swarm_files(clone) == ["outbox/t1.md", "queue/t1.json"]  # the remote's copy, no running/ file
    assert (clone.state_dir("queue") / "t1.json").read_text() == REMOTE_TASK
    assert (clone.swarm / "outbox" / "t1.md").read_text() == "the remote's prompt\n"
    [line] = entries(clone, "claim-lost")
    detail = "claim is dead (its cycle died) and m2 took t1 over meanwhile; let go here"
    assert (line.task, line.outcome, line.detail) == ("t1", "discarded", detail)
    assert claimrefs.pending(clone) == {}
    assert git(clone.root, "log", "--format=%s") == "the remote's branch"  # let_go commits nothing


# conflicts ------------------------------------------------------------------------------------------


def test_a_conflict_is_a_committed_ledger_line_naming_the_files(clone: Room) -> None:
    share = Share(clone, "m1", {})
    said = lost_claims.conflicts(share, ["notes.md", "control-room/CONTROL.md"])
    assert said == "merge: both machines changed notes.md, control-room/CONTROL.md; kept the remote's version"
    [line] = entries(clone, "sync-conflict")
    assert (line.outcome, line.detail) == ("kept-remote", "both machines changed notes.md, "
        "control-room/CONTROL.md; the remote's version was kept (ours stays in history)")  # fmt: skip
    assert git(clone.root, "log", "-1", "--format=%s") == "control-room: the sync's conflict line, on m1"
    assert git(clone.root, "status", "--porcelain") == ""


def test_a_conflict_over_many_files_names_five(clone: Room) -> None:
    said = lost_claims.conflicts(Share(clone, "m1", {}), [f"f{k}.md" for k in range(1, 8)])
    shown = "f1.md, f2.md, f3.md, f4.md, f5.md and 2 more"
    assert said == f"merge: both machines changed {shown}; kept the remote's version"
    [line] = entries(clone, "sync-conflict")
    assert (
        line.detail == f"both machines changed {shown}; the remote's version was kept (ours stays in history)"
    )
