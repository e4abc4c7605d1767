"""control_room.errors: the exit codes (each once in EXIT_CODES, 128 + n for a signal), each error
class's code, and a code given to one error."""

from __future__ import annotations

import signal

import pytest

from control_room import errors


def test_every_exit_code_is_in_the_table_once() -> None:
    names = {n: v for n, v in vars(errors).items() if n.isupper() and isinstance(v, int)}
    table = {name: code for code, name, _ in errors.EXIT_CODES}
    assert table == names
    assert len({code for code, _, _ in errors.EXIT_CODES}) == len(errors.EXIT_CODES)


def test_each_meaning_is_one_line_and_every_code_fits_an_exit_status() -> None:
    for code, name, meaning in errors.EXIT_CODES:
        assert 0 <= code <= 255, name
        assert meaning and "\n" not in meaning, name


def test_a_signal_ends_a_command_with_128_plus_its_number() -> None:
    assert errors.HANGUP == 128 + signal.SIGHUP
    assert errors.INTERRUPTED == 128 + signal.SIGINT
    assert errors.TERMINATED == 128 + signal.SIGTERM
    assert errors.BROKEN_PIPE == 128 + signal.SIGPIPE


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (errors.ControlRoomError, 1),
        (errors.NoRoomError, 3),
        (errors.InvalidError, 4),
        (errors.ConflictError, 5),
        (errors.LedgerError, 6),
        (errors.NotFoundError, 7),
        (errors.QueueFullError, 8),
        (errors.AdapterMissingError, 14),
        (errors.RoomInvalidError, 15),
        (errors.OfflineError, 17),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v),
)
def test_each_error_carries_its_exit_code_and_its_message(
    kind: type[errors.ControlRoomError], code: int
) -> None:
    exc = kind("tasks/t1.json: line 2: not valid JSON")
    assert issubclass(kind, errors.ControlRoomError) and issubclass(kind, Exception)
    assert (exc.exit_code, str(exc)) == (code, "tasks/t1.json: line 2: not valid JSON")


def test_an_error_may_carry_another_code_without_changing_its_class() -> None:
    exc = errors.ControlRoomError("cannot write x: No space left on device", exit_code=errors.IO_ERROR)
    assert exc.exit_code == 9
    assert errors.InvalidError("x", exit_code=errors.OK).exit_code == 0  # a code of 0 is a code too
    assert errors.ControlRoomError("y").exit_code == errors.BUG
    assert errors.InvalidError.exit_code == errors.INVALID
