"""What a reviewer or an arbiter is shown (SPEC §12; ``dispatch/review/queueing.py`` queues them and
settles their verdicts): its lens, and only what the lens ``sees`` (the spec, the diff, the
executor's history; the arbiter: the two positions, with every lens, adapter, model and review
id blanked out), each cut at ``MATERIAL_MAX`` characters, and what it was not shown."""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_room import git
from control_room.dispatch.worktrees import place, worktree
from control_room.room import lenses, swarm, tasks
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import records
from control_room.store.files import read_optional

MATERIAL_MAX = 20_000  # characters of each thing a reviewer is shown (a diff, a prompt, a report)
NOT_SHOWN = {
    "diff": "the change (the diff)",
    "history": "the executor's prompt, report and output",
    "code": "the worktree's code (you run elsewhere)",
    "spec": "the task's objective and falsifier",
}


def serves(task: Task) -> str | None:
    """The task a review or arbiter task is about."""
    return task.get("reviews") or task.get("arbitrates")


def materials(room: Room, settings: Settings, task: Task) -> str:
    """The prompt section of a review or arbiter task: its lens, what it was shown, what not."""
    target_id = serves(task)
    if not target_id:
        return ""
    state = swarm.state_of(room, target_id)
    target, _ = swarm.read_task(swarm.task_file(room, state, target_id)) if state else (tasks.as_task({}), [])
    lens = lenses.read(room, str(task.get("lens") or lenses.ARBITER))
    parts = [f"## Your lens: {lens.name}\n\n{lens.prompt}"]
    sees = lens.sees
    if "spec" in sees:
        parts.append(
            f"## The task under review ({target_id})\n\nobjective: {target.get('objective', '?')}\n"
            f"falsifier: {target.get('falsifier', '?')}"
        )
    if "diff" in sees:
        parts.append(f"## The change\n\n```diff\n{_diff(room, settings, target)}\n```")
    if "history" in sees:
        res = results_folder.folder(room, target_id)
        for name, what in (
            ("prompt.md", "its prompt"),
            ("report.md", "its report"),
            ("answer.md", "its output"),
        ):
            parts.append(
                f"## The executor's history: {what}\n\n{_cut(read_optional(res / name) or '(none)')}"
            )
    if "positions" in sees:
        parts.append(positions_text(room, task.get("sides") or {}))
    where = (
        "You run in the change's worktree: read anything there; what you change is discarded."
        if settings.repo
        else "You run in the room's work dir: do not change anything there."
    )
    unseen = [NOT_SHOWN[s] for s in ("spec", "diff", "history") if s not in sees]
    if "positions" in sees:
        unseen = ["who wrote each position, on which adapter and model"]
    told = "You were not shown: " + "; ".join(unseen) + "." if unseen else ""
    parts.append(f"## What you were shown\n\n{where} {told}".strip())
    return "\n\n".join(parts)


def _cut(text: str) -> str:
    return text if len(text) <= MATERIAL_MAX else text[:MATERIAL_MAX] + "\n[... cut by control-room]"


def _diff(room: Room, settings: Settings, target: Task) -> str:
    repo = worktree.repo_of(room, settings)
    if repo is None or not target:
        return "(no repository is set: there is no diff to show)"
    base = worktree.base_of(repo, settings)
    upto = str(target.get("reviewed_state") or "HEAD")  # a failed round's work is uncommitted
    code, out, err = git.run(place.path_of(room, target), "diff", f"{base}...{upto}")
    return (
        _cut(out.strip() or "(no change against the base)")
        if code == 0
        else f"(git diff failed: {err.strip()})"
    )


def positions_text(room: Room, side: Mapping[str, list[str]]) -> str:
    """Position A and Position B as the arbiter reads them (``side``: an arbiter's ``sides``):
    the reviews' reports, each side's together, with every lens, adapter and model name blanked
    out."""
    hide = names_to_hide(room, [*side.get("A", []), *side.get("B", [])])
    out = []
    for label in ("A", "B"):
        texts = [anonymise(read_optional(results_folder.folder(room, rid) / "report.md") or "", hide)
                 for rid in side.get(label, [])]  # fmt: skip
        body = "\n\n---\n\n".join(t.strip() for t in texts) or "(nothing)"
        out.append(f"## Position {label}\n\n{body}")
    return "\n\n".join(out)


def names_to_hide(room: Room, review_ids: list[str]) -> list[str]:
    hide = set(lenses.names(room))
    for rid in review_ids:
        state = swarm.state_of(room, rid)
        if state is None:
            continue
        review, _ = swarm.read_task(swarm.task_file(room, state, rid))
        meta = records.read_object(results_folder.folder(room, rid) / "meta.json") or {}
        hide |= {str(v) for v in (review.get("lens"), review.get("adapter"), review.get("model"),
                                  meta.get("adapter"), meta.get("model"), rid) if v}  # fmt: skip
    return sorted(hide, key=len, reverse=True)


def anonymise(text: str, hide: list[str]) -> str:
    for name in hide:
        text = re.sub(rf"(?i)(?<![\w-]){re.escape(name)}(?![\w-])", "[withheld]", text)
    # an adapter may be called `command`: the report's own header stays what it is
    return re.sub(r"(?m)^(\W*)NEXT \[withheld\]:", r"\1NEXT COMMAND:", text)
