"""control_room.knowledge.routes: rows added and kept current one at a time, a person's edits
kept, a hand-broken row named while runs still update."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import drop_task as drop
from support import probe_task as task

from control_room import errors
from control_room.dispatch.run import cycle
from control_room.errors import InvalidError, NotFoundError
from control_room.knowledge import routes
from control_room.room.layout import Room


def test_a_hand_broken_routes_row_is_named_and_cycles_go_on(room: Room) -> None:
    routes.add(room, "good", "a fine route")
    with open(room.routes, "a") as f:
        f.write("| bad row | maybe |\n")
    problems = routes.problems(room)
    line = room.routes.read_text().splitlines().index("| bad row | maybe |") + 1
    assert problems == [f"control-room/ROUTES.md:{line}: 2 cells, the header has 7",
                        f"control-room/ROUTES.md:{line}: 'bad row' is not a route id",
                        f"control-room/ROUTES.md:{line}: verdict 'maybe' is not one of untested, alive, "
                        "promising, killed, merged"]  # fmt: skip
    drop(room, task("g-1", route="good"))
    assert cycle.cycle(room).code == errors.PASSED
    assert routes.get(room, "good")["attempts"] == "1"
    assert "| bad row | maybe |" in room.routes.read_text()


def test_a_run_updates_only_its_routes_row(room: Room) -> None:
    routes.add(room, "r1", "first")
    routes.add(room, "r2", "second", "no gain")
    before = room.routes.read_text().splitlines()
    routes.record_run(room, "r1", "t1", "pass", 0.25)
    routes.record_run(room, "r1", "t2", "fail", 0.5)
    after = room.routes.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(changed) == 1
    row = routes.get(room, "r1")
    assert (row["verdict"], row["attempts"], row["spend_usd"]) == ("alive", "2", "0.75")
    assert row["last_result"].startswith("fail t2 ")
    assert routes.get(room, "r2")["falsifier"] == "no gain"


def test_a_run_on_a_route_not_on_the_board_adds_its_row(room: Room) -> None:
    routes.record_run(room, "new-one", "t1", "pass", 0)
    assert routes.get(room, "new-one")["attempts"] == "1"
    assert routes.verdict_counts(room) == {"alive": 1}


def test_adding_a_route_twice_or_a_bad_id_is_refused(room: Room) -> None:
    routes.add(room, "r1", "first")
    line = routes.get(room, "r1")["line"]
    with pytest.raises(InvalidError) as err:
        routes.add(room, "r1", "again")
    assert str(err.value) == f"route r1 exists already (control-room/ROUTES.md:{line})"
    with pytest.raises(InvalidError) as err:
        routes.add(room, "R 1", "bad")
    assert str(err.value) == "'R 1' is not a route id (ids match [a-z0-9][a-z0-9._-]{0,63})"
    with pytest.raises(NotFoundError):
        routes.get(room, "nope")


def test_a_person_editing_another_row_keeps_the_edit(room: Room) -> None:
    routes.add(room, "r1", "first")
    routes.add(room, "r2", "second")
    edited = room.routes.read_text().replace("| second |", "| second, renamed by hand |")
    room.routes.write_text(edited)
    routes.set_verdict(room, "r1", "promising")
    text = room.routes.read_text()
    assert "| second, renamed by hand |" in text
    assert routes.get(room, "r1")["verdict"] == "promising"


def test_reading_the_board_after_a_cycle_wrote_it_needs_no_markdown_parser(room: Room) -> None:
    """The table a write produces is memoised with the text it wrote (``.cache/routes``)."""
    routes.add(room, "r1", "first")
    routes.record_run(room, "r1", "t1", "pass", 0)
    code = (
        "import sys\n"
        "from control_room.knowledge import routes\n"
        "from pathlib import Path\n"
        "from control_room.room.layout import Room\n"
        f"rows = routes.rows(Room(Path({str(room.root)!r})))\n"
        "print(rows[0]['attempts'], 'markdown_it' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "1 False\n"
