"""`control-room schedule --cron --install/--uninstall/--status` against the user's real crontab
(Debian's `cron` package; saved before each test and put back after it), run through the
installed executable; the installed line is then run as cron would run it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cronlib import crontab_text, run_as_cron, set_crontab, split_cron, stamped, users_crontab
from support import entries, events, queue

from control_room import errors
from control_room.dispatch.schedule import install
from control_room.room import scaffold
from control_room.room.layout import Room

MINE = "# my own line, kept\n17 3 * * * /usr/bin/true mine\n"
AFTER = 'MAILTO=""\n'


@pytest.fixture(autouse=True)
def _crontab() -> Iterator[None]:
    with users_crontab():
        yield


@pytest.fixture
def sch(exe: str, tmp_path: Path, room: Room):  # type: ignore[no-untyped-def]
    """`control-room schedule ...` in the room, as a separate process, HOME in tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CONTROL_ROOM", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), CONTROL_ROOM_WRITER="e2e")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([exe, "schedule", *args], cwd=room.root, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        return done

    return run


def block_of(room: Room, text: str) -> list[str]:
    lines = text.splitlines()
    begin = lines.index(f"# control-room {room.root} begin")
    return lines[begin : lines.index(f"# control-room {room.root} end") + 1]


def test_install_twice_then_uninstall_keeps_the_other_lines(sch, room: Room) -> None:  # type: ignore[no-untyped-def]
    set_crontab(MINE)
    user = install.crontab_user()
    first = sch("--cron", "--every", "10m", "--install")
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == f"installed cron: crontab of {user}, every 10m, 1 cycle per firing\n"
    text = crontab_text()
    assert text.startswith(MINE)
    block = block_of(room, text)
    assert len(block) == 4 and split_cron(block[2])[0] == ["*/10", "*", "*", "*", "*"]
    set_crontab(crontab_text() + AFTER)  # the user adds a line after the block
    second = sch("--cron", "--every", "1h", "--install")
    assert second.stdout == f"replaced cron: crontab of {user}, every 1h, 1 cycle per firing\n"
    text = crontab_text()
    assert text.count(f"# control-room {room.root} begin") == 1  # replaced where it stood
    assert text.startswith(MINE) and text.endswith(AFTER)
    assert split_cron(block_of(room, text)[2])[0] == ["0", "*", "*", "*", "*"]
    status = sch("--status")
    assert (status.returncode, status.stderr) == (0, "")
    assert status.stdout == (
        f"schedule of {room.root}\n"
        f"cron     crontab of {user}, every 1h, 1 cycle per firing\n"
        "launchd  not installed\n"
        "systemd  not installed\n"
        "last cycle: none in the ledger\n"
        "last log line: none\n"
    )
    removed = sch("--cron", "--uninstall")
    assert (removed.returncode, removed.stdout) == (
        0,
        f"removed cron: the block of {room.root} from the crontab of {user} (4 lines)\n",
    )
    assert crontab_text() == MINE + AFTER
    assert events(room.ledger)[-3:] == ["schedule-install", "schedule-install", "schedule-uninstall"]
    again = sch("--cron", "--uninstall")
    assert (again.returncode, again.stdout) == (errors.NOT_FOUND, "")
    assert again.stderr == (
        f"Error: no cron entry of {room.root} is installed: the crontab of {user} has no "
        f"`# control-room {room.root} begin` block\n"
    )
    assert crontab_text() == MINE + AFTER


def test_the_blocks_of_two_rooms_are_separate(sch, room: Room, tmp_path: Path, exe: str) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "other"
    scaffold.init(other)
    subprocess.run(
        [exe, "--room", str(other), "schedule", "--cron", "--install"], check=True, capture_output=True
    )
    sch("--cron", "--install")
    sch("--cron", "--uninstall")
    text = crontab_text()
    assert text.count("# control-room ") == 2 and f"# control-room {other} begin" in text


def test_the_installed_line_runs_a_cycle_from_a_clean_environment(sch, room: Room, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    set_crontab(MINE)
    queue(room, "t-probe")
    assert sch("--cron", "--every", "5m", "--install").returncode == 0
    line = block_of(room, crontab_text())[2]
    done = run_as_cron(split_cron(line)[1], tmp_path)
    assert (done.returncode, done.stderr) == (errors.PASSED, "")
    assert (room.state_dir("done") / "t-probe.json").exists()
    said = stamped((room.cr / "cycle.log").read_text())
    assert len(said) == 1 and said[0].startswith("passed: t-probe (round 1; agent exit 0 in "), said
    status = sch("--status").stdout.splitlines()
    assert status[4] == f"last cycle: {entries(room, 'result')[-1].time} (result t-probe, from the ledger)"
    assert status[5] == f"last log line: {(room.cr / 'cycle.log').read_text().splitlines()[-1]}"


def test_a_block_without_its_end_line_is_refused(sch, room: Room) -> None:  # type: ignore[no-untyped-def]
    broken = f"{MINE}# control-room {room.root} begin\n* * * * * true\n"
    set_crontab(broken)
    for args in (["--cron", "--install"], ["--cron", "--uninstall"]):
        done = sch(*args)
        assert (done.returncode, done.stdout) == (errors.CONFLICT, "")
        assert done.stderr == (
            f"Error: the crontab has `# control-room {room.root} begin` without its "
            f"`# control-room {room.root} end` line: mend it with `crontab -e`\n"
        )
    assert crontab_text() == broken
