"""A test hook: SIGKILL this process at a named point, to prove a crash there loses nothing.

``CONTROL_ROOM_CRASH_AT=<name>[:<n>]`` arms it: the process that reads it kills itself
(``SIGKILL``, as the OOM killer or a pulled plug would) at the ``n``-th hit of the point
``name`` (the first, without ``:<n>``). The variable is read once, when this module is first
imported, and taken out of the environment then, so it arms this process only, never what it
starts (a cycle of ``run --parallel``, an agent, a validator, git's merge drivers). Unset, a
hit is one comparison. The points are listed in docs/testing.md ("Crash points");
tests/reliability/test_crash_injection.py drives them.
"""

from __future__ import annotations

import os

VAR = "CONTROL_ROOM_CRASH_AT"


def _parse(raw: str) -> tuple[str, int] | None:
    if not raw:
        return None
    name, sep, n = raw.rpartition(":")
    if sep and n.isdigit():
        return name, max(1, int(n))
    return raw, 1


_AT = _parse(os.environ.pop(VAR, ""))
_hits = 0


def armed() -> bool:
    """Whether a crash point is armed in this process (so a caller may skip building a name)."""
    return _AT is not None


def hit(name: str) -> None:
    """The point ``name``: the armed process dies here at the hit it was armed for."""
    global _hits
    if _AT is None or name != _AT[0]:
        return
    _hits += 1
    if _hits >= _AT[1]:
        import signal  # only in an armed process: every command imports this module

        os.kill(os.getpid(), signal.SIGKILL)
