"""doctor's `reviewers` check: each lens in use on another adapter or model than the executing roles."""

from __future__ import annotations

from support import set_gate, task

from control_room.dispatch.doctor import checks, reviewers
from control_room.room import swarm
from control_room.room.layout import Room

ROLES = "analyst, dissector, engineer, orchestrator, scout"


def lines(room: Room) -> list[str]:
    return [f.line() for f in reviewers.reviewers(checks.context(room))]


def lens(room: Room, name: str, adapter: str = "", model: str = "") -> None:
    (room.root / "agents" / "lenses" / f"{name}.md").write_text(
        f"---\nsees: [diff]\nadapter: {adapter}\nmodel: {model}\n---\n# Lens: {name}\n"
    )


def test_no_review_in_use_is_ok(room: Room) -> None:
    assert lines(room) == ["OK   reviewers  no lens reviews this room's tasks"]


def test_a_lens_in_use_where_the_roles_run_warns_and_so_does_the_arbiter(room: Room) -> None:
    set_gate(room, "review", "[security]")
    assert lines(room) == [
        f"WARN reviewers  lens {name} runs on probe, model default, where the work it reviews runs (role "
        f"{ROLES}): its reviews are not independent; set adapter and model in agents/lenses/{name}.md"
        for name in ("arbiter", "security")
    ]


def test_lenses_on_other_models_are_ok_and_a_tasks_own_review_counts(room: Room) -> None:
    set_gate(room, "review", "{r1: [security]}")
    lens(room, "security", model="m-sec")
    lens(room, "arbiter", adapter="codex")
    lens(room, "claims", model="m-claims")
    swarm.task_file(room, "queue", "t1").write_text(swarm.dumps(task("t1", review=["claims"])))
    assert lines(room) == ["OK   reviewers  3 lenses, each on another adapter or model than the work"]
    (room.root / "agents" / "scout.md").write_text("---\nrole: scout\nmodel: m-claims\n---\n# Role: scout\n")
    assert lines(room) == [
        "WARN reviewers  lens claims runs on probe, model m-claims, where the work it reviews runs (role "
        "scout): its reviews are not independent; set adapter and model in agents/lenses/claims.md"
    ]
