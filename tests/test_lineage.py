"""lineage: inside a run or not, told from the process tree by real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from control_room import lineage

ASK = "from control_room.lineage import inside_run; print(inside_run('approve'), inside_run('cycle'))"


def ask(env: dict[str, str], argv: list[str] | None = None) -> str:
    done = subprocess.run(argv or [sys.executable, "-c", ASK], env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def clean() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != lineage.TASK_VARIABLE}


def test_a_persons_shell_is_not_inside_a_run() -> None:
    assert ask(clean()) == "None None"


def test_the_variable_names_the_task() -> None:
    assert ask({**clean(), "CONTROL_ROOM_TASK": "t1"}) == "t1 t1"
    assert ask({**clean(), "CONTROL_ROOM_TASK": ""}) == "unknown unknown"


def test_unsetting_the_variable_does_not_hide_the_run_from_its_ancestors() -> None:
    inner = [sys.executable, "-c", ASK]
    shell = ["env", "-u", "CONTROL_ROOM_TASK", *inner]
    assert ask({**clean(), "CONTROL_ROOM_TASK": "t7"}, ["sh", "-c", '"$@"', "sh", *shell]) == "t7 t7"


def test_a_dispatcher_above_says_so_but_a_cycle_that_run_started_is_the_persons(tmp_path: Path) -> None:
    fake = tmp_path / "control-room"  # a process whose command line is `.../control-room run`
    fake.write_text(f"import subprocess, sys; subprocess.run([sys.executable, '-c', {ASK!r}])\n")
    for command, said in (("run", "unknown None"), ("cycle", "unknown unknown"), ("status", "None None")):
        out = ask(clean(), [sys.executable, str(fake), "--room", "x", command])
        assert out == said, command


def test_a_cycle_that_run_started_writes_as_its_host_asked_or_not(tmp_path: Path) -> None:
    """The ledger's writer asks without naming a command: a `cycle` of `run --parallel` is still
    the person's (it was `<host>.task.unknown`, so its claims were not its host's: a crashed
    cycle's task waited out its deadline before `run --parallel` recovered it)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cycle = tmp_path / "b" / "control-room"  # `.../control-room cycle`, asking as the writer does
    cycle.write_text("from control_room.lineage import inside_run; print(inside_run())\n")
    run = tmp_path / "a" / "control-room"  # `.../control-room run`, which starts the cycle
    run.write_text(f"import subprocess, sys; subprocess.run([sys.executable, {str(cycle)!r}, 'cycle'])\n")
    assert ask(clean(), [sys.executable, str(run), "run"]) == "None"
    assert ask(clean(), [sys.executable, str(run), "cycle"]) == "unknown"  # a cycle above: an agent's


def test_the_command_line_of_a_dispatcher() -> None:
    d = lineage._dispatcher
    assert d(b"/v/bin/control-room\0--room\0/r\0cycle\0") == "cycle"
    assert d(b"/usr/bin/python3\0/v/bin/control-room\0run\0--every\0" + b"0\0") == "run"
    assert d(b"python3\0-m\0control_room\0--room\0/r\0cycle\0") == "cycle"
    assert d(b"/v/bin/control-room\0task\0add\0--objective\0run\0") == ""
    assert d(b"/v/bin/control-room\0--room\0cycle\0status\0") == ""  # `cycle` is the room's name
    assert d(b"bash\0-c\0control-room cycle\0") == ""
    assert d(b"python3.11\0-m\0control_room\0cycle\0") == "cycle"
    # a person's wrapper is not the dispatcher it starts (that one is its child, below it)
    assert d(b"timeout\0" + b"60\0/v/bin/control-room\0cycle\0") == ""
    assert d(b"/usr/bin/time\0-v\0control-room\0run\0") == ""
