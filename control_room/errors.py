"""Domain errors and the exit codes they map to: the one place exit codes are defined.

The library raises these; the CLI prints ``Error: <message>`` on one line and exits
with the error's code. Anything else escaping a command is a bug and keeps its traceback.
"""

from __future__ import annotations

# Exit codes. docs/exit-codes.md's table is generated from EXIT_CODES below.
OK = 0  # done; for `cycle`: nothing to do
BUG = 1  # an unexpected error (a traceback is printed)
USAGE = 2  # bad command line (click's own code)
NO_ROOM = 3  # not inside a room, or the room is broken
INVALID = 4  # invalid input: a task, an id, a file, a flag value
CONFLICT = 5  # a file changed under us, or a lock could not be taken in time
LEDGER_BAD = 6  # `ledger verify` found a bad line
NOT_FOUND = 7  # no such task, route or file
QUEUE_FULL = 8  # the queue holds CONTROL.md max_queued tasks already
IO_ERROR = 9  # the system refused a read or write (permissions, disk full)
PASSED = 10  # `cycle`: the task passed its validator
FAILED = 11  # `cycle`: the task failed this round
STOPPED = 12  # `cycle`/`run`: STOP exists
BUSY = 13  # `cycle`: every slot is taken
ADAPTER_MISSING = 14  # `cycle`: the adapter or its CLI is not available
ROOM_INVALID = 15  # `cycle`/`run`: the room cannot run a cycle (settings, disk...); `doctor`: a FAIL
NO_EXTRA = 16  # an optional extra (`control-room[mcp]`) is not installed
OFFLINE = 17  # `cycle`/`run`/`sync`: the room's git remote cannot be reached; nothing was claimed
PERSON_ONLY = 18  # a person's command (approve, resume, done, ...) was run inside an agent's run
PROVIDER = 19  # `cycle`: the provider refused (rate limit, quota, ...): task back in the queue, no round
HANGUP = 129  # `cycle`/`run`: SIGHUP (128 + 1)
INTERRUPTED = 130  # `cycle`/`run`: Ctrl-C, SIGINT (128 + 2)
TERMINATED = 143  # `cycle`/`run`: SIGTERM (128 + 15)
BROKEN_PIPE = 141  # the output's reader went away

# (code, name, meaning): the table of docs/exit-codes.md.
EXIT_CODES: tuple[tuple[int, str, str], ...] = (
    (OK, "OK", "done; for `cycle`: nothing to do (empty queue, or no task ready)"),
    (BUG, "BUG", "an unexpected error: a traceback is printed; please report it"),
    (USAGE, "USAGE", "bad command line (unknown option, missing argument)"),
    (
        NO_ROOM,
        "NO_ROOM",
        "not inside a room (no `control-room/` folder here or above), or the room is broken",
    ),
    (
        INVALID,
        "INVALID",
        "invalid input: a task, an id, a file, a report, CONTROL.md, "
        "a proposal file (`validate --proposals`)",
    ),
    (
        CONFLICT,
        "CONFLICT",
        "a file kept changing under us, a lock was not free in time, or the task or route is in the wrong "
        "state for this (a route killed already, not killed, not held)",
    ),
    (LEDGER_BAD, "LEDGER_BAD", "`ledger verify` found an edited, deleted, reordered or torn line"),
    (NOT_FOUND, "NOT_FOUND", "no such task, route, tombstone or file"),
    (QUEUE_FULL, "QUEUE_FULL", "`task add`: the queue already holds CONTROL.md `max_queued` tasks"),
    (IO_ERROR, "IO_ERROR", "the system refused a read or a write (permissions, disk full)"),
    (PASSED, "PASSED", "`cycle`: the task passed its validator"),
    (FAILED, "FAILED", "`cycle`: the task failed this round (back in the queue, or parked)"),
    (
        STOPPED,
        "STOPPED",
        "`cycle`/`run`: `STOP` exists, or appeared while the agent ran (task back in the queue)",
    ),
    (BUSY, "BUSY", "`cycle`: every slot (`max_parallel`) is taken; nothing changed"),
    (
        ADAPTER_MISSING,
        "ADAPTER_MISSING",
        "`cycle`: nothing ran, and a ready task's adapter CLI is not installed (it stays queued); when "
        "another ready task can run, that one runs instead",
    ),
    (
        ROOM_INVALID,
        "ROOM_INVALID",
        "`cycle`/`run`: the room cannot run a cycle (CONTROL.md invalid or names an unknown adapter, a "
        "state folder or LEDGER.md not writable or without its header, LEDGER.md or a lock file a link, "
        "the disk nearly full, the work dir missing); checked before claiming, so the task stays queued "
        "and no round is used; `doctor`: a check said FAIL",
    ),
    (
        NO_EXTRA,
        "NO_EXTRA",
        "a command needs an optional extra that is not installed (`mcp`: `pip install 'control-room[mcp]'`)",
    ),
    (
        OFFLINE,
        "OFFLINE",
        "`cycle`/`run`/`sync`: CONTROL.md `remote:` cannot be reached (fetch or push failed); the cycle "
        "claims nothing (fail closed), and what this machine did stays committed here for the next sync",
    ),
    (
        PERSON_ONLY,
        "PERSON_ONLY",
        "a person's command (`approve`, `resume`, `done`, `route reopen`, ...) was run inside an agent's "
        "run (docs/security.md); nothing changed",
    ),
    (
        PROVIDER,
        "PROVIDER",
        "`cycle`: the provider refused the run (a rate or usage limit, a quota, overloaded, a refused "
        "login): the task is back in the queue, no round used, and the adapter cools down (faults.md)",
    ),
    (HANGUP, "HANGUP", "`cycle`/`run`: ended by SIGHUP (the terminal closed); the task is back in the queue"),
    (
        INTERRUPTED,
        "INTERRUPTED",
        "`cycle`/`run`: interrupted with Ctrl-C (SIGINT); the agent's process group is ended and the task "
        "is back in the queue, no round used",
    ),
    (TERMINATED, "TERMINATED", "`cycle`/`run`: ended by SIGTERM; as for Ctrl-C"),
    (
        BROKEN_PIPE,
        "BROKEN_PIPE",
        "the output's reader went away (`control-room ... \\| head`); nothing more is printed",
    ),
)


class ControlRoomError(Exception):
    """Base of every error a user can cause; carries its exit code."""

    exit_code = BUG

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class NoRoomError(ControlRoomError):
    exit_code = NO_ROOM


class InvalidError(ControlRoomError):
    exit_code = INVALID


class ConflictError(ControlRoomError):
    exit_code = CONFLICT


class LedgerError(ControlRoomError):
    exit_code = LEDGER_BAD


class NotFoundError(ControlRoomError):
    exit_code = NOT_FOUND


class QueueFullError(ControlRoomError):
    exit_code = QUEUE_FULL


class AdapterMissingError(ControlRoomError):
    exit_code = ADAPTER_MISSING


class RoomInvalidError(ControlRoomError):
    """The room cannot run a cycle: the room's fault, never a task's."""

    exit_code = ROOM_INVALID


class PersonOnlyError(ControlRoomError):
    """Only a person decides this, and this process runs inside an agent's run."""

    exit_code = PERSON_ONLY


class OfflineError(ControlRoomError):
    """The room's git remote cannot be reached: a shared room claims nothing without it."""

    exit_code = OFFLINE
