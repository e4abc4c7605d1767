"""dispatch.queue.cooling: a task's fallback chain, and the first adapter of it that is free."""

from __future__ import annotations

import time

from support import set_gate, task

from control_room.dispatch.queue import cooling
from control_room.dispatch.queue.ready import Readiness
from control_room.room import cooldowns, settings
from control_room.room.layout import Room


def chain(room: Room, **fields: object) -> list[cooling.Link]:
    return cooling.chain(room, settings.load(room), task("t1", **fields))


def test_the_chain_is_its_own_adapter_then_each_fallback_with_the_model_its_setup_names(room: Room) -> None:
    set_gate(room, "adapters", "{codex: {model: gpt-local}}")
    set_gate(room, "default_model", "opus")
    assert chain(room, adapter="claude") == [("claude", "opus")]
    assert chain(room, adapter="claude", model="sonnet", fallback=["codex", "gemini", "claude"]) == [
        ("claude", "sonnet"), ("codex", "gpt-local"), ("gemini", None)]  # fmt: skip


def test_a_roles_fallback_is_taken_when_the_task_names_none(room: Room) -> None:
    role = room.root / "agents" / "engineer.md"
    role.write_text("---\nadapter: claude\nfallback: [gemini]\n---\nYou build.\n")
    assert chain(room) == [("claude", None), ("gemini", None)]
    assert chain(room, fallback=["codex"]) == [("claude", None), ("codex", None)]


def test_readiness_waits_only_when_every_adapter_of_the_chain_cools(room: Room) -> None:
    now = time.time()
    cooldowns.record(room, "claude", None, "rate-limit", "429", now + 900, now=now)
    r = Readiness(room, settings.load(room), spent=0.0, held={})
    alone = r.why("t1", task("t1", adapter="claude"))
    assert alone is not None and alone.kind == "cooling"
    assert alone.why.startswith("waits: claude cools down until ")
    assert r.why("t1", task("t1", adapter="claude", fallback=["codex"])) is None
    assert r.runs_on(task("t1", adapter="claude", fallback=["codex"])) == ("codex", None)
    cooldowns.record(room, "codex", None, "quota", "insufficient_quota", None, now=now)
    r = Readiness(room, settings.load(room), spent=0.0, held={})
    both = r.why("t1", task("t1", adapter="claude", fallback=["codex"]))
    assert both is not None and both.why.endswith("; so do its fallbacks codex")
    assert r.why("t1", task("t1", adapter="gemini")) is None
