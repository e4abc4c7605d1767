"""dispatch.review.independence: where a reviewer runs against where the reviewed work ran, by
adapter and model, and the warning when they are the same."""

from __future__ import annotations

import json

from support import entries, task

from control_room.dispatch.review import independence
from control_room.room import results
from control_room.room.layout import Room
from control_room.room.settings import Settings


def ran(room: Room, tid: str, **meta: object) -> None:
    folder = results.folder(room, tid)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").write_text(json.dumps(meta))


def test_runs_on_is_the_tasks_own_then_its_roles_then_control_mds_and_default(room: Room) -> None:
    s = Settings(default_adapter="codex", default_model=None)
    assert independence.runs_on(room, s, task("r", role="reviewer")) == ("codex", "default")
    assert independence.runs_on(room, Settings(default_model="m9"), task("r")) == ("probe", "m9")
    assert independence.runs_on(room, s, task("r", adapter="claude", model="opus")) == ("claude", "opus")
    assert independence.runs_on(room, s, task("r", adapter="nosuch")) is None  # another check's


def test_ran_on_reads_the_last_runs_meta(room: Room) -> None:
    assert independence.ran_on(room, "t1") is None
    ran(room, "t1", adapter="codex", model=None)
    assert independence.ran_on(room, "t1") == ("codex", "default")


def test_an_arbiter_on_the_works_adapter_and_model_is_warned_of(room: Room) -> None:
    ran(room, "t1", adapter="probe", model="m1")
    arbiter = task("arbitrate-t1", role="arbiter", arbitrates="t1", lens="arbiter", model="m1")
    said = independence.warn_if_correlated(room, Settings(), arbiter, "t1")
    assert said == (
        "arbitrate-t1 runs on probe, model m1, as the work of t1 did: not an independent review; "
        "give the lens another adapter or model (agents/lenses/arbiter.md)"
    )
    assert [(e.task, e.detail) for e in entries(room, "warning")] == [("arbitrate-t1", said)]
    other = task("arbitrate-t1", role="arbiter", arbitrates="t1", lens="arbiter", model="m2")
    assert independence.warn_if_correlated(room, Settings(), other, "t1") is None
    assert len(entries(room, "warning")) == 1
