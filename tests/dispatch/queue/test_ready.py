"""dispatch.queue.ready: whether a queued task may run now and, if not, why; in order."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import git, set_gate, task

from control_room import ledger
from control_room.dispatch.queue import ready as ready_mod
from control_room.dispatch.queue.ready import Readiness, folded_meanwhile, readiness
from control_room.dispatch.worktrees import worktree
from control_room.ledger import events, follow
from control_room.room import settings
from control_room.room.layout import Room


def put(room: Room, state: str, task_id: str, **fields: Any) -> None:
    (room.state_dir(state) / f"{task_id}.json").write_text(json.dumps(task(task_id, **fields)))


def ready(room: Room, *, spent: float = 0.0, held: dict[str, Any] | None = None) -> Readiness:
    return Readiness(room, settings.load(room), spent=spent, held=held or {})


def why(r: Readiness, task_id: str = "t1", **fields: Any) -> tuple[str, str] | None:
    wait = r.why(task_id, task(task_id, **fields))
    return None if wait is None else (wait.kind, wait.why)


def test_a_task_with_nothing_in_its_way_is_ready(room: Room) -> None:
    assert why(ready(room)) is None


def test_deps_name_where_each_dep_is(room: Room) -> None:
    put(room, "done", "d")
    put(room, "queue", "q")
    put(room, "parked", "p")
    r = ready(room)
    assert why(r, deps=["d"]) is None
    assert why(r, deps=["d", "q"]) == ("dep", "waits for dep q (queue)")
    assert why(r, deps=["q", "p"]) == ("dep", "waits for deps q (queue), p (parked)")


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (None, "deps names gone, which is not a task in any swarm folder: it could never be ready"),
        ("rejected", "deps names gone, which is in swarm/rejected/: it could never be ready"),
    ],
)
def test_a_dep_that_can_never_get_done_refuses_the_task(room: Room, where: str | None, expected: str) -> None:
    put(room, "queue", "q")
    if where:
        put(room, where, "gone")
    r = ready(room)
    assert why(r, deps=["q", "gone"]) == ("refused", expected)
    assert r.why("t1", task("t1", deps=["gone"])).refused  # type: ignore[union-attr]


def test_a_killed_route_refuses_before_anything_else(room: Room) -> None:
    (room.root / "graveyard" / "slow.md").write_text(
        "---\nstate: killed\nverdict: no gain\nreopen_if: never\n---\n"
    )
    assert why(ready(room), route="slow", deps=["nowhere"], gate=["gpu"]) == (
        "refused",
        "route slow is killed: see graveyard/slow.md (verdict: no gain; reopen if: never)",
    )


def test_paths_name_the_running_task_that_owns_them(room: Room) -> None:
    put(room, "running", "busy", owns=["src/parse"])
    r = ready(room)
    assert why(r, owns=["src/parse/fast.py"]) == (
        "paths",
        "waits for running task busy, which owns src/parse",
    )
    assert why(r, owns=["src"]) == ("paths", "waits for running task busy, which owns src/parse")
    assert why(r, owns=["src/parser"]) is None
    assert why(r, owns=["docs"]) is None
    # the same path spelt another way, and the whole tree, overlap too
    assert why(r, owns=["./src/parse/x.py"]) == ("paths", "waits for running task busy, which owns src/parse")
    assert why(r, owns=["src//parse/"]) == ("paths", "waits for running task busy, which owns src/parse")
    assert why(r, owns=["."]) == ("paths", "waits for running task busy, which owns src/parse")


def test_a_death_loop_holds_its_route_or_the_task_itself(room: Room) -> None:
    loops = {"memo": {"n": 3}, "task:t2": {"n": 4}}
    r = ready(room, held=loops)
    wait = r.why("t1", task("t1", route="memo"))
    assert wait is not None and (wait.kind, wait.hold) == ("held", events.ROUTE_HELD)
    assert wait.detail == (
        "memo is in a death loop (3 identical failures); `control-room route resume memo --because ...` "
        "to release it"
    )
    assert wait.why == "waits for `control-room route resume memo`: a death loop (3 identical failures)"
    assert why(r, "t2") == (
        "held",
        "waits for `control-room route resume task:t2`: a death loop (4 identical failures)",
    )
    assert why(r, "t3") is None


def test_gates_wait_for_an_approval(room: Room) -> None:
    set_gate(room, "approvals", "[{task: t1, gate: gpu, by: alice, at: x}]")
    r = ready(room)
    assert why(r, gate=["gpu"]) is None
    wait = r.why("t1", task("t1", gate=["gpu", "submit"]))
    assert wait is not None
    assert (wait.kind, wait.why) == ("gate", "waits for gate submit: `control-room approve t1`")
    assert wait.hold is not None and wait.hold.name == events.approval_needed("submit").name
    assert wait.detail == "gate submit needs `control-room approve t1`"
    assert why(r, "t2", gate=["gpu", "submit"]) == (
        "gate",
        "waits for gates gpu, submit: `control-room approve t2`",
    )


def test_the_budget_counts_what_running_tasks_may_still_spend(room: Room) -> None:
    put(room, "running", "busy", max_cost_usd=2)
    r = ready(room, spent=7.5)  # + 2 reserved = 9.5 of the $10 daily budget
    assert why(r, max_cost_usd=0.5) is None
    wait = r.why("t1", task("t1", max_cost_usd=1))
    assert wait is not None and (wait.kind, wait.hold) == ("budget", events.BUDGET_HOLD)
    assert wait.why == "waits for the daily budget: $9.50 used or reserved + $1.00 > $10.00"
    assert wait.detail == (
        "$9.50 spent or reserved by running tasks today; this task may cost $1.00 more, over the "
        "$10.00 daily budget"
    )


def test_a_worktree_a_person_left_mid_rebase_makes_its_tasks_wait(room: Room, repo: Path) -> None:
    tree = worktree.workdir(room, settings.load(room), {"id": "t0", "route": "r1"})
    assert why(ready(room), route="r1") is None
    rebase = Path(git(tree, "rev-parse", "--absolute-git-dir")) / "rebase-merge"
    rebase.mkdir()
    wait = (
        "worktree",
        "waits for its worktree route-r1: in the middle of a rebase; finish or abort it there",
    )
    assert why(ready(room), route="r1") == wait
    assert why(ready(room), "review-x", reviews="t9", route="r1") == wait  # it serves the route's branch
    assert why(ready(room), "t2") is None  # no route: task/t2, a worktree of its own, not made yet
    set_gate(room, "repo", "")
    assert why(ready(room), route="r1") is None  # without a repo no worktree is used


def test_the_first_reason_in_order_is_given(room: Room) -> None:
    put(room, "queue", "q")
    put(room, "running", "busy", owns=["src"], max_cost_usd=2)
    r = ready(room, spent=100, held={"r1": {"n": 3}})
    kinds = []
    fields: dict[str, Any] = {"deps": ["q"], "owns": ["src"], "route": "r1", "gate": ["gpu"]}
    for drop in ("deps", "owns", "route", "gate"):
        kinds.append(why(r, **fields)[0])  # type: ignore[index]
        fields.pop(drop)
    kinds.append(why(r, **fields)[0])  # type: ignore[index]
    assert kinds == ["dep", "paths", "held", "gate", "budget"]


def test_readiness_reads_spend_and_loops_from_the_caches(room: Room) -> None:
    r = readiness(room, settings.load(room))
    assert (r.spend, r.held, r.busy) == (0.0, {}, [])


def test_a_daily_token_budget_holds_every_task_once_it_is_used(room: Room) -> None:
    from control_room import ledger  # the writer: only this test writes result lines
    from control_room.ledger.result import RunResult

    set_gate(room, "daily_budget_tokens", "1000")
    assert why(ready(room)) is None
    run = RunResult(input_tokens=700, output_tokens=300, model="m")
    ledger.append(room.ledger, events.RESULT, task="t0", outcome="pass", detail=run.detail())
    assert why(ready(room)) == (
        "budget",
        "waits for the daily token budget: 1,000 tokens used today of 1,000",
    )
    set_gate(room, "daily_budget_tokens", "0")
    assert why(ready(room)) is None


def _spend(room: Room, lines: int) -> None:
    """``lines`` result lines of today, each spending $0.25."""
    for k in range(lines):
        ledger.append(room.ledger, events.RESULT, task=f"t{k}", outcome="pass", cost_usd=0.25)


def _pids_of(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fail_in_child: bool = False) -> Path:
    """Record in a file the pid of every process that folds the spend (``ready.spent_on``)."""
    seen, parent, real = tmp_path / "pids", os.getpid(), ready_mod.spent_on

    def spent_on(*args: Any) -> float:
        with seen.open("a") as f:
            f.write(f"{os.getpid()}\n")
        if fail_in_child and os.getpid() != parent:
            raise RuntimeError("a fold that breaks")
        return real(*args)

    monkeypatch.setattr(ready_mod, "spent_on", spent_on)
    return seen


def test_a_first_run_over_a_big_ledger_folds_its_states_in_a_child_while_the_queue_is_scanned(
    room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _spend(room, 40)
    monkeypatch.setattr(follow, "SMALL", 2000)  # the ledger is "big": more than that many bytes
    seen = _pids_of(monkeypatch, tmp_path)
    with folded_meanwhile(room, settings.load(room)):
        pass  # the queue's first scan, in a cycle
    folders = seen.read_text().split()
    assert len(folders) == 1 and int(folders[0]) != os.getpid()  # a child folded, and was reaped
    assert (room.cache / "ledger-summary").exists()
    assert readiness(room, settings.load(room)).spend == 10.0  # from the child's cache: the same sum
    with folded_meanwhile(room, settings.load(room)):  # cached now: no child
        pass
    assert len(seen.read_text().split()) == 2


def test_nothing_is_forked_for_a_small_ledger(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    _spend(room, 3)

    def fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", fork)
    with folded_meanwhile(room, settings.load(room)):
        pass
    assert readiness(room, settings.load(room)).spend == 0.75


def test_a_child_whose_fold_fails_costs_the_parent_nothing_but_the_fold(
    room: Room, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _spend(room, 40)
    monkeypatch.setattr(follow, "SMALL", 2000)
    seen = _pids_of(monkeypatch, tmp_path, fail_in_child=True)
    with folded_meanwhile(room, settings.load(room)):
        pass
    assert not (room.cache / "ledger-summary").exists()  # the child cached nothing
    assert readiness(room, settings.load(room)).spend == 10.0  # the parent folds it itself
    assert [int(p) == os.getpid() for p in seen.read_text().split()] == [False, True]
