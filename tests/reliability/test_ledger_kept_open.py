"""A dispatcher keeps its ledger descriptor open from one line to the next (#23, appends): while
its agent runs, the ledger is replaced under it (what git does) or another process appends a
line under the dispatcher's own writer name. The dispatcher's next lines land in the file the
path names, chained to the line written last; `ledger verify` passes. Through the installed
command."""

from __future__ import annotations

import sys
from typing import Any

from support import data_lines, entries, queue, where

from control_room import errors
from control_room.ledger.line import parse
from control_room.room.layout import Room

REPLACE = """
import os, shutil, sys
shutil.copy(sys.argv[1], sys.argv[1] + ".new")
os.replace(sys.argv[1] + ".new", sys.argv[1])
"""
APPEND = """
import sys
from pathlib import Path
from control_room.ledger import append
from control_room.ledger.events import Event
append(Path(sys.argv[1]), Event("agent-note", (), ("detail",), "a test line"), detail="hi", writer="e2e")
"""


def test_the_dispatchers_lines_follow_a_ledger_replaced_while_its_agent_ran(cr: Any, room: Room) -> None:
    queue(room, "swap", command=[sys.executable, "-c", REPLACE, str(room.ledger)])
    old_inode = room.ledger.stat().st_ino
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    assert room.ledger.stat().st_ino != old_inode  # the agent did replace it
    assert where(room, "swap") == ["done"]
    assert [e.outcome for e in entries(room, "result") if e.task == "swap"] == ["pass"]
    assert cr("ledger", "verify").returncode == 0


def test_the_dispatchers_chain_follows_a_line_another_process_wrote_under_its_name(
    cr: Any, room: Room
) -> None:
    queue(room, "note", command=[sys.executable, "-c", APPEND, str(room.ledger)])
    done = cr("cycle")
    assert done.returncode == errors.PASSED, done.stdout + done.stderr
    lines = [e for e in map(parse, data_lines(room.ledger)) if e is not None and e.writer == "e2e"]
    [k] = [i for i, e in enumerate(lines) if e.event == "agent-note"]
    assert 0 < k < len(lines) - 1  # the dispatcher wrote before and after the agent's line
    assert lines[k].prev == lines[k - 1].hash and lines[k + 1].prev == lines[k].hash
    assert cr("ledger", "verify").returncode == 0
