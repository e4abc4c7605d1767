"""dispatch.shared.claiming: which tasks are ours to claim (taken), claim and take-over, info."""

from __future__ import annotations

import os
import re
import shutil
import types
from pathlib import Path

import pytest
from support import TIME, entries, git, probe_task

from control_room import errors
from control_room.dispatch.shared import claiming, claimrefs, sync
from control_room.dispatch.shared.claiming import Chooser
from control_room.dispatch.shared.claimrefs import EMPTY_TREE, PREFIX
from control_room.room import scaffold
from control_room.room.layout import Room
from control_room.timeutil import now_iso

GRACE = 60.0
LATER = 4_000_000_000.0  # a lease that runs till 2096
NOW = 1_700_000_000.0  # 2023: a lease before it is over whatever the clock says


@pytest.fixture(scope="module")
def shared_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote holding `main`, and this machine's room (m1), a git work tree on `main`:
    made once, copied for each test (a copy costs less than the git runs that make it)."""
    made = tmp_path_factory.mktemp("shared")
    git(made, "init", "-q", "--bare", "-b", "main", str(made / "remote.git"))
    root = made / "m1"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONTROL_ROOM_WRITER", "tester")
        scaffold.init(root)
    git(root, "init", "-q", "-b", "main")
    git(
        root,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "first",
    )
    git(root, "push", "-q", str(made / "remote.git"), "HEAD:refs/heads/main")
    return made


@pytest.fixture
def share(shared_once: Path, tmp_path: Path) -> sync.Shared:
    """This machine (m1), sharing its room through a bare remote that holds no claim yet."""
    copy = shutil.copytree(shared_once, tmp_path / "shared", symlinks=True)
    return sync.Shared(Room(copy / "m1"), str(copy / "remote.git"), "main", "m1")


def claimed(share: sync.Shared, task: str, host: str, until: float) -> str:
    """Another machine's claim of ``task``, pushed to the remote and fetched here; its commit."""
    sha = git(share.room.root, "commit-tree", EMPTY_TREE, "-m", claimrefs.message(task, host, until, {}))
    git(share.room.root, "push", "-q", share.remote, f"{sha}:{PREFIX}{task}")
    share.fetch()
    return sha


def on_remote(share: sync.Shared, task: str) -> str:
    return git(Path(share.remote), "log", "-1", "--format=%s", f"{PREFIX}{task}")


# taken ---------------------------------------------------------------------------------------------


def test_a_task_nobody_claimed_is_ours(share: sync.Shared) -> None:
    assert Chooser(share, GRACE).taken("t1") is None


def test_a_live_claim_of_another_machine_is_held_until_its_lease_and_grace_end(share: sync.Shared) -> None:
    claimed(share, "t1", "m2", LATER)
    assert Chooser(share, GRACE).taken("t1") == f"claimed by m2 (lease until {now_iso(LATER + GRACE)})"
    assert now_iso(LATER + GRACE) == "2096-10-02T07:07:40Z"


def test_a_claim_past_its_lease_or_our_own_is_ours_to_claim(share: sync.Shared) -> None:
    claimed(share, "t1", "m2", 1000.0)  # 1970: its lease is long over
    ours = claimed(share, "t2", "m1", LATER)  # ours, put back in the queue by a local recovery
    claimrefs.remember(share.room, "t2", ours)  # as share.claim keeps it, until the claim is finished
    chooser = Chooser(share, GRACE)
    assert (chooser.taken("t1"), chooser.taken("t2")) == (None, None)


def test_a_live_claim_of_our_id_that_this_clone_did_not_make_claims_nothing(share: sync.Shared) -> None:
    claimed(share, "t3", "m1", LATER)  # our host id, but another clone's claim: no record of it here
    with pytest.raises(errors.RoomInvalidError) as err:
        Chooser(share, GRACE)
    assert str(err.value) == (
        "room invalid: the remote holds live claims of host m1 that this clone did not make (t3): "
        "another clone uses the same host id; nothing was claimed (fail closed); give each clone its "
        "own: `control-room sync --host NAME`"
    )


def test_a_finished_claim_is_ours_only_once_our_branch_holds_its_result(share: sync.Shared) -> None:
    root = share.room.root
    merged = git(root, "rev-parse", "HEAD")  # a result our branch holds
    # a result that is not merged here
    elsewhere = git(root, "commit-tree", EMPTY_TREE, "-m", "control-room: a cycle ended on m2")
    for task, sha in (("t1", merged), ("t2", elsewhere)):
        git(root, "push", "-q", share.remote, f"{sha}:{PREFIX}{task}")
    share.fetch()
    chooser = Chooser(share, GRACE)
    assert chooser.taken("t1") is None
    assert chooser.taken("t2") == (
        "its last run, on another machine, is not merged here yet (the next sync brings it)")  # fmt: skip


def test_the_refs_are_read_once_when_the_chooser_is_made(share: sync.Shared) -> None:
    chooser = Chooser(share, GRACE)
    claimed(share, "t1", "m2", LATER)
    assert chooser.taken("t1") is None  # as the cycle saw the remote when it began
    assert Chooser(share, GRACE).taken("t1") is not None


# claim ---------------------------------------------------------------------------------------------


def test_claiming_a_free_task_moves_its_ref_on_the_remote(share: sync.Shared) -> None:
    chooser = Chooser(share, GRACE)
    task = probe_task("t1", route="r1")
    assert chooser.claim(share.room, task, LATER, claiming.info("m1", 2, LATER)) is True
    assert on_remote(share, "t1") == "control-room claim: t1 by m1 until 4000000000"
    assert claimrefs.pending(share.room) == {"t1": git(Path(share.remote), "rev-parse", f"{PREFIX}t1")}
    assert entries(share.room, "recover") == []


def test_a_task_another_machine_claimed_first_is_lost_to_it_and_passed_by(share: sync.Shared) -> None:
    chooser = Chooser(share, GRACE)  # sees no claim yet
    sha = git(share.room.root, "commit-tree", EMPTY_TREE, "-m", claimrefs.message("t1", "m2", LATER, {}))
    git(share.room.root, "push", "-q", share.remote, f"{sha}:{PREFIX}t1")  # m2, a moment later
    assert chooser.claim(share.room, probe_task("t1"), LATER, {}) is False
    assert chooser.taken("t1") == "claimed by another machine a moment ago"
    assert git(Path(share.remote), "rev-parse", f"{PREFIX}t1") == sha
    assert claimrefs.pending(share.room) == {}


def test_taking_over_a_claim_past_its_lease_writes_a_recover_line(
    share: sync.Shared, monkeypatch: pytest.MonkeyPatch
) -> None:
    claimed(share, "t1", "m2", NOW - 3600)
    monkeypatch.setattr(claiming, "time", types.SimpleNamespace(time=lambda: NOW))
    chooser = Chooser(share, GRACE)
    assert chooser.taken("t1") is None
    assert chooser.claim(share.room, probe_task("t1", route="r1"), LATER, {}) is True
    assert on_remote(share, "t1") == "control-room claim: t1 by m1 until 4000000000"
    [line] = entries(share.room, "recover")
    assert (line.task, line.route, line.outcome, line.detail) == ("t1", "r1", "recovered", (
        "the claim of m2 passed its lease 3600s ago (wall clock plus 60s grace); taken over by m1, "
        "no round used"))  # fmt: skip


def test_a_take_over_another_machine_made_first_is_refused(share: sync.Shared) -> None:
    claimed(share, "t1", "m2", 1000.0)
    chooser = Chooser(share, GRACE)
    sha = git(share.room.root, "commit-tree", EMPTY_TREE, "-m", claimrefs.message("t1", "m3", LATER, {}))
    git(share.room.root, "push", "-q", "-f", share.remote, f"{sha}:{PREFIX}t1")  # m3 took it over first
    assert chooser.claim(share.room, probe_task("t1"), LATER, {}) is False
    assert on_remote(share, "t1") == "control-room claim: t1 by m3 until 4000000000"
    assert entries(share.room, "recover") == []


# info ---------------------------------------------------------------------------------------------


def test_info_says_which_process_of_which_host_holds_the_claim_until_when() -> None:
    said = claiming.info("m1", 3, LATER)
    assert list(said) == ["host", "pid", "slot", "started", "deadline"]
    assert (said["host"], said["pid"], said["slot"], said["deadline"]) == ("m1", os.getpid(), 3, LATER)
    assert re.fullmatch(TIME, str(said["started"]))
