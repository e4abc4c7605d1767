"""dispatch.doctor.finding: a finding's line and JSON, paths relative to the room, a
library message cut into detail and fix, the finding of a check CONTROL.md keeps from running."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from control_room.dispatch.doctor import finding
from control_room.dispatch.doctor.finding import FAIL, OK, WARN, Check, Finding
from control_room.room.layout import Room


def test_a_line_is_status_check_and_detail_with_the_fix_after_a_semicolon() -> None:
    assert Finding("layout", OK, "all 17 folders are there").line() == "OK   layout  all 17 folders are there"
    assert (
        Finding("disk", WARN, "0.5 GiB free", "`control-room cleanup` removes results").line()
        == "WARN disk  0.5 GiB free; `control-room cleanup` removes results"
    )
    assert Finding("adapter claude", FAIL, "claude is not on the PATH", "npm i").line() == (
        "FAIL adapter claude  claude is not on the PATH; npm i"
    )


def test_json_has_the_five_keys_and_not_whether_it_is_fixable() -> None:
    fix = "control-room doctor --fix restores it"
    found = Finding("ledger", FAIL, "LEDGER.md is empty", fix, fixable=True)
    assert found.as_json() == {
        "check": "ledger",
        "status": "FAIL",
        "detail": "LEDGER.md is empty",
        "fix": fix,
        "fixed": False,
    }
    found.fixed = True
    assert found.as_json()["fixed"] is True


def test_the_fix_of_what_fix_repairs_names_the_command() -> None:
    assert finding.FIX == "control-room doctor --fix"


def test_rel_is_relative_to_the_room_inside_it_and_whole_outside(room: Room, tmp_path: Path) -> None:
    assert finding.rel(room, room.swarm / "results") == "swarm/results"
    assert finding.rel(room, room.ledger) == "control-room/LEDGER.md"
    assert finding.rel(room, tmp_path / "proj") == str(tmp_path / "proj")


def test_short_makes_the_rooms_paths_relative_and_drops_room_invalid(room: Room) -> None:
    text = f"room invalid: {room.root}/control-room/CONTROL.md: max_parallel must be a positive integer"
    assert finding.short(room, text) == "control-room/CONTROL.md: max_parallel must be a positive integer"
    outside = "/elsewhere/x is missing; room invalid: kept"
    assert finding.short(room, outside) == outside  # only a leading "room invalid: " goes


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("CONTROL.md: adapters.x: bad; fix CONTROL.md", ("CONTROL.md: adapters.x: bad", "fix CONTROL.md")),
        ("a; b; c", ("a; b", "c")),  # at the last "; "
        ("no fix here", ("no fix here", "")),
        ("a;b", ("a;b", "")),  # a semicolon without its space is part of the detail
    ],
)
def test_split_fix_cuts_at_the_last_semicolon(text: str, parts: tuple[str, str]) -> None:
    assert finding.split_fix(text) == parts


def test_unchecked_is_a_warning_pointing_at_the_settings_check() -> None:
    assert finding.unchecked("disk") == Finding(
        "disk", WARN, "not checked: CONTROL.md does not parse (see the settings check)"
    )
    assert finding.unchecked("disk").fixable is False


def test_a_check_is_a_name_a_run_and_maybe_a_repair() -> None:
    def run(ctx: finding.Context) -> list[Finding]:
        return []

    check = Check("x", run)
    assert (check.name, check.run, check.repair) == ("x", run, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        check.name = "y"  # type: ignore[misc]


def test_a_context_says_hello_only_when_asked(room: Room) -> None:
    ctx = finding.Context(room, None, "CONTROL.md is missing")
    assert (ctx.settings, ctx.settings_error) == (None, "CONTROL.md is missing")
    assert (ctx.hello, ctx.timeout_s) == (False, 60.0)
