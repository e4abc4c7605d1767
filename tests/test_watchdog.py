"""watchdog: a run loop's one watchdog ends each group it watches by its wall clock once the loop
is gone, and finds a run announced but never said started by its environment."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from support import dead

from control_room import reaper, watchdog

PY = sys.executable
PACKAGE_PARENT = Path(watchdog.__file__).resolve().parent.parent


def test_the_lines_say_which_groups_are_watched_and_which_runs_never_started() -> None:
    lines = [b"? 10.5 t1 /rooms/a b\n", b"+ 101\n", b"? 20 - /r\n", b"+ 102\n", b"- 102\n",
             b"? 30 t3 /r\n", b"garbage\n", b"+ x\n", b"? 40 t4 /r\n", b"+ 0\n"]  # fmt: skip
    groups, pending = watchdog.watch(lines)
    assert groups == {101: 10.5}
    assert pending == [(40.0, "/r", "t4")]  # t3 was said started, as no group (0): not watched


def start_watchdog() -> subprocess.Popen[bytes]:
    return subprocess.Popen([PY, "-m", "control_room.watchdog"], cwd=PACKAGE_PARENT, stdin=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip


def sleeper(env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PY, "-c", "import time; time.sleep(300)"], start_new_session=True,
                            env={**os.environ, **(env or {})})  # fmt: skip


def test_a_watched_group_ends_by_its_deadline_once_the_loop_is_gone() -> None:
    dog, agent = start_watchdog(), sleeper()
    try:
        assert dog.stdin is not None
        soon = time.monotonic() - watchdog.GRACE_S + 1.0  # its wall clock, plus the grace, in 1 s
        dog.stdin.write(f"? {soon} t1 /nowhere\n+ {agent.pid}\n".encode())
        dog.stdin.flush()
        assert not dead(agent.pid, within=0.3)  # the loop is there: nothing happens
        dog.stdin.close()  # the loop is gone
        assert dead(agent.pid, within=20.0)
        assert dog.wait(timeout=20) == 0
    finally:
        agent.kill()
        dog.kill()


def test_a_run_ended_is_no_longer_watched() -> None:
    dog, agent = start_watchdog(), sleeper()
    try:
        assert dog.stdin is not None
        dog.stdin.write(f"? {time.monotonic() - 10} t1 /nowhere\n+ {agent.pid}\n- {agent.pid}\n".encode())
        dog.stdin.close()
        assert dog.wait(timeout=20) == 0  # it had nothing left to watch
        assert agent.poll() is None
    finally:
        agent.kill()


def test_a_run_announced_but_never_said_started_is_found_by_its_environment(tmp_path: Path) -> None:
    room = tmp_path / "a room"
    room.mkdir()
    dog = start_watchdog()
    agent = sleeper({"CONTROL_ROOM": str(room), "CONTROL_ROOM_TASK": "t9"})
    try:
        assert dog.stdin is not None
        dog.stdin.write(f"? {time.monotonic() - watchdog.GRACE_S} t9 {room}\n".encode())  # then killed
        dog.stdin.close()
        assert dead(agent.pid, within=20.0)
    finally:
        agent.kill()
        dog.kill()


def test_a_process_without_its_own_watchdog_runs_under_timeout() -> None:
    argv = reaper.watched(["agent"], 60)
    reaper.started(None)
    if sys.platform.startswith("linux"):
        assert os.path.basename(argv[0]) == "timeout"


def test_the_pipe_is_read_in_batches_whole_lines_each() -> None:
    r, w = os.pipe()
    os.write(w, b"? 10 t1 /r\n+ 10")  # a line cut in two by the writer's timing
    os.write(w, b"1\n- 101\n? 20 t2 /r")  # and a last line without its newline
    os.close(w)
    try:
        got = list(watchdog.lines_of(r, pause_s=0))
    finally:
        os.close(r)
    assert got == [b"? 10 t1 /r\n", b"+ 101\n", b"- 101\n", b"? 20 t2 /r"]


def test_the_pause_between_reads_ends_when_the_loop_closes_the_pipe() -> None:
    """A loop that ends waits for its watchdog to exit: not for the rest of its pause."""
    r, w = os.pipe()
    os.write(w, b"? 10 t1 /r\n")
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend(watchdog.lines_of(r, pause_s=600)), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:  # read, and given to the list: it pauses
            time.sleep(0.01)
        os.close(w)
        reader.join(timeout=120)  # (a pause of 600 s, if the close did not end it)
        assert not reader.is_alive()
    finally:
        os.close(r)
    assert got == [b"? 10 t1 /r\n"]
