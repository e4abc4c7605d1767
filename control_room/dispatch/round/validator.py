"""The task's validator (SPEC §4 step 7): the dispatcher runs it itself, in the work dir, after
the agent; exit 0 is a pass. The agent's report is a claim; this is the check."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from control_room import proc
from control_room.errors import ControlRoomError
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.shell import argv_of
from control_room.room.tasks import Task
from control_room.store.files import atomic_write


def run(
    room: Room,
    settings: Settings,
    task: Task,
    workdir: Path,
    env: dict[str, str],
    results: Path,
    *,
    stem: str = "validator",
) -> proc.Result | None:
    """The validator's run, its output in ``results`` (``<stem>.stdout.txt``, ``.stderr.txt``:
    the merge queue's run after the rebase is ``post-rebase``); None if it could not start (why
    is in the stderr file). Before and after, the results folder is the room's own (``own``): a
    person may have removed a waiting task's results, an agent or this validator linked it out."""
    results_folder.own(results)
    try:
        return proc.run(
            argv_of(task["validator"], "the validator"),
            cwd=workdir,
            env=env,
            timeout_s=float(settings.validator_timeout_s),
            stdout_path=results / f"{stem}.stdout.txt",
            stderr_path=results / f"{stem}.stderr.txt",
            cap_bytes=settings.capture_max_bytes,
            stop_file=room.stop,
        )
    except ControlRoomError as exc:
        atomic_write(results / f"{stem}.stderr.txt", f"{exc}\n")
        return None
    finally:
        results_folder.own(results)


METRIC = re.compile(r"^METRIC ([A-Za-z][\w.-]{0,63})=(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$", re.M)
METRICS_MAX = 20  # names kept per run


def metrics(val: proc.Result | None) -> dict[str, float]:
    """The objective's numbers a validator printed, one ``METRIC name=value`` line each (the
    last value of a name wins): the curve the dashboard draws. Read from the end of its output."""
    if val is None:
        return {}
    found: dict[str, float] = {}
    for name, value in METRIC.findall(val.stdout.tail(200, 65536)):
        if name in found or len(found) < METRICS_MAX:
            found[name] = float(value)
    return found


def word(val: proc.Result | None) -> str:
    """What the validator did, in two or three words: passed, exited 1, timed out."""
    if val is None:
        return "could not start"
    if val.timed_out:
        return "timed out"
    return "passed" if val.ok else f"exited {val.exit_code}"


def failure(val: proc.Result | None, settings: Settings) -> str:
    """What failed, for the ledger and the task's next brief."""
    if val is None:
        return "validator could not start (see validator.stderr.txt)"
    if val.timed_out:
        return f"validator timed out after {settings.validator_timeout_s}s"
    tail = (val.stderr.tail(3) or val.stdout.tail(3)).replace("\n", " / ")
    return f"validator exited {val.exit_code}" + (f": {tail[:300]}" if tail else "")


def meta(val: proc.Result | None) -> dict[str, Any] | None:
    """The validator's part of a run's meta.json."""
    if val is None:
        return None
    return {
        "argv": val.argv,
        "exit_code": val.exit_code,
        "duration_s": round(val.duration_s, 3),
        "timed_out": val.timed_out,
        "tail": val.stdout.tail(10),
        "stderr_tail": val.stderr.tail(10),
    }
