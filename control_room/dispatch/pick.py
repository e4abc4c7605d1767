"""Step 3 of a cycle: pick the next ready task (SPEC §4).

Candidates come in run order from the queue index. A candidate on a killed route is rejected
at once; one that is not ready (deps not done, paths owned by a running task, a death loop on
its route, a gate not approved, the budget) stays queued, and a hold by a gate, the budget or a
death loop is logged once a day. The first ready candidate is re-read from its file and must
pass admission (``Stage.RUN``); one whose CLI is not installed is held, not rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control_room import errors, ledger
from control_room.dispatch import claims, index
from control_room.dispatch.admission import Plan, Refused, Stage, admit, agent_env
from control_room.dispatch.rounds import CycleResult
from control_room.knowledge import graveyard, history
from control_room.ledger import events
from control_room.ledger.events import Event
from control_room.ledger.stats import summary
from control_room.proc import which
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store import cache
from control_room.timeutil import today


@dataclass
class Pick:
    task: dict[str, Any]
    plan: Plan


def pick(room: Room, settings: Settings) -> Pick | CycleResult:
    """The next ready task, or what the cycle says when there is none."""
    spend = summary(room.ledger, room.cache / "ledger-summary")["spend_by_day"].get(today(), 0.0)
    ready = Readiness(room, settings, spend)
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
        chosen = _admit(room, settings, item, ready)
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
        which_stay = "s, which stay" if len(missing) != 1 else ", which stays"
        return CycleResult(
            errors.ADAPTER_MISSING,
            f"adapter unavailable for {len(missing)} ready task{which_stay} queued: {'; '.join(missing)}",
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


class Readiness:
    """Whether a queued task may run now: deps done, no path overlap with running tasks,
    no death loop on its route, gates approved, budget left."""

    def __init__(self, room: Room, settings: Settings, spend: float) -> None:
        self.room, self.settings, self.spend = room, settings, spend
        self.busy_paths, reserved = _running_owns(room)
        self.spend += reserved  # what running tasks may still spend counts as spent
        self.holds = Holds(room)
        self.held = history.held(room, settings)  # death loops: fail closed until a person acts
        self.dead: dict[str, str | None] = {}  # route -> why its tasks are refused (graveyard)

    def refused(self, s: dict[str, Any]) -> str | None:
        """Why a task is refused outright: its route is in the graveyard."""
        route = s.get("route") or ""
        if route and route not in self.dead:
            self.dead[route] = graveyard.refusal(self.room, route)
        return self.dead.get(route) if route else None

    def blocked(self, task_id: str, s: dict[str, Any]) -> bool:
        room, settings = self.room, self.settings
        if not all(swarm.task_file(room, "done", d).exists() for d in s.get("deps", [])):
            return True
        if _overlaps(s.get("owns", []), self.busy_paths):
            return True
        key = s.get("route") or f"task:{task_id}"
        loop = self.held.get(key)
        if loop is not None:
            self.holds.log(
                task_id,
                s,
                events.ROUTE_HELD,
                f"{key} is in a death loop ({loop['n']} identical failures); "
                f"`control-room route resume {key} --because ...` to release it",
            )
            return True
        missing_gates = [g for g in s.get("gate", []) if not settings.approved(task_id, g)]
        if missing_gates:
            self.holds.log(
                task_id,
                s,
                events.approval_needed(missing_gates[0]),
                f"gate {', '.join(missing_gates)} needs `control-room approve {task_id}`",
            )
            return True
        cost = float(s.get("max_cost_usd", 0))
        budget = settings.daily_budget_usd
        if self.spend + cost > budget:
            self.holds.log(
                task_id,
                s,
                events.BUDGET_HOLD,
                f"${self.spend:.2f} spent or reserved by running tasks today; this task may cost "
                f"${cost:.2f} more, over the ${float(budget):.2f} daily budget",
            )
            return True
        return False


def _admit(room: Room, settings: Settings, item: index.Listed, ready: Readiness) -> Pick | str:
    """Re-read the candidate from its file and admit it. Returns the Pick, or why not
    ("rejected", "waiting", "missing:<adapter>: <what>") so the next one is tried."""
    path = swarm.task_file(room, "queue", item.id)
    task, problems = swarm.read_task(path)
    plan = None
    if not problems and ready.blocked(item.id, index.summarize(task)):
        return "waiting"  # edited since the index saw it: no longer ready
    if not problems:
        try:
            plan = admit(room, task, Stage.RUN, settings)
        except Refused as exc:
            problems = [str(exc)]
    if problems or plan is None:
        swarm.reject(room, path.name, problems, task_id=item.id)
        return "rejected"
    adapter = plan.adapter
    exe = adapter.executable(plan.invocation(task, "", path, room.root))
    if exe is None or which(exe, agent_env(room, settings, task)) is None:
        ready.holds.log(
            item.id,
            item.summary,
            events.ADAPTER_MISSING,
            f"{adapter.name}: {exe} not found on PATH; {adapter.install}",
        )
        return f"missing:{adapter.name}: {exe} not found on PATH"
    return Pick(task, plan)


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


class Holds:
    """Log a held task once per reason and day (remembered in a disposable cache)."""

    def __init__(self, room: Room) -> None:
        self.room, self.file = room, room.cache / "holds"
        seen = cache.load(self.file)
        self.seen: dict[str, str] = seen if isinstance(seen, dict) else {}
        self.changed = False

    def log(self, task_id: str, s: dict[str, Any], event: Event, detail: str) -> None:
        key = f"{event.name} {today()}"
        name, _, day = self.seen.get(task_id, "").partition(" ")
        if f"{events.canonical(name)} {day}" == key:  # a hold logged before 0.3.0 has its old name
            return
        ledger.append(self.room.ledger, event, task=task_id, route=s.get("route", ""), detail=detail)
        self.seen[task_id] = key
        self.changed = True

    def save(self) -> None:
        if self.changed:
            cache.save(self.file, self.seen)
