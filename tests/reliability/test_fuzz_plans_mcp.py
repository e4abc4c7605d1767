"""Bad input, fuzzed (#23 item 5), in-process: plans (``plan import``) and the MCP server's
tools as an untrusted client calls them. A plan is imported whole or refused whole in one
line, writing nothing; a tool call answers, or says ``Error: ...`` on one line, never raises;
every ledger line a call writes names the client; nothing outside the room is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fuzzing import JSON, NASTY, TEXT, WRITER, bounded, ledger_grows, outside, refused_or
from hypothesis import event, example, given
from hypothesis import strategies as st
from test_fuzz_tasks import task_data

from control_room.dispatch.plan import importer
from control_room.dispatch.plan.syntax import PLAN_FIELDS
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.views import mcp_server
from control_room.views.mcp_tools import TOOLS

REQUIRED_LINES = [
    "objective: make it fast", "falsifier: no gain", "validator: python -c pass", "max_cost_usd: 1",
    "wall_clock_s: 10m", "kill_condition: two rounds without gain",
]  # fmt: skip
PLAN_LINES = st.sampled_from(
    [
        "## r1 — the route", "## r1", "## Bad Route", "## ../x — up", "##", "## r2 - t", "Falsifier: never",
        "falsifier:", "### t1", "### t2", "### ../etc", "### T", "###", "#### deep", "- deps: t1, t2",
        "deps: t9", "owns: src/a.py, ../x", "rounds: 3", "seal: x", "id: x", "bogus: 1", "max_cost_usd: lots",
        "wall_clock_s: forever", "priority: high", "command: a && b", "validator: sh -c 'x'", "```", "~~~",
        "", "brief text", "review: security, nope", "role: ../../x", "gate: gpu", "fallback: nope",
    ]
)  # fmt: skip
PLAN_LINES |= st.builds(
    lambda k, v: f"{k}: {v}", st.sampled_from(PLAN_FIELDS), TEXT.map(lambda s: s.replace("\n", " "))
)


@st.composite
def plan_text(draw: st.DrawFn) -> str:
    """A plan: tasks with their required fields and a few hostile lines among them, under a
    route (new, with or without a falsifier) or none."""
    out = [draw(st.sampled_from(["# plan", "", "intro ### not a heading"]))]
    if draw(st.booleans()):
        out += [draw(st.sampled_from(["## r1 — the route", "## fresh — new one", "## Bad"]))]
        out += [draw(st.sampled_from(["Falsifier: it never helps", "", "notes"]))]
    for k in range(draw(st.integers(0, 3))):
        out += [f"### {draw(st.sampled_from([f't{k}', f't{k}', f'p{k}', 'T', '../x']))}"]
        fields = [ln for ln in REQUIRED_LINES if draw(st.integers(0, 15))]
        out += draw(st.permutations(fields + draw(st.lists(PLAN_LINES, max_size=1))))
        out += ["", draw(TEXT)]
    return "\n".join(out + draw(st.lists(PLAN_LINES, max_size=2))) + "\n"


def _clear(room: Room) -> None:
    for state in ("queue", "rejected"):
        shutil.rmtree(room.state_dir(state))
        room.state_dir(state).mkdir()


@bounded(200)
@given(text=plan_text(), name=st.sampled_from(["plan.md", "PLAN.md", "../plan.md", "p|l\nan.md"]))
@example(text="### t0\n", name="p\nlan.md")  # the refusal spanned two lines, before
def test_a_plan_is_imported_whole_or_refused_whole_in_one_line(
    room: Room, tmp_path: Path, text: str, name: str
) -> None:
    _clear(room)
    room.routes.write_text(room.routes.read_text().split("|---|")[0] + "|---|---|---|---|---|---|---|\n"
                           "| r1 | alive | the route | 0 | 0 |  | f |\n")  # fmt: skip
    before, routes_before = outside(tmp_path, room), room.routes.read_text()
    settings = settings_file.load(room)
    done: list[Any] = [None]
    with ledger_grows(room, lambda: None if done[0] is not None else 0):
        done[0], refusal = refused_or(lambda: importer.apply(room, settings, name, text))
    queued = sorted(p.stem for p in room.state_dir("queue").iterdir())
    event("refused" if done[0] is None else "imported")
    if done[0] is None:
        assert refusal is not None and queued == [] and room.routes.read_text() == routes_before
    else:
        assert queued == sorted(i.id for i in done[0].items if i.action == "add")
    assert outside(tmp_path, room) == before


def _args(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments for ``tool``: its own, of the right type or not, and some it does not take."""
    schema = next(t.schema for t in TOOLS if t.name == tool)
    props = list(schema["properties"])
    own: dict[str, st.SearchStrategy[Any]] = {
        "task": task_data() | JSON,
        "text": st.lists(
            st.sampled_from(["```json", "```", '{"objective": "x"}', json.dumps({"id": "p1"})]) | TEXT,
            max_size=6,
        ).map("\n".join),
        "states": st.lists(st.sampled_from(["queue", "done", "nowhere", ""]), max_size=3),
        "n": st.integers(-5, 20_000),
        "since": st.sampled_from(["7d", "1h", "", "forever", "-1d"]),
    }
    value = st.sampled_from(props).flatmap(lambda p: own.get(p, TEXT) | JSON) if props else JSON
    names = st.sampled_from(props) if props else TEXT
    return st.dictionaries(names, value, max_size=3) | st.dictionaries(TEXT | NASTY, JSON, max_size=2)


@bounded(250)
@given(
    data=st.data(),
    tool=st.sampled_from([t.name for t in TOOLS] + ["resume", "approve", "", "x" * 100]),
    client=st.from_regex(r"[A-Za-z0-9._-]{1,48}", fullmatch=True).map(lambda c: c.strip("-") or "unknown"),
)
def test_an_mcp_tool_answers_or_says_error_in_one_line(
    room: Room, tmp_path: Path, data: Any, tool: str, client: str
) -> None:
    room.stop.unlink(missing_ok=True)
    args = data.draw(_args(tool) if any(t.name == tool for t in TOOLS) else JSON.filter(lambda v: True))
    args = args if isinstance(args, dict) else {"value": args}
    before = outside(tmp_path, room)
    with ledger_grows(room, lambda: None, writer=lambda: f"{WRITER}.mcp.{client}"):
        result = mcp_server.call(room, client, tool, args)  # never raises: a traceback fails here
    text = "".join(c.text for c in result.content)
    event("error" if result.is_error else "answered")
    if result.is_error:
        assert text.startswith("Error: ") and "\n" not in text, text
    else:
        json.loads(text) if text[:1] in "[{" else None
    assert outside(tmp_path, room) == before
