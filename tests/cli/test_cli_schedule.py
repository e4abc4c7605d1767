"""control-room schedule: cron and launchd entries that fire one cycle; the cron entry is run
for real (its command part, through sh, with the almost empty environment cron gives)."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import events, queue

from control_room import errors
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]
PY = sys.executable


def starters() -> list[list[str]]:
    """What the entry may start control-room with: the console script on PATH (absolute), or
    this interpreter with -m."""
    found = shutil.which("control-room")
    out = [[sys.executable, "-m", "control_room"]]
    if found:
        out.insert(0, [str(Path(found).absolute())])
    return out


def once(path: str) -> str:
    """PATH with each folder once, in its first place (what the entries carry)."""
    out: list[str] = []
    for folder in path.split(os.pathsep):
        if folder and folder not in out:
            out.append(folder)
    return os.pathsep.join(out)


def split_cron(line: str) -> tuple[list[str], str]:
    """(the five schedule fields, the command part) of a crontab line."""
    parts = line.split(" ", 5)
    return parts[:5], parts[5]


def cron_command(command: str) -> tuple[str, str]:
    """What cron does to the command part before sh sees it (crontab(5)): an unescaped `%`
    ends the command (the rest is stdin, its `%`s newlines); `\\%` is a literal `%`."""
    out, i = [], 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and command[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
            continue
        if ch == "%":
            return "".join(out), command[i + 1 :].replace("%", "\n")
        out.append(ch)
        i += 1
    return "".join(out), ""


def run_as_cron(command: str, home: Path) -> subprocess.CompletedProcess[str]:
    sh_command, stdin = cron_command(command)
    env = {"HOME": str(home), "SHELL": "/bin/sh", "LOGNAME": "cron", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["/bin/sh", "-c", sh_command], check=False, input=stdin, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


# cron -----------------------------------------------------------------------------------


def test_cron_entry_is_a_comment_and_one_line(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--every", "30m")
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.split("\n")
    assert len(lines) == 3 and lines[2] == "", result.stdout
    assert lines[0] == f"# control-room: one cycle of {inside.root}"
    fields, command = split_cron(lines[1])
    assert fields == ["*/30", "*", "*", "*", "*"]
    q = shlex.quote
    room = str(inside.root)
    tail = f"--room {q(room)} cycle >> {q(str(inside.cr / 'cycle.log'))} 2>&1"
    expected = [f"cd {q(room)} && PATH={q(once(os.environ['PATH']))} {shlex.join(argv)} {tail}" for argv in starters()]
    assert command in expected
    words = shlex.split(command)
    assert Path(words[1]).is_absolute() and Path(words[4]).is_absolute()  # cd ROOM && PATH=... EXE


def test_the_cron_entry_runs_a_cycle(run: Run, inside: Room, tmp_path: Path) -> None:
    queue(inside, "t-cron")
    line = run("schedule", "--cron", "--every", "5m").stdout.split("\n")[1]
    fields, command = split_cron(line)
    assert fields == ["*/5", "*", "*", "*", "*"]
    os.chdir(tmp_path)  # cron starts elsewhere, with an almost empty environment
    done = run_as_cron(command, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (errors.PASSED, "", "")
    log = (inside.cr / "cycle.log").read_text()
    assert log.startswith("passed: t-cron (round 1; agent exit 0 in ") and log.count("\n") == 1
    assert (inside.state_dir("done") / "t-cron.json").exists()
    assert events(inside.ledger)[-2:] == ["claim", "result"]
    again = run_as_cron(command, tmp_path)  # the next firing appends to the same log
    assert again.returncode == errors.OK
    assert (inside.cr / "cycle.log").read_text() == log + "nothing to do: the queue is empty\n"


def test_the_cron_entry_runs_for_a_room_whose_path_has_a_percent_sign(run: Run, tmp_path: Path) -> None:
    """cron turns an unescaped % in the command into a newline: the entry must escape it."""
    root = tmp_path / "at 100% speed"
    scaffold.init(root)
    room = Room(root)
    queue(room, "t")
    line = run("schedule", "--room", str(root), "--cron", "--every", "10m").stdout.split("\n")[1]
    _, command = split_cron(line)
    done = run_as_cron(command, tmp_path)
    assert done.returncode == errors.PASSED, (line, done.stderr)
    assert (room.cr / "cycle.log").read_text().startswith("passed: t (round 1; ")


@pytest.mark.parametrize(
    ("every", "fields"),
    [("1m", "* * * * *"), ("15m", "*/15 * * * *"), ("60m", "0 * * * *"), ("1h", "0 * * * *"),
     ("2h", "0 */2 * * *"), ("24h", "0 0 * * *")],
)  # fmt: skip
def test_cron_fields_for_each_period(run: Run, inside: Room, every: str, fields: str) -> None:
    result = run("schedule", "--cron", "--every", every)
    assert result.exit_code == 0
    assert result.stdout.split("\n")[1].startswith(f"{fields} cd ")


def test_cron_two_hours(run: Run, inside: Room) -> None:
    line = run("schedule", "--cron", "--every", "2h").stdout.split("\n")[1]
    assert split_cron(line)[0] == ["0", "*/2", "*", "*", "*"]


def test_cron_cannot_fire_every_seven_minutes(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--every", "7m")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        "Error: cron cannot fire every 7 minutes evenly: pick a divisor of 60 minutes or of 24 "
        "hours (5m, 10m, 15m, 20m, 30m, 1h, 2h, ...)\n"
    )


def test_cron_needs_whole_minutes(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--every", "90s")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == "Error: cron fires at most once a minute: use whole minutes (--every 30m)\n"


def test_the_cron_entry_carries_each_path_folder_once_in_its_first_place(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/local/bin:/usr/bin::/bin:/usr/local/bin:{bin_dir}:/usr/bin")
    result = run("schedule", "--cron", "--every", "30m")
    assert (result.exit_code, result.stderr) == (0, "")
    words = shlex.split(split_cron(result.stdout.split("\n")[1])[1])
    assert words[3] == f"PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin"


# launchd --------------------------------------------------------------------------------


def test_launchd_plist(run: Run, inside: Room) -> None:
    result = run("schedule", "--launchd", "--every", "15m")
    assert result.exit_code == 0
    plist = plistlib.loads(result.stdout.encode("utf-8"))
    assert plist["StartInterval"] == 900
    args = plist["ProgramArguments"]
    assert args[-3:] == ["--room", str(inside.root), "cycle"]
    assert args[:-3] in starters()
    assert plist["StandardOutPath"] == plist["StandardErrorPath"] == str(inside.cr / "cycle.log")
    assert Path(plist["StandardOutPath"]).parent == inside.cr
    assert plist["WorkingDirectory"] == str(inside.root)
    assert plist["EnvironmentVariables"]["PATH"] == once(os.environ["PATH"])
    assert plist["Label"].startswith("dev.control-room.room.")
    assert result.stderr == (f"# save as ~/Library/LaunchAgents/{plist['Label']}.plist, then: "
                             f"launchctl load ~/Library/LaunchAgents/{plist['Label']}.plist\n")  # fmt: skip


def test_launchd_plist_runs_a_cycle(run: Run, inside: Room, tmp_path: Path) -> None:
    """What launchd would do with the plist: start ProgramArguments in WorkingDirectory."""
    queue(inside, "t-launchd")
    plist = plistlib.loads(run("schedule", "--launchd", "--every", "15m").stdout.encode("utf-8"))
    env = {"HOME": str(tmp_path), **plist["EnvironmentVariables"]}
    done = subprocess.run(plist["ProgramArguments"], check=False, cwd=plist["WorkingDirectory"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == errors.PASSED, done.stderr
    assert (inside.state_dir("done") / "t-launchd.json").exists()


def test_the_launchd_plist_carries_each_path_folder_once(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/opt/a:/usr/bin:/opt/a:/bin:/usr/bin")
    result = run("schedule", "--launchd", "--every", "15m")
    assert result.exit_code == 0, result.stderr
    plist = plistlib.loads(result.stdout.encode("utf-8"))
    assert plist["EnvironmentVariables"] == {"PATH": "/opt/a:/usr/bin:/bin"}


# neither, or both -----------------------------------------------------------------------


def test_schedule_needs_a_scheduler(run: Run, inside: Room) -> None:
    result = run("schedule")
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.endswith("Error: say which scheduler: --cron or --launchd\n")
    assert result.stderr.startswith("Usage: control-room schedule [OPTIONS]\n")


def test_schedule_refuses_both_schedulers_at_once(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--launchd")
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.startswith("Usage: control-room schedule [OPTIONS]\n")
    assert result.stderr.endswith(
        "Error: --cron and --launchd print different entries: give one, and run again for the other\n"
    )


def test_schedule_refuses_a_bad_duration(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--every", "soon")
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.endswith("Error: Invalid value for --every: not a duration: 'soon' (try 90, 90s, 30m, 1h)\n")
