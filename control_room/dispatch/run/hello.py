"""``control-room adapters --check``: a one-turn hello through each installed adapter, the way a
cycle would run it (the room's CONTROL.md ``adapters:`` setup and the role ``engineer``'s,
its state folder, its environment), against the configured endpoint or the user's own login.

What a person runs before scheduling: it says OK, or the one line that says what is wrong
(not installed, a setting the adapter refuses, the key's variable unset, the CLI's own error:
connection refused, no model, an auth type to select). The run is short (``timeout_s``, 60 s
by default), its files go to a temporary folder, and it is logged (``adapter-check``) with
what it cost, since it may spend a little.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from control_room import adapters, errors, ledger, proc
from control_room.dispatch.queue.resolve import resolve
from control_room.dispatch.run import agent
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task

HELLO = (
    "This is a connection check from control-room, not a task. Do not use any tool. "
    "Reply with the single word OK."
)
BUILT_IN = ("probe", "command")  # run commands, not models: nothing to check


@dataclass
class Check:
    name: str
    ok: bool
    line: str  # one line for a person
    cost_usd: float = 0.0


def check(room: Room, settings: Settings, name: str, *, timeout_s: float = 60.0) -> Check:
    """Say hello through adapter ``name``; never raises for what the check finds."""
    task: Task = {
        "id": f"check-{name}",
        "objective": "connection check",
        "falsifier": "the CLI does not answer",
        "validator": ["true"],
        "max_cost_usd": 0.0,
        "wall_clock_s": timeout_s,
        "kill_condition": "never: a check, not a route",
        "adapter": name,
    }
    try:
        plan = resolve(room, settings, task)
    except errors.ControlRoomError as exc:
        return Check(name, False, str(exc))
    adapter = plan.adapter
    why = adapter.check(plan.setup)
    if why is not None:
        return Check(name, False, f"{plan.setup_where}: adapters.{name}: {why}")
    key = plan.setup.api_key_env
    if key and not os.environ.get(key):
        return Check(
            name,
            False,
            f"{plan.setup_where}: adapters.{name}.api_key_env names {key}, "
            "which is not set in this environment",
        )
    scratch = Path(tempfile.mkdtemp(prefix=f"control-room-check-{name}-"))
    try:
        results = scratch / "results"
        results.mkdir()
        inv, env = agent.prepare(room, settings, plan, task, HELLO, scratch, results)
        started = time.monotonic()
        try:
            res = agent.execute(room, settings, adapter, inv, env, timeout_s)
        except proc.ExecutableNotFound as exc:
            return Check(name, False, f"not installed: {exc}; {adapter.install}")
        outcome = agent.read(adapter, inv, res)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    took = time.monotonic() - started
    cost = outcome.cost_usd or 0.0
    if not outcome.ok or res.timed_out:
        why = outcome.error or f"{name} did not answer within {timeout_s:g}s"
        return Check(name, False, why, cost)
    said = " ".join(outcome.final_message.split())[:60] or "(nothing)"
    model = f" ({plan.model})" if plan.model else ""
    tokens = f", tokens {outcome.input_tokens}/{outcome.output_tokens}" if outcome.input_tokens else ""
    return Check(name, True, f"answered{model} in {took:.1f}s{tokens}: {said}", cost)


def candidates(settings: Settings) -> list[str]:
    """What ``--check`` with no name checks: every adapter whose CLI is on PATH, and every one
    CONTROL.md sets up, built-in ones aside."""
    names = []
    for name in adapters.names():
        if name in BUILT_IN:
            continue
        binary = adapters.get(name).binary
        if name in settings.adapters or (binary and proc.which(binary)):
            names.append(name)
    return names


def log(room: Room, c: Check) -> None:
    ledger.append(
        room.ledger,
        events.ADAPTER_CHECK,
        adapter=c.name,
        outcome="ok" if c.ok else "fail",
        cost_usd=c.cost_usd,
        detail=c.line,
    )
