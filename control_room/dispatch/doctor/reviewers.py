"""``doctor``'s check of the room's reviewers (SPEC §12): each lens the room uses (CONTROL.md
``review``, a waiting task's own ``review``, and then the arbiter) should run on another adapter
or model than the work it reviews; one that runs where an executing role runs (both on the
adapter's own default model counts as the same) is a WARN, as its review is not independent.
A cycle warns again when it queues such a review (``dispatch/review/independence.py``)."""

from __future__ import annotations

from control_room.dispatch.doctor.finding import OK, WARN, Check, Context, Finding, unchecked
from control_room.dispatch.review import independence
from control_room.room import lenses, roles, swarm, tasks
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.words import count

WAITING = ("queue", "running", "passed")


def in_use(ctx: Context, settings: Settings) -> list[str]:
    """The lenses this room's reviews name, sorted, with the arbiter when there is one."""
    wanted = settings.review
    named = {n for names in wanted.values() for n in names} if isinstance(wanted, dict) else set(wanted)
    for state in WAITING:
        for tid in swarm.Folders(ctx.room).ids(state):
            task, problems = swarm.read_task(swarm.task_file(ctx.room, state, tid))
            if not problems:
                named |= set(task.get("review", []))
    return sorted(named | {lenses.ARBITER}) if named else []


def executors(ctx: Context, settings: Settings) -> dict[tuple[str, str], list[str]]:
    """Per (adapter, model), the executing roles that run there: every role file's but a
    reviewer's or an arbiter's, and the default role's."""
    folder = ctx.room.root / "agents"
    names = {p.stem for p in folder.glob("*.md") if p.is_file()} | {tasks.DEFAULT_ROLE}
    found: dict[tuple[str, str], list[str]] = {}
    for role in sorted(names - set(roles.REVIEWING)):
        where = independence.runs_on(ctx.room, settings, tasks.as_task({"id": "doctor", "role": role}))
        if where is not None:
            found.setdefault(where, []).append(role)
    return found


def reviewers(ctx: Context) -> list[Finding]:
    if ctx.settings is None:
        return [unchecked("reviewers")]
    used = in_use(ctx, ctx.settings)
    if not used:
        return [Finding("reviewers", OK, "no lens reviews this room's tasks")]
    work = executors(ctx, ctx.settings)
    found = []
    for name in used:
        try:
            lens = lenses.read(ctx.room, name)
        except Exception:  # a missing or broken lens: refused at preflight, not this check's
            continue
        review: Task = tasks.as_task(
            {"id": "doctor", "role": "arbiter" if name == lenses.ARBITER else "reviewer"}
            | ({"adapter": lens.adapter} if lens.adapter else {})
            | ({"model": lens.model} if lens.model else {})
        )
        where = independence.runs_on(ctx.room, ctx.settings, review)
        if where is not None and where in work:
            found.append(
                Finding(
                    "reviewers",
                    WARN,
                    f"lens {name} runs on {where[0]}, model {where[1]}, where the work it reviews "
                    f"runs (role {', '.join(work[where])}): its reviews are not independent",
                    f"set adapter and model in agents/lenses/{name}.md",
                )
            )
    each = f"{count(len(used), 'lens', 'lenses')}, each on another adapter or model than the work"
    return found or [Finding("reviewers", OK, each)]


CHECKS = (Check("reviewers", reviewers),)
