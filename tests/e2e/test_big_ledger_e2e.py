"""A big ledger's first commands (#23), through the installed command: `status` answers from
the ledger's recent lines and starts `ledger fold` in the background; once that fold is done
every view holds the whole history, and no process of it is left."""

from __future__ import annotations

import re
import subprocess
import time
from typing import Any

from support import many_lines, queue

from control_room.room.layout import Room
from control_room.store import cache, lock
from control_room.views import catch_up

LINES = 40_000  # about 7 MB: more than ledger.follow.SMALL


def _folds(room: Room) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return [p for p in ps if "ledger fold" in p and str(room.root) in p]


def test_a_first_status_reads_recent_lines_and_the_fold_makes_it_whole(cr: Any, room: Room) -> None:
    many_lines(room.ledger, LINES, days=30)
    first = cr("status")
    assert first.returncode == 0, first.stderr
    line = next(x for x in first.stdout.splitlines() if x.startswith("ledger "))
    assert re.fullmatch(r"ledger    [\d,]+ lines since \S+ read so far \(the older history is being folded "
                        r"in: \d+%\); last:", line), line  # fmt: skip
    queue(room, "after-the-window")
    for cmd in (["cycle"], ["task", "list"], ["digest"], ["dashboard"], ["findings"]):
        assert cr(*cmd).returncode in (0, 10), cmd
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        catch_up.behind(room) or not lock.is_free(room.cache / catch_up.LOCK)
    ):
        time.sleep(0.1)
    assert catch_up.behind(room) == []
    states = {p.name: cache.load(p) for p in room.cache.iterdir()}
    recent = [name for name, st in states.items() if isinstance(st, dict) and st.get("from")]
    assert recent == ["ledger-chain"]  # the chain check starts at the end: the rest is `ledger verify`'s
    while time.monotonic() < deadline and _folds(room):
        time.sleep(0.1)  # the lock is let go just before the process ends
    assert _folds(room) == []
    whole = cr("status")
    assert re.search(r"^ledger    [\d,]+ lines; last:", whole.stdout, re.M), whole.stdout
    done = cr("ledger", "fold")
    assert (done.returncode, done.stdout) == (0, "every view already holds the whole ledger\n")
