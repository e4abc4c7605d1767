"""A room on disk (SPEC §2): where its files are, how a command finds it, and ``init``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from control_room.errors import InvalidError, NoRoomError

STATES = ("queue", "running", "done", "parked", "rejected", "cancelled")
SWARM_DIRS = (*STATES, "outbox", "results")
DEFAULT_DIRS = ("agents", "skills", "intelligence", "graveyard", "swarm")
ENV_VAR = "CONTROL_ROOM"


@dataclass(frozen=True)
class Room:
    root: Path

    @property
    def cr(self) -> Path:
        return self.root / "control-room"

    @property
    def ledger(self) -> Path:
        return self.cr / "LEDGER.md"

    @property
    def control(self) -> Path:
        return self.cr / "CONTROL.md"

    @property
    def routes(self) -> Path:
        return self.cr / "ROUTES.md"

    @property
    def context(self) -> Path:
        return self.cr / "CURRENT_CONTEXT.md"

    @property
    def digest(self) -> Path:
        return self.cr / "DIGEST.md"

    @property
    def cache(self) -> Path:
        return self.cr / ".cache"

    @property
    def stop(self) -> Path:
        return self.root / "STOP"

    @property
    def swarm(self) -> Path:
        return self.root / "swarm"

    def state_dir(self, state: str) -> Path:
        if state not in STATES:
            raise InvalidError(f"unknown task state {state!r} (valid: {', '.join(STATES)})")
        return self.swarm / state

    def counts(self) -> dict[str, int]:
        """Task files per state folder, from the directory listings alone (nothing is read).

        Hidden files (locks, temp files) and ``.reason`` files do not count. Counted on the
        joined listing, which is several times faster than a loop over 10,000 names.
        """
        out = {}
        for state in STATES:
            try:
                names = os.listdir(self.swarm / state)
            except FileNotFoundError:
                names = []
            if not names:
                out[state] = 0
                continue
            joined = "\n" + "\n".join(names) + "\n"
            skip = joined.count("\n.") + joined.count(".reason\n")
            if skip:  # a hidden .reason file would be subtracted twice: count exactly
                skip = sum(1 for n in names if n.startswith(".") or n.endswith(".reason"))
            out[state] = len(names) - skip
        return out

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
    packaged = Path(__file__).parent / "defaults"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parent.parent  # a source checkout (editable install, tests)


def templates_root() -> Path:
    return Path(__file__).parent / "templates"
