"""control_room.views.context: refresh() rewrites the auto block of CURRENT_CONTEXT.md, not the human part."""

from __future__ import annotations

from support import ev

from control_room import ledger
from control_room.room.layout import Room
from control_room.store.markdown import AUTO_BEGIN, AUTO_END
from control_room.views import context

HUMAN_TOP = (
    "# CURRENT CONTEXT\r\n\n## Objective\n\nBeat 1.2 ms per parse; the number to beat is 1.31.  \n"
    "Ünïcödé, a tab\there, a trailing space \n\n"
)
HUMAN_BOTTOM = "\n## Notes after the block\n\n- keep this\n- and this, no final newline"


def split(text: str) -> tuple[str, str, str]:
    before, rest = text.split(AUTO_BEGIN + "\n", 1)
    body, after = rest.split(AUTO_END + "\n", 1)
    return before, body, after


def test_refresh_fills_the_block_and_keeps_the_human_part(room: Room) -> None:
    room.context.write_bytes(f"{HUMAN_TOP}{AUTO_BEGIN}\nstale\n{AUTO_END}\n{HUMAN_BOTTOM}".encode())
    ledger.append(room.ledger, ev("note"), detail="hello from the test")
    context.refresh(room)
    before, body, after = split(room.context.read_bytes().decode())
    assert (before, after) == (HUMAN_TOP, HUMAN_BOTTOM)
    lines = body.splitlines()
    assert lines[0].startswith("_Refreshed ") and lines[0].endswith(" by control-room._")
    assert lines[1:7] == [
        "",
        "- STOP: no",
        "- tasks: queue 0, running 0, done 0, parked 0, rejected 0, cancelled 0",
        "- spend today: $0.00 of $10.00 daily budget",
        "- findings: 0",
        "- latest ledger events:",
    ]
    assert lines[-1].endswith("  note  hello from the test")
    assert "stale" not in body


def test_refresh_shows_stop_and_its_reason(room: Room) -> None:
    (room.root / "STOP").write_text("STOP created by hand\nreason: budget\n")
    context.refresh(room)
    _, body, _ = split(room.context.read_text())
    assert "- STOP: YES, every cycle halts: STOP created by hand reason: budget\n" in body


def test_refresh_appends_a_block_when_the_markers_are_gone(room: Room) -> None:
    room.context.write_text("# only a person's text\n")
    context.refresh(room)
    text = room.context.read_text()
    assert text.startswith(f"# only a person's text\n\n{AUTO_BEGIN}\n_Refreshed ")
    assert text.endswith(f"{AUTO_END}\n")


def test_refresh_twice_keeps_one_block(room: Room) -> None:
    context.refresh(room)
    context.refresh(room)
    text = room.context.read_text()
    assert (text.count(AUTO_BEGIN), text.count(AUTO_END)) == (1, 1)
