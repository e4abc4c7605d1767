"""Whether and how a room is shared (CONTROL.md ``remote:``): the ``Shared`` of a room, on its
branch (asked of git once a process while ``.git/HEAD`` stays the same file), and whether its
STOP is committed for every machine. What a shared room then does is ``sync``'s."""

from __future__ import annotations

from pathlib import Path

from control_room import errors, git, proc
from control_room.dispatch.round import claims
from control_room.dispatch.shared.sync import Shared
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings

_BRANCHES: dict[Path, tuple[tuple[int, int, int], str]] = {}  # room -> (.git/HEAD's stat, its branch)


def stop_is_shared(room: Room) -> bool:
    """Whether STOP is committed in a shared room (so a commit may lift it): a look at
    CONTROL.md's text, then git's index; False in any other room, at no cost."""
    if not settings_file.mentions(room, "remote"):
        return False
    try:
        code, _, _ = git.run(room.root, "ls-files", "--error-unmatch", "STOP")
    except proc.ExecutableNotFound:
        return False
    return code == 0


def shared(room: Room, settings: Settings) -> Shared | None:
    """The room's sharing, or None when CONTROL.md sets no ``remote``. A ``remote`` on a room
    that is no git work tree, or on a detached HEAD, is a RoomInvalidError."""
    if not settings.remote:
        return None
    probe = Shared(room, settings.remote, "", claims.shared_host(room))
    code, out, err = _branch(probe)
    if code != 0 and "not a git repository" in err:
        raise errors.RoomInvalidError(
            f"CONTROL.md remote: {settings.remote} but {room.root} is not a git work tree "
            "(clone the shared room, or `git init` it and add the remote; docs/many-machines.md)"
        )
    if code != 0 or not out.strip():
        raise errors.RoomInvalidError(
            f"CONTROL.md remote: {settings.remote} but {room.root} is on no branch (detached HEAD)"
        )
    return Shared(room, settings.remote, out.strip(), probe.host)


def _branch(probe: Shared) -> tuple[int, str, str]:
    """``git symbolic-ref --short HEAD``, asked once a process while the clone's ``.git/HEAD``
    stays the same file (a checkout replaces it): a cycle asks at its start and at its end."""
    try:
        st = (probe.room.root / ".git" / "HEAD").stat()
        sig: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:  # a worktree's or a submodule's .git is a file; a room inside a clone has none
        sig = None
    known = _BRANCHES.get(probe.room.root)
    if sig is not None and known is not None and known[0] == sig:
        return 0, known[1], ""
    code, out, err = probe.git("symbolic-ref", "-q", "--short", "HEAD")
    if code == 0 and out.strip() and sig is not None:
        _BRANCHES[probe.room.root] = (sig, out.strip())
    return code, out, err
