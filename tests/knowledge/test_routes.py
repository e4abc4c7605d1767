"""control_room.knowledge.routes: a hand-broken ROUTES.md row is named; runs still update."""

from __future__ import annotations

from support import drop_task as drop
from support import probe_task as task

from control_room import errors
from control_room.dispatch import cycle
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
