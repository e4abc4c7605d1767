"""What a reviewer or an arbiter is shown (SPEC §12; ``dispatch/review/queueing.py`` queues them and
settles their verdicts): its lens, and only what the lens ``sees`` (the spec, the diff, the
executor's history: its report and output; the arbiter: the two positions, with every lens,
adapter, model and review id blanked out), each cut at ``MATERIAL_MAX`` characters, and what it
was not shown.

Isolation is enforced, not advised: what a lens does not see is not in its brief. The
executor's prompt is never shown (it holds the task's spec, the room's context and digest, and
with them other reviews and their verdicts); and for a lens that does not see ``spec``, the
task's objective and falsifier are withheld (``[withheld]``) wherever the material quotes them
(an agent's output, a diff), as the arbiter's positions withhold who wrote them; and so is any
path to the executor's results folder (its prompt, its raw output), for every lens."""

from __future__ import annotations

import re
from collections.abc import Mapping

from control_room import git
from control_room.dispatch.review.which import serves
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
NEVER_SHOWN = "the executor's prompt; the room's context and digest; other reviews and their verdicts"
WITHHELD = "[withheld]"
QUOTED_MIN = 8  # characters: a shorter objective or falsifier line is not looked for in the material


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
    # the executor's results folder holds its prompt and raw output: a path to it is withheld too
    res = results_folder.folder(room, target_id)
    hide = [str(res), f"swarm/results/{target_id}/", *([] if "spec" in sees else spec_lines(target))]
    if "spec" in sees:
        parts.append(
            f"## The task under review ({target_id})\n\nobjective: {target.get('objective', '?')}\n"
            f"falsifier: {target.get('falsifier', '?')}"
        )
    if "diff" in sees:
        parts.append(f"## The change\n\n```diff\n{withhold(_diff(room, settings, target), hide)}\n```")
    if "history" in sees:  # its report and output; never its prompt (the spec, the room's views)
        for name, what in (("report.md", "its report"), ("answer.md", "its output")):
            said = withhold(read_optional(res / name) or "(none)", hide)
            parts.append(f"## The executor's history: {what}\n\n{_cut(said)}")
    if "positions" in sees:
        parts.append(withhold(positions_text(room, task.get("sides") or {}), hide))
    where = (
        "You run in the change's worktree: read anything there; what you change is discarded."
        if settings.repo
        else "You run in the room's work dir: do not change anything there."
    )
    unseen = [NOT_SHOWN[s] for s in ("spec", "diff", "history") if s not in sees]
    if "history" in sees:
        unseen.append(NEVER_SHOWN)
    if "positions" in sees:
        unseen = ["who wrote each position, on which adapter and model"]
    told = "You were not shown: " + "; ".join(unseen) + "." if unseen else ""
    parts.append(f"## What you were shown\n\n{where} {told}".strip())
    return "\n\n".join(parts)


def spec_lines(target: Task) -> list[str]:
    """The texts of the task's objective and falsifier to withhold: each whole, and each of
    their lines of ``QUOTED_MIN`` characters or more, longest first."""
    found = set()
    for text in (str(target.get("objective") or ""), str(target.get("falsifier") or "")):
        found |= {t.strip() for t in (text, *text.splitlines()) if len(t.strip()) >= QUOTED_MIN}
    return sorted(found, key=len, reverse=True)


def withhold(text: str, hide: list[str]) -> str:
    """``text`` with every occurrence of each of ``hide`` (any case) replaced by ``[withheld]``,
    and its start cut short by someone's ``...`` too (a command shown cut at 160 characters)."""
    for secret in hide:
        text = re.sub(re.escape(secret), WITHHELD, text, flags=re.IGNORECASE)
        lowered = text.lower()
        for k in range(len(secret) - 1, QUOTED_MIN - 1, -1):
            cut = secret[:k].lower() + "..."
            if cut in lowered:
                text = re.sub(re.escape(secret[:k]) + r"\.\.\.", WITHHELD, text, flags=re.IGNORECASE)
                lowered = text.lower()
    return text


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
