"""Event names are lower-kebab since 0.3.0 (`budget-hold`, `route-held`, `gpu-approval-needed`);
what was written under the old upper-snake names is still read as the same event."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from support import events, queue

from control_room import errors
from control_room.room.layout import Room
from control_room.store import cache
from control_room.timeutil import today

Run = Callable[..., Result]
NOT_READY = "nothing to do: 1 queued task not ready: g waits for gate gpu: `control-room approve g`\n"


def test_a_gate_hold_is_written_lower_kebab(run: Run, inside: Room) -> None:
    queue(inside, "g", gate=["gpu"])
    assert (run("cycle").exit_code, run("cycle").stdout) == (errors.OK, NOT_READY)
    assert events(inside.ledger) == ["init", "gpu-approval-needed"]
    assert "  gpu-approval-needed  g  held  gate gpu needs " in run("ledger", "tail").stdout


def test_a_hold_logged_today_under_its_old_name_is_not_logged_again(run: Run, inside: Room) -> None:
    """The holds a cycle remembers (.cache/holds) from before 0.3.0 carry the old names."""
    queue(inside, "g", gate=["gpu"])
    queue(inside, "b", max_cost_usd=50.0)  # over the $10 daily budget
    cache.save(inside.cache / "holds", {"g": f"GPU_APPROVAL_NEEDED {today()}", "b": f"BUDGET_HOLD {today()}"})
    result = run("cycle")
    assert (result.exit_code, result.stdout) == (
        errors.OK,
        "nothing to do: 2 queued tasks not ready: b waits for the daily budget: $0.00 used or reserved "
        "+ $50.00 > $10.00; g waits for gate gpu: `control-room approve g`\n",
    )  # fmt: skip
    assert events(inside.ledger) == ["init"]  # both were logged today already, by their old names
    cache.save(inside.cache / "holds", {"g": "GPU_APPROVAL_NEEDED 2000-01-01"})  # another day
    assert run("cycle").exit_code == errors.OK
    assert events(inside.ledger) == ["init", "budget-hold", "gpu-approval-needed"]  # b runs first: its name
