"""A room on disk (SPEC §2): where its files are, how a command finds it, its task counts."""

from __future__ import annotations

import os
import time
from functools import cached_property
from pathlib import Path

from control_room.errors import InvalidError, NoRoomError
from control_room.store import cache

STATES = ("queue", "running", "passed", "to-test", "done", "parked", "rejected", "cancelled")
# With a target repo (CONTROL.md `repo:`), a task that passes waits in passed/ for the merge queue,
# then waits in to-test/ (merged) for a person; without one, a pass goes to done/ (docs/integration.md).
MERGE_STATES = ("passed", "to-test")
SWARM_DIRS = (*STATES, "outbox", "results")
DEFAULT_DIRS = ("agents", "skills", "intelligence", "graveyard", "swarm")
CLAIM = ".claim"  # running/<id>.claim: which cycle runs a task (dispatch/round/claims.py); not a task
ENV_VAR = "CONTROL_ROOM"
PACKAGE = Path(__file__).resolve().parent.parent  # control_room/


class Room:
    """A room, by its root folder; its paths are computed once each. (A plain class, not a
    dataclass: every command builds one, and a dataclass costs ~3 M instructions to build.)"""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __eq__(self, other: object) -> bool:
        return type(other) is Room and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Room(root={self.root!r})"

    @cached_property
    def cr(self) -> Path:
        return self.root / "control-room"

    @cached_property
    def ledger(self) -> Path:
        return self.cr / "LEDGER.md"

    @cached_property
    def control(self) -> Path:
        return self.cr / "CONTROL.md"

    @cached_property
    def routes(self) -> Path:
        return self.cr / "ROUTES.md"

    @cached_property
    def context(self) -> Path:
        return self.cr / "CURRENT_CONTEXT.md"

    @cached_property
    def digest(self) -> Path:
        return self.cr / "DIGEST.md"

    @cached_property
    def cache(self) -> Path:
        return self.cr / ".cache"

    @cached_property
    def adapter_states(self) -> Path:
        """``control-room/.adapters/``: one state folder per adapter set up in CONTROL.md
        ``adapters:`` (its config files; an ``isolated`` CLI's home). Git-ignored."""
        return self.cr / ".adapters"

    @cached_property
    def pins(self) -> Path:
        """``control-room/PINNED``: the ids of pinned tasks, one a line; `cleanup` never removes
        their results (room/retention.py). Absent: none is pinned."""
        return self.cr / "PINNED"

    @cached_property
    def stop(self) -> Path:
        return self.root / "STOP"

    @cached_property
    def swarm(self) -> Path:
        return self.root / "swarm"

    def make_folders(self) -> None:
        """The swarm folders, where missing: git keeps no empty folder, so a fresh clone of a
        shared room lacks the empty ones (``sync`` makes them)."""
        for name in SWARM_DIRS:
            (self.swarm / name).mkdir(parents=True, exist_ok=True)

    def state_dir(self, state: str) -> Path:
        folder = self._state_dirs.get(state)
        if folder is None:
            if state not in STATES:
                raise InvalidError(f"unknown task state {state!r} (valid: {', '.join(STATES)})")
            folder = self._state_dirs[state] = self.swarm / state
        return folder

    @cached_property
    def _state_dirs(self) -> dict[str, Path]:
        return {}  # state -> its folder, made once (a cycle asks some fifty times)

    def counts(self, states: tuple[str, ...] = STATES) -> dict[str, int]:
        """Task files per state folder (of ``states``: a cycle asks only for ``rejected``, not
        to list 10,000 names in ``done/``), from the directory listings alone (nothing is read).

        Hidden files (locks, temp files), ``.reason`` files and, in ``running/``, the ``.claim``
        beside each running task do not count. A folder's count
        changes only when a name is added or removed, which changes the folder's mtime; so a
        count is kept in ``.cache/counts`` against that mtime, once the mtime is two seconds old
        (a change in the same clock tick as the listing could not be told apart otherwise).
        """
        memo = cache.load(self.cache / "counts")
        memo = memo if isinstance(memo, dict) and memo.get("v") == 2 else {"v": 2}
        now = time.time()
        changed = False
        out = {}
        for state in states:
            try:
                st = os.stat(self.swarm / state)
            except FileNotFoundError:
                out[state] = 0
                continue
            key = (st.st_mtime_ns, st.st_ino)
            hit = memo.get(state)
            if hit is not None and hit[0] == key:
                out[state] = hit[1]
                continue
            out[state] = self._count(state)
            if now - st.st_mtime > 2:
                memo[state] = (key, out[state])
                changed = True
        if changed:
            cache.save(self.cache / "counts", memo)
        return out

    def _count(self, state: str) -> int:
        """Counted on the joined listing: several times faster than a loop over 10,000 names."""
        try:
            names = os.listdir(self.swarm / state)
        except FileNotFoundError:
            names = []
        if not names:
            return 0
        joined = "\n" + "\n".join(names) + "\n"
        ends = (".reason", CLAIM) if state == "running" else (".reason",)
        skip = joined.count("\n.") + sum(joined.count(f"{end}\n") for end in ends)
        if skip:  # a hidden .reason file would be subtracted twice: count exactly
            skip = sum(1 for n in names if n.startswith(".") or n.endswith(ends))
        return len(names) - skip

    def stopped(self) -> bool:
        """The brake: a plain existence test, no parsing."""
        return os.path.lexists(self.stop)


def is_room(path: Path) -> bool:
    return (path / "control-room").is_dir()


def find_room(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Room:
    """The room named by ``--room``/``CONTROL_ROOM``, else the cwd or its nearest parent room."""
    named = explicit if explicit not in (None, "") else os.environ.get(ENV_VAR) or None
    if named is not None:
        path = Path(named).expanduser().absolute()
        if not is_room(path):
            raise NoRoomError(
                f"{named}: not a control room (no control-room/ folder); "
                f"create one with `control-room init {named}`"
            )
        return Room(path)
    here = (cwd or Path.cwd()).absolute()
    for candidate in (here, *here.parents):
        if is_room(candidate):
            return Room(candidate)
    raise NoRoomError(
        f"not inside a control room ({here} and its parents have no control-room/ folder); "
        "run `control-room init` or pass --room DIR"
    )


def defaults_root() -> Path:
    """Where the default room content is: inside the installed package, or the source tree."""
    packaged = PACKAGE / "defaults"
    if packaged.is_dir():
        return packaged
    return PACKAGE.parent  # a source checkout (editable install, tests)


def templates_root() -> Path:
    return PACKAGE / "templates"
