"""Bad input, fuzzed (#23 item 5), in-process: what the views fold. Ledger rows whose cells
hold anything (a result's detail of any JSON, a cost that is no number, a task or route that
is no id), as a hand edit, an old version or a merge leaves them; CURRENT_CONTEXT.md with its
auto block's markers mangled; files of any content in the state folders and claims. Every
command that reads them answers, or refuses in one line: never a traceback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from fuzzing import JSON, NASTY, TEXT, bounded, outside
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_room_files import answered
from test_fuzz_tasks import file_bytes

from control_room.ledger import events
from control_room.ledger.line import PREAMBLE, Entry, render
from control_room.room.layout import Room
from control_room.store.markdown import auto_block_span

Run = Callable[..., Result]
EVENT_NAMES = sorted({e.name for e in vars(events).values() if isinstance(e, events.Event)})
VIEWS = (["status"], ["status", "--json"], ["digest"], ["findings"], ["scorecard"], ["ledger", "stats"],
         ["ledger", "tail"], ["route", "list"], ["task", "list"])  # fmt: skip

DETAIL_KEYS = ("round", "exit", "seconds", "report", "validator", "model", "role", "serves", "input_tokens",
               "output_tokens", "metrics", "fingerprint", "cost", "decision", "failed",
               "unsupported")  # fmt: skip
DETAIL_VALUE = JSON | st.integers(-(10**400), 10**400) | st.sampled_from([1e308, -1.5, True])
RESULT_DETAIL = (
    st.fixed_dictionaries({}, optional=dict.fromkeys(DETAIL_KEYS, DETAIL_VALUE)).map(
        lambda d: json.dumps(d, allow_nan=True)
    )
    | TEXT
    | st.sampled_from(["round 1; decision: x; failed: y", "{"])
)
CELL = NASTY | st.sampled_from(["t1", "r1", "probe", "claude", "pass", "fail", ""])


@st.composite
def row(draw: st.DrawFn, k: int) -> str:
    """A well-formed, hash-chained ledger row (as `ledger verify` passes it) holding anything."""
    entry = Entry(
        time=draw(
            st.sampled_from(["2026-01-01T00:00:00Z", "2026-12-31T23:59:59Z", "yesterday", "", "9999-99-99"])
        ),
        id=f"{k:016x}",
        writer=draw(st.sampled_from(["tester", "other", "tester.task.t1"])),
        event=draw(st.sampled_from(EVENT_NAMES) | TEXT),
        task=draw(CELL),
        route=draw(CELL),
        adapter=draw(CELL),
        outcome=draw(CELL | st.sampled_from(["queued", "rejected", "running", "merged", "parked"])),
        cost_usd=draw(st.sampled_from(["0", "1.5", "-3", "nan", "inf", "1e400", "x", ""])),
        detail=draw(RESULT_DETAIL | TEXT),
    )
    return render(entry)[0]


@bounded(100)
@given(data=st.data(), n=st.integers(1, 6))
def test_any_row_the_ledger_holds_is_folded_by_every_view(
    room: Room, tmp_path: Path, run: Run, data: Any, n: int
) -> None:
    before = outside(tmp_path, room)
    lines = [data.draw(row(k)) for k in range(n)]
    room.ledger.write_text(
        PREAMBLE + "".join(f"{ln}\n" for ln in lines), encoding="utf-8", errors="surrogatepass"
    )
    for argv in VIEWS:
        answered(run("--room", str(room.root), *argv))
    answered(run("--room", str(room.root), "route", "recount", "--check"), report=True)
    assert outside(tmp_path, room) == before


def test_a_result_line_with_numbers_no_float_holds(room: Room, run: Run) -> None:
    """Pinned from the fuzzing: a 400-digit `seconds` raised OverflowError in every view, before."""
    huge = "1" + "0" * 400
    detail = (
        f'{{"round": 1, "seconds": {huge}, "metrics": {{"m": {huge}}}, "model": "x", "role": "engineer"}}'
    )
    entry = Entry(
        "2026-01-01T00:00:00Z", "0" * 16, "tester", "result", "t1", "r1", "probe", "fail", "0", detail
    )
    room.ledger.write_text(PREAMBLE + render(entry)[0] + "\n", encoding="utf-8")
    for argv in VIEWS:
        answered(run("--room", str(room.root), *argv))


MARKERS = st.sampled_from(
    [
        "<!-- control-room:auto:begin (written by control-room; edits here are replaced) -->",
        "<!-- control-room:auto:end -->", "<!-- control-room:auto:begin -->", "<!-- control-room:auto:end",
        "<!-- control-room:auto:begin --><!-- control-room:auto:end -->", "<!--", "-->", "## Now",
    ]
) | TEXT  # fmt: skip


@bounded(100)
@given(lines=st.lists(MARKERS, max_size=8))
def test_current_context_with_its_markers_mangled(
    room: Room, tmp_path: Path, run: Run, lines: list[str]
) -> None:
    before = outside(tmp_path, room)
    text = "\n".join(lines) + "\n"
    room.context.write_text(text, encoding="utf-8", errors="surrogatepass")
    (room.root / "STOP").unlink(missing_ok=True)
    answered(run("--room", str(room.root), "stop", "--reason", "fuzz"))  # a change: the edge refreshes
    after = room.context.read_bytes().decode("utf-8", "replace")
    split = text.splitlines(keepends=True)  # as the store splits it (\x1e, \u2028 ... end a line too)
    span = auto_block_span(split)
    people = split if span is None else split[: span[0]] + split[span[1] + 1 :]
    kept = [ln for ln in people if not any("\ud800" <= c <= "\udfff" for c in ln)]  # no UTF-8: U+FFFD
    assert all(ln in after for ln in kept), (text, after)  # a person's text is kept, byte for byte
    answered(run("--room", str(room.root), "resume"))
    assert outside(tmp_path, room) == before


STATES = ("running", "passed", "to-test", "done", "parked", "cancelled")


@bounded(80)
@given(
    state=st.sampled_from(STATES), raw=file_bytes(), claim=st.booleans(), name=st.sampled_from(["t1", "x"])
)
def test_any_file_in_a_state_folder_or_a_claim(
    room: Room, tmp_path: Path, run: Run, state: str, raw: bytes, claim: bool, name: str
) -> None:
    for s in STATES:
        shutil.rmtree(room.state_dir(s))
        room.state_dir(s).mkdir()
    before = outside(tmp_path, room)
    if claim:
        (room.state_dir("running") / f"{name}.claim").write_bytes(raw)
    else:
        (room.state_dir(state) / f"{name}.json").write_bytes(raw)
    for argv in (*VIEWS, ["task", "show", name], ["task", "list", "--state", state]):
        answered(run("--room", str(room.root), *argv))
    answered(run("--room", str(room.root), "doctor"), report=True)
    assert outside(tmp_path, room) == before
