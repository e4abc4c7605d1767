"""Bad input, fuzzed (#23 item 5), through the installed command: tens of examples of what
the in-process fuzz files try by the thousand (test_fuzz_*.py beside this one), to prove the
contract end to end: exit code never 1, a refusal one line of stderr, no traceback; no
ledger line forged (`ledger verify` passes, a refused input appends nothing); nothing written
outside the room. Then each input the fuzzing found crashing, as a person would hit it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fuzzing import NASTY, bounded, outside, rows
from hypothesis import given
from hypothesis import strategies as st
from support import VALID_TASK, entries, set_gate, verify_ok
from test_fuzz_plans_mcp import _args, plan_text
from test_fuzz_room_files import TOMB_KEYS, front_matter
from test_fuzz_tasks import file_bytes, task_data

from control_room.errors import BUG, CONFLICT, FAILED, INVALID, PASSED
from control_room.ledger.line import Entry, parse, render
from control_room.room.layout import Room
from control_room.views.mcp_tools import TOOLS


def calls(exe: str, room: Room, *asked: tuple[str, dict[str, Any]]) -> list[tuple[bool, str]]:
    """(is_error, text) of each call, in order, on one stdio connection to `control-room mcp`
    (the SDK's own client; as tests/cli/test_cli_mcp_limits.py talks to it)."""
    import anyio  # the mcp extra: only this test talks MCP
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=exe, args=["mcp", "--room", str(room.root)], env=dict(os.environ), cwd=str(room.root)
    )

    async def main() -> list[Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return [await s.call_tool(name, args) for name, args in asked]

    return [(bool(r.is_error), "".join(c.text for c in r.content)) for r in anyio.run(main)]


def one_line_or_ok(done: subprocess.CompletedProcess[str]) -> None:
    """The command's contract with any input: 0, or another code than BUG and one line."""
    assert done.returncode != BUG and "Traceback" not in done.stderr, done.stderr
    if done.returncode != 0:
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr


def _reset(room: Room) -> None:
    for state in ("queue", "rejected"):
        for p in room.state_dir(state).iterdir():
            p.unlink()


@bounded(15)
@given(data=task_data(), new_route=st.booleans())
def test_task_add_of_a_fuzzed_file(
    cr: Any, room: Room, tmp_path: Path, data: dict[str, Any], new_route: bool
) -> None:
    _reset(room)
    before, lines = outside(tmp_path, room), rows(room)
    (tmp_path / "in.json").write_text(
        json.dumps(data, allow_nan=True), encoding="utf-8", errors="surrogatepass"
    )
    done = cr("task", "add", "--file", str(tmp_path / "in.json"), *(["--new-route"] if new_route else []))
    one_line_or_ok(done)
    added = rows(room)[len(lines) :]
    if done.returncode == 0:
        (queued,) = list(room.state_dir("queue").iterdir())
        assert added and all((e := parse(ln)) is not None and e.writer == "e2e" for ln in added), added
        assert parse(added[-1]).task == queued.stem  # type: ignore[union-attr]
    else:
        assert added == [] and list(room.state_dir("queue").iterdir()) == []
    (tmp_path / "in.json").unlink()
    assert outside(tmp_path, room) == before
    verify_ok(cr)


@bounded(10)
@given(raw=file_bytes(), name=st.sampled_from(["t1.json", "x.json", "T.json", "t1.txt"]))
def test_a_fuzzed_file_dropped_in_the_queue(
    cr: Any, room: Room, tmp_path: Path, raw: bytes, name: str
) -> None:
    _reset(room)
    before = outside(tmp_path, room)
    (room.state_dir("queue") / name).write_bytes(raw)
    for argv in (["status"], ["task", "list"]):
        done = cr(*argv)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    left = [p.name for p in room.state_dir("queue").iterdir()]
    assert left in ([], [name]) and bool(left) != any(room.state_dir("rejected").iterdir())
    assert outside(tmp_path, room) == before
    verify_ok(cr)


@bounded(10)
@given(text=plan_text())
def test_plan_import_of_a_fuzzed_plan(cr: Any, room: Room, tmp_path: Path, text: str) -> None:
    _reset(room)
    before, lines = outside(tmp_path, room), rows(room)
    (tmp_path / "PLAN.md").write_text(text, encoding="utf-8", errors="surrogatepass")
    done = cr("plan", "import", str(tmp_path / "PLAN.md"))
    one_line_or_ok(done)
    if done.returncode != 0:
        assert done.returncode == INVALID and rows(room) == lines
    (tmp_path / "PLAN.md").unlink()
    assert outside(tmp_path, room) == before
    verify_ok(cr)


@bounded(10)
@given(text=front_matter(TOMB_KEYS), lines=st.lists(NASTY, max_size=6).map("\n".join))
def test_fuzzed_room_files_and_reports(cr: Any, room: Room, tmp_path: Path, text: str, lines: str) -> None:
    before = outside(tmp_path, room)
    (room.root / "graveyard" / "r1.md").write_text(text, encoding="utf-8", errors="surrogatepass")
    for argv in (["graveyard"], ["status"], ["route", "show", "r1"]):
        one_line_or_ok(cr(*argv))
    (tmp_path / "report.md").write_text(lines, encoding="utf-8", errors="surrogatepass")
    checked = cr("validate", str(tmp_path / "report.md"))  # its violations, a line each, on stderr
    assert checked.returncode in (0, INVALID) and "Traceback" not in checked.stderr, checked.stderr
    (tmp_path / "report.md").unlink()
    assert outside(tmp_path, room) == before


TOOL_CALL = st.sampled_from([t.name for t in TOOLS]).flatmap(lambda n: _args(n).map(lambda a: (n, a)))


@bounded(3)
@given(asked=st.lists(TOOL_CALL, min_size=10, max_size=10))
def test_mcp_calls_over_stdio_with_fuzzed_arguments(
    exe: str, room: Room, tmp_path: Path, asked: list[tuple[str, dict[str, Any]]]
) -> None:
    before = outside(tmp_path, room)
    safe = [(n, json.loads(json.dumps(a, allow_nan=False, default=str))) for n, a in asked if _json_safe(a)]
    for is_error, text in calls(exe, room, *safe):
        assert not is_error or (text.startswith("Error: ") and "\n" not in text), text
    room.stop.unlink(missing_ok=True)
    assert outside(tmp_path, room) == before


def _json_safe(value: Any) -> bool:
    """Whether JSON-RPC can carry ``value`` (no NaN, no lone surrogate)."""
    try:
        json.dumps(value, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def test_what_fuzzing_found_is_answered_in_one_line(cr: Any, room: Room, tmp_path: Path) -> None:
    """Each input the fuzz files found crashing (a traceback, or a refusal over several lines)
    on the tree before, through the installed command."""
    (room.state_dir("queue") / "nid.json").write_text(json.dumps({**VALID_TASK, "id": None}))
    listed = cr("task", "list", "--json")  # a KeyError in every queue scan, before
    assert listed.returncode == 0 and [t["id"] for t in json.loads(listed.stdout)] == ["nid"]
    (tmp_path / "bad.json").write_text(json.dumps({**VALID_TASK, "a\nb": 1}))
    refused = cr("task", "add", "--file", str(tmp_path / "bad.json"))  # two lines, before
    assert (refused.returncode, refused.stderr) == (INVALID, "Error: task refused: unknown field: 'a\\nb'\n")
    (room.root / "graveyard" / "r1.md").write_text("---\ncandidate: null\nevidence: [2026-01-01]\n---\n")
    for argv in (["graveyard"], ["graveyard", "list", "--json"], ["digest"]):  # a TypeError, before
        assert cr(*argv).returncode == 0, argv
    (room.root / "agents" / "lenses" / "mine.md").write_text('---\n{"\\uD800": 1}\n---\n')
    (tmp_path / "lens.json").write_text(json.dumps({**VALID_TASK, "review": ["mine"]}))
    lens = cr("task", "add", "--file", str(tmp_path / "lens.json"))  # libyaml's ScannerError, before
    assert lens.returncode == INVALID and lens.stderr.startswith("Error: task refused: ")
    assert "front matter is not valid YAML" in lens.stderr and lens.stderr.count("\n") == 1
    plan = tmp_path / "PL\nAN.md"
    plan.write_text("### t9\nobjective: x\n")
    named = cr("plan", "import", str(plan))  # over two lines, before
    assert named.returncode == INVALID and named.stderr.count("\n") == 1, named.stderr
    held = cr("route", "resume", "a\nb", "--because", "x")  # over two lines, before
    assert held.returncode == CONFLICT and held.stderr == "Error: a\\nb is not held: no death loop on it\n"
    gate = cr("approve", "nid", "--gate", "a\u2028b")  # a line separator split it, before
    assert gate.returncode == INVALID and gate.stderr.splitlines() == [
        "Error: task nid has no gate a\\u2028b (its gates: none)"
    ]
    assert cr("stop", "--reason", "bad \udcff byte").returncode == 0  # a UnicodeEncodeError, before
    status = cr("status")  # the ledger's `\udcff` printed: a UnicodeEncodeError, before
    assert status.returncode == 0 and "bad \ufffd byte" in status.stdout, status.stdout
    result = Entry(
        "2026-01-01T00:00:00Z",
        "0" * 16,
        "x",
        "result",
        "t1",
        "",
        "",
        "fail",
        "0",
        '{"seconds": 1' + "0" * 400 + "}",
    )
    with room.ledger.open("a", encoding="utf-8") as f:
        f.write(render(result)[0] + "\n")
    assert cr("scorecard").returncode == 0  # an OverflowError, before
    assert cr("ledger", "verify").returncode == 0


def test_a_killed_routes_verdict_on_many_lines_is_refused_in_one(cr: Any, room: Room, tmp_path: Path) -> None:
    """Pinned from the fuzzing: a verdict with a line break split every refusal of the route's
    tasks over lines, before; so did an unknown CONTROL.md key holding one."""
    assert cr("route", "add", "r2", "--title", "t").returncode == 0
    assert cr("route", "kill", "r2", "--verdict", "it failed\nbadly", "--reopen-if", "never").returncode == 0
    (tmp_path / "t.json").write_text(json.dumps({**VALID_TASK, "route": "r2"}))
    refused = cr("task", "add", "--file", str(tmp_path / "t.json"))
    assert refused.returncode == INVALID and refused.stderr.count("\n") == 1, refused.stderr
    assert "(verdict: it failed badly; reopen if: never)" in refused.stderr
    room.control.write_text(room.control.read_text().replace("---\n", '---\n"a\\nb": 1\n', 1))
    status = cr("status")
    assert status.returncode != BUG and status.stderr.count("\n") <= 1, status.stderr


def _orchestrating(room: Room, tmp_path: Path, proposal: dict[str, Any]) -> None:
    """The room's empty queue runs an orchestrator (the probe) answering ``proposal``."""
    answer = "```json\n" + json.dumps(proposal) + "\n```\n"
    script = tmp_path / "plan.py"
    script.write_text(f"print({answer!r})\n")
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps([sys.executable, str(script)]))


def test_an_orchestrators_slice_of_the_wrong_kind_fails_its_round(
    cr: Any, room: Room, tmp_path: Path
) -> None:
    """Pinned from the fuzzing: `"owns": 1` in a slice raised a TypeError in `accept` (the MCP
    `propose` tool said `bad arguments: 'int' object is not iterable`); the orchestrator's
    validator (`validate --proposals`) now names it."""
    slices = [{"title": "a", "objective": "do a", "owns": 1}, {"title": "b", "objective": "do b"}]
    _orchestrating(room, tmp_path, {**VALID_TASK, "slices": slices})
    done = cr("cycle")
    assert done.returncode == FAILED, (done.stdout, done.stderr)
    (result,) = entries(room, "result")
    assert "answer.md:1: a slice's owns must be a list of paths" in result.detail
    verify_ok(cr)


def test_an_orchestrators_fan_out_is_queued_by_the_cycle(cr: Any, room: Room, tmp_path: Path) -> None:
    """Found with the fuzzing: the orchestrator's validator (`validate --proposals`) refused
    every fan-out (`unknown field: slices`), which its `accept` queues; so no orchestrator's
    fan-out was ever queued, before."""
    slices = [
        {"title": "docs", "objective": "write the README"},
        {"title": "code", "objective": "write parse()"},
    ]
    _orchestrating(room, tmp_path, {**VALID_TASK, "id": "ship", "slices": slices})
    done = cr("cycle")
    assert done.returncode == PASSED, (done.stdout, done.stderr)
    listed = json.loads(cr("task", "list", "--json").stdout)
    assert sorted(t["id"] for t in listed if t["state"] == "queue") == ["ship", "ship-code", "ship-docs"]
    verify_ok(cr)
