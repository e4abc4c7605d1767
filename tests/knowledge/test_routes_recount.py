"""routes.recount: attempts, spend_usd and last_result of every route computed from the ledger
alone, exactly as record_run left them run by run."""

from __future__ import annotations

from support import FAIL, queue

from control_room import errors, ledger
from control_room.dispatch.run import cycle
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.room.layout import Room


def test_after_real_cycles_recount_leaves_routes_md_byte_identical_and_fixes_a_wrong_cell(room: Room) -> None:
    routes.add(room, "r1", "first")
    routes.add(room, "r2", "second", "no gain")
    queue(room, "a1", route="r1", priority=3)
    queue(room, "a2", route="r1", validator=FAIL, priority=2)  # fails both its rounds, then parks
    queue(room, "b1", route="r2", priority=1)
    queue(room, "c1", route="off-board")  # record_run adds its row
    codes = [cycle.cycle(room).code for _ in range(5)]
    assert codes == [errors.PASSED, errors.FAILED, errors.FAILED, errors.PASSED, errors.PASSED]
    before = room.routes.read_bytes()
    assert [(r["route"], r["attempts"]) for r in routes.rows(room)] == [
        ("r1", "3"),
        ("r2", "1"),
        ("off-board", "1"),
    ]
    assert routes.recount(room) == []
    assert room.routes.read_bytes() == before
    room.routes.write_text(
        before.decode().replace("| r1 | alive | first | 3 |", "| r1 | alive | first | 7 |")
    )
    assert routes.recount(room) == ["r1"]
    assert room.routes.read_bytes() == before


def test_recount_reads_what_record_run_is_fed_and_nothing_else(room: Room) -> None:
    routes.add(room, "r1", "first")
    routes.add(room, "r2", "second")
    counted = [  # (event, outcome, route, task, cost, detail): each followed by record_run
        (events.RESULT, "pass", "r1", "t1", 0.0123, "{}"),
        (events.RESULT, "fail", "r1", "t2", 1 / 3, "{}"),
        (events.INTEGRATE, "refused", "r1", "t1", 0.0, "its diff touches paths outside its owns: x"),
        (events.REVIEW, "rejected", "r2", "t3", 0.0, "every review rejects"),
        (events.RESULT, "pass", "r2", "t3", 0.1, "{}"),
        (events.INTEGRATE, "conflict", "r2", "t3", 0.0, "rebasing route/r2 onto main conflicted in a.txt"),
    ]
    for event, outcome, route, tid, cost, detail in counted:
        ledger.append(
            room.ledger, event, task=tid, route=route, outcome=outcome, cost_usd=cost, detail=detail
        )
        routes.record_run(room, route, tid, "fail" if event is not events.RESULT else outcome, cost)
    not_counted = [  # lines that look alike but are followed by no record_run
        (events.INTEGRATE, "conflict", "r2", "t3", "waits for resolve-t3: rebasing route/r2 onto main ..."),
        (
            events.INTEGRATE,
            "refused",
            "r1",
            "t1",
            "it grows a.py past megafile_lines 30; waits for decompose-a.py",
        ),
        (
            events.REVIEW,
            "rejected",
            "r1",
            "t2",
            "after a failed round: 1 of 2 reject; their findings join ...",
        ),
        (events.REVIEW, "reject", "r1", "t2", "style (review-style-t2): no"),
        (events.INTEGRATE, "merged", "r1", "t1", "route/r1 onto main"),
        (events.RESULT, "pass", "", "t9", "{}"),  # a task of no route
    ]
    for event, outcome, route, tid, detail in not_counted:
        ledger.append(room.ledger, event, task=tid, route=route, outcome=outcome, detail=detail)
    before = room.routes.read_bytes()
    rows = {
        r["route"]: (r["attempts"], r["spend_usd"], r["last_result"].split(" ")[:2])
        for r in routes.rows(room)
    }
    assert rows == {"r1": ("3", "0.3456", ["fail", "t1"]), "r2": ("3", "0.1", ["fail", "t3"])}
    assert routes.recount(room) == []
    assert room.routes.read_bytes() == before


def test_rows_the_ledger_never_counted_keep_their_cells_and_removed_rows_stay_removed(room: Room) -> None:
    routes.add(room, "r1", "first")
    routes.record_run(room, "r1", "t1", "pass", 0.5)
    ledger.append(
        room.ledger, events.RESULT, task="t1", route="r1", outcome="pass", cost_usd=0.5, detail="{}"
    )
    ledger.append(room.ledger, events.RESULT, task="t5", route="gone", outcome="pass", detail="{}")
    with open(room.routes, "a") as f:
        f.write("| by-hand | alive | from an older board | 12 | 4.5 | pass x 2025-01-01 | |\n")
    before = room.routes.read_bytes()
    assert routes.recount(room) == []  # by-hand kept as it is; gone not added back
    assert room.routes.read_bytes() == before


def test_recount_of_a_room_without_a_ledger_or_a_board_changes_nothing(room: Room) -> None:
    room.ledger.unlink()
    assert routes.recount(room) == []
    room.routes.unlink()
    assert routes.recount(room) == [] and not room.routes.exists()
