"""control-room task add: what it refuses besides the schema, through the command line on real
files: a route not on the board, a task file the queue scan would reject (too big, not UTF-8),
a command that needs a shell. The queue scan and proposals refuse the same, in the same words."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from support import ADD_ARGS, drop, entries, error, events, hold, ok, queue, task, written

from control_room.errors import InvalidError
from control_room.room import swarm, tasks
from control_room.room.layout import Room

Run = Callable[..., Result]
NO_LOPPY = (
    "task refused: no route loppy in control-room/ROUTES.md (did you mean loopy?); "
    "add it with `control-room route add loppy --title ...` or pass --new-route"
)


def queued(room: Room) -> list[str]:
    return sorted(os.listdir(room.state_dir("queue")))


def reason(room: Room, name: str) -> str:
    """The one problem written beside a rejected file."""
    lines = (room.state_dir("rejected") / f"{name}.reason").read_text().splitlines()
    assert lines[1] == "" and lines[3] == "", lines
    return lines[2].removeprefix("- ")


# the route must be on the board -------------------------------------------------------------


def test_an_unknown_route_is_refused_with_the_near_ones(run: Run, inside: Room) -> None:
    ok(run("route", "add", "loopy", "--title", "Unroll the loop"), "route loopy added (untested)\n")
    board, ledger = inside.routes.read_bytes(), inside.ledger.read_bytes()
    error(run("task", "add", "--id", "t1", "--route", "loppy", *ADD_ARGS), 4, NO_LOPPY)
    error(run("task", "add", "--id", "t1", "--route", "zzz", *ADD_ARGS), 4,
          "task refused: no route zzz in control-room/ROUTES.md; add it with "
          "`control-room route add zzz --title ...` or pass --new-route")  # fmt: skip
    assert (queued(inside), inside.routes.read_bytes(), inside.ledger.read_bytes()) == ([], board, ledger)
    ok(run("task", "add", "--id", "t1", "--route", "loopy", *ADD_ARGS), "queued t1  (swarm/queue/t1.json)\n")


def test_several_near_routes_are_all_named(run: Run, inside: Room) -> None:
    for name in ("parse-v1", "parse-v2", "parse-v3", "cache"):
        run("route", "add", name, "--title", name)
    error(run("task", "add", "--route", "parse-v", *ADD_ARGS), 4,
          "task refused: no route parse-v in control-room/ROUTES.md (did you mean parse-v1 or parse-v2 "
          "or parse-v3?); add it with `control-room route add parse-v --title ...` or pass "
          "--new-route")  # fmt: skip


def test_a_held_route_is_a_known_one(run: Run, inside: Room) -> None:
    run("route", "add", "loopy", "--title", "Unroll the loop")
    hold(run, inside, "loopy")
    error(run("task", "add", "--id", "t1", "--route", "loppy", *ADD_ARGS), 4, NO_LOPPY)
    assert run("task", "add", "--id", "t1", "--route", "loopy", *ADD_ARGS).exit_code == 0


def test_new_route_puts_the_route_on_the_board_on_purpose(run: Run, inside: Room) -> None:
    ok(run("task", "add", "--id", "t1", "--route", "loppy", "--new-route", *ADD_ARGS),
       "queued t1  (swarm/queue/t1.json)\n")  # fmt: skip
    assert inside.routes.read_text().endswith(
        "| loppy | untested | make parse() twice as fast | 0 | 0 |  | no gain over three runs |\n"
    )
    assert events(inside.ledger) == ["init", "route-add", "task-add"]
    (added,) = entries(inside, "route-add")
    assert (added.route, added.outcome, added.detail) == (
        "loppy", "untested", "make parse() twice as fast (for task t1)",
    )  # fmt: skip
    # On a route that is there, --new-route changes nothing on the board.
    board = inside.routes.read_bytes()
    ok(run("task", "add", "--id", "t2", "--route", "loppy", "--new-route", *ADD_ARGS),
       "queued t2  (swarm/queue/t2.json)\n")  # fmt: skip
    assert inside.routes.read_bytes() == board
    assert events(inside.ledger) == ["init", "route-add", "task-add", "task-add"]


def test_new_route_needs_a_route_and_a_refused_task_adds_no_route(run: Run, inside: Room) -> None:
    error(run("task", "add", "--new-route", *ADD_ARGS), 4,
          "--new-route needs the task's route: give --route ID")  # fmt: skip
    args = [a if a != "1" else "5" for a in ADD_ARGS]  # above max_task_cost_usd
    error(run("task", "add", "--route", "new", "--new-route", *args), 4,
          "task refused: max_cost_usd 5.0 is above CONTROL.md max_task_cost_usd 2.0")  # fmt: skip
    assert "| new |" not in inside.routes.read_text()
    assert events(inside.ledger) == ["init"]


def test_a_task_from_a_file_names_its_route_too(run: Run, inside: Room, tmp_path: Path) -> None:
    run("route", "add", "loopy", "--title", "Unroll the loop")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(task("t1", route="loppy")))
    error(run("task", "add", "--file", str(spec)), 4, NO_LOPPY)
    ok(run("task", "add", "--file", str(spec), "--new-route"), "queued t1  (swarm/queue/t1.json)\n")


def test_proposals_on_an_unknown_route_are_refused_in_the_same_words(
    run: Run, inside: Room, tmp_path: Path
) -> None:
    run("route", "add", "loopy", "--title", "Unroll the loop")
    plan = tmp_path / "plan.md"
    plan.write_text("".join(f"```json\n{json.dumps(task(i, route=r))}\n```\n" for i, r in
                            (("p1", "loppy"), ("p2", "loopy"))))  # fmt: skip
    result = run("validate", "--proposals", str(plan))
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "ok: 1 valid proposal\n", f"{plan}:1: {NO_LOPPY}\n",
    )  # fmt: skip


def test_a_file_dropped_by_hand_on_a_new_route_still_runs(run: Run, inside: Room) -> None:
    """Only new tasks are asked: a dropped file's route gets its row at the first run."""
    queue(inside, "dropped", route="fresh")
    assert run("cycle").exit_code == 10
    assert "| fresh | alive |" in inside.routes.read_text()


# the file task add writes is one the queue scan keeps ------------------------------------------


def padded(task_id: str, size: int) -> dict[str, Any]:
    """A task whose file, as ``task add`` writes it (with ``created`` and its seal: fixed
    lengths), is exactly ``size`` bytes."""
    t = task(task_id, created="2026-12-01T00:00:00Z")
    base = len(swarm.render(t))
    t["objective"] += "x" * (size - base)
    assert len(swarm.render(t)) == size
    return t


def spec_of(t: dict[str, Any]) -> str:
    """What a person gives ``task add --file``: the task without what control-room writes."""
    return json.dumps({k: v for k, v in t.items() if k != "created"})


def test_the_biggest_task_add_accepts_is_kept_by_the_scan_and_one_byte_more_by_neither(
    run: Run, inside: Room, tmp_path: Path
) -> None:
    biggest = padded("biggest", swarm.MAX_BYTES)
    spec = tmp_path / "biggest.json"
    spec.write_text(spec_of(biggest))
    ok(run("task", "add", "--file", str(spec)), "queued biggest  (swarm/queue/biggest.json)\n")
    assert (inside.state_dir("queue") / "biggest.json").stat().st_size == swarm.MAX_BYTES
    listing = run("task", "list")
    assert (listing.exit_code, listing.stdout.splitlines()[1].split()[:2]) == (0, ["queue", "biggest"])
    assert queued(inside) == ["biggest.json"]

    over = padded("over", swarm.MAX_BYTES + 1)
    spec.write_text(spec_of(over))
    why = "the task file is larger than 1048576 bytes (1 MiB): keep long text in a file the task names"
    error(run("task", "add", "--file", str(spec)), 4, f"task refused: {why}")
    assert queued(inside) == ["biggest.json"]
    drop(inside, "over.json", swarm.render(over))  # the file task add would have written
    assert run("task", "list").exit_code == 0
    assert queued(inside) == ["biggest.json"]
    assert reason(inside, "over.json") == why
    assert events(inside.ledger) == ["init", "task-add", "reject"]


def test_text_that_is_not_unicode_is_refused_not_a_traceback(exe: str, inside: Room) -> None:
    """A command-line argument in no known encoding (bytes 0xff): the scan would reject the
    file, so task add refuses it, in the scan's words."""
    args = [a.encode() for a in ADD_ARGS]
    done = subprocess.run([exe, "task", "add", "--id", "t1", *args, "--kill-condition", b"\xff"],
                          capture_output=True, check=False)  # fmt: skip
    (line,) = done.stderr.decode().splitlines()
    assert (done.returncode, done.stdout, line.split(" (byte")[0]) == (
        4, b"", "Error: task refused: not UTF-8 text",
    )  # fmt: skip
    assert queued(inside) == []


# commands run without a shell -----------------------------------------------------------------

SLEEPY = (
    "validator `sleep 1; echo x` needs a shell (;), and commands run without one: "
    "write `sh -c 'sleep 1; echo x'` to use a shell on purpose"
)


@pytest.mark.parametrize(
    ("flag", "value", "why"),
    [
        ("--validator", "sleep 1; echo x", SLEEPY),
        ("--validator", "a && b", "validator `a && b` needs a shell (&&), and commands run without one: "
                                  "write `sh -c 'a && b'` to use a shell on purpose"),
        ("--command", "cd src", "command `cd src` needs a shell (cd), and commands run without one: "
                                "write `sh -c 'cd src'` to use a shell on purpose"),
        ("--command", 'echo "it\'s" | wc', "command `echo \"it's\" | wc` needs a shell (|), and commands "
                                         "run without one: write `sh -c 'echo \"it'\"'\"'s\" | wc'` to use "
                                         "a shell on purpose"),
    ],
)  # fmt: skip
def test_a_command_that_needs_a_shell_is_refused_showing_the_form_that_works(
    run: Run, inside: Room, flag: str, value: str, why: str
) -> None:
    error(run("task", "add", "--id", "t1", *ADD_ARGS, flag, value), 4, f"task refused: {why}")
    assert (queued(inside), events(inside.ledger)) == ([], ["init"])


def test_an_unclosed_quote_is_refused_at_add_not_charged_as_a_round(run: Run, inside: Room) -> None:
    error(run("task", "add", "--id", "t1", *ADD_ARGS, "--validator", 'python -c "print(1)'), 4,
          "task refused: validator `python -c \"print(1)` has an unclosed \" quote: it cannot be split into "
          "words")  # fmt: skip
    assert (queued(inside), events(inside.ledger)) == ([], ["init"])


def test_the_shell_form_it_shows_is_accepted_and_runs(run: Run, inside: Room) -> None:
    shelled = "sh -c 'echo checking && false'"
    ok(run("task", "add", "--id", "t1", *ADD_ARGS, "--adapter", "probe", "--command", "true",
           "--validator", shelled), "queued t1  (swarm/queue/t1.json)\n")  # fmt: skip
    result = run("cycle")
    assert result.exit_code == 11  # the shell ran `false`: the validator failed, as written
    assert (inside.swarm / "results" / "t1" / "validator.stdout.txt").read_text() == "checking\n"


def test_quoted_operators_and_lists_are_plain_words(run: Run, inside: Room, tmp_path: Path) -> None:
    ok(run("task", "add", "--id", "t1", *ADD_ARGS, "--validator", "python -c 'print(1 | 2); x = \"a>b\"'"),
       "queued t1  (swarm/queue/t1.json)\n")  # fmt: skip
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(task("t2", validator=["make", "&&", "./bench"])))  # a list is run as it is
    ok(run("task", "add", "--file", str(spec)), "queued t2  (swarm/queue/t2.json)\n")


def test_a_dropped_file_and_a_proposal_get_the_same_words(run: Run, inside: Room, tmp_path: Path) -> None:
    drop(inside, "sleepy.json", task("sleepy", validator="sleep 1; echo x"))
    assert run("task", "list").exit_code == 0
    assert reason(inside, "sleepy.json") == SLEEPY
    plan = tmp_path / "plan.md"
    plan.write_text(f"```json\n{json.dumps(task('p1', validator='sleep 1; echo x'))}\n```\n")
    result = run("validate", "--proposals", str(plan))
    assert (result.exit_code, result.stderr) == (
        4, f"{plan}:1: task refused: {SLEEPY}\n{plan}: the only proposal is not a valid task\n",
    )  # fmt: skip
    assert events(inside.ledger) == ["init", "reject"]


# fields only control-room writes ------------------------------------------------------------

ROUNDS = "rounds: a field only control-room writes (a task's history is the room's): remove it"


def test_a_field_only_control_room_writes_is_refused_in_one_wording_every_way_in(
    run: Run, inside: Room, tmp_path: Path
) -> None:
    """task add, a file dropped into the queue, a plan, an MCP client, an orchestrator's
    proposal: each refuses ``rounds`` in the same words, and writes no task."""
    from control_room.views.mcp_tools import BY_NAME  # the MCP tools, as `control-room mcp` calls them

    spec = tmp_path / "t1.json"
    spec.write_text(json.dumps(task("t1", rounds=0)))
    error(run("task", "add", "--file", str(spec)), 4, f"task refused: {ROUNDS}")
    drop(inside, "t2.json", task("t2", rounds=0))
    assert run("task", "list").exit_code == 0
    assert reason(inside, "t2.json") == ROUNDS
    plan = tmp_path / "PLAN.md"
    plan.write_text(
        "# a plan\n\n### t3\nobjective: o\nfalsifier: f\nvalidator: true\nmax_cost_usd: 0.1\n"
        "wall_clock_s: 60\nkill_condition: k\nrounds: 0\n"
    )
    said = run("plan", "import", str(plan))
    assert said.exit_code == 4 and f"task t3 (PLAN.md:3): {ROUNDS}" in said.stderr
    with pytest.raises(InvalidError) as refused:
        BY_NAME["task_add"].run(inside, "cl", {"task": task("t4", rounds=0)})
    assert str(refused.value) == f"task refused: {ROUNDS}"
    proposals = tmp_path / "answer.md"
    proposals.write_text(f"```json\n{json.dumps([task('t5', rounds=0)])}\n```\n")
    said = run("validate", "--proposals", str(proposals))
    assert said.exit_code != 0 and ROUNDS in said.stdout + said.stderr
    assert queued(inside) == []


def test_control_room_s_own_files_keep_their_fields_and_a_copy_or_an_edit_does_not(
    run: Run, inside: Room
) -> None:
    """A task back from a failed round carries its rounds, sealed: the scan keeps it. The same
    file copied under another id, or with its rounds edited by hand, is refused."""
    mine = written(inside, "queue", task("mine", rounds=1, last_failure="validator exited 1"))
    text = json.loads(mine.read_text())
    drop(inside, "copy.json", {**text, "id": "copy"})
    drop(inside, "edited.json", {**text, "id": "edited", "seal": tasks.seal({**text, "id": "edited"})})
    edited = inside.state_dir("queue") / "edited.json"
    edited.write_text(json.dumps({**json.loads(edited.read_text()), "rounds": 0}))
    assert run("task", "list").exit_code == 0
    assert queued(inside) == ["mine.json"]
    both = "rounds, last_failure, seal"
    why = f"{both}: fields only control-room writes (a task's history is the room's): remove them"
    assert reason(inside, "copy.json") == why and reason(inside, "edited.json") == why


def test_a_task_file_from_before_seals_is_kept_when_the_ledger_has_its_history(
    run: Run, inside: Room
) -> None:
    """Files a room's earlier version wrote carry no seal: one whose id the ledger names is the
    room's own; one it never named was dropped by hand."""
    ok(run("task", "add", "--id", "old", *ADD_ARGS), "queued old  (swarm/queue/old.json)\n")
    path = inside.state_dir("queue") / "old.json"
    before_seals = {k: v for k, v in json.loads(path.read_text()).items() if k != "seal"}
    path.write_text(json.dumps({**before_seals, "rounds": 1}))
    drop(inside, "never.json", {**before_seals, "id": "never"})
    assert run("task", "list").exit_code == 0
    assert queued(inside) == ["old.json"]
    assert reason(inside, "never.json").startswith("created: a field only control-room writes")
