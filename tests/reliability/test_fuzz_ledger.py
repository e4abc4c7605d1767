"""Bad input, fuzzed (#23 item 5), in-process: LEDGER.md. A cell of any text is one cell: an
append adds exactly one row, which reads back as written, by its writer, and the chain
verifies. A ledger a person or an agent broke (a torn line, junk rows, a lost or doubled header,
bytes that are not UTF-8) is read without a traceback by every reader and command, the damage
is named by ``ledger verify`` (never passed over), and the next append is still one whole
line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from fuzzing import TEXT, WRITER, bounded, ledger_grows, outside, rows
from hypothesis import event, given
from hypothesis import strategies as st

from control_room import ledger
from control_room.errors import BUG, LEDGER_BAD
from control_room.ledger import events, stats
from control_room.ledger.line import DETAIL_MAX, HEADER, PREAMBLE, SEPARATOR, parse
from control_room.ledger.read import entries, tail
from control_room.ledger.verify import verify
from control_room.room.layout import Room

Run = Callable[..., Result]
CELL = (
    TEXT | st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(["| a | b |", " | ", "\\|"])
)


@bounded(200)
@given(
    task=CELL, route=CELL, adapter=CELL, detail=CELL | st.text(min_size=990, max_size=1100), cost=st.floats()
)
def test_any_text_in_a_cell_is_one_row_that_reads_back(
    room: Room, tmp_path: Path, task: str, route: str, adapter: str, detail: str, cost: float
) -> None:
    before = outside(tmp_path, room)
    with ledger_grows(room, lambda: 1):
        ledger.append(
            room.ledger, events.RESULT, task=task, route=route, adapter=adapter, outcome="fail",
            cost_usd=cost, detail=detail,
        )  # fmt: skip
    entry = parse(tail(room.ledger, 1)[0])
    assert entry is not None
    assert (entry.writer, entry.event, entry.task, entry.route, entry.adapter) == (
        WRITER, "result", task, route, adapter
    )  # fmt: skip
    assert entry.detail == (detail if len(detail) <= DETAIL_MAX else entry.detail)
    assert entry.detail.startswith(detail[:DETAIL_MAX])
    assert outside(tmp_path, room) == before


JUNK = st.sampled_from(
    [
        HEADER, SEPARATOR, "", "|", "| |", "| a | b |", "||||||||||||", "| x " * 12 + "|", "\\", "not a row",
        "| 2026-01-01T00:00:00Z | 0 | tester | result | t | r | a | pass | 0 | d | - | 000000000000 |",
        "\x00\x00", "| " + " | ".join(["é"] * 12) + " |", "\ufeff" + HEADER,
    ]
) | TEXT.map(lambda s: s.replace("\n", " "))  # fmt: skip


@st.composite
def broken(draw: st.DrawFn, lines: list[str]) -> tuple[bytes, str]:
    """The ledger's bytes, broken one way, and which way."""
    how = draw(st.sampled_from(["junk", "torn", "edited", "no-header", "bytes", "deleted"]))
    out = list(lines)
    rows_at = out.index(HEADER) + 2
    if how == "junk":
        at = draw(st.integers(rows_at, len(out)))
        out[at:at] = draw(st.lists(JUNK, min_size=1, max_size=3))
    elif how == "edited":
        at = draw(st.integers(rows_at, len(out) - 1))
        k = draw(st.integers(2, len(out[at]) - 3))
        out[at] = out[at][:k] + draw(st.sampled_from(["x", "|", "\\", " ", ""])) + out[at][k + 1 :]
    elif how == "deleted":
        del out[draw(st.integers(rows_at, len(out) - 3))]  # a writer's last line is no chain's link
    elif how == "no-header":
        out = [ln for ln in out if ln not in (HEADER, SEPARATOR)]
    text = "".join(f"{ln}\n" for ln in out).encode("utf-8", "surrogatepass")
    if how == "torn":
        text = text[: draw(st.integers(len(text) - len(lines[-1]), len(text) - 1))]  # some of it kept
    if how == "bytes":
        text += draw(st.binary(min_size=1, max_size=40)) + b"\n"
    return text, how


def _seeded(room: Room) -> list[str]:
    """A fresh ledger of a few lines by two writers; its text, line by line."""
    room.ledger.write_text(PREAMBLE, encoding="utf-8")
    for k in range(3):
        ledger.append(room.ledger, events.TASK_ADD, task=f"t{k}", detail="seed")
        ledger.append(room.ledger, events.STOP, detail="other", writer="other-host")
    return room.ledger.read_text(encoding="utf-8").splitlines()


@bounded(100)
@given(data=st.data())
def test_a_broken_ledger_is_read_named_and_appended_to(
    room: Room, tmp_path: Path, run: Run, data: Any
) -> None:
    lines = _seeded(room)
    raw, how = data.draw(broken(lines))
    event(how)
    before = outside(tmp_path, room)
    room.ledger.write_bytes(raw)
    report = verify(room.ledger)
    changed = raw != "".join(f"{ln}\n" for ln in lines).encode()
    if changed:  # never passed over: every junk line, edit, tear and loss of a link is named
        assert not report.ok, (how, raw)
    list(entries(room.ledger)), tail(room.ledger, 5)
    json.dumps(stats.stats(room.ledger))
    for argv in (["ledger", "tail"], ["ledger", "stats"], ["status"], ["task", "list"], ["scorecard"]):
        done = run("--room", str(room.root), *argv)
        assert done.exit_code != BUG and (done.exit_code == 0 or len(done.stderr.splitlines()) == 1), done
    verified = run("--room", str(room.root), "ledger", "verify")
    assert verified.exit_code == (0 if report.ok else LEDGER_BAD), verified.output
    written: list[str] = rows(room)
    entry = ledger.append(room.ledger, events.TASK_ADD, task="after", detail="x")
    after = room.ledger.read_bytes()
    assert after.endswith(b"\n") and parse(after.decode("utf-8", "replace").splitlines()[-1]) == entry
    if report.ok:
        assert len(rows(room)) == len(written) + 1 and verify(room.ledger).ok
    assert outside(tmp_path, room) == before
