"""control_room.dispatch.shared.sharing: a room's ``Shared`` on its branch, the branch asked of
git once a process while ``.git/HEAD`` stays the same file."""

from __future__ import annotations

from pathlib import Path

import pytest
from machines import probe_tasks, shared_room
from test_sync_cost import counting

from control_room import errors, git
from control_room.dispatch.shared import sharing
from control_room.room import settings as settings_file


def test_the_branch_is_asked_again_once_a_checkout_replaced_git_head(
    exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, (m1,) = shared_room(tmp_path, exe, ["m1"], probe_tasks(1))
    settings = settings_file.load(m1.room)
    asked = counting(monkeypatch)
    first, again = sharing.shared(m1.room, settings), sharing.shared(m1.room, settings)
    assert first is not None and again is not None
    assert (first.branch, again.branch, asked) == ("main", "main", ["symbolic-ref"])
    git.run(m1.path, "checkout", "-q", "-b", "other")
    moved = sharing.shared(m1.room, settings)
    assert moved is not None and moved.branch == "other"
    git.run(m1.path, "checkout", "-q", "--detach")
    with pytest.raises(errors.RoomInvalidError, match="is on no branch"):
        sharing.shared(m1.room, settings)
