"""Review lenses (SPEC §12): which lenses review a task, one bounded review task per lens, the
report a review must give, what checks its claims, and undoing what a reviewer changed.

A task, its route (CONTROL.md ``review`` as a mapping) or CONTROL.md (``review`` as a list)
names lenses (``agents/lenses/<name>.md``). When such a task passes its validator, it waits in
``swarm/passed/`` and one bounded review task per lens is queued (role ``reviewer``, the lens's
adapter, model and caps, ``reviews: ID``, no ``owns``, the lens's check or the task's validator
as its own), run in the task's worktree (with a repo;
anything a reviewer changes there is discarded) and shown only what its lens ``sees``
(``materials``). A review answers ``DECISION: accept`` or ``reject``; a reject without a
CONFIRMED item is not a review (a failed round of the review task). What the verdicts add up
to is ``verdicts``.
"""

from __future__ import annotations

import re
from pathlib import Path

from control_room import git, ledger
from control_room.dispatch.review import independence
from control_room.dispatch.review.which import serves
from control_room.dispatch.round import claims
from control_room.dispatch.round.report import Report
from control_room.dispatch.worktrees import place, worktree
from control_room.ledger import events
from control_room.room import lenses, swarm, tasks
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store.files import atomic_write
from control_room.timeutil import now_iso


def check_of(lens: lenses.Lens, task: Task) -> list[str] | str:
    """The validator of a review (or arbiter) task: the lens's ``check``, else the reviewed task's
    validator, run again in the reviewed worktree after the reviewer. Its verdict is its report
    (``check_report``); this run is what its CONFIRMED claims are checked against (a failure does
    not fail the review's round, it makes a success claim unsupported)."""
    return lens.check if lens.check is not None else task["validator"]


def needs_verdict(task: Task) -> bool:
    """Whether the task waits for its reviews (or an arbiter) before it may integrate."""
    return bool(task.get("review_tasks")) and task.get("review_verdict") != "accept"


def queue_reviews(
    room: Room,
    settings: Settings,
    task: Task,
    chosen: list[lenses.Lens],
    state: str,
    warned: list[str] | None = None,
) -> list[str]:
    """Queue one review task per lens for ``task`` (in ``state``); its ids. A review that would
    run on the adapter and model of the work it reviews gets a warning line, its text appended
    to ``warned``."""
    tid = task["id"]
    head = _head(room, settings, task)
    created = now_iso()  # one time for the lot: they run in the order of their names
    ids = []
    for lens in chosen:
        rid = free_id(room, f"review-{lens.name}-{tid}")
        review: Task = {
            "id": rid,
            "objective": (
                f"Review task {tid} through the {lens.name} lens; answer accept or reject."
                if state == "passed"
                else f"Review the failed round of task {tid} through the {lens.name} lens: reject, with "
                "findings, what its next round must not repeat; accept if there is nothing to add."
            ),
            "falsifier": "the change breaks what this lens checks, and this review accepts it",
            "validator": check_of(lens, task),
            "max_cost_usd": lens.max_cost_usd,
            "wall_clock_s": lens.wall_clock_s,
            "kill_condition": "the review cannot be done with what the lens shows",
            "role": "reviewer",
            "reviews": tid,
            "lens": lens.name,
            "priority": int(task.get("priority", 0)) + 50,
            "created": created,
        }
        if task.get("route"):
            review["route"] = task["route"]
        if lens.adapter:
            review["adapter"] = lens.adapter
        if lens.model:
            review["model"] = lens.model
        swarm.write_new(room, review)
        ids.append(rid)
        said = independence.warn_if_correlated(room, settings, review, tid)
        if said is not None and warned is not None:
            warned.append(said)
    drop = ("review_verdict", "reviewed_commit", "reviewed_state")
    updated = {**{k: v for k, v in task.items() if k not in drop}, "review_tasks": ids}
    if head:
        updated["reviewed_commit"] = head
    if state == "queue":  # a failed round (review_when: always): its next round waits for these
        updated["deps"] = [*task.get("deps", []), *ids]
        saved = _save_state(room, settings, task)
        if saved:
            updated["reviewed_state"] = saved
    atomic_write(swarm.task_file(room, state, tid), swarm.dumps(updated))
    ledger.append(
        room.ledger,
        events.REVIEW_QUEUED,
        task=tid,
        route=task.get("route", ""),
        detail=", ".join(f"{lens.name}: {rid}" for lens, rid in zip(chosen, ids, strict=True)),
    )
    return ids


def _save_state(room: Room, settings: Settings, task: Task) -> str | None:
    """A failed round's work is uncommitted in its worktree: kept in a stash commit (the tree
    is left as it is), so that what a reviewer changes can be undone without losing it."""
    if not settings.repo:
        return None
    path = place.path_of(room, task)
    git.run(path, "add", "-A")  # new files too: `git stash create` takes only the index's
    code, out, _ = git.run(path, "stash", "create", committer=claims.host(room))
    git.run(path, "reset", "-q")
    return out.strip() if code == 0 and out.strip() else None


def _head(room: Room, settings: Settings, task: Task) -> str | None:
    if not settings.repo:
        return None
    code, out, _ = git.run(place.path_of(room, task), "rev-parse", "HEAD")
    return out.strip() if code == 0 else None


def free_id(room: Room, stem: str) -> str:
    return swarm.free_id(room, stem[:60].rstrip("-."))


# Checks of the report and the worktree ---------------------------------------------------------


def word(rep: Report) -> str:
    """The DECISION's first word, lower case, without punctuation: ``accept``, ``a``..."""
    first = rep.decision.strip().split()[:1]
    return re.sub(r"[^a-z]", "", first[0].lower()) if first else ""


def check_report(task: Task, rep: Report) -> str | None:
    """Why the report of a review or arbiter task is not a verdict, or None."""
    if task.get("reviews"):
        d = word(rep)
        if d not in ("accept", "reject"):
            return f"a review's DECISION must be accept or reject (got {rep.decision.strip()[:60]!r})"
        if d == "reject" and not rep.confirmed:
            return "a review that rejects must give at least one CONFIRMED evidence item; this one gives none"
    elif task.get("arbitrates") and word(rep) not in ("a", "b", "escalate"):
        return f"an arbiter's DECISION must be A, B or escalate (got {rep.decision.strip()[:60]!r})"
    return None


def discard_edits(room: Room, settings: Settings, task: Task, workdir: Path, *, by: str = "") -> None:
    """Undo anything a reviewer or an arbiter changed in the worktree (with a warning line), or,
    ``by`` its validator (the re-run of the reviewed task's check), what that left (no warning)."""
    target_id = serves(task)
    if not target_id or not settings.repo:
        return
    state = swarm.state_of(room, target_id)
    target, _ = swarm.read_task(swarm.task_file(room, state, target_id)) if state else (tasks.as_task({}), [])
    head = target.get("reviewed_commit")
    changed = _changed_since(workdir, target.get("reviewed_state"))
    now = git.run(workdir, "rev-parse", "HEAD")[1].strip()
    if not changed and (not head or now == head):
        return
    if head:
        git.run(workdir, "reset", "-q", "--hard", head)
    else:
        git.run(workdir, "reset", "-q", "--hard")
    git.run(workdir, "clean", "-fdq")
    if target.get("reviewed_state"):  # a failed round's uncommitted work: put back as it was
        git.run(workdir, "stash", "apply", "-q", str(target["reviewed_state"]))
        git.run(workdir, "reset", "-q")
    if by:
        return
    what = ", ".join(changed[:5]) if changed else f"commits on top of {head[:12] if head else 'HEAD'}"
    ledger.append(
        room.ledger,
        events.WARNING,
        task=task["id"],
        detail=f"the {'review' if task.get('reviews') else 'arbiter'} changed the worktree ({what}); "
        "discarded: reviewers never edit",
    )


def _changed_since(workdir: Path, saved: str | None) -> list[str]:
    """The paths a reviewer changed: against the clean tree, or against a failed round's saved
    work."""
    if not saved:
        return worktree.dirty(workdir)
    git.run(workdir, "add", "-A")
    code, out, _ = git.run(workdir, "diff", "--cached", "--name-only", saved)
    git.run(workdir, "reset", "-q")
    return out.split() if code == 0 else ["(git diff failed)"]
