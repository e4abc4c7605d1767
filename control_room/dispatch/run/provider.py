"""A run the provider refused (adapters/faults.py): never the task's fault.

The task goes back to the queue with no round used (its worktree as the agent left it: the
next run goes on from there), one ``provider-fault`` line says why and until when, and the
adapter with the run's model cools down (room/cooldowns.py) so that the next cycles skip it, or
take the task's ``fallback``. The validator does not run: nothing was done to judge.
"""

from __future__ import annotations

from control_room import errors
from control_room.adapters.faults import Fault
from control_room.dispatch.queue.pick import Pick
from control_room.dispatch.round.outcome import CycleResult, requeue
from control_room.ledger import events
from control_room.room import cooldowns
from control_room.room.layout import Room


def refused(room: Room, picked: Pick, fault: Fault) -> CycleResult:
    """Put the task back without a round and cool its adapter down; what the cycle says."""
    task, plan = picked.task, picked.plan
    tid, name = task["id"], plan.adapter.name
    cool = cooldowns.record(room, name, plan.model, fault.kind, fault.detail, fault.reset_at)
    detail = f"{fault.kind}: {cool.says()}; back in the queue, no round used; the CLI said: {fault.detail}"
    requeue(room, task, events.PROVIDER_FAULT, detail, adapter=name)
    return CycleResult(
        errors.PROVIDER,
        f"{tid}: {name}'s provider refused the run ({fault.kind}); back in the queue, no round used; "
        f"{cool.says()}",
        tid,
    )
