"""Counts in output agree with their noun: `1 run`, `1 line`, `1 attempt`; `2 runs`, ..."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from support import queue

from control_room import errors
from control_room.room.layout import Room

Run = Callable[..., Result]


def test_one_run_one_line_one_attempt(run: Run, inside: Room) -> None:
    assert run("route", "add", "faster", "--title", "Make it faster").exit_code == 0
    assert run("route", "add", "slower", "--title", "Make it slower").exit_code == 0
    queue(inside, "t1", route="faster")
    queue(inside, "t2", route="slower", priority=0)
    queue(inside, "t3", route="slower", priority=0)
    for _ in range(3):
        assert run("cycle").exit_code == errors.PASSED
    rows = {line.split()[0]: line.split()[:3] for line in run("route", "list").stdout.splitlines()}
    assert (rows["route"], rows["faster"], rows["slower"]) == (
        ["route", "verdict", "runs"],
        ["faster", "alive", "1"],
        ["slower", "alive", "2"],
    )  # a column headed `runs`: the cells are counts
    digest = inside.digest.read_text()
    assert "- **faster**: 1 attempt, 1 passed, 0 failed, $0.00" in digest
    assert "- **slower**: 2 attempts, 2 passed, 0 failed, $0.00" in digest


def test_a_ledger_of_one_line(run: Run, inside: Room) -> None:
    assert run("ledger", "verify").stdout == "ledger ok: 1 line from 1 writer, every chain intact\n"
    assert "\nledger    1 line; last:\n" in run("status").stdout
