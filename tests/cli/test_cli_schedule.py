"""control-room schedule: cron, launchd and systemd entries printed, installed (launchd,
systemd: into a HOME of the test's own), removed and reported; the cron entry is run for real
(its command part, through sh, with the almost empty environment cron gives). The user's real
crontab is exercised in tests/e2e/test_schedule_e2e.py."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from cronlib import fake_ctl, once, run_as_cron, split_cron, stamped, starters
from support import entries, events, queue, set_gate

from control_room import errors
from control_room.dispatch.schedule import entries as schedule
from control_room.dispatch.schedule import install
from control_room.room import scaffold
from control_room.room.layout import Room

Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def cycle_words(room: Room) -> list[str]:
    return ["--room", str(room.root), "cycle", "--log", str(room.cr / "cycle.log")]


# printing: cron -------------------------------------------------------------------------


def test_the_cron_entry_is_a_marked_block(run: Run, inside: Room) -> None:
    result = run("schedule", "--cron", "--every", "30m")
    assert (result.exit_code, result.stderr) == (
        0,
        "# add it with `crontab -e`, or run again with --install\n",
    )
    lines = result.stdout.split("\n")
    assert len(lines) == 5 and lines[4] == "", result.stdout
    root = str(inside.root)
    assert lines[0] == f"# control-room {root} begin"
    assert (
        lines[1]
        == "# every 30m, 1 cycle per firing; `control-room schedule --cron --uninstall` removes this block"
    )
    assert lines[3] == f"# control-room {root} end"
    fields, command = split_cron(lines[2])
    assert fields == ["*/30", "*", "*", "*", "*"]
    q = shlex.quote
    expected = [f"cd {q(root)} && PATH={q(once(os.environ['PATH']))} "
                f"{shlex.join([*argv, *cycle_words(inside)])}"
                for argv in starters()]  # fmt: skip
    assert command in expected


def test_the_cron_entry_runs_a_cycle(run: Run, inside: Room, tmp_path: Path) -> None:
    queue(inside, "t-cron")
    line = run("schedule", "--cron", "--every", "5m").stdout.split("\n")[2]
    fields, command = split_cron(line)
    assert fields == ["*/5", "*", "*", "*", "*"]
    done = run_as_cron(command, tmp_path)
    assert (done.returncode, done.stderr) == (errors.PASSED, "")
    said = stamped((inside.cr / "cycle.log").read_text())
    assert len(said) == 1 and said[0].startswith("passed: t-cron (round 1; agent exit 0 in "), said
    assert (inside.state_dir("done") / "t-cron.json").exists()
    assert events(inside.ledger)[-2:] == ["claim", "result"]
    again = run_as_cron(command, tmp_path)  # the next firing appends to the same log
    assert again.returncode == errors.OK
    assert stamped((inside.cr / "cycle.log").read_text())[1:] == ["nothing to do: the queue is empty"]


def test_an_error_of_a_cron_cycle_reaches_the_log(run: Run, inside: Room, tmp_path: Path) -> None:
    line = run("schedule", "--cron", "--every", "5m").stdout.split("\n")[2]
    inside.control.unlink()
    done = run_as_cron(split_cron(line)[1], tmp_path)
    assert (done.returncode, done.stdout) == (errors.ROOM_INVALID, "")
    assert done.stderr.startswith("Error: ")  # what cron mails to the crontab's owner
    (line,) = stamped((inside.cr / "cycle.log").read_text())  # and the log says it, with its time
    assert line == done.stderr.strip()


def test_the_cron_entry_runs_for_a_room_whose_path_has_a_percent_sign(run: Run, tmp_path: Path) -> None:
    """cron turns an unescaped % in the command into a newline: the entry must escape it."""
    root = tmp_path / "at 100% speed"
    scaffold.init(root)
    room = Room(root)
    queue(room, "t")
    line = run("schedule", "--room", str(root), "--cron", "--every", "10m").stdout.split("\n")[2]
    done = run_as_cron(split_cron(line)[1], tmp_path)
    assert done.returncode == errors.PASSED, (line, done.stderr)
    assert stamped((room.cr / "cycle.log").read_text())[0].startswith("passed: t (round 1; ")


def test_parallel_cycles_each_take_a_slot(run: Run, inside: Room, tmp_path: Path) -> None:
    set_gate(inside, "max_parallel", "2")
    for t in ("t-1", "t-2", "t-3"):
        queue(inside, t)
    result = run("schedule", "--cron", "--every", "5m", "--parallel", "2")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.split("\n")
    assert lines[1].startswith("# every 5m, 2 cycles per firing;")
    _, command = split_cron(lines[2])
    one = shlex.join([*schedule.command_argv(), *cycle_words(inside)])
    assert command.endswith(f"&& {{ {one} & {one} & wait; }}")
    done = run_as_cron(command, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    said = sorted(stamped((inside.cr / "cycle.log").read_text()))
    assert [s.split(" (")[0] for s in said] in (["passed: t-1", "passed: t-2"],), said
    assert sorted(p.name for p in inside.state_dir("queue").glob("*.json")) == ["t-3.json"]


@pytest.mark.parametrize(
    ("every", "fields"),
    [("1m", "* * * * *"), ("15m", "*/15 * * * *"), ("60m", "0 * * * *"), ("1h", "0 * * * *"),
     ("2h", "0 */2 * * *"), ("24h", "0 0 * * *")],
)  # fmt: skip
def test_cron_fields_for_each_period(run: Run, inside: Room, every: str, fields: str) -> None:
    result = run("schedule", "--cron", "--every", every)
    assert result.exit_code == 0
    assert result.stdout.split("\n")[2].startswith(f"{fields} cd ")


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
    assert result.exit_code == 0
    words = shlex.split(split_cron(result.stdout.split("\n")[2])[1])
    assert words[3] == f"PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin"


# printing: launchd ----------------------------------------------------------------------


def test_launchd_plist(run: Run, inside: Room, _home: Path) -> None:
    result = run("schedule", "--launchd", "--every", "15m")
    assert result.exit_code == 0
    plist = plistlib.loads(result.stdout.encode("utf-8"))
    assert plist["StartInterval"] == 900
    args = plist["ProgramArguments"]
    assert args[-5:] == cycle_words(inside) and args[:-5] in starters()
    assert (
        plist["StandardErrorPath"] == str(inside.cr / "cycle.stderr.log") and "StandardOutPath" not in plist
    )
    assert plist["WorkingDirectory"] == str(inside.root)
    assert plist["EnvironmentVariables"]["PATH"] == once(os.environ["PATH"])
    assert plist["Label"].startswith("dev.control-room.room.")
    path = _home / "Library" / "LaunchAgents" / f"{plist['Label']}.plist"
    assert (
        result.stderr == f"# save as {path}, then: launchctl load -w {path} (or run again with --install)\n"
    )


def test_launchd_plist_runs_a_cycle(run: Run, inside: Room, tmp_path: Path) -> None:
    """What launchd would do with the plist: start ProgramArguments in WorkingDirectory."""
    queue(inside, "t-launchd")
    plist = plistlib.loads(run("schedule", "--launchd", "--every", "15m").stdout.encode("utf-8"))
    env = {"HOME": str(tmp_path), **plist["EnvironmentVariables"]}
    done = subprocess.run(plist["ProgramArguments"], check=False, cwd=plist["WorkingDirectory"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == errors.PASSED, done.stderr
    assert (inside.state_dir("done") / "t-launchd.json").exists()
    assert stamped((inside.cr / "cycle.log").read_text())[0].startswith("passed: t-launchd (round 1; ")


def test_a_parallel_launchd_entry_starts_cycles_through_sh(run: Run, inside: Room) -> None:
    set_gate(inside, "max_parallel", "3")
    plist = plistlib.loads(run("schedule", "--launchd", "--parallel", "3").stdout.encode("utf-8"))
    one = shlex.join([*schedule.command_argv(), *cycle_words(inside)])
    assert plist["ProgramArguments"] == ["/bin/sh", "-c", f"{one} & {one} & {one} & wait"]


def test_the_launchd_plist_carries_each_path_folder_once(
    run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/opt/a:/usr/bin:/opt/a:/bin:/usr/bin")
    result = run("schedule", "--launchd", "--every", "15m")
    assert result.exit_code == 0, result.stderr
    plist = plistlib.loads(result.stdout.encode("utf-8"))
    assert plist["EnvironmentVariables"] == {"PATH": "/opt/a:/usr/bin:/bin"}


# printing: systemd ----------------------------------------------------------------------


def systemd_verify(*units: Path) -> None:
    """`systemd-analyze verify --user` on the units: silent and 0, or the test fails; skipped,
    with the reason, only where systemd-analyze cannot run here."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here")
    with tempfile.TemporaryDirectory(prefix="rt-", dir="/tmp") as runtime:  # a user manager needs one,
        env = {**os.environ, "XDG_RUNTIME_DIR": runtime}  # short: socket paths are at most 108 bytes
        done = subprocess.run([analyze, "verify", "--user", *map(str, units)], capture_output=True, text=True,
                              env=env, timeout=60, check=False)  # fmt: skip
    if "Failed to initialize manager" in done.stderr:
        pytest.skip(f"systemd-analyze cannot run in this container: {done.stderr.strip()}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_systemd_units(run: Run, inside: Room, _home: Path) -> None:
    result = run("schedule", "--systemd", "--every", "30m")
    assert result.exit_code == 0, result.stderr
    name = schedule.unit_name(inside)
    assert re.fullmatch(r"control-room-room-[0-9a-f]{8}", name)
    units = _home / ".config" / "systemd" / "user"
    exec_start = " ".join([*schedule.command_argv(), *cycle_words(inside)])
    assert result.stdout == (
        f"# file: {units}/{name}.service\n"
        f"# control-room: cycles of {inside.root}; `control-room schedule --systemd --uninstall` removes it\n"
        "[Unit]\n"
        f"Description=control-room: 1 cycle per firing of {inside.root}\n"
        "\n[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={inside.root}\n"
        f'Environment="PATH={once(os.environ["PATH"])}"\n'
        f"ExecStart={exec_start}\n"
        f"# file: {units}/{name}.timer\n"
        f"# control-room: every 30m, 1 cycle per firing; for {inside.root}\n"
        "[Unit]\n"
        f"Description=control-room: cycles of {inside.root} every 30m\n"
        "\n[Timer]\n"
        "OnCalendar=*-*-* *:00/30:00\n"
        "Persistent=true\n"
        "AccuracySec=1s\n"
        f"Unit={name}.service\n"
        "\n[Install]\n"
        "WantedBy=timers.target\n"
    )
    assert result.stderr == (
        f"# save both, then: systemctl --user daemon-reload && systemctl --user enable --now {name}.timer "
        "(or run again with --install)\n"
    )


@pytest.mark.parametrize(
    ("every", "when"),
    [("20s", "OnCalendar=*-*-* *:*:00/20\nPersistent=true\n"),
     ("1m", "OnCalendar=*-*-* *:00/1:00\nPersistent=true\n"),
     ("2h", "OnCalendar=*-*-* 00/2:00:00\nPersistent=true\n"),
     ("24h", "OnCalendar=*-*-* 00/24:00:00\nPersistent=true\n"),
     ("45m", "OnBootSec=2700s\nOnUnitActiveSec=2700s\n"),
     ("90s", "OnBootSec=90s\nOnUnitActiveSec=90s\n")],
)  # fmt: skip
def test_the_systemd_timer_for_each_period(run: Run, inside: Room, every: str, when: str) -> None:
    result = run("schedule", "--systemd", "--every", every)
    assert result.exit_code == 0, result.stderr
    assert f"\n[Timer]\n{when}AccuracySec=1s\n" in result.stdout


@pytest.mark.parametrize("every", ["30m", "45m"])
def test_installed_systemd_units_pass_systemd_analyze_verify(run: Run, tmp_path: Path, every: str) -> None:
    """A room whose path has a space, a `%`, a `$` and a quote: all reach systemd literally."""
    root = tmp_path / "it's 100% $HOME"
    scaffold.init(root)
    room = Room(root)
    set_gate(room, "max_parallel", "2")
    result = run("schedule", "--room", str(root), "--systemd", "--every", every, "--install")
    assert result.exit_code == 0, result.stderr
    service, timer = install.unit_paths(room)
    systemd_verify(service, timer)
    text = service.read_text()
    assert "\nWorkingDirectory=" + str(root).replace("%", "%%") + "\n" in text
    literal = '"' + str(root / "control-room" / "cycle.log").replace("%", "%%").replace("$", "$$") + '"'
    assert text.endswith(f" cycle --log {literal}\n")
    parallel = run(
        "schedule", "--room", str(root), "--systemd", "--every", every, "--parallel", "2", "--install"
    )
    assert parallel.exit_code == 0, parallel.stderr
    assert "\nExecStart=/bin/sh -c " in service.read_text()
    systemd_verify(service, timer)


# installing: launchd and systemd, into the test's HOME ---------------------------------


def ledger_details(room: Room, event: str) -> list[str]:
    from control_room.ledger.read import entries

    return [e.detail for e in entries(room.ledger) if e.event == event]


def test_launchd_install_without_launchctl(run: Run, inside: Room, _home: Path) -> None:
    label = schedule.launchd_label(inside)
    path = _home / "Library" / "LaunchAgents" / f"{label}.plist"
    result = run("schedule", "--launchd", "--every", "1h", "--install")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"installed launchd: {path}, every 1h, 1 cycle per firing\n"
        f"launchctl is not on PATH (launchd is macOS's): to load it there, run: launchctl load -w {path}\n"
    )
    plist = plistlib.loads(path.read_bytes())
    assert (plist["Label"], plist["StartInterval"], plist["ProgramArguments"][-5:]) == (
        label, 3600, cycle_words(inside))  # fmt: skip
    again = run("schedule", "--launchd", "--every", "2h", "--install")
    assert again.stdout.startswith(f"replaced launchd: {path}, every 2h, 1 cycle per firing\n")
    assert list(path.parent.iterdir()) == [path]
    assert ledger_details(inside, "schedule-install") == [
        f"launchd: {path}, every 1h, 1 cycle per firing",
        f"launchd: {path}, every 2h, 1 cycle per firing"]  # fmt: skip
    removed = run("schedule", "--launchd", "--uninstall")
    assert (removed.exit_code, removed.stdout) == (0, f"removed launchd: {path}\n")
    assert not path.exists() and path.parent.exists()
    assert ledger_details(inside, "schedule-uninstall") == [f"launchd: {path}"]
    gone = run("schedule", "--launchd", "--uninstall")
    assert (gone.exit_code, gone.stdout) == (errors.NOT_FOUND, "")
    assert gone.stderr == f"Error: no launchd entry of {inside.root} is installed: {path} does not exist\n"


def test_launchd_install_loads_it_with_launchctl(
    run: Run, inside: Room, _home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_ctl(tmp_path, monkeypatch, "launchctl")
    path = _home / "Library" / "LaunchAgents" / f"{schedule.launchd_label(inside)}.plist"
    first = run("schedule", "--launchd", "--install")
    assert first.stdout.endswith(f"\nloaded: launchctl load -w {path}\n")
    run("schedule", "--launchd", "--install")
    removed = run("schedule", "--launchd", "--uninstall")
    assert removed.stdout == f"removed launchd: {path}\nunloaded: launchctl unload -w {path}\n"
    assert calls.read_text().splitlines() == [
        f"launchctl load -w {path}", f"launchctl unload {path}", f"launchctl load -w {path}",
        f"launchctl unload -w {path}"]  # fmt: skip


def test_systemd_install_where_no_user_systemd_answers(
    run: Run, inside: Room, _home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_ctl(tmp_path, monkeypatch, "systemctl", SCHEDULERCTL_STATE="offline")
    service, timer = install.unit_paths(inside)
    assert service.parent == _home / ".config" / "systemd" / "user"
    result = run("schedule", "--systemd", "--every", "10m", "--install")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"installed systemd: {timer}, every 10m, 1 cycle per firing\n"
        f"  and {service}\n"
        "no user systemd answers here (systemctl --user is-system-running: offline); to start the timer "
        "where one runs:\n"
        "  systemctl --user daemon-reload\n"
        f"  systemctl --user enable --now {timer.name}\n"
    )
    assert "OnCalendar=*-*-* *:00/10:00\n" in timer.read_text()
    systemd_verify(service, timer)
    removed = run("schedule", "--systemd", "--uninstall")
    assert removed.stdout == (
        f"removed systemd: {timer} and {service.name}\n"
        "no user systemd answers here (systemctl --user is-system-running: offline): nothing to stop\n"
    )
    assert sorted(service.parent.iterdir()) == []


def test_systemd_install_enables_the_timer_where_user_systemd_runs(
    run: Run, inside: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_ctl(tmp_path, monkeypatch, "systemctl")
    service, timer = install.unit_paths(inside)
    other = service.parent / "mine.timer"  # a unit of the user's own: never touched
    other.parent.mkdir(parents=True)
    other.write_text("[Timer]\nOnCalendar=daily\n")
    result = run("schedule", "--systemd", "--install")
    assert result.stdout.endswith(f"\nstarted: systemctl --user enable --now {timer.name}\n")
    removed = run("schedule", "--systemd", "--uninstall")
    assert removed.stdout == (
        f"removed systemd: {timer} and {service.name}\nstopped: systemctl --user disable --now {timer.name}\n"
    )
    assert calls.read_text().splitlines() == [
        "systemctl --user is-system-running", "systemctl --user daemon-reload",
        f"systemctl --user enable --now {timer.name}",
        "systemctl --user is-system-running", f"systemctl --user disable --now {timer.name}",
        "systemctl --user daemon-reload"]  # fmt: skip
    assert sorted(service.parent.iterdir()) == [other]
    assert events(inside.ledger)[-2:] == ["schedule-install", "schedule-uninstall"]


def test_a_failing_systemctl_is_one_line(
    run: Run, inside: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_ctl(tmp_path, monkeypatch, "systemctl", SCHEDULERCTL_EXIT="1")
    result = run("schedule", "--systemd", "--install")
    assert (result.exit_code, result.stdout) == (errors.IO_ERROR, "")
    assert (
        result.stderr
        == "Error: `systemctl --user daemon-reload` failed: Failed to --user daemon-reload: Access denied\n"
    )


# status ---------------------------------------------------------------------------------


def test_status_of_one_kind(run: Run, inside: Room, _home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "PATH", "/nowhere:" + os.environ["PATH"].replace("/usr/bin", "/nowhere")
    )  # no systemctl
    first = run("schedule", "--status", "--systemd")
    assert (first.exit_code, first.stderr) == (0, "")
    assert first.stdout == (
        f"schedule of {inside.root}\nsystemd  not installed\n"
        "last cycle: none in the ledger\nlast log line: none\n"
    )
    run("schedule", "--systemd", "--every", "2h", "--install")
    _, timer = install.unit_paths(inside)
    assert run("schedule", "--status", "--systemd").stdout == (
        f"schedule of {inside.root}\nsystemd  {timer}, every 2h, 1 cycle per firing\n"
        "last cycle: none in the ledger\nlast log line: none\n"
    )


def test_status_json_and_the_last_cycle(run: Run, inside: Room, _home: Path, tmp_path: Path) -> None:
    queue(inside, "t-1")
    run("schedule", "--launchd", "--every", "5m", "--install")
    line = run("schedule", "--cron", "--every", "5m").stdout.split("\n")[2]
    run_as_cron(split_cron(line)[1], tmp_path)
    result = run("schedule", "--status", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    doc = json.loads(result.stdout)
    result_line = entries(inside, "result")[-1]
    assert doc == {
        "room": str(inside.root),
        "installed": [
            {"kind": "launchd", "where": str(install.plist_path(inside)), "every": "5m", "parallel": 1}
        ],
        "crontab_missing": shutil.which("crontab") is None,
        "last_cycle": {"time": result_line.time, "event": "result", "task": "t-1"},
        "last_log_line": (inside.cr / "cycle.log").read_text().splitlines()[-1],
    }
    assert install.last_fired(inside) == doc["last_cycle"]["time"]


# refusals -------------------------------------------------------------------------------


def test_schedule_needs_a_scheduler(run: Run, inside: Room) -> None:
    result = run("schedule")
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.endswith("Error: say which scheduler: --cron, --launchd or --systemd\n")
    assert result.stderr.startswith("Usage: control-room schedule [OPTIONS]\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--cron", "--launchd"], "--cron and --launchd are different entries: give one, run again for another"),
     (["--cron", "--launchd", "--systemd"],
      "--cron and --launchd and --systemd are different entries: give one, run again for another"),
     (["--cron", "--install", "--uninstall"], "--install and --uninstall do different things: give one"),
     (["--cron", "--json"], "--json goes with --status"),
     (["--cron", "--uninstall", "--every", "5m"],
      "--every and --parallel describe an entry to print or install: --uninstall takes neither"),
     (["--status", "--parallel", "2"],
      "--every and --parallel describe an entry to print or install: --status takes neither"),
     (["--cron", "--parallel", "0"], "Invalid value for '--parallel': 0 is not in the range x>=1."),
     (["--cron", "--every", "soon"],
      "Invalid value for --every: not a duration: 'soon' (try 90, 90s, 30m, 1h)")],
)  # fmt: skip
def test_usage_refusals(run: Run, inside: Room, args: list[str], message: str) -> None:
    result = run("schedule", *args)
    assert (result.exit_code, result.stdout) == (errors.USAGE, "")
    assert result.stderr.startswith("Usage: control-room schedule [OPTIONS]\n")
    assert result.stderr.endswith(f"Error: {message}\n")


@pytest.mark.parametrize("kind", ["--cron", "--launchd", "--systemd"])
@pytest.mark.parametrize("action", [[], ["--install"]])
def test_more_parallel_cycles_than_slots_are_refused(
    run: Run, inside: Room, _home: Path, kind: str, action: list[str]
) -> None:
    set_gate(inside, "max_parallel", "2")
    before = inside.ledger.read_bytes()
    result = run("schedule", kind, "--parallel", "3", *action)
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == (
        f"Error: --parallel 3: max_parallel is 2 in {inside.control}, and cycles past the slots would only "
        "exit busy; ask for at most 2, or raise max_parallel\n"
    )
    assert inside.ledger.read_bytes() == before and list(_home.iterdir()) == []
