"""control-room done / approve: what only a person decides, on real files and real cycles."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable

import pytest
from click.testing import Result
from support import TIME, data_lines, events, queue, snapshot, unsealed, where

from control_room import errors
from control_room.ledger.line import parse
from control_room.room import settings as control
from control_room.room.layout import Room

Run = Callable[..., Result]
PY = sys.executable


def last_line(room: Room):  # type: ignore[no-untyped-def]
    entry = parse(data_lines(room.ledger)[-1])
    assert entry is not None
    return entry


# done -----------------------------------------------------------------------------------


@pytest.fixture
def passed(run: Run, inside: Room) -> Room:
    """A room whose task t has passed a real cycle (in swarm/done/, not yet Done)."""
    queue(inside, "t", route="fast")
    assert run("cycle").exit_code == errors.PASSED
    assert where(inside, "t") == ["done"]
    return inside


def test_done_marks_a_passed_task_done(run: Run, passed: Room) -> None:
    before = unsealed(json.loads((passed.state_dir("done") / "t.json").read_text()))
    assert "done_at" not in before  # passing is not Done
    result = run("done", "t", "--by", "alice")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "t marked Done\n", "")
    after = unsealed(json.loads((passed.state_dir("done") / "t.json").read_text()))
    assert re.fullmatch(TIME, after.pop("done_at"))
    assert after.pop("done_by") == "alice"
    assert after == before  # nothing else changed
    assert events(passed.ledger)[-1] == "done"
    assert events(passed.ledger).count("done") == 1
    line = last_line(passed)
    assert (line.task, line.route, line.outcome, line.detail) == ("t", "fast", "done", "marked Done by alice")


def test_done_by_defaults_to_user_at_writer(run: Run, passed: Room) -> None:
    assert run("done", "t").exit_code == 0
    by = json.loads((passed.state_dir("done") / "t.json").read_text())["done_by"]
    assert by.endswith("@tester")  # CONTROL_ROOM_WRITER is "tester" in every test


def test_done_twice_is_a_conflict(run: Run, passed: Room) -> None:
    assert run("done", "t", "--by", "alice").exit_code == 0
    done_at = json.loads((passed.state_dir("done") / "t.json").read_text())["done_at"]
    before = snapshot(passed.root)
    again = run("done", "t", "--by", "bob")
    assert (again.exit_code, again.stdout) == (errors.CONFLICT, "")
    assert again.stderr == f"Error: t was marked Done already, at {done_at} by alice\n"
    assert snapshot(passed.root) == before
    assert events(passed.ledger).count("done") == 1


def test_done_on_a_queued_task_names_its_folder(run: Run, inside: Room) -> None:
    queue(inside, "q")
    before = snapshot(inside.root)
    result = run("done", "q")
    assert (result.exit_code, result.stdout) == (errors.CONFLICT, "")
    assert (
        result.stderr
        == "Error: cannot mark Done q: it is in swarm/queue/, not in swarm/done/ or swarm/to-test/\n"
    )
    assert snapshot(inside.root) == before


def test_done_on_an_unknown_task(run: Run, inside: Room) -> None:
    result = run("done", "nope")
    assert (result.exit_code, result.stdout) == (errors.NOT_FOUND, "")
    assert result.stderr == f"Error: no task nope in {inside.swarm}\n"
    assert events(inside.ledger) == ["init"]


def test_done_refuses_a_path_for_an_id(run: Run, inside: Room) -> None:
    result = run("done", "../x")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == "Error: '../x' is not a task id (ids match [a-z0-9][a-z0-9._-]{0,63})\n"
    assert events(inside.ledger) == ["init"]


# approve --------------------------------------------------------------------------------


def comment_lines(text: str) -> list[str]:
    """Every comment in the file: whole comment lines, and what follows ` #` on other lines."""
    out = []
    for ln in text.splitlines():
        if ln.lstrip().startswith("#"):
            out.append(ln.strip())
        elif " #" in ln:
            out.append("#" + ln.split(" #", 1)[1].rstrip())
    return out


def test_a_gated_task_waits_for_approval_then_runs(run: Run, inside: Room) -> None:
    queue(inside, "g", gate=["gpu"])
    for _ in range(3):
        held = run("cycle")
        assert (held.exit_code, held.stdout) == (
            errors.OK,
            "nothing to do: 1 queued task not ready: g waits for gate gpu: `control-room approve g`\n",
        )  # fmt: skip
    assert where(inside, "g") == ["queue"]
    assert events(inside.ledger).count("gpu-approval-needed") == 1  # logged once, not per cycle
    hold = last_line(inside)
    assert (hold.event, hold.task, hold.outcome) == ("gpu-approval-needed", "g", "held")
    assert hold.detail == "gate gpu needs `control-room approve g`"

    before = inside.control.read_text()
    result = run("approve", "g", "--by", "alice")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "approved g: gpu\n", "")
    after = inside.control.read_text()
    assert comment_lines(after) == comment_lines(before)
    approvals_line = next(ln for ln in after.splitlines() if ln.startswith("approvals:"))
    assert approvals_line.endswith("  # written by `control-room approve`: [{task, gate, by, at}]")
    approvals = control.load(inside).approvals
    assert len(approvals) == 1
    assert {k: approvals[0][k] for k in ("task", "gate", "by")} == {"task": "g", "gate": "gpu", "by": "alice"}
    assert re.fullmatch(TIME, approvals[0]["at"])
    line = last_line(inside)
    assert (line.event, line.task, line.outcome, line.detail) == (
        "approve",
        "g",
        "approved",
        "gate gpu by alice",
    )

    again = run("approve", "g")
    assert (again.exit_code, again.stdout) == (0, "nothing to approve: g's gates are approved already\n")
    assert inside.control.read_text() == after
    assert events(inside.ledger).count("approve") == 1

    ran = run("cycle")
    assert ran.exit_code == errors.PASSED, ran.stdout
    assert ran.stdout.startswith("passed: g (round 1; ")
    assert where(inside, "g") == ["done"]
    assert events(inside.ledger).count("gpu-approval-needed") == 1


def test_approve_keeps_a_persons_comments_in_block_style_approvals(run: Run, inside: Room) -> None:
    """A person wrote approvals in block style, with a comment; approve keeps every comment."""
    text = inside.control.read_text()
    text = re.sub(r"(?m)^approvals: \[\].*\n",
                  "approvals:   # people approve here too\n"
                  "  # agreed with finance on 2026-01-01\n"
                  "  - {task: old, gate: gpu, by: alice, at: '2026-01-01T00:00:00Z'}\n", text)  # fmt: skip
    inside.control.write_text(text)
    assert [a["task"] for a in control.load(inside).approvals] == ["old"]
    queue(inside, "g", gate=["gpu"])
    assert run("approve", "g", "--by", "bob").exit_code == 0
    after = inside.control.read_text()
    assert [a["task"] for a in control.load(inside).approvals] == ["old", "g"]
    assert comment_lines(after) == comment_lines(text)


def test_a_by_with_a_hash_does_not_leak_into_the_approvals_comment(run: Run, inside: Room) -> None:
    before = inside.control.read_text()
    queue(inside, "g1", gate=["gpu"])
    queue(inside, "g2", gate=["gpu"])
    assert run("approve", "g1", "--by", "alice #ops").exit_code == 0
    assert run("approve", "g2", "--by", "bob").exit_code == 0
    after = inside.control.read_text()
    assert [a["by"] for a in control.load(inside).approvals] == ["alice #ops", "bob"]
    approvals_line = next(ln for ln in after.splitlines() if ln.startswith("approvals:"))
    assert approvals_line.endswith("}]  # written by `control-room approve`: [{task, gate, by, at}]")
    # the comment after the value is the person's comment, nothing else: no piece of the
    # first approval (cut at the ` #` inside 'alice #ops') leaked into it
    assert approvals_line.count("task: g1") == 1, approvals_line
    assert approvals_line.count("#") == 2, approvals_line  # the one in 'alice #ops', the comment's
    assert after.replace(approvals_line, "") == before.replace(
        next(ln for ln in before.splitlines() if ln.startswith("approvals:")), ""
    )


def test_approve_refuses_a_task_without_gates(run: Run, inside: Room) -> None:
    queue(inside, "plain")
    before = snapshot(inside.root)
    result = run("approve", "plain")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == "Error: task plain has no gate to approve\n"
    assert snapshot(inside.root) == before


def test_approve_refuses_a_gate_the_task_does_not_have(run: Run, inside: Room) -> None:
    queue(inside, "g", gate=["gpu"])
    before = snapshot(inside.root)
    result = run("approve", "g", "--gate", "merge")
    assert (result.exit_code, result.stdout) == (errors.INVALID, "")
    assert result.stderr == "Error: task g has no gate merge (its gates: gpu)\n"
    assert snapshot(inside.root) == before


def test_approve_an_unknown_task(run: Run, inside: Room) -> None:
    result = run("approve", "nope")
    assert (result.exit_code, result.stderr) == (errors.NOT_FOUND, f"Error: no task nope in {inside.swarm}\n")
