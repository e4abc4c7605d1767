"""reaper: orphans adopted as their subreaper are ended; the watchdog's argv."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from support import dead

from control_room import reaper


def test_an_orphan_adopted_while_we_are_its_subreaper_is_ended_and_reaped() -> None:
    assert reaper.subreaper(True)
    try:
        # a child that starts a grandchild in a session of its own, then exits: the grandchild
        # is an orphan, and comes to us
        code = ("import subprocess, sys; k = subprocess.Popen([sys.executable, '-c', 'import time; "
                "time.sleep(300)'], start_new_session=True, stdout=subprocess.DEVNULL, "
                "stderr=subprocess.DEVNULL); "
                "print(k.pid)")  # fmt: skip
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        orphan = int(out.stdout)
        end = time.monotonic() + 10
        while orphan not in reaper.children() and time.monotonic() < end:
            time.sleep(0.02)
        assert orphan in reaper.children()
        assert reaper.end_strays() == 1
        assert dead(orphan, within=1.0)
        assert orphan not in reaper.children()  # reaped: no zombie left behind
    finally:
        reaper.subreaper(False)


def test_our_own_children_are_never_strays() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    reaper.spawned.add(child.pid)
    try:
        assert reaper.end_strays() == 0
        assert child.poll() is None
    finally:
        reaper.spawned.discard(child.pid)
        child.kill()
        child.wait()


def test_the_watchdog_kills_the_group_a_few_seconds_after_the_limit() -> None:
    argv = reaper.watched(["agent", "--flag"], 60)
    assert argv[-2:] == ["agent", "--flag"]
    assert os.path.basename(argv[0]) == "timeout"
    assert argv[1:] == ["-s", "TERM", "-k", "2", "65", "agent", "--flag"]
