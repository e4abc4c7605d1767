"""One cycle (SPEC §4), step by step: STOP, slot, recover, pick, claim; then ``runner`` runs it.

Every step that changes something writes a ledger line. Nothing is ever lost: a task is in
exactly one swarm folder at any time, and a cycle that dies leaves a claim the next one recovers.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from control_room import errors, ledger
from control_room.dispatch import claims, index
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.timeutil import now_iso, today


@dataclass
class CycleResult:
    code: int  # an exit code from control_room.errors
    message: str  # one line for the person or the log
    task_id: str | None = None


@dataclass
class Pick:
    task: dict[str, Any]
    adapter_name: str
    role_settings: dict[str, Any]


def cycle(room: Room) -> CycleResult:
    # 1. STOP: the dumbest possible brake, before any parsing or locking.
    if room.stopped():
        return CycleResult(errors.STOPPED, f"stopped: {room.stop} exists; nothing ran")
    from control_room.room import settings as control

    gate = control.load(room)  # a gate that cannot be read fails closed
    # 2. A free slot, held until this process ends.
    slot = claims.take_slot(room, int(gate["max_parallel"]))
    if slot is None:
        n = gate["max_parallel"]
        taken = "the only slot is" if n == 1 else f"all {n} slots are"
        return CycleResult(errors.BUSY, f"busy: {taken} taken; nothing changed")
    number, fd = slot
    try:
        with claims.claim_lock(room):
            recover(room, gate, mine=number)
            picked = pick(room, gate)
            if (
                isinstance(picked, CycleResult)
                and picked.code == errors.OK
                and gate["on_empty_queue"] == "orchestrate"
            ):
                if _orchestrate(room, gate):
                    picked = pick(room, gate)
            if isinstance(picked, CycleResult):
                return picked
            claim(room, gate, picked, number)
        from control_room.dispatch.runner import run_claimed

        try:
            return run_claimed(room, gate, picked, number)
        except errors.ControlRoomError as exc:
            _unclaim(room, picked.task, str(exc))
            raise
    finally:
        os.close(fd)


ORCHESTRATE_ROUTE = "orchestrate"  # so repeated identical failures make a death loop


def _orchestrate(room: Room, gate: dict[str, Any]) -> bool:
    """Queue one bounded orchestrator task (CONTROL.md caps), unless one is queued or running."""
    from control_room.dispatch import schedule

    for state in ("queue", "running", "parked"):
        if any(n.startswith("orchestrate-") for n in os.listdir(room.state_dir(state))):
            if state == "parked":  # its kill condition: a person looks before the next one
                _Holds(room).log(
                    "orchestrate",
                    {"route": ORCHESTRATE_ROUTE},
                    "orchestrate-held",
                    "an orchestrator task is parked: retry or cancel it to orchestrate again",
                )
            return False
    from control_room.knowledge import digest

    if ORCHESTRATE_ROUTE in digest.held(room, gate):
        return False
    task_id = f"orchestrate-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{os.urandom(2).hex()}"
    answer = room.swarm / "results" / task_id / "answer.md"  # where the runner keeps what it said
    task: dict[str, Any] = {
        "id": task_id,
        "role": "orchestrator",
        "priority": -1,
        "objective": "The queue has no ready task. Read the room (CURRENT_CONTEXT, DIGEST, ROUTES, the "
        "graveyard, intelligence/) and propose the next bounded tasks as ```json blocks, "
        "or propose nothing and say why.",
        "falsifier": "It proposes tasks that are not valid: the room learns nothing from this run.",
        "validator": [
            *schedule.command_argv(),
            "--room",
            str(room.root),
            "validate",
            "--proposals",
            str(answer),
        ],
        "max_cost_usd": gate["orchestrator_max_cost_usd"],
        "wall_clock_s": gate["orchestrator_wall_clock_s"],
        "kill_condition": "Two orchestrator runs in a row propose only invalid tasks: a person must re-plan.",
        "route": ORCHESTRATE_ROUTE,
    }
    if gate.get("orchestrator_adapter"):
        task["adapter"] = gate["orchestrator_adapter"]
    if gate.get("orchestrator_command"):
        task["command"] = gate["orchestrator_command"]
    try:
        swarm.add(room, task, source="on_empty_queue: orchestrate")
    except errors.ControlRoomError as exc:
        _Holds(room).log("orchestrate", {"route": ORCHESTRATE_ROUTE}, "orchestrate-refused", str(exc))
        return False
    return True


def _unclaim(room: Room, task: dict[str, Any], why: str) -> None:
    """A room problem (not the task's) stopped the run: the task goes back, no round counted."""
    task_id = task["id"]
    if swarm.task_file(room, "running", task_id).exists():
        swarm.move(room, task_id, "running", "queue")
        claims.release(room, task_id)
        ledger.append(
            room.ledger,
            "requeue",
            task=task_id,
            route=task.get("route", ""),
            outcome="queued",
            detail=f"not run: {why}",
        )


# 3a. Recover what dead cycles left in swarm/running/.
def recover(room: Room, gate: dict[str, Any], *, mine: int | None) -> list[str]:
    from control_room.dispatch.runner import fail_round

    recovered = []
    for task_id in claims.running_ids(room):
        info = claims.read_claim(room, task_id)
        why = claims.why_dead(room, info, float(gate["grace_s"]), mine=mine)
        if why is None:
            continue
        claims.kill_agent(info, task_id)
        path = swarm.task_file(room, "running", task_id)
        task, problems = swarm.read_task(path)
        if problems:
            _reject_running(room, task_id, problems)
            continue
        ledger.append(
            room.ledger,
            "recover",
            task=task_id,
            route=task.get("route", ""),
            outcome="recovered",
            detail=f"claim is dead: {why}",
        )
        fail_round(room, gate, task, f"the cycle running it died ({why})", src="running")
        recovered.append(task_id)
    for name in os.listdir(room.state_dir("running")):
        if name.endswith(".claim") and not (room.state_dir("running") / f"{name[:-6]}.json").exists():
            os.unlink(room.state_dir("running") / name)  # a claim left after its task moved on
    return recovered


def _reject_running(room: Room, task_id: str, problems: list[str]) -> None:
    swarm.reject(room, f"{task_id}.json", problems, task_id=task_id, state="running")
    claims.release(room, task_id)


# 3b. Pick the next ready task.
def pick(room: Room, gate: dict[str, Any]) -> Pick | CycleResult:
    from control_room.ledger.stats import summary

    spend = summary(room.ledger, room.cache / "ledger-summary")["spend_by_day"].get(today(), 0.0)
    ready = _Readiness(room, gate, spend)
    waiting = rejected = seen = 0
    missing: list[str] = []
    for item in index.run_order(room):
        seen += 1
        why = ready.refused(item.summary)
        if why is not None:
            swarm.reject(room, item.name, [why], task_id=item.id)
            rejected += 1
            continue
        if ready.blocked(item.id, item.summary):
            waiting += 1
            continue
        chosen = _admit(room, gate, item, ready)
        if isinstance(chosen, Pick):
            ready.holds.save()
            return chosen
        if chosen == "rejected":
            rejected += 1
        elif chosen.startswith("missing:"):
            missing.append(f"{item.id} ({chosen[8:]})")
        else:
            waiting += 1
    ready.holds.save()
    if missing:
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter unavailable for {len(missing)} ready "
            f"task{'s, which stay' if len(missing) != 1 else ', which stays'} queued: {'; '.join(missing)}",
        )
    if not seen:
        return CycleResult(errors.OK, "nothing to do: the queue is empty")
    parts = []
    if waiting:
        parts.append(
            f"{waiting} queued task{'s' if waiting != 1 else ''} not ready "
            "(deps, paths, gates, budget or a held route)"
        )
    if rejected:
        parts.append(f"{rejected} rejected (see swarm/rejected/)")
    return CycleResult(errors.OK, "nothing to do: " + "; ".join(parts))


class _Readiness:
    """Whether a queued task may run now: deps done, no path overlap with running tasks,
    gates approved, budget left. A hold by a gate or the budget is logged once a day."""

    def __init__(self, room: Room, gate: dict[str, Any], spend: float) -> None:
        self.room, self.gate, self.spend = room, gate, spend
        self.busy_paths, reserved = _running_owns(room)
        self.spend += reserved  # what running tasks may still spend counts as spent
        self.holds = _Holds(room)
        from control_room.knowledge import digest

        self.held = digest.held(room, gate)  # death loops: fail closed until a person acts
        self.dead: dict[str, str | None] = {}  # route -> why its tasks are refused (graveyard)

    def refused(self, s: dict[str, Any]) -> str | None:
        """Why a task is refused outright: its route is in the graveyard."""
        from control_room.knowledge import graveyard

        route = s.get("route") or ""
        if route and route not in self.dead:
            self.dead[route] = graveyard.refusal(self.room, route)
        return self.dead.get(route) if route else None

    def blocked(self, task_id: str, s: dict[str, Any]) -> bool:
        room, gate = self.room, self.gate
        if not all(swarm.task_file(room, "done", d).exists() for d in s.get("deps", [])):
            return True
        if _overlaps(s.get("owns", []), self.busy_paths):
            return True
        loop = self.held.get(s.get("route") or f"task:{task_id}")
        if loop is not None:
            key = s.get("route") or f"task:{task_id}"
            self.holds.log(
                task_id,
                s,
                "ROUTE_HELD",
                f"{key} is in a death loop ({loop['n']} identical "
                f"failures); `control-room route resume {key} --because ...` to release it",
            )
            return True
        missing_gates = [g for g in s.get("gate", []) if not _approved(gate, task_id, g)]
        if missing_gates:
            self.holds.log(
                task_id,
                s,
                f"{missing_gates[0].upper()}_APPROVAL_NEEDED",
                f"gate {', '.join(missing_gates)} needs `control-room approve {task_id}`",
            )
            return True
        cost = float(s.get("max_cost_usd", 0))
        if self.spend + cost > float(gate["daily_budget_usd"]):
            self.holds.log(
                task_id,
                s,
                "BUDGET_HOLD",
                f"${self.spend:.2f} spent or reserved by running "
                f"tasks today; this task may cost ${cost:.2f} more, over the "
                f"${float(gate['daily_budget_usd']):.2f} daily budget",
            )
            return True
        return False


def _admit(room: Room, gate: dict[str, Any], item: index.Listed, ready: _Readiness) -> Pick | str:
    """Read the candidate in full and check what the summary cannot. Returns the Pick, or why
    not ("rejected", "waiting", "missing:<adapter>: <what>") so the next one is tried."""
    from control_room import adapters, proc
    from control_room.dispatch import prompt

    path = swarm.task_file(room, "queue", item.id)
    task, problems = swarm.read_queued(room, path)
    if not problems and (why := ready.refused(task)) is not None:
        problems = [why]  # edited since the index saw it: now on a killed route
    if not problems and ready.blocked(item.id, index.summarize(task)):
        return "waiting"  # edited since the index saw it: no longer ready
    if not problems:
        try:
            settings, _ = prompt.role(room, task.get("role") or "engineer")
            name = task.get("adapter") or settings.get("adapter") or gate["default_adapter"]
            adapter = adapters.get(str(name))
            inv = adapters.Invocation(task, "", path, room.root, settings=prompt.settings(gate, settings))
            exe = adapter.executable(inv)
        except errors.ControlRoomError as exc:
            problems = [str(exc)]
    if not problems and task.get("extra_args") and not gate["allow_extra_args"]:
        problems = ["extra_args given but CONTROL.md allow_extra_args is false"]
    if not problems and task["max_cost_usd"] > gate["max_task_cost_usd"]:
        problems = [
            f"max_cost_usd {task['max_cost_usd']} is above CONTROL.md max_task_cost_usd "
            f"{gate['max_task_cost_usd']}"
        ]
    if problems:
        swarm.reject(room, path.name, problems, task_id=item.id)
        return "rejected"
    from control_room.dispatch.runner import agent_env

    if exe is None or proc.which(exe, agent_env(room, gate, task)) is None:
        ready.holds.log(
            item.id,
            item.summary,
            "adapter-missing",
            f"{adapter.name}: {exe} not found on PATH; {adapter.install}",
        )
        return f"missing:{adapter.name}: {exe} not found on PATH"
    return Pick(task, adapter.name, settings)


def _running_owns(room: Room) -> tuple[list[str], float]:
    """(paths owned by running tasks, what they may still spend)."""
    paths: list[str] = []
    reserved = 0.0
    for task_id in claims.running_ids(room):
        task, _ = swarm.read_task(swarm.task_file(room, "running", task_id))
        paths += task.get("owns", [])
        reserved += float(task.get("max_cost_usd", 0))
    return paths, reserved


def _overlaps(mine: list[str], theirs: list[str]) -> bool:
    def norm(p: str) -> str:
        return p.strip("/").rstrip("/") + "/"

    return any(norm(a).startswith(norm(b)) or norm(b).startswith(norm(a)) for a in mine for b in theirs)


def _approved(gate: dict[str, Any], task_id: str, name: str) -> bool:
    return any(
        isinstance(a, dict) and a.get("task") == task_id and a.get("gate") == name
        for a in gate.get("approvals") or []
    )


class _Holds:
    """Log a held task once per reason and day (remembered in a disposable cache)."""

    def __init__(self, room: Room) -> None:
        from control_room.store import cache

        self.room, self.file = room, room.cache / "holds"
        seen = cache.load(self.file)
        self.seen: dict[str, str] = seen if isinstance(seen, dict) else {}
        self.changed = False

    def log(self, task_id: str, s: dict[str, Any], event: str, detail: str) -> None:
        key = f"{event} {today()}"
        if self.seen.get(task_id) == key:
            return
        ledger.append(
            self.room.ledger, event, task=task_id, route=s.get("route", ""), outcome="held", detail=detail
        )
        self.seen[task_id] = key
        self.changed = True

    def save(self) -> None:
        if self.changed:
            from control_room.store import cache

            cache.save(self.file, self.seen)


# 3c. Claim: one rename into swarm/running/, then the claim file.
def claim(room: Room, gate: dict[str, Any], picked: Pick, slot: int) -> None:
    task = picked.task
    task_id = task["id"]
    os.rename(swarm.task_file(room, "queue", task_id), swarm.task_file(room, "running", task_id))
    now = time.time()
    claims.write_claim(
        room,
        task_id,
        {
            "pid": os.getpid(),
            "host": claims.host(),
            "slot": slot,
            "started": now_iso(now),
            "deadline": now + float(task["wall_clock_s"]) + float(gate["validator_timeout_s"]),
            "agent_pgid": None,
        },
    )
    ledger.append(
        room.ledger,
        "claim",
        task=task_id,
        route=task.get("route", ""),
        adapter=picked.adapter_name,
        outcome="running",
        detail=f"round {int(task.get('rounds', 0)) + 1}, slot {slot}, pid {os.getpid()}",
    )
