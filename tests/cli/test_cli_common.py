"""control_room.cli.common: --room, --json, current_room, stamp, refresh_views, notify_people, echo_json."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from support import auto_lines, drop_task, no_room_error, set_gate, task

from control_room import errors, ledger
from control_room.cli import common
from control_room.dispatch.person import notify
from control_room.ledger import events
from control_room.room.layout import STATES, Room

OLD_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09: an mtime no write made in this test can have


@pytest.fixture
def ctx() -> Iterator[click.Context]:
    """A command's context, as the commands' own functions see it (``click.get_current_context``)."""
    with click.Context(click.Command("probe")) as context:
        yield context


def aged(room: Room) -> None:
    """Every path the stamp looks at dated long ago: a change now is seen whatever the clock's tick."""
    for path in (room.ledger, room.control, *(room.state_dir(s) for s in STATES)):
        os.utime(path, ns=(OLD_NS, OLD_NS))


def views(room: Room) -> tuple[bytes, bytes]:
    return room.context.read_bytes(), room.digest.read_bytes()


# --room, --json, current_room ------------------------------------------------------------------


@click.command()
@common.room_option
@common.json_option
def where(as_json: bool) -> None:
    click.echo(f"{common.current_room().root} json={as_json}")


def test_room_option_names_the_room_after_the_command(room: Room, tmp_path: Path) -> None:
    done = CliRunner().invoke(where, ["--room", str(room.root), "--json"], catch_exceptions=False)
    assert (done.exit_code, done.output) == (0, f"{room.root} json=True\n")


def test_without_room_option_the_room_is_found_from_the_current_folder(inside: Room) -> None:
    os.chdir(inside.root / "swarm" / "queue")
    done = CliRunner().invoke(where, [], catch_exceptions=False)
    assert (done.exit_code, done.output) == (0, f"{inside.root} json=False\n")


def test_an_empty_room_option_is_no_room_and_outside_a_room_is_an_error(room: Room, tmp_path: Path) -> None:
    done = CliRunner().invoke(where, ["--room", ""])
    assert isinstance(done.exception, errors.NoRoomError)
    assert f"Error: {done.exception}\n" == no_room_error(tmp_path)
    assert done.exception.exit_code == errors.NO_ROOM


def test_current_room_is_watched_once_per_command(ctx: click.Context, room: Room, tmp_path: Path) -> None:
    other = Room(tmp_path / "other")
    aged(room)
    ctx.meta[common.ROOM_KEY] = str(room.root)
    assert common.current_room() == room
    common.watch(other)  # the first room found is the one the edge refreshes
    stale = views(room)
    drop_task(room, task("t1"))
    common.refresh_views(ctx)
    assert views(room) != stale


# the stamp --------------------------------------------------------------------------------------


def test_the_stamp_is_the_ledger_stop_control_md_and_the_state_folders(room: Room) -> None:
    stamp = common.stamp(room)
    assert len(stamp) == 3 + len(STATES)
    assert stamp[1] is None  # no STOP
    st = room.ledger.stat()
    assert stamp[0] == (st.st_mtime_ns, st.st_size, st.st_ino)
    assert common.stamp(room) == stamp  # reading changes nothing


@pytest.mark.parametrize("change", ["ledger", "stop", "control", "queue", "parked"])
def test_each_thing_the_views_show_changes_the_stamp(room: Room, change: str) -> None:
    aged(room)
    before = common.stamp(room)
    if change == "ledger":
        ledger.append(room.ledger, events.STOP, detail="by a test")
    elif change == "stop":
        room.stop.write_text("by a test\n")
    elif change == "control":
        room.control.write_text(room.control.read_text())  # the same text, saved again
    else:
        (room.state_dir(change) / "t1.json").write_text("{}")
    assert common.stamp(room) != before


def test_a_file_beside_the_state_folders_does_not_change_the_stamp(room: Room) -> None:
    aged(room)
    before = common.stamp(room)
    (room.swarm / "outbox" / "t1.md").write_text("a prompt\n")
    (room.cr / "notes.md").write_text("a note\n")
    assert common.stamp(room) == before


# refresh_views ------------------------------------------------------------------------------------


def test_a_room_that_changed_has_its_views_refreshed_once(ctx: click.Context, inside: Room) -> None:
    aged(inside)
    common.watch(inside)
    assert auto_lines(inside.context.read_text()) == []  # a room made by the library: never refreshed
    drop_task(inside, task("t1"))
    common.refresh_views(ctx)
    block = auto_lines(inside.context.read_text())
    assert "- tasks: queue 1, running 0, done 0, parked 0, rejected 0, cancelled 0" in block
    inside.digest.write_text("# DIGEST\n\nby hand\n")  # not part of the stamp
    common.refresh_views()  # nothing changed since the refresh: the hand edit stays
    assert inside.digest.read_text() == "# DIGEST\n\nby hand\n"


def test_a_room_that_did_not_change_keeps_its_views(ctx: click.Context, inside: Room) -> None:
    common.watch(inside)
    before = views(inside)
    (inside.swarm / "outbox" / "note.md").write_text("x\n")
    common.refresh_views(ctx)
    assert views(inside) == before


def test_a_command_that_found_no_room_refreshes_nothing(ctx: click.Context, room: Room) -> None:
    before = views(room)
    drop_task(room, task("t1"))
    common.refresh_views(ctx)
    assert views(room) == before


# notify_people ------------------------------------------------------------------------------------


@pytest.fixture
def flushed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Room, Any, int]]:
    """What notify.flush was asked to send: (room, settings, since)."""
    calls: list[tuple[Room, Any, int]] = []

    def flush(room: Room, settings: Any, *, since: int = 0) -> list[str]:
        calls.append((room, settings, since))
        return []

    monkeypatch.setattr(notify, "flush", flush)
    return calls


def test_with_notify_the_notifier_is_told_what_came_since_the_command_began(
    ctx: click.Context, room: Room, flushed: list[tuple[Room, Any, int]]
) -> None:
    set_gate(room, "notify", "my-notifier --now")
    begun = room.ledger.stat().st_size
    common.watch(room)
    ledger.append(room.ledger, events.STOP, detail="by a test")
    common.notify_people(ctx)
    assert [(r, s.notify, since) for r, s, since in flushed] == [(room, "my-notifier --now", begun)]


def test_without_notify_or_a_room_nobody_is_told(
    ctx: click.Context, room: Room, flushed: list[tuple[Room, Any, int]]
) -> None:
    common.notify_people(ctx)  # no room found
    common.watch(room)
    common.notify_people(ctx)  # no notify: in CONTROL.md
    assert flushed == []


def test_a_broken_control_md_notifies_nobody(
    ctx: click.Context, room: Room, flushed: list[tuple[Room, Any, int]]
) -> None:
    set_gate(room, "notify", "my-notifier")
    set_gate(room, "max_parallel", "many")
    common.watch(room)
    common.notify_people(ctx)
    assert flushed == []


# echo_json --------------------------------------------------------------------------------------


def test_echo_json_prints_indented_utf8_in_the_order_given(capsys: pytest.CaptureFixture[str]) -> None:
    common.echo_json({"b": 1, "a": ["café", None, True]})
    out = capsys.readouterr().out
    assert out == '{\n  "b": 1,\n  "a": [\n    "café",\n    null,\n    true\n  ]\n}\n'
    assert json.loads(out) == {"b": 1, "a": ["café", None, True]}


def test_echo_prints_no_control_character_an_agent_wrote(capsys: pytest.CaptureFixture[str]) -> None:
    common.echo("decision \x1b]0;pwned\x07\x1b[31mred\x1b[0m\rover\u202eetxt\n  next line\ttab")
    assert capsys.readouterr().out == "decision red\noveretxt\n  next line\ttab\n"


def test_every_command_prints_through_echo() -> None:
    """So that what an agent wrote is cleaned on its way to a terminal (only our own carriage
    returns, the live line's and the countdown's, are written otherwise)."""
    cli = Path(common.__file__).parent
    raw = [f"{p.name}:{n}" for p in sorted(cli.glob("*.py")) if p.name != "common.py"
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if ("click.echo(" in line or "sys.stdout.write(" in line) and '"\\r' not in line]  # fmt: skip
    assert raw == []
