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


def own(results: Path) -> Path:
    """``results`` as a real folder of the room, made if missing. What an agent put in its place
    (a link out of the room, a file) is removed, never followed: every later write of the run
    (its captures, report, meta.json) and the next run's ``archive`` stay inside the room."""
    for path in (results.parent, results):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(mode):
            os.unlink(path)
    results.mkdir(parents=True, exist_ok=True)
    return results


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
