"""control-room task add / list / show"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from support import ADD_ARGS, data_lines, drop, events, no_room_error, task, written

from control_room.room import tasks
from control_room.room.layout import Room

Run = Callable[..., Result]


def queued(room: Room) -> list[str]:
    return sorted(os.listdir(room.state_dir("queue")))


# add ------------------------------------------------------------------------------------


def test_add_queues_a_task(run: Run, inside: Room) -> None:
    run("route", "add", "fast-parse", "--title", "Parse faster")
    run("task", "add", "--id", "t0", *ADD_ARGS)  # the dep: a task that exists
    result = run("task", "add", "--id", "t1", "--route", "fast-parse", "--priority", "3",
                 "--dep", "t0", "--gate", "gpu", *ADD_ARGS)  # fmt: skip
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "queued t1  (swarm/queue/t1.json)\n"
    on_disk = json.loads((inside.state_dir("queue") / "t1.json").read_text())
    assert tasks.sealed(on_disk)  # control-room's own file: its created is sealed
    assert {k: v for k, v in on_disk.items() if k not in ("created", "seal")} == {
        "id": "t1",
        "objective": "make parse() twice as fast",
        "falsifier": "no gain over three runs",
        "validator": "python bench.py --check",
        "max_cost_usd": 1.0,
        "wall_clock_s": 600.0,
        "kill_condition": "two rounds without gain",
        "command": "python bench.py",
        "route": "fast-parse",
        "deps": ["t0"],
        "gate": ["gpu"],
        "priority": 3,
    }
    assert events(inside.ledger) == ["init", "route-add", "task-add", "task-add"]


def test_add_makes_an_id_from_the_objective(run: Run, inside: Room) -> None:
    result = run("task", "add", "--json", *ADD_ARGS)
    assert result.exit_code == 0
    made = json.loads(result.stdout)["id"]
    assert made.startswith("make-parse-twice-as-fast-") and len(made) == len("make-parse-twice-as-fast-") + 6
    assert queued(inside) == [f"{made}.json"]


def test_add_names_every_missing_field(run: Run, inside: Room) -> None:
    result = run("task", "add", "--objective", "go faster", "--max-cost", "1")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (
        "Error: task refused: missing falsifier, validator, wall_clock_s, kill_condition "
        "(a task that cannot state its falsifier is a vibe, not a task)\n"
    )
    assert queued(inside) == []
    assert events(inside.ledger) == ["init"]


def test_add_refuses_a_bad_id(run: Run, inside: Room) -> None:
    result = run("task", "add", "--id", "../escape", *ADD_ARGS)
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == "Error: task refused: id must match [a-z0-9][a-z0-9._-]{0,63}\n"
    assert queued(inside) == []


def test_add_refuses_an_existing_id(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t1", *ADD_ARGS)
    result = run("task", "add", "--id", "t1", *ADD_ARGS)
    assert (result.exit_code, result.stderr) == (
        4,
        "Error: task refused: task t1 exists already (swarm/queue/t1.json); "
        "ids are unique: give this one a new id\n",
    )


def test_add_a_bad_duration_is_a_usage_error(run: Run, inside: Room) -> None:
    args = [a if a != "10m" else "soon" for a in ADD_ARGS]
    result = run("task", "add", *args)
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: Invalid value for '--wall-clock': not a duration: 'soon' (try 90, 90s, 30m, 1h)\n"
    )


def test_add_from_a_file_with_flags_overriding(run: Run, inside: Room, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(task("from-file", priority=1)))
    result = run("task", "add", "--file", str(spec), "--priority", "9")
    assert (result.exit_code, result.stdout) == (0, "queued from-file  (swarm/queue/from-file.json)\n")
    assert json.loads((inside.state_dir("queue") / "from-file.json").read_text())["priority"] == 9


def test_add_from_stdin(run: Run, inside: Room) -> None:
    result = run("task", "add", "--file", "-", input=json.dumps(task("piped")))
    assert (result.exit_code, result.stdout) == (0, "queued piped  (swarm/queue/piped.json)\n")


def test_add_from_a_file_that_is_not_json(run: Run, inside: Room, tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text("{oops")
    result = run("task", "add", "--file", str(tmp_path / "spec.json"))
    assert (result.exit_code, result.stderr) == (
        4, f"Error: {tmp_path / 'spec.json'}: not valid JSON: Expecting property name enclosed "
        "in double quotes (line 1 column 2)\n",
    )  # fmt: skip


def test_add_over_max_queued_writes_nothing(run: Run, inside: Room) -> None:
    text = inside.control.read_text()
    inside.control.write_text(text.replace("max_queued: 10000", "max_queued: 2"))
    assert run("task", "add", "--id", "t1", *ADD_ARGS).exit_code == 0
    assert run("task", "add", "--id", "t2", *ADD_ARGS).exit_code == 0
    ledger_before = inside.ledger.read_bytes()

    result = run("task", "add", "--id", "t3", *ADD_ARGS)
    assert (result.exit_code, result.stdout) == (8, "")
    assert result.stderr == (
        "Error: task refused: the queue is full (2 tasks, CONTROL.md max_queued 2); nothing was written\n"
    )
    assert queued(inside) == ["t1.json", "t2.json"]
    assert inside.ledger.read_bytes() == ledger_before


def test_add_above_the_task_cost_cap(run: Run, inside: Room) -> None:
    args = [a if a != "1" else "5" for a in ADD_ARGS]
    result = run("task", "add", "--id", "t1", *args)
    assert (result.exit_code, result.stderr) == (
        4, "Error: task refused: max_cost_usd 5.0 is above CONTROL.md max_task_cost_usd 2.0\n",
    )  # fmt: skip


# list -----------------------------------------------------------------------------------


def test_list_an_empty_room(run: Run, inside: Room) -> None:
    result = run("task", "list")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "no tasks\n", "")
    assert run("task").stdout == "no tasks\n"  # list is the default


def test_list_rejects_a_hand_dropped_bad_file(run: Run, inside: Room) -> None:
    run("route", "add", "r1", "--title", "Route one")
    run("task", "add", "--id", "good", "--route", "r1", *ADD_ARGS)
    drop(inside, "vibe.json", {"id": "vibe", "objective": "make it better"})
    result = run("task", "list")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"{'state':<9} {'id':<32} {'pri':>4}  {'route':<16} ready  objective\n"
        f"{'queue':<9} {'good':<32} {0:>4}  {'r1':<16} ready  make parse() twice as fast\n"
        f"{'rejected':<9} {'vibe.json':<32} {'':>4}  {'-':<16} -      PROBLEM: missing required "
        "fields: falsifier, validator, max_cost_usd, wall_clock_s, kill_condition\n"
    )
    assert queued(inside) == ["good.json"]
    assert events(inside.ledger) == ["init", "route-add", "task-add", "reject"]


def test_list_json_in_run_order(run: Run, inside: Room) -> None:
    written(inside, "queue", task("low", priority=0, created="2025-01-01T00:00:00Z"))
    written(inside, "queue", task("high", priority=2, created="2025-02-01T00:00:00Z"))
    result = run("task", "list", "--state", "queue", "--json")
    rows = json.loads(result.stdout)
    assert [(r["state"], r["file"], r["id"], r["priority"]) for r in rows] == [
        ("queue", "high.json", "high", 2), ("queue", "low.json", "low", 0),
    ]  # fmt: skip


def test_list_says_why_each_queued_task_waits(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t0", "--route", "r1", "--new-route", *ADD_ARGS)
    run("task", "add", "--id", "t1", "--dep", "t0", "--priority", "2", *ADD_ARGS)
    run("task", "add", "--id", "t2", "--gate", "gpu", "--priority", "1", *ADD_ARGS)
    drop(inside, "t3.json", task("t3", deps=["t1"]))
    (inside.state_dir("cancelled") / "old.json").write_text(json.dumps(task("old")))
    gate = "waits for gate gpu: `control-room approve t2`"
    w = len(gate)
    result = run("task", "list")
    assert (result.exit_code, result.stderr) == (0, "")
    what = "make parse() twice as fast"
    assert result.stdout == (
        f"{'state':<9} {'id':<32} {'pri':>4}  {'route':<16} {'ready':<{w}}  objective\n"
        f"{'queue':<9} {'t1':<32} {2:>4}  {'-':<16} {'waits for dep t0 (queue)':<{w}}  {what}\n"
        f"{'queue':<9} {'t2':<32} {1:>4}  {'-':<16} {gate}  {what}\n"
        f"{'queue':<9} {'t0':<32} {0:>4}  {'r1':<16} {'ready':<{w}}  {what}\n"
        f"{'queue':<9} {'t3':<32} {0:>4}  {'-':<16} {'waits for dep t1 (queue)':<{w}}  {what}\n"
        f"{'cancelled':<9} {'old':<32} {0:>4}  {'-':<16} {'-':<{w}}  {what}\n"
    )
    os.rename(inside.state_dir("queue") / "t0.json", inside.state_dir("done") / "t0.json")  # as if it passed
    assert run("task", "list", "--state", "queue").stdout.split("\n")[1:3] == [
        f"{'queue':<9} {'t1':<32} {2:>4}  {'-':<16} {'ready':<{w}}  {what}",
        f"{'queue':<9} {'t2':<32} {1:>4}  {'-':<16} {gate}  {what}",
    ]
    rows = json.loads(run("task", "list", "--state", "queue", "--json").stdout)  # no readiness in JSON
    assert sorted(rows[0]) == [
        "created", "deps", "file", "id", "max_cost_usd", "objective", "priority", "state",
    ]  # fmt: skip


def test_list_of_other_states_has_no_ready_column(run: Run, inside: Room) -> None:
    (inside.state_dir("done") / "d.json").write_text(json.dumps(task("d")))
    assert run("task", "list", "--state", "done").stdout == (
        f"{'state':<9} {'id':<32} {'pri':>4}  {'route':<16} objective\n"
        f"{'done':<9} {'d':<32} {0:>4}  {'-':<16} make parse() twice as fast\n"
    )


def test_list_with_a_broken_gate_still_lists(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t0", *ADD_ARGS)
    inside.control.write_text("---\nmax_parallel: many\n---\n")
    result = run("task", "list")
    assert result.exit_code == 0
    assert result.stderr == (
        f"note: cannot tell which queued tasks are ready: {inside.control}: max_parallel must be a "
        "positive integer (got 'many')\n"
    )
    row = result.stdout.split("\n")[1]
    assert row == f"{'queue':<9} {'t0':<32} {0:>4}  {'-':<16} ?      make parse() twice as fast"


def test_add_refuses_deps_that_could_never_be_done(run: Run, inside: Room) -> None:
    result = run("task", "add", "--id", "t1", "--dep", "t9", *ADD_ARGS)
    assert (result.exit_code, result.stdout, result.stderr) == (
        4, "", "Error: task refused: deps names t9, which is not a task in any swarm folder: it could "
        "never be ready\n",
    )  # fmt: skip
    drop(inside, "t2.json", task("t2", deps=["t1"]))  # by hand, not scanned yet
    result = run("task", "add", "--id", "t1", "--dep", "t2", *ADD_ARGS)
    assert (result.exit_code, result.stderr) == (
        4, "Error: task refused: deps form a cycle: t1 -> t2 -> t1 (no task in it could ever be ready)\n",
    )  # fmt: skip
    assert queued(inside) == ["t2.json"]
    assert events(inside.ledger) == ["init"]


def test_list_an_unknown_state_is_a_usage_error(run: Run, inside: Room) -> None:
    assert run("task", "list", "--state", "limbo").exit_code == 2


# show -----------------------------------------------------------------------------------


def test_show_a_queued_task(run: Run, inside: Room) -> None:
    run("task", "add", "--id", "t1", *ADD_ARGS)
    path = inside.state_dir("queue") / "t1.json"
    result = run("task", "show", "t1")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"t1  in swarm/queue/  ({path})\n{path.read_text()}"


def test_show_a_rejected_task_shows_its_reason(run: Run, inside: Room) -> None:
    drop(inside, "vibe.json", '{"id": "vibe", "objective": "make it better"}')
    run("task", "list")
    rejected = inside.state_dir("rejected")
    reason = (rejected / "vibe.json.reason").read_text()
    result = run("task", "show", "vibe")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        f"vibe  in swarm/rejected/  ({rejected / 'vibe.json'})\n"
        '{"id": "vibe", "objective": "make it better"}\n'
        f"\nwhy (vibe.json.reason):\n{reason.rstrip()}\n"
    )
    assert (
        "- missing required fields: falsifier, validator, max_cost_usd, wall_clock_s, "
        "kill_condition\n" in reason
    )
    as_json = json.loads(run("task", "show", "vibe", "--json").stdout)
    assert (as_json["state"], as_json["reason"], as_json["task"]) == (
        "rejected", reason, {"id": "vibe", "objective": "make it better"},
    )  # fmt: skip


def test_show_a_missing_task(run: Run, inside: Room) -> None:
    result = run("task", "show", "ghost")
    assert (result.exit_code, result.stdout) == (7, "")
    assert result.stderr == f"Error: no task ghost in {inside.root / 'swarm'}\n"


def test_show_a_path_is_refused(run: Run, inside: Room) -> None:
    result = run("task", "show", "../../etc/passwd")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (
        "Error: '../../etc/passwd' is not a task id (ids match [a-z0-9][a-z0-9._-]{0,63})\n"
    )


# outside a room, and --room ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["task"], ["task", "list"], ["task", "show", "t1"], ["task", "add", *ADD_ARGS],
     ["task", "add", "--objective", "x"]],
    ids=["task", "list", "show", "add", "add-incomplete"],
)  # fmt: skip
def test_outside_a_room(run: Run, tmp_path: Path, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", no_room_error(tmp_path))


@pytest.mark.parametrize(
    "args",
    [
        ["--room", "room", "task", "add", "--id", "t1", *ADD_ARGS],
        ["task", "--room", "room", "add", "--id", "t1", *ADD_ARGS],
        ["task", "add", "--id", "t1", *ADD_ARGS, "--room", "room"],
    ],
    ids=["before-task", "after-task", "after-add"],
)
def test_room_option_anywhere(run: Run, room: Room, args: list[str]) -> None:
    result = run(*args)
    assert (result.exit_code, result.stdout) == (0, "queued t1  (swarm/queue/t1.json)\n")
    assert queued(room) == ["t1.json"]
    assert len(data_lines(room.ledger)) == 2
