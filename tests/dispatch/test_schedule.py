"""control_room.dispatch.schedule: cron fields for a period, a stable launchd label, and how a
scheduler starts control-room."""

from __future__ import annotations

import plistlib
from pathlib import Path

import pytest

from control_room.dispatch import schedule
from control_room.errors import InvalidError
from control_room.room.layout import Room


@pytest.mark.parametrize(
    ("seconds", "spec"),
    [(60, "* * * * *"), (300, "*/5 * * * *"), (1800, "*/30 * * * *"), (3600, "0 * * * *"),
     (7200, "0 */2 * * *"), (86400, "0 0 * * *")],
)  # fmt: skip
def test_cron_spec(seconds: float, spec: str) -> None:
    assert schedule.cron_spec(seconds) == spec


@pytest.mark.parametrize("seconds", [30, 90, 420, 3 * 3600 + 60])
def test_cron_spec_refuses_what_cron_cannot_fire_evenly(seconds: float) -> None:
    with pytest.raises(InvalidError):
        schedule.cron_spec(seconds)


def test_the_launchd_label_is_stable_and_names_the_room(room: Room, tmp_path: Path) -> None:
    label = schedule.launchd_label(room)
    assert label == schedule.launchd_label(Room(room.root))
    assert label.startswith("dev.control-room.room.") and label != schedule.launchd_label(Room(tmp_path / "other"))
    plist = plistlib.loads(schedule.launchd_plist(room, 1800))
    assert (plist["Label"], plist["StartInterval"], plist["ProgramArguments"][-3:]) == (
        label, 1800, ["--room", str(room.root), "cycle"],
    )  # fmt: skip


def test_the_scheduler_starts_this_installation(room: Room) -> None:
    argv = schedule.command_argv()
    assert Path(argv[0]).is_absolute()
    assert schedule.log_path(room) == room.cr / "cycle.log"
