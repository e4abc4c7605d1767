"""Adapters cooling down after their provider refused (``control-room/.cache/cooldowns.json``).

A rate limit, an exhausted quota, an overloaded service or a refused login is the provider's
fault (adapters/faults.py): the task goes back to the queue without a round, and the adapter
(with the model the run asked for) cools down until the reset time the CLI gave, else for a
capped exponential back-off: 1, 2, 4, ... minutes after each fault in a row, 1 hour at most
(``BACKOFF_*``). Cycles skip a cooling adapter (a task with ``fallback`` runs on the first of
those that is not cooling); ``status`` and CURRENT_CONTEXT.md say until when; each fault is a
``provider-fault`` ledger line.

The file is this machine's (in the git-ignored cache: another clone may use another account),
and disposable: deleting it (or one entry) ends a cooldown early, at the cost of one more
refusal. An entry whose time has passed is kept (its count of faults in a row drives the next
back-off) until a run of that adapter works (``clear``) or a day has passed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from control_room.errors import InvalidError
from control_room.room.layout import Room
from control_room.store import lock
from control_room.store.files import atomic_write, read_optional
from control_room.timeutil import now_iso as iso

FILE = "cooldowns.json"
BACKOFF_FIRST_S = 60.0
BACKOFF_MAX_S = 3600.0
RESET_MAX_S = 7 * 86400.0  # a reset time further off than this is not believed: the back-off
FORGET_S = 86400.0  # an entry this long past its time is forgotten


class Cooldown:
    """One adapter (and model) cooling down: until when, why, and how many faults in a row."""

    __slots__ = ("detail", "faults", "given", "key", "kind", "until")

    def __init__(self, key: str, kind: str, until: float, faults: int, detail: str, given: bool) -> None:
        self.key, self.kind, self.until, self.faults = key, kind, until, faults
        self.detail, self.given = detail, given  # given: the provider said the reset time

    def __repr__(self) -> str:
        return f"Cooldown({self.key!r}, {self.kind!r}, until={iso(self.until)})"

    def active(self, now: float | None = None) -> bool:
        return self.until > (time.time() if now is None else now)

    def says(self) -> str:
        """``claude cools down until 2026-12-04T17:00:00Z (rate-limit, the provider's reset time)``"""
        source = "the provider's reset time" if self.given else f"back-off after {self.faults} in a row"
        return f"{self.key} cools down until {iso(self.until)} ({self.kind}, {source})"

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "until": iso(self.until), "until_epoch": self.until, "faults": self.faults,
                "reset_given": self.given, "detail": self.detail}  # fmt: skip


def key_of(adapter: str, model: str | None) -> str:
    """``claude`` or ``claude/opus``: a fault cools the model the run asked for."""
    return f"{adapter}/{model}" if model else adapter


def path(room: Room) -> Path:
    return room.cache / FILE


def load(room: Room) -> dict[str, Cooldown]:
    """Every entry of the file (active or not); {} when there is none or it cannot be read."""
    try:
        text = read_optional(path(room))
    except OSError:
        return {}
    if not text:
        return {}
    from control_room.store import records  # JSON: only for a room with cooldowns (status reads this)

    try:
        data = records.parse(text)
    except InvalidError:  # a person's broken edit: no cooldown, never a crash
        return {}
    out: dict[str, Cooldown] = {}
    for key, v in data.items() if isinstance(data, dict) else ():
        if isinstance(v, dict) and isinstance(v.get("until_epoch"), (int, float)):
            faults = v["faults"] if isinstance(v.get("faults"), int) else 1
            out[str(key)] = Cooldown(str(key), str(v.get("kind", "")), float(v["until_epoch"]), faults,
                                     str(v.get("detail", "")), v.get("reset_given") is True)  # fmt: skip
    return out


def active(room: Room, now: float | None = None) -> dict[str, Cooldown]:
    """The entries still cooling, by key."""
    now = time.time() if now is None else now
    return {k: c for k, c in load(room).items() if c.active(now)}


def cooling(table: dict[str, Cooldown], adapter: str, model: str | None) -> Cooldown | None:
    """The cooldown that holds ``adapter`` with ``model`` (its own, or the whole adapter's)."""
    return table.get(key_of(adapter, model)) or (table.get(adapter) if model else None)


def record(
    room: Room, adapter: str, model: str | None, kind: str, detail: str, reset_at: float | None,
    now: float | None = None,
) -> Cooldown:  # fmt: skip
    """Cool ``adapter``/``model`` down after a fault of ``kind``; the entry written."""
    now = time.time() if now is None else now
    key = key_of(adapter, model)
    with lock.held(room.cr / ".cooldowns.lock"):
        table = _prune(load(room), now)
        before = table.get(key)
        faults = before.faults + 1 if before is not None else 1
        given = reset_at is not None and now < reset_at <= now + RESET_MAX_S
        if given:
            assert reset_at is not None
            until = reset_at
        else:
            until = now + min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** (faults - 1))
        table[key] = Cooldown(key, kind, until, faults, detail[:200], given)
        _save(room, table)
    return table[key]


def clear(room: Room, adapter: str, model: str | None) -> None:
    """A run of ``adapter``/``model`` worked: its back-off starts again from the first step."""
    if not path(room).exists():
        return
    key = key_of(adapter, model)
    with lock.held(room.cr / ".cooldowns.lock"):
        table = load(room)
        if key in table and not table[key].active():
            del table[key]
            _save(room, table)


def _prune(table: dict[str, Cooldown], now: float) -> dict[str, Cooldown]:
    return {k: c for k, c in table.items() if c.until + FORGET_S > now}


def _save(room: Room, table: dict[str, Cooldown]) -> None:
    from control_room.store import records  # JSON: see load

    room.cache.mkdir(exist_ok=True)
    atomic_write(path(room), records.dumps({k: c.as_json() for k, c in sorted(table.items())}))
