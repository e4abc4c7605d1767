"""dispatch.schedule.install: what the lead's `doctor` reads (``installed``, ``last_fired``)
and the cron block's edges; installing for real is tested in tests/cli/test_cli_schedule.py and
tests/e2e/test_schedule_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_room import ledger
from control_room.dispatch.schedule import entries, install
from control_room.errors import ConflictError
from control_room.ledger import events
from control_room.room.layout import Room


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nowhere")  # no crontab, launchctl or systemctl: files only
    return home


def test_installed_lists_each_kind_with_where_and_every(room: Room, _home: Path) -> None:
    assert install.installed(room) == []
    install.install(room, "systemd", 3600, 1)
    install.install(room, "launchd", 900, 1)
    assert install.installed(room) == [
        install.Installed("launchd", str(install.plist_path(room)), "15m", 1),
        install.Installed("systemd", str(install.unit_paths(room)[1]), "1h", 1),
    ]
    assert str(install.plist_path(room)).startswith(str(_home / "Library" / "LaunchAgents"))


def test_the_systemd_units_follow_xdg_config_home(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert (
        install.unit_paths(room)[0]
        == tmp_path / "cfg" / "systemd" / "user" / f"{entries.unit_name(room)}.service"
    )


def test_last_fired_is_the_last_cycle_line(room: Room) -> None:
    assert install.last_fired(room) is None and install.last_cycle(room) is None
    ledger.append(room.ledger, events.CLAIM, task="t-1", detail="round 1, slot 0, pid 1")
    ledger.append(room.ledger, events.STOP, detail="a person")  # not a cycle's
    ledger.append(room.ledger, events.approval_needed("gpu"), task="t-2")
    ledger.append(room.ledger, events.SCHEDULE_INSTALL, detail="not a cycle's either")
    last = install.last_cycle(room)
    assert last is not None and (last.event, last.task) == ("gpu-approval-needed", "t-2")
    assert install.last_fired(room) == last.time


def test_last_log_line(room: Room) -> None:
    assert install.last_log_line(room) is None
    entries.log_path(room).write_text("2026-01-01T00:00:00Z  a\n2026-01-01T00:30:00Z  b\n\n")
    assert install.last_log_line(room) == "2026-01-01T00:30:00Z  b"


def test_the_cron_block_is_found_by_its_markers(room: Room, tmp_path: Path) -> None:
    other = Room(tmp_path / "other")
    text = "a\n" + entries.cron_block(other, 300) + entries.cron_block(room, 300, 1) + "z\n"
    parts = install._split_block(room, text)
    assert parts is not None
    before, block, after = parts
    assert (before[0], len(block), after) == ("a", 4, ["z"])
    assert block[0] == entries.cron_begin(room) and block[-1] == entries.cron_end(room)
    assert install._split_block(room, "a\n") is None
    with pytest.raises(ConflictError):
        install._split_block(room, entries.cron_begin(room) + "\n")
