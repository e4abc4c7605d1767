"""``control-room init``: lay out a room (SPEC §2) without ever overwriting a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from control_room import ledger
from control_room.errors import InvalidError
from control_room.ledger import events
from control_room.ledger.line import PREAMBLE
from control_room.ledger.read import has_header
from control_room.ledger.write import restore_header
from control_room.room import gitmerge
from control_room.room.layout import DEFAULT_DIRS, SWARM_DIRS, Room, defaults_root, templates_root
from control_room.store.files import create_exclusive
from control_room.words import count

LEDGER = "control-room/LEDGER.md"
_ROOT_TEMPLATES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_CR_TEMPLATES = ("CURRENT_CONTEXT.md", "ROUTES.md", "LEDGER.md", "CONTROL.md", "DIGEST.md")
_GITIGNORE = (
    "# derived caches, lock files, the scheduler's logs, the dashboard: never state\n"
    ".cache/\n.*.lock\n.tmp-*\ncycle.log\ncycle.stderr.log\n.dashboard/\n"
    "# this clone's host id and its claims on a shared room's remote (docs/many-machines.md)\n"
    ".host\n.claims/\n"
    "# each adapter's own state (an isolated CLI's home, its login): never shared\n.adapters/\n"
)
_FOLDER_GITIGNORE = (
    "# lock and temp files: never state\n.*.lock\n.tmp-*\n"  # swarm/, intelligence/, graveyard/
)
_GITATTRIBUTES = (
    "# files merged from several machines by control-room's own drivers, never with conflict markers:\n"
    "# the ledger keeps every line of both sides once, by event id; ROUTES.md merges row by row;\n"
    "# the views keep their auto part and merge the people's part\n"
    "# (`control-room init` registers the drivers in each clone's git config)\n" + gitmerge.attributes()
)


@dataclass(frozen=True)
class Item:
    rel: str  # path relative to the room, with forward slashes
    text: str | None  # None for a folder

    @property
    def is_dir(self) -> bool:
        return self.text is None


def plan() -> list[Item]:
    """Everything a room holds when it is new, folders first."""
    items = [Item("control-room", None), Item("swarm", None)]
    items += [Item(f"swarm/{d}", None) for d in SWARM_DIRS]
    items += [Item(d, None) for d in DEFAULT_DIRS if d != "swarm"]
    tpl = templates_root()
    for name in _ROOT_TEMPLATES:
        items.append(Item(name, (tpl / name).read_text(encoding="utf-8")))
    for name in _CR_TEMPLATES:
        text = PREAMBLE if name == "LEDGER.md" else (tpl / name).read_text(encoding="utf-8")
        items.append(Item(f"control-room/{name}", text))
    items.append(Item("control-room/.gitignore", _GITIGNORE))
    items.append(Item("control-room/.gitattributes", _GITATTRIBUTES))
    for folder in ("swarm", "intelligence", "graveyard"):
        items.append(Item(f"{folder}/.gitignore", _FOLDER_GITIGNORE))
    src = defaults_root()
    for d in DEFAULT_DIRS:
        for path in sorted((src / d).rglob("*")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(src).as_posix()
            if path.is_dir():  # agents/lenses/
                items.insert(next(i for i, it in enumerate(items) if not it.is_dir), Item(rel, None))
            elif path.is_file():
                items.append(Item(rel, path.read_text(encoding="utf-8")))
    return items


def _not_a_folder(path: Path) -> str:
    if path.is_symlink() and not path.exists():
        return f"{path} is a symbolic link to a missing target"
    return f"{path} is a file"


def check_root(root: Path) -> None:
    """A room is a folder: refuse, saying what to do, a ``root`` that is a file (or a dangling
    link) or that lies inside one."""
    for p in (root, *root.parents):
        if not os.path.lexists(p):
            continue
        if p.is_dir():
            return
        if p == root:
            raise InvalidError(
                f"{_not_a_folder(p)}, not a folder: a room is a folder; give init a new folder "
                f"(e.g. `control-room init {root.name}-room`) or an existing one"
            )
        raise InvalidError(
            f"cannot make a room at {root}: {_not_a_folder(p)}, not a folder; "
            "give init a path whose parents are folders"
        )


def _check_folders(root: Path, items: list[Item]) -> None:
    """Before anything is created: a file where the room needs a folder is refused."""
    for item in items:
        path = root / item.rel
        if item.is_dir and os.path.lexists(path) and not path.is_dir():
            raise InvalidError(
                f"{_not_a_folder(path)} where the room needs a folder: move it away, "
                "then run `control-room init` again"
            )


def init(root: Path, *, dry_run: bool = False) -> tuple[list[str], list[str], list[str]]:
    """Create what is missing; return (created, kept, repaired). Existing files are never
    replaced; the one repair is a ledger that lost its header, which gets it back with every
    line kept (``ledger.write.restore_header``)."""
    created: list[str] = []
    kept: list[str] = []
    repaired: list[str] = []
    items = plan()
    check_root(root)
    _check_folders(root, items)
    if not dry_run:
        root.mkdir(parents=True, exist_ok=True)
    for item in items:
        path = root / item.rel
        if item.is_dir:
            if path.is_dir():
                continue
            created.append(item.rel + "/")
            if not dry_run:
                path.mkdir(parents=True, exist_ok=True)
        elif path.exists() or path.is_symlink():
            kept.append(item.rel)
        elif dry_run or create_exclusive(path, item.text or ""):
            created.append(item.rel)
        else:
            kept.append(item.rel)
    room = Room(root)
    if LEDGER in kept and room.ledger.is_file() and not has_header(room.ledger):
        if dry_run:
            repaired.append(f"{LEDGER} (its header)")
        else:
            rows = restore_header(room.ledger)
            if rows is not None:
                repaired.append(f"{LEDGER} (its header, above {count(rows, 'line')})")
                ledger.append(
                    room.ledger,
                    events.HEADER_RESTORED,
                    detail=f"{LEDGER} had lost its table header: put back above its {count(rows, 'line')}",
                )
    if created and not dry_run:
        files = [c for c in created if not c.endswith("/")]
        ledger.append(
            room.ledger,
            events.INIT,
            detail=f"created {count(len(files), 'file')}, {count(len(created) - len(files), 'folder')}",
        )
    return created, kept, repaired
