"""``merge-driver view BASE OURS THEIRS [PATH]``: git's merge driver for the views a person
may also edit, CURRENT_CONTEXT.md and DIGEST.md.

Both are refreshed at the edge of every command that changed the room, so two clones that ran
commands both changed them, and git's text merge conflicts. This driver:

- DIGEST.md (wholly generated): OURS, as it is;
- CURRENT_CONTEXT.md: the auto block (between its two markers) is OURS's; the free part people
  write is merged three-way (``git merge-file``), so a person's edits on either side survive
  whenever they do not collide; when they do, the whole of OURS is kept.

The next command that changes the room refreshes the auto block, so OURS's is never stale for
long. It never leaves a conflict. Which file it merges is PATH (git's ``%P``); without it, a
file with no auto block is taken as generated (OURS).
"""

from __future__ import annotations

from pathlib import Path

from control_room.store.files import atomic_write
from control_room.store.markdown import auto_block_span
from control_room.store.textmerge import PLACEHOLDER, merge3, read_sides, split_at

GENERATED = ("DIGEST.md",)


def _cut(text: str) -> tuple[str, str]:
    """(the free part with a placeholder line where the auto block is, the block's lines); a
    text without the block gets the placeholder at its end, where a refresh would put it."""
    lines = text.splitlines(keepends=True)
    span = auto_block_span(lines)
    if span is None:
        end = "" if not text or text.endswith(("\n", "\r")) else "\n"
        return text + end + PLACEHOLDER + "\n", ""
    begin, stop = span
    free = "".join(lines[:begin]) + PLACEHOLDER + "\n" + "".join(lines[stop + 1 :])
    return free, "".join(lines[begin : stop + 1])


def merge_text(base: str, ours: str, theirs: str, name: str = "") -> str:
    """The merged view (see the module's doc)."""
    if name in GENERATED:
        return ours
    mine = _cut(ours)
    if not name and not mine[1]:  # no path, no auto block: a generated view
        return ours
    free = merge3(_cut(base)[0], mine[0], _cut(theirs)[0])
    parts = split_at(free) if free is not None else None
    if parts is None:
        return ours
    return parts[0] + mine[1] + parts[1]


def merge_files(base: Path, ours: Path, theirs: Path, path: str = "") -> None:
    """git's protocol (%O %A %B %P): the result written into ``ours`` (left alone when it is
    the same)."""
    texts = read_sides(base, ours, theirs)
    merged = merge_text(texts[0], texts[1], texts[2], Path(path).name if path else "")
    if merged != texts[1]:
        atomic_write(ours, merged, durable=False)
