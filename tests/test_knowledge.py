"""Knowledge that survives context wipes (SPEC §7): routes, the graveyard, the digest, death
loops and the orchestrator's proposals, on real rooms and real runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support import events
from support import probe_task as task

from control_room import errors
from control_room.dispatch import admission, cycle, index
from control_room.errors import ConflictError, InvalidError
from control_room.knowledge import digest, findings, graveyard, history, routes
from control_room.ledger.line import HEADER
from control_room.room import settings as control
from control_room.room import swarm
from control_room.room.layout import Room

PY = sys.executable


def drop(room: Room, t: dict[str, Any]) -> None:
    (room.state_dir("queue") / f"{t['id']}.json").write_text(json.dumps(t))


def set_gate(room: Room, key: str, value: str) -> None:
    lines = room.control.read_text().splitlines(keepends=True)
    lines = [f"{key}: {value}\n" if ln.startswith(f"{key}:") else ln for ln in lines]
    room.control.write_text("".join(lines))


def test_a_killed_routes_task_is_refused_with_the_tombstone_and_reopen_lets_it_through(room: Room) -> None:
    routes.add(room, "c-ext", "rewrite the hot loop in C")
    drop(room, task("c-1", route="c-ext"))
    assert cycle.cycle(room).code == errors.PASSED
    graveyard.kill(room, "c-ext", "the C extension did not beat the sieve", "the sieve is ruled out", ["c-1"])
    assert routes.get(room, "c-ext")["verdict"] == "killed"
    with pytest.raises(InvalidError) as err:
        admission.add(room, control.load(room), task("c-2", route="c-ext"))
    assert str(err.value).startswith("task refused: route c-ext is killed: see graveyard/c-ext.md (verdict: ")
    drop(room, task("c-3", route="c-ext"))  # by hand: the cycle refuses it
    assert cycle.cycle(room).code == errors.OK
    reason = (room.state_dir("rejected") / "c-3.json.reason").read_text()
    assert "- route c-ext is killed: see graveyard/c-ext.md (verdict: the C extension did not beat" in reason
    graveyard.reopen(room, "c-ext", "the sieve turned out to be wrong for big n")
    tomb = (room.root / "graveyard" / "c-ext.md").read_text()
    assert "## Why it died\n\nthe C extension did not beat the sieve" in tomb
    assert "## Reopened " in tomb and "the sieve turned out to be wrong for big n" in tomb
    admission.add(room, control.load(room), task("c-4", route="c-ext"))
    assert cycle.cycle(room).task_id == "c-4"
    assert [e for e in events(room.ledger) if e.startswith("route-")] == ["route-add", "route-kill", "route-reopen"]
    with pytest.raises(ConflictError):
        graveyard.reopen(room, "c-ext", "again")


def test_a_kill_needs_a_verdict_and_reopen_conditions(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        graveyard.kill(room, "x", "", "never", [])
    assert str(err.value) == "a kill needs both --verdict (why it died) and --reopen-if (what would revive it)"


def test_three_identical_failures_hold_the_route_until_a_person_acts(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    bad = [PY, "-c", "import sys; print('assert 41 == 42'); sys.exit(1)"]
    for n in range(3):
        drop(room, task(f"f-{n}", route="loopy", validator=bad))
        assert cycle.cycle(room).code == errors.FAILED
    gate = control.load(room)
    loops = findings.gather(room, gate)["death_loops"]
    assert [(lp["key"], lp["n"], lp["same"]) for lp in loops] == [("loopy", 3, "error")]
    assert [line[2] for line in loops[0]["lines"]] == ["f-0", "f-1", "f-2"]
    assert events(room.ledger).count("death-loop") == 1
    drop(room, task("f-3", route="loopy"))
    assert cycle.cycle(room).code == errors.OK  # held: fail closed
    assert swarm.locate(room, "f-3")[0] == "queue"
    assert "ROUTE_HELD" in events(room.ledger)
    findings.resume(room, gate, "loopy", "fixed the off-by-one in the validator")
    assert cycle.cycle(room).task_id == "f-3"
    assert findings.gather(room, gate)["death_loops"] == []


def test_the_prompt_carries_the_routes_tombstone_and_history(room: Room) -> None:
    drop(room, task("h-1", route="hist"))
    cycle.cycle(room)
    graveyard.kill(room, "hist", "too slow by 10x", "a 10x faster machine", ["h-1"])
    graveyard.reopen(room, "hist", "we got the faster machine")
    drop(room, task("h-2", route="hist"))
    cycle.cycle(room)
    prompt = (room.swarm / "outbox" / "h-2.md").read_text()
    section = prompt[prompt.index("## This route so far"):prompt.index("## Your task")]
    assert "Tombstone (graveyard/hist.md, state reopened)" in section
    assert "too slow by 10x" in section and "we got the faster machine" in section
    assert "1 attempts (1 passed, 0 failed)" in section


def big_ledger(room: Room, n: int) -> None:
    """``n`` result lines written fast (the digest does not check the chain; verify would)."""
    with open(room.ledger, "a", encoding="utf-8") as f:
        chunk = []
        for i in range(n):
            outcome = "pass" if i % 3 == 0 else "fail"
            failed = "" if outcome == "pass" else f"; failed: validator exited 1: case {i % 50} wrong"
            chunk.append(f"| 2026-01-{1 + i % 28:02d}T00:00:00Z | {i:016x} | bench | result | t-{i % 1000} | "
                         f"route-{i % 40} | probe | {outcome} | 0.001 | round 1; decision: try variant "
                         f"{i} of lever {i % 17}{failed} | - | 000000000000 |\n")
            if len(chunk) == 50_000:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))


@pytest.mark.slow
def test_the_digest_stays_under_its_cap_and_refreshes_incrementally(room: Room) -> None:
    gate = control.load(room)
    digest.refresh(room, gate)
    before = room.ledger.stat().st_size
    big_ledger(room, 1_000_000)
    path, read = digest.refresh(room, gate)
    text = path.read_text()
    assert len(text.encode()) <= gate.digest_max_bytes == 8192
    assert "## Live routes: what each has learned" in text and "route-39" in text
    assert read == room.ledger.stat().st_size - before  # it read the million new lines, once
    (room.cache / "digest").unlink()
    digest.refresh(room, gate)
    assert path.read_text() == text  # deleting the checkpoint only costs a rebuild
    size = room.ledger.stat().st_size
    big_ledger(room, 10)
    _, read = digest.refresh(room, gate)
    assert read == room.ledger.stat().st_size - size  # only the 10 new lines were read
    st, _ = history.state(room)
    assert st["lines"] == 1_000_011  # 1 init line + 1,000,010 results


def test_a_digest_rebuilt_from_scratch_equals_the_incremental_one(room: Room) -> None:
    gate = control.load(room)
    for n in range(4):
        drop(room, task(f"d-{n}", route=f"r{n % 2}",
                        validator=[PY, "-c", f"import sys; sys.exit({n % 2})"]))  # fmt: skip
        cycle.cycle(room)
        digest.refresh(room, gate)  # as the edge of each `control-room cycle` does
    incremental = room.digest.read_text()
    (room.cache / "digest").unlink()
    digest.refresh(room, gate)
    assert room.digest.read_text() == incremental


def test_a_hand_broken_routes_row_is_named_and_cycles_go_on(room: Room) -> None:
    routes.add(room, "good", "a fine route")
    with open(room.routes, "a") as f:
        f.write("| bad row | maybe |\n")
    problems = routes.problems(room)
    line = room.routes.read_text().splitlines().index("| bad row | maybe |") + 1
    assert problems == [f"control-room/ROUTES.md:{line}: 2 cells, the header has 7",
                        f"control-room/ROUTES.md:{line}: 'bad row' is not a route id",
                        f"control-room/ROUTES.md:{line}: verdict 'maybe' is not one of untested, alive, "
                        "promising, killed, merged"]  # fmt: skip
    drop(room, task("g-1", route="good"))
    assert cycle.cycle(room).code == errors.PASSED
    assert routes.get(room, "good")["attempts"] == "1"
    assert "| bad row | maybe |" in room.routes.read_text()


def proposals_command(tmp_path: Path, proposals: list[dict[str, Any]]) -> list[str]:
    script = tmp_path / "plan.py"
    blocks = "".join(f"```json\n{json.dumps(p)}\n```\n" for p in proposals)
    script.write_text(f"print({blocks!r})\n")
    return [PY, str(script)]


def test_an_empty_queue_runs_one_bounded_orchestrator_whose_proposals_are_validated(room: Room, tmp_path: Path) -> None:
    graveyard.kill(room, "dead", "it was tried", "never", [])
    proposals = [task("p-1", route="new"), task("p-2", route="dead"), {"objective": "a vibe"},
                 task("p-3"), task("p-4")]  # fmt: skip
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "max_new_tasks", "2")
    set_gate(room, "orchestrator_command", json.dumps(proposals_command(tmp_path, proposals)))
    result = cycle.cycle(room)
    assert result.code == errors.PASSED and result.task_id.startswith("orchestrate-")
    assert sorted(t.id for t in index.scan(room, "queue")) == ["p-1", "p-3"]
    refused = [line for line in room.ledger.read_text().splitlines() if "| proposal-refused |" in line]
    assert len(refused) == 3
    assert "route dead is killed" in refused[0]
    assert "missing falsifier" in refused[1]
    assert "over max_new_tasks (2)" in refused[2]
    assert cycle.cycle(room).task_id == "p-1"  # the room fed itself, one bounded step at a time


def test_the_ledger_header_is_untouched_by_the_digest(room: Room) -> None:
    digest.refresh(room, control.load(room))
    assert HEADER in room.ledger.read_text()


def test_a_parked_orchestrator_stops_orchestration_until_a_person_acts(room: Room, tmp_path: Path) -> None:
    bad = tmp_path / "plan.py"
    bad.write_text("print('```json\\n{\"objective\": \"a vibe\"}\\n```')\n")
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps([PY, str(bad)]))
    assert cycle.cycle(room).code == errors.FAILED  # only an invalid proposal: round 1
    assert cycle.cycle(room).code == errors.FAILED  # round 2: parked
    (parked,) = [t.id for t in index.scan(room, "parked")]
    assert parked.startswith("orchestrate-")
    assert cycle.cycle(room).code == errors.OK  # no new orchestrator while one is parked
    assert events(room.ledger).count("orchestrate-held") == 1
    assert not [t for t in index.scan(room, "queue")]


def test_an_orchestrator_that_proposes_nothing_passes(room: Room, tmp_path: Path) -> None:
    quiet = tmp_path / "plan.py"
    quiet.write_text("print('nothing is worth the money today')\n")
    set_gate(room, "on_empty_queue", "orchestrate")
    set_gate(room, "orchestrator_command", json.dumps([PY, str(quiet)]))
    assert cycle.cycle(room).code == errors.PASSED


def test_an_unreadable_tombstone_refuses_its_route_only(room: Room) -> None:
    (room.root / "graveyard" / "broken.md").write_text("---\nverdict: [unclosed\n---\nbody\n")
    drop(room, task("on-broken", route="broken", priority=5))
    drop(room, task("elsewhere"))
    assert cycle.cycle(room).task_id == "elsewhere"
    reason = (room.state_dir("rejected") / "on-broken.json.reason").read_text()
    assert "graveyard/broken.md cannot be read (" in reason


def test_killing_a_reopened_route_again_keeps_the_whole_story(room: Room) -> None:
    drop(room, task("k-1", route="twice"))
    cycle.cycle(room)
    graveyard.kill(room, "twice", "first verdict", "first condition", ["k-1"])
    graveyard.reopen(room, "twice", "first condition met")
    drop(room, task("k-2", route="twice"))
    cycle.cycle(room)
    graveyard.kill(room, "twice", "second verdict", "second condition", ["k-2"])
    meta, body = graveyard.read(room, "twice")
    assert (meta["state"], meta["verdict"], meta["reopen_if"], meta["evidence"]) == (
        "killed", "second verdict", "second condition", ["k-1", "k-2"])
    assert "reopened_at" not in meta
    assert "first verdict" in body and "## Killed again " in body and "Reopen only if: second condition" in body


def test_three_different_probe_failures_are_not_a_death_loop(room: Room) -> None:
    set_gate(room, "max_rounds", "1")
    for n in range(3):  # the probe's DECISION is always "the command exited 1": not a decision
        drop(room, task(f"v-{n}", route="varied",
                        validator=[PY, "-c", f"import sys; print('case {chr(97 + n)}'); sys.exit(1)"]))  # fmt: skip
        cycle.cycle(room)
    assert findings.gather(room, control.load(room))["death_loops"] == []
