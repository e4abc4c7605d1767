"""A person takes a task out of the merge queue: ``task cancel`` of a task in ``swarm/passed/``
(waiting for its reviews, its arbiter, a gate or ``integrate``).

Its work is a commit on its route's branch, and the route's next task would run on that branch
and merge it. So the work is set aside first, never lost: the branch's commits are kept on
``cancelled/<id>``, and the branch goes back to the base, so the next task starts from the
base. Then the task is cancelled as from any other folder (``decisions.cancel``: the reason, one
``cancel`` line, the review and arbiter tasks it waited for let go). Under the merge queue's
lock, so no ``integrate`` is half-way through it.
"""

from __future__ import annotations

from pathlib import Path

from control_room import git
from control_room.dispatch.person import decisions
from control_room.dispatch.worktrees import place, worktree
from control_room.errors import ConflictError
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import lock


def cancel(room: Room, task_id: str, reason: str) -> tuple[str, str]:
    """Cancel ``task_id`` from any folder it may leave, ``passed/`` included; (the folder it
    left, what became of its work: "" when it had none on a branch). CONTROL.md is read only
    for a task in ``passed/``: a person may cancel others while it is broken."""
    allowed = (*decisions.CANCELLABLE, "passed")
    state, _ = swarm.locate(room, task_id)
    settings = settings_file.load(room) if state == "passed" else None
    if settings is None or not settings.repo:
        return decisions.cancel(room, task_id, reason, allowed=allowed), ""
    with lock.held(room.cr / ".integrate.lock"):
        state, path = swarm.locate(room, task_id)  # again, under the lock: integrate may have taken it
        if state != "passed":
            return decisions.cancel(room, task_id, reason, allowed=allowed), ""
        task, _ = swarm.read_task(path)
        kept = set_aside(room, settings, task)
        return decisions.cancel(room, task_id, reason, allowed=allowed, note=kept), kept


def set_aside(room: Room, settings: Settings, task: Task) -> str:
    """Keep the commits of ``task``'s branch beyond the base on ``cancelled/<id>`` (``-2``, ...
    when taken) and move the branch back to the base, in its worktree when it has one checked
    out. Says what was done; "" when the branch held nothing of its own."""
    repo = worktree.repo_of(room, settings)
    assert repo is not None
    tid, branch, base = task["id"], place.branch_of(task), worktree.base_of(repo, settings)
    if not _exists(repo, branch):
        return ""
    code, out, _ = git.run(repo, "rev-list", "--count", f"{base}..{branch}")
    if code == 0 and out.strip() == "0":
        return ""
    keep, n = f"cancelled/{tid}", 1
    while _exists(repo, keep):
        n += 1
        keep = f"cancelled/{tid}-{n}"
    code, _, err = git.run(repo, "branch", keep, branch)
    if code != 0:
        raise ConflictError(f"cannot cancel {tid}: git branch {keep} failed ({err.strip()}); nothing moved")
    wt = place.path_of(room, task)
    at = git.run(wt, "symbolic-ref", "-q", "--short", "HEAD")[1].strip() if (wt / ".git").exists() else ""
    if at == branch:  # --keep: an uncommitted change in the way is refused, never lost
        code, _, err = git.run(wt, "reset", "-q", "--keep", base)
    else:
        code, _, err = git.run(repo, "branch", "-f", branch, base)
    if code != 0:
        raise ConflictError(
            f"cannot cancel {tid}: {branch} could not go back to {base} ({err.strip()}); its work is "
            f"on {keep} too; nothing else moved"
        )
    return f"its work is kept on branch {keep}; {branch} is back at {base}"


def _exists(repo: Path, branch: str) -> bool:
    return git.run(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")[0] == 0
