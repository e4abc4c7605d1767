"""What ``cleanup`` removes, of every kind ([cleanup.md](../../docs/cleanup.md)): the finished
tasks' results that ``room/retention.py`` selects and, with CONTROL.md ``repo:``, the worktrees
of finished routes.

A worktree in ``control-room/worktrees/`` (one git lists, or a leftover ``route-*``/``task-*``
folder there) may go when no task on its branch is queued, running, passed, parked or in
to-test; its age is the newest mtime of the files in it. It goes by ``retention.plan``'s rules
(past ``retention_days``, or oldest first while the disk is under ``min_free_gb``). Never one
with uncommitted changes, or in the middle of a rebase (or a merge...): those are *kept*, and
cleanup says why. A leftover folder git does not know goes only if it holds nothing but a
``.git`` file (its files cannot be checked for uncommitted work). Removal is ``git worktree
remove`` (never ``--force``) and ``git worktree prune``; its branch goes with ``git branch -d``
only if merged into the base. Each removal is re-checked just before it and writes one
``cleanup`` line. While the repository is mid-rebase/merge, no worktree is looked at.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from control_room import errors, git, ledger, proc
from control_room.dispatch.queue import index
from control_room.dispatch.worktrees import place, worktree
from control_room.ledger import events
from control_room.room import retention, swarm
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.retention import Item
from control_room.room.settings import Settings
from control_room.store.files import remove

PENDING = ("queue", "running", "passed", "parked", "to-test")  # a task here keeps its worktree
MINE = ("route-", "task-")  # the worktree folders control-room makes (place.path_of)


@dataclass
class Plan:
    """What ``cleanup`` would do now."""

    items: list[Item]  # what goes (or, on a dry run, would), in order
    kept: list[Item] = field(default_factory=list)  # worktrees that would go but may not: why in each
    note: str | None = None  # why no worktree was looked at


def plan(room: Room, now: float | None = None) -> Plan:
    settings = settings_file.load(room)
    now = time.time() if now is None else now
    if not settings.repo:
        return Plan(retention.plan(room, now))
    why = _unfit(room, settings)
    if why is not None:
        return Plan(retention.plan(room, now), note=f"no worktree was looked at: {why}")
    free, kept = [], []
    for item, blocker in _candidates(room, settings):
        if blocker is None:
            free.append(item)
            continue
        due = retention.due(room, item.changed, now)
        if due is not None:
            kept.append(replace(item, why=f"{item.why}, {due}, but {blocker}"))
    return Plan(retention.plan(room, now, worktrees=free), kept)


def clean(room: Room, items: list[Item], *, on_removed: Callable[[Item], None] | None = None) -> list[Item]:
    """Remove ``items`` (from ``plan``), each re-checked just before and with one ``cleanup``
    ledger line; return those removed (a worktree's ``why`` then says what became of its branch)."""
    settings = settings_file.load(room)
    done: list[Item] = []
    for item in items:
        if item.kind != "worktree":
            done += retention.clean(room, [item], on_removed=on_removed)
            continue
        gone = _retire(room, settings, item)
        if gone is not None:
            done.append(gone)
            if on_removed is not None:
                on_removed(gone)
    return done


def _unfit(room: Room, settings: Settings) -> str | None:
    try:
        return worktree.check(room, settings)
    except errors.ControlRoomError as e:
        return str(e)


def _busy(room: Room) -> set[Path]:
    """The worktree folders a task that is not finished runs (or will run, or waits) in."""
    found = set()
    for state in PENDING:
        for listed in index.scan(room, state, reject=False):
            found.add(place.path_of(room, {**listed.summary, "id": listed.id}))
    return found


def _folders(room: Room, settings: Settings) -> dict[Path, bool]:
    """Every worktree folder of the room: path -> whether git lists it as a worktree."""
    found = {p: True for p in worktree.under(room, settings)}
    try:
        names = sorted(os.listdir(place.folder(room)))
    except FileNotFoundError:
        names = []
    for name in names:
        path = (place.folder(room) / name).resolve()
        if name.startswith(MINE) and path not in found and path.is_dir() and not os.path.islink(path):
            found[path] = False
    return found


def _candidates(room: Room, settings: Settings) -> list[tuple[Item, str | None]]:
    """Each worktree no task still needs, and what keeps it if anything does."""
    busy = _busy(room)
    found = []
    for path, known in sorted(_folders(room, settings).items()):
        if path in busy:
            continue
        size, changed = retention.tree(path)
        task, state, what = _what(room, path.name)
        item = Item(path, "worktree", task, state, size, changed, what)
        found.append((item, _blocker(room, settings, path, known)))
    return found


def _what(room: Room, name: str) -> tuple[str, str, str]:
    """(task, state, what it is) of the worktree folder ``name``: a route's has no one task."""
    kind, _, rest = place.branch_named(name).partition("/")
    if kind == "route":
        return "", "", f"route {rest} has no task left to run"
    state = swarm.state_of(room, rest) or ""
    return rest, state, f"task {rest} is {state}" if state else f"task {rest} has no task file"


def _blocker(room: Room, settings: Settings, path: Path, known: bool) -> str | None:
    """Why the worktree at ``path`` may not go, or None."""
    if not known:
        left = [n for n in os.listdir(path) if n != ".git"]
        if left:
            return (
                f"git does not list it as a worktree of {worktree.repo_of(room, settings)}, so its files "
                "cannot be checked for uncommitted work; look at it and remove it by hand"
            )
        return None
    try:
        half = place.half_done(path)
        if half is not None:
            return f"it is in the middle of {half}"
        dirty = worktree.dirty(path)
    except (errors.ControlRoomError, proc.ExecutableNotFound) as e:
        return f"git could not say whether it has uncommitted changes ({e})"
    if dirty:
        more = f" and {len(dirty) - 5} more" if len(dirty) > 5 else ""
        return f"it has uncommitted changes: {', '.join(dirty[:5])}{more}"
    return None


def _retire(room: Room, settings: Settings, item: Item) -> Item | None:
    """Remove one worktree after checking again that it may go; the item as removed, or None."""
    with worktree.changing(room):  # no cycle makes a worktree meanwhile
        return _retire_now(room, settings, item)


def _retire_now(room: Room, settings: Settings, item: Item) -> Item | None:
    if _unfit(room, settings) is not None or item.path in _busy(room):
        return None
    known = item.path in worktree.under(room, settings)
    if not known and not os.path.isdir(item.path):
        return None  # gone meanwhile
    if _blocker(room, settings, item.path, known) is not None:
        return None
    repo = worktree.repo_of(room, settings)
    assert repo is not None
    if known:
        if worktree.retire(repo, item.path) is not None:
            return None  # git refused (a change it would lose, a lock): kept
    else:
        remove(item.path)
        git.run(repo, "worktree", "prune")
    name = place.branch_named(item.path.name)
    try:
        branch = worktree.drop_branch(repo, name, worktree.base_of(repo, settings))
    except errors.ControlRoomError:  # no base_branch and a detached HEAD: nothing to compare with
        branch = f"branch {name} kept: no base branch to check it is merged into"
    gone = replace(item, why=f"{item.why}; {branch}")
    ledger.append(
        room.ledger,
        events.CLEANUP,
        task=item.task,
        detail=f"{gone.where(room)} (worktree, {retention.size_text(item.size)}): {gone.why}",
    )
    return gone
