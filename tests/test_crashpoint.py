"""crashpoint: the test hook that SIGKILLs its own process at a named point, armed by one variable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from control_room import crashpoint

HITS = """
import os, subprocess, sys
from control_room import crashpoint
print("child sees", os.environ.get(crashpoint.VAR), flush=True)
ASK = "import os; print('grandchild sees', os.environ.get('CONTROL_ROOM_CRASH_AT'))"
subprocess.run([sys.executable, "-c", ASK])
for k in range(1, 4):
    crashpoint.hit("other")
    crashpoint.hit("here")
    print("passed hit", k, flush=True)
"""


def test_the_variable_names_a_point_and_which_hit() -> None:
    assert crashpoint._parse("") is None
    assert crashpoint._parse("ledger.written") == ("ledger.written", 1)
    assert crashpoint._parse("ledger.written:3") == ("ledger.written", 3)
    assert crashpoint._parse("write.ROUTES.md:0") == ("write.ROUTES.md", 1)
    assert crashpoint._parse("a:b") == ("a:b", 1)


def test_unarmed_a_hit_does_nothing() -> None:
    assert not crashpoint.armed()
    crashpoint.hit("ledger.written")  # (this test process is alive to say so)


def test_armed_the_process_dies_at_that_hit_and_nothing_it_starts_is_armed() -> None:
    env = {**os.environ, crashpoint.VAR: "here:2"}
    done = subprocess.run([sys.executable, "-c", HITS], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert done.stdout == "child sees None\ngrandchild sees None\npassed hit 1\n"
