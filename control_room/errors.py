"""Domain errors and the exit codes they map to: the one place exit codes are defined.

The library raises these; the CLI prints ``Error: <message>`` on one line and exits
with the error's code. Anything else escaping a command is a bug and keeps its traceback.
"""

from __future__ import annotations

# Exit codes, documented in docs/exit-codes.md. Keep the two in step.
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
