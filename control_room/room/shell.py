"""Task commands run without a shell (SPEC §4 step 6): a ``validator`` or ``command`` string
is split into words the way a shell would split it, and the words are run as they are.

A string that only a shell could run (``make && ./bench``, ``cd src; pytest``, ``a | b``) would
fail with a baffling error, or pass for the wrong reason (``echo ok && false`` prints ``ok &&
false`` and exits 0), so it is refused: the task file is not valid. A person who wants a shell
says so, ``sh -c 'make && ./bench'``, and the quoted part reaches ``sh`` whole.
"""

from __future__ import annotations

import shlex

from control_room.errors import InvalidError
from control_room.room import tasks
from control_room.room.tasks import Task

ARGV_FIELDS = tuple(f.name for f in tasks.FIELDS if f.kind == "argv")  # validator, command
_PAIRS = ("&&", "||", "$(")
_SINGLES = ";|<>`"
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ./_-=+,:@%~^[]{}#!?*")
_SHOWN = 100  # longer strings are cut in the message


def syntax(command: str) -> str | None:
    """The first shell operator in ``command`` outside quotes (``;`` ``&&`` ``||`` ``|`` ``>``
    ``<`` a backtick ``$(``), or ``cd`` when it is the first word; None if there is none.

    Quotes and backslashes are read as a shell (and ``shlex.split``) reads them: what is quoted
    is one plain word, so ``python -c 'print(1 | 2)'`` is no shell syntax.
    """
    words = command.split(None, 1)
    if words and words[0] == "cd":
        return "cd"
    return _scan(command)[0]


def unclosed(command: str) -> str:
    """The quote left open at the end of ``command`` (``shlex.split`` would refuse it), or ''."""
    return _scan(command)[1]


def _scan(command: str) -> tuple[str | None, str]:
    """(the first shell operator outside quotes or None, the quote still open at the end)."""
    quote = ""
    op: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is plain (inside double quotes too)
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif op is None and command[i : i + 2] in _PAIRS:
            op = command[i : i + 2]
        elif op is None and c in _SINGLES:
            op = c
        i += 1
    return op, quote


def _quote(text: str) -> str:
    """``text`` as one shell word, in single quotes (what ``shlex.quote`` does)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def argv_of(command: object, what: str) -> list[str]:
    """A command setting or field (a task's ``validator`` or ``command``, CONTROL.md's
    ``notify``) as argv: a list as it is, a string split as a shell would split it (but never
    run through one). ``InvalidError`` naming ``what`` if it is missing or cannot be split."""
    if isinstance(command, list):
        return [str(a) for a in command]
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError as exc:
            raise InvalidError(f"{what} cannot be split into arguments: {exc}") from None
    raise InvalidError(f"{what} is missing")


def problem(field: str, value: object) -> str | None:
    """Why ``value``, a task's ``field``, cannot run without a shell, showing the form that
    would; None if it can (a list is run as it is, never looked at)."""
    if not isinstance(value, str):
        return None
    if _PLAIN.issuperset(value) and not value.startswith("cd"):
        return None  # no quote, backslash, operator or `cd`: nothing to scan (most commands)
    short = len(value) <= _SHOWN
    shown = value if short else value[: _SHOWN - 3] + "..."
    quote = unclosed(value)
    if quote:
        return f"{field} `{shown}` has an unclosed {quote} quote: it cannot be split into words"
    op = syntax(value)
    if op is None:
        return None
    fix = _quote(value) if short else "'...'"
    return (
        f"{field} `{shown}` needs a shell ({op}), and commands run without one: "
        f"write `sh -c {fix}` to use a shell on purpose"
    )


def problems(task: Task) -> list[str]:
    """What ``problem`` says of each command string of ``task``."""
    found = (problem(name, task.get(name)) for name in ARGV_FIELDS)
    return [p for p in found if p is not None]
