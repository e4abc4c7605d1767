"""STOP under load (#23): four slots busy with agents that each started a grandchild; a STOP
ends every one of them, puts all four tasks back in the queue with one line each, and charges
no round. Through the installed command; how long it took is printed, not asserted."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support import FAKES, dead, entries, queue, set_gate, task_json, wait_for, where

from control_room import errors
from control_room.room.layout import Room

N = 4


def test_stop_ends_four_busy_slots_and_loses_nothing(cr: Any, room: Room, tmp_path: Path) -> None:
    set_gate(room, "max_parallel", str(N))
    for k in range(N):
        queue(room, f"busy{k}", wall_clock_s=300,
              command=[sys.executable, str(FAKES / "sleeper.py"), "--pidfile", str(tmp_path / f"pid{k}"),
                       "--ready", str(tmp_path / f"ready{k}")])  # fmt: skip
    argv = [cr.exe, "run", "--parallel", str(N), "--cycles", "1", "--every", "0"]
    run = subprocess.Popen(argv, cwd=room.root, env=cr.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)  # fmt: skip
    try:
        for k in range(N):
            wait_for(tmp_path / f"ready{k}", within=60)
        stopped_at = time.monotonic()
        assert cr("stop", "--reason", "load").returncode == 0
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    grandchildren = [int((tmp_path / f"pid{k}").read_text().split()[0]) for k in range(N)]
    assert all(dead(pid, within=10) for pid in grandchildren), grandchildren
    print(f"\nSTOP to all {N} runs ended: {time.monotonic() - stopped_at:.2f} s")
    assert run.returncode == errors.STOPPED, out
    for k in range(N):
        tid = f"busy{k}"
        assert where(room, tid) == ["queue"], tid
        assert task_json(room, "queue", tid).get("rounds", 0) == 0
        assert [e.task for e in entries(room, "stopped")].count(tid) == 1
    assert list(room.state_dir("running").iterdir()) == []  # no claim, no task left running
