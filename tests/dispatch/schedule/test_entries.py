"""dispatch.schedule.entries: cron fields for a period, stable launchd and systemd names,
systemd quoting, and how a scheduler starts control-room."""

from __future__ import annotations

import plistlib
from pathlib import Path

import pytest

from control_room.dispatch.schedule import entries
from control_room.errors import InvalidError
from control_room.room.layout import Room


@pytest.mark.parametrize(
    ("seconds", "spec"),
    [(60, "* * * * *"), (300, "*/5 * * * *"), (1800, "*/30 * * * *"), (3600, "0 * * * *"),
     (7200, "0 */2 * * *"), (86400, "0 0 * * *")],
)  # fmt: skip
def test_cron_spec(seconds: float, spec: str) -> None:
    assert entries.cron_spec(seconds) == spec


@pytest.mark.parametrize("seconds", [30, 90, 420, 3 * 3600 + 60])
def test_cron_spec_refuses_what_cron_cannot_fire_evenly(seconds: float) -> None:
    with pytest.raises(InvalidError):
        entries.cron_spec(seconds)


def test_the_launchd_label_is_stable_and_names_the_room(room: Room, tmp_path: Path) -> None:
    label = entries.launchd_label(room)
    assert label == entries.launchd_label(Room(room.root))
    assert label.startswith("dev.control-room.room.") and label != entries.launchd_label(
        Room(tmp_path / "other")
    )
    plist = plistlib.loads(entries.launchd_plist(room, 1800))
    assert (plist["Label"], plist["StartInterval"], plist["ProgramArguments"][-5:]) == (
        label, 1800, ["--room", str(room.root), "cycle", "--log", str(room.cr / "cycle.log")],
    )  # fmt: skip


def test_the_scheduler_starts_this_installation(room: Room) -> None:
    argv = entries.command_argv()
    assert Path(argv[0]).is_absolute()
    assert entries.log_path(room) == room.cr / "cycle.log"


def test_the_systemd_unit_name_is_stable_and_names_the_room(room: Room, tmp_path: Path) -> None:
    name = entries.unit_name(room)
    assert name == entries.unit_name(Room(room.root)) and name != entries.unit_name(Room(tmp_path / "other"))
    assert name == "control-room-room-" + entries.launchd_label(room).rsplit(".", 1)[1]
    assert entries.unit_name(Room(tmp_path / "My Room!")).startswith("control-room-my-room-")


@pytest.mark.parametrize(
    ("word", "written"),
    [("/usr/bin/x", "/usr/bin/x"), ("a b", '"a b"'), ("100%", "100%%"), ("$HOME", "$$HOME"),
     ('say "hi"', '"say \\"hi\\""'), ("it's", '"it\'s"'), ("a\\b", '"a\\\\b"'), ("", '""')],
)  # fmt: skip
def test_an_exec_start_word_reaches_systemd_literally(word: str, written: str) -> None:
    assert entries._exec_word(word) == written


@pytest.mark.parametrize(
    ("seconds", "text"), [(20, "20s"), (90, "90s"), (300, "5m"), (5400, "90m"), (7200, "2h")]
)
def test_every_text(seconds: float, text: str) -> None:
    assert entries.every_text(seconds) == text


def test_parallel_of_what_an_entry_runs(room: Room) -> None:
    assert entries.parallel_of(entries.program_arguments(room, 1)) == 1
    assert entries.parallel_of(entries.program_arguments(room, 3)) == 3


def test_parallel_is_checked_against_the_slots(room: Room) -> None:
    entries.check_parallel(room, 1)
    with pytest.raises(InvalidError, match=r"^--parallel 2: max_parallel is 1 in "):
        entries.check_parallel(room, 2)
