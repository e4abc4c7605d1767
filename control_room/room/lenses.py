"""Review lenses: ``agents/lenses/<name>.md``, a prompt with front matter saying what the
reviewer is shown (``sees``), where it runs (``adapter``, ``model``), its caps
(``max_cost_usd``, ``wall_clock_s``) and the command that checks its reviewer's CONFIRMED
claims (``check``; else the reviewed task's validator). The lens ``arbiter`` is the arbiter's
([review.md](../../docs/review.md))."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from control_room.errors import InvalidError, NotFoundError
from control_room.room import shell
from control_room.room.layout import Room
from control_room.room.values import is_id, is_number
from control_room.store import docs

SEES = ("diff", "history", "code", "spec", "positions")
ARBITER = "arbiter"
DEFAULT_COST, DEFAULT_WALL_S = 0.5, 600


@dataclass(frozen=True)
class Lens:
    name: str
    sees: tuple[str, ...]
    adapter: str | None
    model: str | None
    max_cost_usd: float
    wall_clock_s: float
    prompt: str
    check: list[str] | str | None = None  # a command (a validator); None: the reviewed task's


def folder(room: Room) -> Path:
    return room.root / "agents" / "lenses"


def read(room: Room, name: str) -> Lens:
    """The lens ``name``; InvalidError naming the file and what is wrong."""
    if not is_id(name):
        raise InvalidError(f"lens {name!r} is not a valid lens name")
    path = folder(room) / f"{name}.md"
    try:
        meta, body = docs.read(path, room.cache / f"lens-{name}")
    except NotFoundError:
        known = ", ".join(names(room)) or "none"
        raise InvalidError(f"lens {name!r} has no file: {path} is missing (lenses here: {known})") from None
    sees = meta.get("sees") or []
    if isinstance(sees, str):
        sees = [sees]
    bad = [s for s in sees if s not in SEES] if isinstance(sees, list) else [repr(sees)]
    if bad or not sees:
        raise InvalidError(f"{path}: sees must list some of {', '.join(SEES)} (got {meta.get('sees')!r})")
    caps = {}
    for key, default in (("max_cost_usd", DEFAULT_COST), ("wall_clock_s", DEFAULT_WALL_S)):
        value = meta.get(key, default)
        if value is None:
            value = default
        if not is_number(value) or float(value) <= 0:
            raise InvalidError(f"{path}: {key} must be a number > 0 (got {value!r})")
        caps[key] = float(value)
    check = meta.get("check")
    if check is not None and not (
        (isinstance(check, str) and check.strip())
        or (isinstance(check, list) and check and all(isinstance(a, str) for a in check))
    ):
        raise InvalidError(f"{path}: check must be a command, a string or a list of strings (got {check!r})")
    why = shell.problem("check", check)
    if why is not None:
        raise InvalidError(f"{path}: {why}")
    return Lens(
        name,
        tuple(str(s) for s in sees),
        str(meta["adapter"]) if meta.get("adapter") else None,
        str(meta["model"]) if meta.get("model") else None,
        caps["max_cost_usd"],
        caps["wall_clock_s"],
        body.strip(),
        check,
    )


def names(room: Room) -> list[str]:
    """The lenses of this room (``arbiter`` included), by name."""
    try:
        return sorted(p.stem for p in folder(room).glob("*.md") if is_id(p.stem) and p.is_file())
    except OSError:
        return []
