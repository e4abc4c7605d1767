"""A three-way merge of plain text through ``git merge-file -p``: the people's part of a view
file that two clones both changed (ROUTES.md's prose, CURRENT_CONTEXT.md's free part).

The merge drivers (``knowledge/routes_merge.py``, ``views/merge.py``) must never leave a
conflict behind, so a conflict here is an answer (None), not an error: the caller keeps its
own side.
"""

from __future__ import annotations

from pathlib import Path

from control_room.errors import InvalidError
from control_room.store.files import read_text

PLACEHOLDER = "<!-- control-room:merge:placeholder (never written to a room) -->"


def read_sides(base: Path, ours: Path, theirs: Path) -> tuple[str, str, str]:
    """A merge driver's three sides (git's %O %A %B), as text; InvalidError naming a file that
    cannot be read."""
    texts = []
    for path in (base, ours, theirs):
        try:
            texts.append(read_text(path))
        except OSError as exc:
            raise InvalidError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
    return texts[0], texts[1], texts[2]


def merge3(base: str, ours: str, theirs: str) -> str | None:
    """``ours`` and ``theirs`` merged against ``base``; None when their changes collide (or git
    is missing or fails)."""
    if ours == theirs or base == theirs:
        return ours
    if base == ours:
        return theirs
    import tempfile  # only a merge that must look at hunks pays for it

    # git and proc load subprocess, which is heavy: only a merge driver gets here
    from control_room import git, proc

    if proc.which("git") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="control-room-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8"))
            paths.append(str(path))
        rc, out, _ = git.run(Path(tmp), "merge-file", "-p", *paths)
    return out if rc == 0 else None


def split_at(text: str) -> tuple[str, str] | None:
    """``text`` cut at its one placeholder line (the line and its line ending removed): (before,
    after); None unless the placeholder is there exactly once, on a line of its own."""
    lines = text.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == PLACEHOLDER]
    if len(at) != 1 or text.count(PLACEHOLDER) != 1:
        return None
    return "".join(lines[: at[0]]), "".join(lines[at[0] + 1 :])
