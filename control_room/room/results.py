"""A task's results folder, ``swarm/results/<id>/``: what each run left (prompt, report, the
agent's streams, the validator's, meta.json), the previous runs kept in ``run-K/``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from control_room.room.layout import Room
from control_room.room.values import check_id
from control_room.store.files import read_output

CAPTURE_READ_MAX = 20_000_000  # bytes of a captured stream read back for the adapter


def folder(room: Room, task_id: str) -> Path:
    return room.swarm / "results" / check_id(task_id, "task")


def own(results: Path, linked_before: bool | None = None) -> Path:
    """``results`` as a real folder of the room, made if missing: a link (an agent's, out of the
    room) or a file in its place is removed, never followed, so every later write of the run
    (captures, report, meta.json) and the next run's ``archive`` stay in the room.
    ``linked_before``: whether ``swarm/results/`` was a link before the agent ran
    (``parent_linked``); one that became a link since is removed too (a person's link stays)."""
    for path, mine in ((results.parent, linked_before is False), (results, True)):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if mine and not stat.S_ISDIR(mode):
            os.unlink(path)
    results.mkdir(parents=True, exist_ok=True)
    return results


def parent_linked(results: Path) -> bool:
    """Whether ``swarm/results/`` (the folder above ``results``) is a link: a person's, when it
    already was one before an agent ran."""
    return results.parent.is_symlink()


def archive(results: Path) -> None:
    """Keep the previous run's files in ``run-K/`` before a new run starts writing."""
    own(results)
    files = [p for p in results.iterdir() if p.is_file()]
    if not files:
        return
    numbers = [
        int(p.name[4:])
        for p in results.iterdir()
        if p.is_dir() and p.name[4:].isdigit() and p.name[:4] == "run-"
    ]
    target = results / f"run-{max(numbers, default=0) + 1}"  # run-1, run-2, ...: one past the highest
    target.mkdir()
    for p in files:
        os.rename(p, target / p.name)


def read_capture(path: Path, notes: list[str] | None = None, name: str = "output") -> str:
    """A captured stream as text (its first ``CAPTURE_READ_MAX`` bytes); empty if unreadable.
    Bytes that are not UTF-8 are read as Latin-1, and ``notes`` gets a line saying so."""
    try:
        text, utf8 = read_output(path, CAPTURE_READ_MAX)
    except OSError:
        return ""
    if not utf8 and notes is not None:
        notes.append(f"{name} is not UTF-8: the bytes that are not were read as Latin-1")
    return text
