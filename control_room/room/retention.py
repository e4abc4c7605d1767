"""Cleanup: which results of finished tasks may go, pins that keep them, and removing them
([cleanup.md](../../docs/cleanup.md)).

What may go belongs to a task in ``done/``, ``cancelled/`` or ``rejected/`` that is not pinned:
its results folder ``swarm/results/<id>/`` (with its ``run-K/`` archives) and its outbox
snapshot ``swarm/outbox/<id>.md``. They go when the task's last change (its task file, its
results, its snapshot: the newest mtime) is older than CONTROL.md ``retention_days``; a younger
finished task loses only its ``run-K/`` archives older than that. While the room's disk has less
than ``min_free_gb`` free, whole finished tasks' results go too, oldest first, until it has
enough. Nothing of a queued, running or parked task, or of a pinned one, ever goes; no task file
ever goes (they are the records). Each removal is re-checked just before it (the task's state and
the pins, read again) and writes one ``cleanup`` ledger line. Every deletion goes through
``store.files.remove``.

A write that never finished (its process was killed between writing a temp file and renaming
it into place) leaves a temp file ``.tmp-<12 hex>`` beside the file it was for: those older
than an hour (``TEMP_STALE_S``; a write takes milliseconds) go too, kind ``temp``, in the
folders control-room writes (the room's top, ``control-room/``, ``swarm/`` and all below it,
``intelligence/``, ``graveyard/``, ``agents/``, ``skills/``), never in a work dir of an agent's.

More kinds of removable things share the same policy: an ``Item`` has a ``kind`` (``KINDS``,
worded by ``NOUNS``). A finished route's worktree (kind ``worktree``) is found, re-checked and
removed with git in ``dispatch/merge/sweep.py`` (this layer does not run git); it hands its candidates
to ``plan``, which decides by the same age and low-disk rules, and removes the rest with ``clean``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from control_room import ledger
from control_room.ledger import events
from control_room.room import settings as settings_file
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.values import check_id, is_id
from control_room.store.files import TMP_PREFIX, read_optional, remove, update
from control_room.words import count

FINISHED = ("done", "cancelled", "rejected")
DAY_S = 86400
GIB = 2**30
# a results folder, a run-K/, a snapshot, a worktree, a temp file a crash left
KINDS = ("results", "archive", "outbox", "worktree", "temp")
NOUNS = {
    "results": "results folder",
    "archive": "run archive",
    "outbox": "outbox snapshot",
    "worktree": "worktree",
    "temp": "leftover temp file",
}
TEMP_STALE_S = 3600  # a temp file this old belongs to a write that never finished
_TEMP = re.compile(re.escape(TMP_PREFIX) + r"[0-9a-f]{12}")


def disk_free(path: Path) -> int:
    """Bytes free on the disk holding ``path`` (tests replace this to simulate a full disk)."""
    import shutil  # ~2 ms (bz2, lzma): only when min_free_gb is on

    return shutil.disk_usage(path).free


# Pins ------------------------------------------------------------------------------------------


def _ids(text: str) -> list[str]:
    """The ids in a PINNED text: one a line; blank lines and ``#`` comments are skipped."""
    out = []
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip()
        if word and is_id(word) and word not in out:
            out.append(word)
    return out


def pinned(room: Room) -> frozenset[str]:
    """The pinned task ids (``control-room/PINNED``; absent: none)."""
    return frozenset(_ids(read_optional(room.pins) or ""))


def pin(room: Room, task_id: str) -> bool:
    """Pin a task: `cleanup` never removes its results. False if it was pinned already."""
    swarm.locate(room, check_id(task_id, "task"))  # an unknown id: NotFoundError, exit 7
    if task_id in pinned(room):
        return False
    update(room.pins, lambda text: text if task_id in _ids(text) else _with_line(text, task_id))
    ledger.append(room.ledger, events.PIN, task=task_id)
    return True


def unpin(room: Room, task_id: str) -> bool:
    """Unpin a task. False if it was not pinned; an unknown id that is not pinned is an error."""
    check_id(task_id, "task")
    if task_id not in pinned(room):
        swarm.locate(room, task_id)
        return False

    def change(text: str) -> str:
        kept = [ln for ln in text.splitlines(keepends=True) if ln.split("#", 1)[0].strip() != task_id]
        return "".join(kept)

    update(room.pins, change)
    ledger.append(room.ledger, events.UNPIN, task=task_id)
    return True


def _with_line(text: str, line: str) -> str:
    if not text:
        text = "# Pinned tasks: `control-room cleanup` never removes their results. One id a line.\n"
    return text + ("" if text.endswith("\n") else "\n") + line + "\n"


# Selection -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One thing cleanup removes (or, on a dry run, would)."""

    path: Path
    kind: str  # KINDS
    task: str
    state: str
    size: int  # bytes
    changed: float  # the newest mtime that counts for its age
    why: str  # one line

    def where(self, room: Room) -> str:
        rel = self.path.relative_to(room.root).as_posix()
        return rel + "/" if self.kind not in ("outbox", "temp") else rel


@dataclass
class _Task:
    """A finished task's removable things."""

    id: str
    state: str
    changed: float
    results: tuple[int, float] | None  # size, newest mtime
    outbox: tuple[int, float] | None
    archives: list[tuple[Path, int, float]]


def tree(path: Path) -> tuple[int, float]:
    """Size in bytes and newest mtime of a file or a folder's whole tree (symlinks not followed).
    A folder's age is its files' (a folder's own mtime changes when cleanup removes an archive
    from it); an empty one's is its own."""
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path):
        return st.st_size, st.st_mtime
    size, newest = 0, None
    for top, _dirs, files in os.walk(path):
        for name in files:
            try:
                s = os.lstat(os.path.join(top, name))
            except FileNotFoundError:
                continue
            newest = s.st_mtime if newest is None else max(newest, s.st_mtime)
            size += s.st_size
    return size, st.st_mtime if newest is None else newest


def _finished(room: Room) -> list[_Task]:
    """Every finished, unpinned task that has a results folder or an outbox snapshot."""
    results, outbox = room.swarm / "results", room.swarm / "outbox"
    names = set()
    for folder, suffix in ((results, ""), (outbox, ".md")):
        try:
            listed = os.listdir(folder)
        except FileNotFoundError:
            continue
        names |= {n[: len(n) - len(suffix)] for n in listed if n.endswith(suffix) and not n.startswith(".")}
    folders, pins = swarm.Folders(room), pinned(room)
    found = []
    for tid in sorted(n for n in names if is_id(n)):
        state = folders.state_of(tid)
        if state not in FINISHED or tid in pins:
            continue
        res = results / tid
        res_tree = tree(res) if res.is_dir() else None
        snap = outbox / f"{tid}.md"
        snap_tree = tree(snap) if snap.is_file() else None
        archives = []
        if res_tree is not None:
            for sub in sorted(res.iterdir(), key=lambda p: (len(p.name), p.name)):
                if sub.name.startswith("run-") and sub.name[4:].isdigit() and sub.is_dir():
                    archives.append((sub, *tree(sub)))
        try:
            own = os.stat(swarm.task_file(room, state, tid)).st_mtime
        except FileNotFoundError:
            continue  # moved meanwhile
        changed = max([own] + [t[1] for t in (res_tree, snap_tree) if t is not None])
        found.append(_Task(tid, state, changed, res_tree, snap_tree, archives))
    return found


def _days(seconds: float) -> str:
    return f"{int(seconds // DAY_S)} days"


def plan(room: Room, now: float | None = None, worktrees: Sequence[Item] = ()) -> list[Item]:
    """What cleanup would remove now, in order: by age first, then for low disk, oldest first.

    ``worktrees``: finished routes' worktrees that may go (``dispatch/merge/sweep.py`` found them), each
    with ``why`` saying what it is; they go by the same rules as a finished task's results."""
    settings = settings_file.load(room)
    now = time.time() if now is None else now
    tasks = _finished(room)
    items: list[Item] = leftovers(room, now)
    whole: set[str] = set()
    keep_days = settings.retention_days
    keep_s = keep_days * DAY_S
    if settings.retention_days > 0:
        for t in tasks:
            age = now - t.changed
            if age > keep_s:
                why = f"{t.state}, last change {_days(age)} ago, past retention_days {keep_days}"
                items += _whole(room, t, why)
                whole.add(t.id)
                continue
            for path, size, newest in t.archives:
                if now - newest > keep_s:
                    why = (
                        f"{t.state}, archive last changed {_days(now - newest)} ago, "
                        f"past retention_days {settings.retention_days}"
                    )
                    items.append(Item(path, "archive", t.id, t.state, size, newest, why))
        for w in worktrees:
            if now - w.changed > keep_s:
                items.append(replace(w, why=f"{w.why}, {_past(now - w.changed, keep_days)}"))
    if settings.min_free_gb > 0:
        need = settings.min_free_gb * GIB
        free = disk_free(room.root) + sum(i.size for i in items)
        taken = {i.path for i in items if i.kind == "worktree"}
        queue: list[tuple[float, str, _Task | Item]] = [(t.changed, t.id, t) for t in tasks]
        queue += [(w.changed, w.path.name, w) for w in worktrees if w.path not in taken]
        for _changed, _name, what in sorted(queue, key=lambda q: (q[0], q[1])):
            if free >= need:
                break
            low = (
                f"oldest first while the disk has {free / GIB:.1f} GiB free, "
                f"under min_free_gb {settings.min_free_gb}"
            )
            if isinstance(what, Item):  # a worktree
                items.append(replace(what, why=f"{what.why}, {low}"))
                free += what.size
                continue
            t = what
            if t.id in whole:
                continue
            # its archives, already counted (a task-<id> worktree is an item of its own)
            freed = [i for i in items if i.task == t.id and i.kind != "worktree"]
            items = [i for i in items if i.task != t.id or i.kind == "worktree"]
            new = _whole(room, t, f"{t.state}, {low}")
            items += new
            free += sum(i.size for i in new) - sum(i.size for i in freed)
    return items


def leftovers(room: Room, now: float) -> list[Item]:
    """Temp files of writes that never finished, older than ``TEMP_STALE_S``, in the folders
    control-room writes (``swarm/`` and what is below it; the others' top level only)."""
    tops = [room.root, room.cr, room.cr / ".cache"]
    tops += [room.root / name for name in ("intelligence", "graveyard", "agents", "skills")]
    found: list[Item] = []
    seen = [(top, False) for top in tops] + [(room.swarm, True)]
    while seen:
        folder, deep = seen.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:  # missing, or not a folder
            continue
        for e in entries:
            if deep and e.is_dir(follow_symlinks=False):
                seen.append((Path(e.path), True))
            elif _TEMP.fullmatch(e.name) and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                if now - st.st_mtime > TEMP_STALE_S:
                    age = now - st.st_mtime
                    ago = _days(age) if age >= DAY_S else count(int(age // 3600), "hour")
                    why = f"left by a write that never finished, {ago} ago"
                    found.append(Item(Path(e.path), "temp", "", "", st.st_size, st.st_mtime, why))
    return sorted(found, key=lambda i: i.path)


def _past(age: float, keep_days: int) -> str:
    return f"last change {_days(age)} ago, past retention_days {keep_days}"


def due(room: Room, changed: float, now: float) -> str | None:
    """Why something last changed at ``changed`` would go now, by age or for low disk (the
    clause ``plan`` adds to its ``why``), or None. For what may not go: ``cleanup`` says why
    it kept it."""
    settings = settings_file.load(room)
    if settings.retention_days > 0 and now - changed > settings.retention_days * DAY_S:
        return _past(now - changed, settings.retention_days)
    if settings.min_free_gb > 0:
        free = disk_free(room.root)
        if free < settings.min_free_gb * GIB:
            return f"the disk has {free / GIB:.1f} GiB free, under min_free_gb {settings.min_free_gb}"
    return None


def _whole(room: Room, t: _Task, why: str) -> list[Item]:
    out = []
    if t.results is not None:
        out.append(Item(room.swarm / "results" / t.id, "results", t.id, t.state, *t.results, why))
    if t.outbox is not None:
        out.append(Item(room.swarm / "outbox" / f"{t.id}.md", "outbox", t.id, t.state, *t.outbox, why))
    return out


# Removal ---------------------------------------------------------------------------------------


def still_finished(room: Room, task_id: str) -> bool:
    """Whether the task is still finished and unpinned (read afresh, just before a removal)."""
    state = swarm.state_of(room, task_id, order=swarm.LIVE_FIRST)
    return state in FINISHED and task_id not in pinned(room)


def clean(room: Room, items: list[Item], *, on_removed: Callable[[Item], None] | None = None) -> list[Item]:
    """Remove ``items`` (from ``plan``), each with one ``cleanup`` ledger line; return those removed.
    An item whose task was retried, or pinned, since the plan stays. A worktree is not removed
    here (``dispatch/merge/sweep.py`` does, with git)."""
    done = []
    for item in items:
        if item.kind == "worktree":
            continue  # removed with git, by dispatch/merge/sweep.py
        if item.kind != "temp" and not still_finished(room, item.task):
            continue
        if not os.path.lexists(item.path):
            continue
        remove(item.path)
        ledger.append(
            room.ledger,
            events.CLEANUP,
            task=item.task,
            detail=f"{item.where(room)} ({NOUNS[item.kind]}, {size_text(item.size)}): {item.why}",
        )
        done.append(item)
        if on_removed is not None:
            on_removed(item)
    return done


def summary(items: list[Item], verb: str) -> str:
    """``removed 3 results folders, 1 run archive, 12.0 MiB`` (or ``removed nothing``)."""
    if not items:
        return f"{verb} nothing"
    kinds = [i.kind for i in items]
    parts = [count(kinds.count(k), NOUNS[k]) for k in KINDS if k in kinds]
    return f"{verb} {', '.join(parts)}, {size_text(sum(i.size for i in items))}"


def size_text(n: int) -> str:
    """Bytes as people read them: ``512 B``, ``3.2 KiB``, ``12.0 MiB``, ``1.5 GiB``."""
    if n < 1024:
        return f"{n} B"
    for unit, scale in (("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30)):
        if n < scale * 1024 or unit == "GiB":
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"  # not reached
