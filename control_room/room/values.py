"""Small value checks shared by tasks, settings, routes and intelligence, and the one wording
for an id that is taken."""

from __future__ import annotations

import math
import re

from control_room.errors import InvalidError

# Patterns in this package are compiled on first use (``re`` keeps them): every command imports
# these modules, few need every pattern.
ID_RE = r"[a-z0-9][a-z0-9._-]{0,63}"


def is_id(value: object) -> bool:
    """A task, route or role id: ``[a-z0-9][a-z0-9._-]{0,63}``, never a path."""
    if not isinstance(value, str):
        return False
    if not _ID:
        _ID.append(re.compile(ID_RE))  # asked thousands of times in a queue's first scan
    return _ID[0].fullmatch(value) is not None


_ID: list[re.Pattern[str]] = []


def is_number(v: object) -> bool:
    """A finite JSON number of sane size (a 400-digit integer is not a cost or a time)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) <= 10**15
    return isinstance(v, float) and math.isfinite(v) and abs(v) <= 1e15


ID_RULE = "ids match [a-z0-9][a-z0-9._-]{0,63}"


def check_id(value: str, what: str) -> str:
    """``value`` if it is an id, else an ``InvalidError`` in the one wording for bad ids."""
    if not is_id(value):
        raise InvalidError(f"{value!r} is not a {what} id ({ID_RULE})")
    return value


def exists_already(kind: str, id: str, where: str) -> str:
    """The one wording for an id that is taken, whatever it names: ``<kind> <id> exists already
    (<where>)``. Callers may add what to do after a semicolon."""
    return f"{kind} {id} exists already ({where})"
