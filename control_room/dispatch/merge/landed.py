"""A merge that landed before a crash stopped its move: the base fast-forwarded, the ``integrate
merged`` line written, the task still in ``swarm/passed/``.

The merge queue writes a merge down in order: the fast-forward, its ledger line, then the
task's move to ``swarm/to-test/``. Killed between the line and the move, the next ``integrate``
would merge the task again: its validator run once more, a second ``merged`` line for one
merge. So the queue asks first whether the task's last word in the ledger since it passed is
that line, with its branch on the base: then only the move is left to do.
"""

from __future__ import annotations

from pathlib import Path

from control_room import git
from control_room.dispatch.worktrees import place
from control_room.ledger import events
from control_room.ledger.read import entries_since
from control_room.room.layout import Room
from control_room.room.tasks import Task


def landed(room: Room, repo: Path, task: Task, base: str) -> str | None:
    """The commit ``task`` was merged at, if its merge landed but its move did not: its last
    ``integrate`` line since it passed says ``merged`` (read backwards from the end, back to its
    pass), and its branch's tip is on ``base``. None otherwise."""
    tid, since = task["id"], str(task.get("passed_at", ""))
    for entry in entries_since(room.ledger, since):
        if entry.task != tid or entry.event not in (events.INTEGRATE.name, events.RESULT.name):
            continue
        if entry.event == events.RESULT.name or entry.outcome != "merged":
            return None
        code, out, _ = git.run(
            repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{place.branch_of(task)}"
        )
        tip = out.strip()
        if code != 0 or git.run(repo, "merge-base", "--is-ancestor", tip, base)[0] != 0:
            return None
        return tip
    return None
