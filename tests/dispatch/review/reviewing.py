"""What the review tests share: lenses, tasks put in a state, reports, verdicts, waiting tasks."""

from __future__ import annotations

from typing import Any

from support import entries, task

from control_room.dispatch.round import report
from control_room.room import results, swarm
from control_room.room.layout import Room

TIDY = {"created": "2024-01-01T00:00:00Z"}


def lens(room: Room, name: str, sees: str = "[diff]", *, adapter: str = "", model: str = "") -> None:
    (room.root / "agents" / "lenses" / f"{name}.md").write_text(
        f"---\nsees: {sees}\nadapter: {adapter}\nmodel: {model}\nmax_cost_usd: 0.1\nwall_clock_s: 60\n---\n"
        f"# Lens: {name}\n"
    )


def put(room: Room, state: str, tid: str, **fields: Any) -> dict[str, Any]:
    t = {**task(tid, **fields), **TIDY}
    swarm.task_file(room, state, tid).write_text(swarm.dumps(t))
    return t


def rep(decision: str, why: str = "because", confirmed: str = "") -> report.Report:
    item = f"- CONFIRMED: {confirmed}" if confirmed else "- INFERRED: nothing looks wrong"
    return report.validate(
        f"DECISION: {decision}\nWHY: {why}\nEVIDENCE:\n{item}\nMISSING: none\n"
        "NEXT COMMAND: control-room status\nSTOP RULE: stop when the verdict is in\n"
    )


def verdict(
    room: Room, rid: str, target: str, lens_name: str, decision: str, why: str, confirmed: str = ""
) -> None:
    """A review of ``target`` done with its verdict, and its report in its results folder."""
    put(room, "done", rid, reviews=target, lens=lens_name, verdict=decision, route="r1")
    folder = results.folder(room, rid)
    folder.mkdir(parents=True, exist_ok=True)
    item = f"- CONFIRMED: {confirmed}" if confirmed else "- INFERRED: nothing"
    (folder / "report.md").write_text(f"DECISION: {decision}\nWHY: {why}\nEVIDENCE:\n{item}\n")


def waiting(room: Room, *reviews: str, **fields: Any) -> dict[str, Any]:
    """t1 (route r1) passed and waits for these reviews."""
    return put(room, "passed", "t1", route="r1", review_tasks=list(reviews), **fields)


def arbitrated(room: Room) -> dict[str, Any]:
    """t1 waits for its arbiter: A is review-b-t1 (rejects), B is review-a-t1 (accepts)."""
    waiting(room, "review-a-t1", "review-b-t1", arbitrations=1)
    verdict(room, "review-a-t1", "t1", "style", "accept", "fine")
    verdict(room, "review-b-t1", "t1", "safety", "reject", "the safety lens says no", "b.txt holds a key")
    sides, meaning = {"A": ["review-b-t1"], "B": ["review-a-t1"]}, {"A": "reject", "B": "accept"}
    return put(room, "done", "arbitrate-t1", arbitrates="t1", lens="arbiter", route="r1", sides=sides,
               meaning=meaning)  # fmt: skip


def warned(room: Room) -> list[tuple[str, str]]:
    """The warnings about a task (not the one about the base branch that making a worktree set)."""
    return [(e.task, e.detail) for e in entries(room, "warning") if e.task]
