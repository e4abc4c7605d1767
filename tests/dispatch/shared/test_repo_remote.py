"""The merge queue's lock across machines (dispatch/shared/repo_remote.py), on real clones."""

from __future__ import annotations

from pathlib import Path

import pytest
from machines import shared_room
from support import git

from control_room import errors
from control_room.dispatch.shared import repo_remote
from control_room.room import settings as settings_file


def test_one_machine_at_a_time_holds_the_merge_queue(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (m1, m2) = shared_room(tmp_path, exe, ["m1", "m2"], [], repo_remote="origin")
    s1, s2 = settings_file.load(m1.room), settings_file.load(m2.room)
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    with repo_remote.merge_queue(m1.room, s1):
        held = git(remote, "log", "-1", "--format=%s", repo_remote.MERGE_QUEUE)
        assert held.startswith("control-room claim: merge-queue by m1 until ")
        monkeypatch.setenv("CONTROL_ROOM_WRITER", "m2")
        with pytest.raises(errors.ConflictError) as busy, repo_remote.merge_queue(m2.room, s2):
            pass
        assert str(busy.value).startswith("the merge queue is held by m1 until ")
        assert str(busy.value).endswith(" (another machine merges); the tasks wait in passed/")
        monkeypatch.setenv("CONTROL_ROOM_WRITER", "m1")
    assert git(remote, "for-each-ref", repo_remote.MERGE_QUEUE) == ""  # let go
    monkeypatch.setenv("CONTROL_ROOM_WRITER", "m2")
    with repo_remote.merge_queue(m2.room, s2):  # m2's turn; its stale copy of m1's lock is dropped
        assert git(remote, "log", "-1", "--format=%s", repo_remote.MERGE_QUEUE).startswith(
            "control-room claim: merge-queue by m2 until "
        )
