"""control_room.views.mcp_tools: each tool called on a room, its answer the command's --json, its refusals."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from support import BROKEN_TOMB, data_lines, entries, queue, set_gate, task

from control_room import ledger
from control_room.errors import ControlRoomError, InvalidError, NotFoundError
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room.layout import STATES, Room
from control_room.views.mcp_tools import BY_NAME, PERSON_ONLY, TOOLS

GOOD_REPORT = (
    "DECISION: keep the route\nWHY: 2x\nEVIDENCE:\n- CONFIRMED: 2.0x (`python bench.py`)\n"
    "MISSING: none\nNEXT COMMAND: python bench.py\nSTOP RULE: two rounds without gain\n"
)


def call(room: Room, name: str, client: str = "cl", **args: Any) -> Any:
    return BY_NAME[name].run(room, client, args)


def cli_json(run: Callable[..., Result], room: Room, *argv: str) -> Any:
    r = run("--room", str(room.root), *argv, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def as_json(data: Any) -> Any:
    """What the server sends: the answer as JSON (tuples become lists)."""
    return json.loads(json.dumps(data))


def test_the_tools_offered_and_never_a_persons() -> None:
    assert [t.name for t in TOOLS] == [
        "status",
        "task_add",
        "task_list",
        "task_show",
        "validate_report",
        "ledger_tail",
        "route_list",
        "route_show",
        "findings",
        "scorecard",
        "propose_tasks",
        "field_guide_add",
        "stop",
    ]
    assert {t.name: t for t in TOOLS} == BY_NAME
    for name in ("resume", "approve", "done", "route_reopen", "set", "control"):
        assert name not in BY_NAME
    changing = [t.name for t in TOOLS if t.changes]
    assert changing == ["task_add", "propose_tasks", "field_guide_add", "stop"]
    for name in changing:
        assert BY_NAME[name].description.endswith(PERSON_ONLY)
    assert PERSON_ONLY.startswith("Never through MCP (a person's, at the command line): resume, approve")


def test_each_schema_is_an_object_naming_its_required_arguments() -> None:
    required = {t.name: t.schema["required"] for t in TOOLS}
    assert required == {
        "status": [],
        "task_add": ["task"],
        "task_list": [],
        "task_show": ["id"],
        "validate_report": ["text"],
        "ledger_tail": [],
        "route_list": [],
        "route_show": ["id"],
        "findings": [],
        "scorecard": [],
        "propose_tasks": ["text"],
        "field_guide_add": ["lesson"],
        "stop": [],
    }
    for t in TOOLS:
        assert t.schema["type"] == "object"
        assert set(t.schema["required"]) <= set(t.schema["properties"]), t.name
    assert BY_NAME["task_list"].schema["properties"]["states"]["items"]["enum"] == list(STATES)


@pytest.fixture
def busy(room: Room) -> Room:
    """A room with a route, tasks in three states, a parked reason, a tombstone and runs."""
    routes.add(room, "fast-parse", "parse faster", "no gain")
    queue(room, "q2", route="fast-parse", priority=1)
    queue(room, "q1", route="fast-parse", priority=5)
    (room.state_dir("done") / "d1.json").write_text(json.dumps(task("d1", route="fast-parse")))
    (room.state_dir("parked") / "p1.json").write_text(json.dumps(task("p1")))
    (room.state_dir("parked") / "p1.reason").write_text("max rounds\n")
    (room.root / "graveyard" / "dead-end.md").write_text(BROKEN_TOMB)
    detail = RunResult(round=1, exit=0, decision="merged", validator="passed", model="m1", role="coder")
    ledger.append(
        room.ledger, events.RESULT, task="d1", route="fast-parse", adapter="probe", outcome="pass",
        cost_usd=0.5, detail=detail.detail(),
    )  # fmt: skip
    return room


@pytest.mark.parametrize(
    ("name", "args", "argv"),
    [
        ("status", {}, ["status"]),
        ("task_list", {}, ["task", "list"]),
        (
            "task_list",
            {"states": ["queue", "parked"]},
            ["task", "list", "--state", "queue", "--state", "parked"],
        ),
        ("task_show", {"id": "p1"}, ["task", "show", "p1"]),
        ("task_show", {"id": "q1"}, ["task", "show", "q1"]),
        ("ledger_tail", {}, ["ledger", "tail"]),
        ("ledger_tail", {"n": 2}, ["ledger", "tail", "-n", "2"]),
        ("route_list", {}, ["route", "list"]),
        ("route_show", {"id": "fast-parse"}, ["route", "show", "fast-parse"]),
        ("route_show", {"id": "dead-end"}, ["route", "show", "dead-end"]),
        ("findings", {}, ["findings"]),
        ("scorecard", {}, ["scorecard"]),
        ("scorecard", {"since": "7d"}, ["scorecard", "--since", "7d"]),
    ],
)
def test_a_reading_tool_answers_as_its_command_with_json(
    run: Callable[..., Result], busy: Room, name: str, args: dict[str, Any], argv: list[str]
) -> None:
    before = data_lines(busy.ledger)
    answer = call(busy, name, **args)
    assert as_json(answer) == cli_json(run, busy, *argv)
    assert data_lines(busy.ledger) == before


def test_validate_report_answers_as_validate_with_json(
    run: Callable[..., Result], tmp_path: Path, room: Room
) -> None:
    for text in (GOOD_REPORT, "no report here\n"):
        (tmp_path / "report.md").write_text(text)
        r = run("validate", str(tmp_path / "report.md"), "--json")
        assert as_json(call(room, "validate_report", text=text)) == json.loads(r.stdout)
    assert call(room, "validate_report", text=GOOD_REPORT)["ok"] is True
    assert call(room, "validate_report")["ok"] is False  # no text: an empty report


def test_task_list_orders_the_queue_to_run_and_refuses_an_unknown_state(busy: Room) -> None:
    rows = call(busy, "task_list", states=["queue"])
    assert [(r["state"], r["file"], r["id"]) for r in rows] == [
        ("queue", "q1.json", "q1"),
        ("queue", "q2.json", "q2"),
    ]
    with pytest.raises(InvalidError) as caught:
        call(busy, "task_list", states=["queue", "limbo"])
    assert str(caught.value) == (
        "unknown state 'limbo': one of queue, running, passed, to-test, done, parked, rejected, cancelled"
    )


def test_task_show_gives_the_state_fields_and_reason(busy: Room) -> None:
    assert call(busy, "task_show", id="p1") == {
        "state": "parked",
        "path": str(busy.state_dir("parked") / "p1.json"),
        "task": task("p1"),
        "reason": "max rounds\n",
    }
    assert call(busy, "task_show", id="q1")["reason"] is None


def test_task_show_of_a_file_that_is_not_json_gives_its_text(room: Room) -> None:
    (room.state_dir("rejected") / "bad.json").write_text("{not json")
    (room.state_dir("rejected") / "bad.json.reason").write_text("not valid JSON\n")
    answer = call(room, "task_show", id="bad")
    assert (answer["state"], answer["task"], answer["reason"]) == (
        "rejected",
        "{not json",
        "not valid JSON\n",
    )


def test_task_show_of_a_task_that_is_not_there(room: Room) -> None:
    with pytest.raises(NotFoundError) as caught:
        call(room, "task_show", id="ghost")
    assert str(caught.value).startswith("no task ghost")


def test_task_add_queues_the_task_as_task_add_does(room: Room) -> None:
    answer = call(room, "task_add", task=task("via-mcp"))
    assert answer["queued"] == "via-mcp" and answer["file"] == "swarm/queue/via-mcp.json"
    on_disk = json.loads((room.state_dir("queue") / "via-mcp.json").read_text())
    assert answer["task"] == on_disk and on_disk["falsifier"] == task("via-mcp")["falsifier"]
    (line,) = entries(room, "task-add")
    assert (line.task, line.outcome) == ("via-mcp", "queued")


def test_task_add_with_new_route_puts_the_route_on_the_board(room: Room) -> None:
    call(room, "task_add", task=task("t1", route="new-road"), new_route=True)
    row = routes.find(room, "new-road")
    assert row is not None and row["verdict"] == "untested"
    assert (room.state_dir("queue") / "t1.json").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "task must be a JSON object (the fields of a task file)"),
        ({"task": "objective: x"}, "task must be a JSON object (the fields of a task file)"),
        ({"task": task("t1"), "new_route": True}, "--new-route needs the task's route: give --route ID"),
    ],
)
def test_task_add_refusals_write_nothing(room: Room, args: dict[str, Any], message: str) -> None:
    before = data_lines(room.ledger)
    with pytest.raises(InvalidError) as caught:
        BY_NAME["task_add"].run(room, "cl", args)
    assert str(caught.value) == message
    assert data_lines(room.ledger) == before
    assert list(room.state_dir("queue").iterdir()) == []


def test_task_add_refuses_in_the_words_of_the_command(
    run: Callable[..., Result], room: Room, tmp_path: Path
) -> None:
    vague = {k: v for k, v in task("vague").items() if k != "falsifier"}
    (tmp_path / "vague.json").write_text(json.dumps(vague))
    cli = run("--room", str(room.root), "task", "add", "--file", str(tmp_path / "vague.json"))
    with pytest.raises(InvalidError) as caught:
        call(room, "task_add", task=vague)
    assert (cli.exit_code, cli.stderr) == (4, f"Error: {caught.value}\n")
    assert str(caught.value).startswith("task refused: ")


def test_ledger_tail_reads_the_last_lines_and_shows_a_stray_one(room: Room) -> None:
    for k in range(3):
        ledger.append(room.ledger, events.WARNING, detail=f"w{k}")
    assert [e["detail"] for e in call(room, "ledger_tail", n=2)] == ["w1", "w2"]
    assert len(call(room, "ledger_tail")) == 4  # the init line and three: fewer than 10
    assert call(room, "ledger_tail", n=0) == []
    assert call(room, "ledger_tail", n=-5) == []
    with room.ledger.open("a") as f:
        f.write("a person's note\n")
    assert call(room, "ledger_tail", n=1) == [{"unparsed": "a person's note"}]


def test_route_list_names_held_routes_and_problems(room: Room) -> None:
    routes.add(room, "r1", "first")
    answer = call(room, "route_list")
    assert [r["route"] for r in answer["routes"]] == ["r1"]
    assert answer["held"] == [] and answer["problems"] == []


def test_route_list_survives_a_broken_control_md_and_a_missing_ledger(room: Room) -> None:
    routes.add(room, "r1", "first")
    room.control.write_text("---\nmax_parallel: [\n---\n")
    room.ledger.unlink()
    answer = call(room, "route_list")
    assert [r["route"] for r in answer["routes"]] == ["r1"] and answer["held"] == []


def test_route_show_gives_the_row_its_tasks_and_tombstone(busy: Room) -> None:
    answer = call(busy, "route_show", id="fast-parse")
    assert answer["route"]["title"] == "parse faster"
    assert answer["tasks"] == [("queue", "q1"), ("queue", "q2"), ("done", "d1")]
    assert answer["tombstone"] is None
    tomb = call(busy, "route_show", id="dead-end")
    assert (tomb["route"], tomb["tasks"], tomb["tombstone"]) == (
        None,
        [],
        str(busy.root / "graveyard" / "dead-end.md"),
    )
    assert tomb["tombstone_problem"].startswith(f"{busy.root / 'graveyard' / 'dead-end.md'}: line 2: ")


def test_route_show_refuses_a_route_that_is_not_there_or_a_bad_id(room: Room) -> None:
    with pytest.raises(NotFoundError) as caught:
        call(room, "route_show", id="nowhere")
    assert str(caught.value) == "no route nowhere in control-room/ROUTES.md or graveyard/"
    with pytest.raises(InvalidError):
        call(room, "route_show", id="../etc")
    with pytest.raises(InvalidError):
        call(room, "route_show")


def test_findings_refuses_when_control_md_is_broken(room: Room) -> None:
    room.control.write_text("---\nmax_parallel: [\n---\n")
    with pytest.raises(ControlRoomError) as caught:
        call(room, "findings")
    assert str(caught.value).startswith(f"{room.control}: line 2: front matter is not valid YAML: ")


def test_scorecard_since_a_time_after_every_run_counts_none(busy: Room) -> None:
    assert call(busy, "scorecard")["total"]["runs"] == 1
    later = call(busy, "scorecard", since="2999-01-01")
    assert (later["total"]["runs"], later["by_model"]) == (0, [])


def test_propose_tasks_queues_up_to_the_cap_and_logs_the_client(room: Room) -> None:
    set_gate(room, "max_new_tasks", "1")
    text = "".join(f"```json\n{json.dumps(task(i))}\n```\n" for i in ("first", "second"))
    assert call(room, "propose_tasks", client="bot", text=text) == {
        "queued": ["first"],
        "refused": ["proposal at line 4 of mcp-bot's answer: over max_new_tasks (1) for one run"],
    }
    (added,) = entries(room, "task-add")
    assert added.detail.startswith("proposed by mcp-bot: ")
    assert len(entries(room, "proposal-refused")) == 1
    assert call(room, "propose_tasks", text="nothing proposed") == {"queued": [], "refused": []}


def test_field_guide_add_appends_a_lesson_up_to_the_cap(room: Room) -> None:
    set_gate(room, "field_guide_max_lines", "2")
    guide = room.root / "intelligence" / "FIELD_GUIDE.md"
    held = guide.read_text()  # a new room's guide: no lesson yet
    assert call(room, "field_guide_add", lesson="run  the bench\nfive times") == {
        "added": True,
        "lesson_lines": 1,
        "cap": 2,
    }
    assert call(room, "field_guide_add", lesson="- pin the CPU")["lesson_lines"] == 2
    assert guide.read_text() == held + "- run the bench five times\n- pin the CPU\n"
    with pytest.raises(InvalidError) as caught:
        call(room, "field_guide_add", lesson="three")
    assert str(caught.value) == (
        "lesson refused: intelligence/FIELD_GUIDE.md has 2 lesson lines, the cap "
        "(CONTROL.md field_guide_max_lines) is 2; a person must prune it first"
    )
    assert [e.detail for e in entries(room, "field-guide-add")] == [
        "- run the bench five times",
        "- pin the CPU",
    ]


def test_field_guide_add_refuses_an_empty_lesson(room: Room) -> None:
    with pytest.raises(InvalidError) as caught:
        call(room, "field_guide_add", lesson="  \n ")
    assert str(caught.value) == "lesson refused: it is empty"
    with pytest.raises(InvalidError):
        call(room, "field_guide_add")


def test_stop_creates_stop_once(room: Room) -> None:
    assert call(room, "stop", reason="smoke") == {"stopped": True, "created": True, "file": str(room.stop)}
    assert room.stop.read_text().endswith(" by tester\nreason: smoke\n")
    assert call(room, "stop") == {"stopped": True, "created": False, "file": str(room.stop)}
    assert [e.detail for e in entries(room, "stop")] == ["smoke"]
