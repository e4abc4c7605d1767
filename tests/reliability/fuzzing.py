"""What the fuzz tests of bad input share (#23 item 5): the hypothesis settings (bounded,
derandomized: the same examples on every run and in CI), strategies for hostile values, and
the three properties every input must keep: accepted, or refused with one line (a
``ControlRoomError``, never another exception); nothing outside the room written; no ledger
line forged (``ledger verify`` clean, the rows grown by exactly what was appended, each
written by who wrote it)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from control_room.errors import BUG, ControlRoomError
from control_room.ledger.line import parse
from control_room.ledger.read import table_lines
from control_room.ledger.verify import verify
from control_room.room.layout import Room

WRITER = "tester"  # tests/conftest.py's writer: every line appended in-process is its


SCALE = float(os.environ.get("FUZZ_SCALE", "1"))  # FUZZ_SCALE=10: ten times the examples, a deeper run
FRESH = os.environ.get("FUZZ_FRESH") == "1"  # new examples each run: `pytest --hypothesis-seed=N` repeats one


def bounded(n: int) -> Any:
    """``n`` examples (times ``FUZZ_SCALE``), the same ones every run (derandomized: CI sees what
    a person sees), no deadline (2 shared cores); a room fixture reused across the examples,
    each example putting back what it must."""
    return settings(
        max_examples=max(1, int(n * SCALE)),
        derandomize=not FRESH,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


# Values a hostile or careless author writes where an id, a path, a number or a text goes.
NASTY = st.sampled_from(
    [
        "", " ", "\n", "x", "t1", "../x", "../../etc/passwd", "/etc/passwd", "~/x", "a/b", "./a", ".", "..",
        "a|b", "| x | y |", "a\nb", "a\r\nb", "\x00", "\x1b[2J", "\u2028", "\ud800", "\ufeff", "a && b",
        "$(id)", "`id`", "sh -c 'x'", "x" * 65, "x" * 1500, "Infinity", "NaN", "-1", "1e400", "--- ",
        "---", "...", "# h", "## r — t", "### t", "DECISION: x", "key: value", "{", "[", "null", "true",
        "-", "- x", "*", "'", '"', "\\", "\\|", "é", "日本", "\U0001f600",
    ]
)  # fmt: skip
TEXT = NASTY | st.text(max_size=40)
NUMBER = st.integers(-(10**20), 10**20) | st.floats() | st.sampled_from([0, -0.0, 1e15, 1e16])
SCALAR = st.none() | st.booleans() | NUMBER | TEXT
JSON = st.recursive(
    SCALAR, lambda c: st.lists(c, max_size=4) | st.dictionaries(TEXT, c, max_size=4), max_leaves=10
)


def one_line(exc: BaseException) -> str:
    """The message of a refusal, checked to be what the CLI prints on one line."""
    assert isinstance(exc, ControlRoomError), f"{type(exc).__name__} escaped: {exc!r}"
    assert exc.exit_code != BUG, exc
    message = str(exc)
    assert message.strip() and "\n" not in message and "\r" not in message, repr(message)
    return message


def refused_or(call: Callable[[], Any]) -> tuple[Any, str | None]:
    """(result, None) if ``call`` accepted, (None, message) if it refused with one line; any
    other exception fails the test (with its traceback)."""
    try:
        return call(), None
    except ControlRoomError as exc:
        return None, one_line(exc)


def rows(room: Room) -> list[str]:
    """The ledger's data rows, as physical lines."""
    return [line for _, line, _ in table_lines(room.ledger)]


@contextmanager
def ledger_grows(
    room: Room, allowed: Callable[[], int | None], writer: Callable[[], str] = lambda: WRITER
) -> Iterator[None]:
    """The ledger after the block: it verifies, and it grew by exactly ``allowed()`` rows
    (asked after the block: what the block appended; None: any number), each a well-formed line
    by ``writer()``."""
    before = rows(room)
    yield
    after = rows(room)
    assert after[: len(before)] == before, "a ledger line changed under an append"
    new = after[len(before) :]
    n = allowed()
    assert n is None or len(new) == n, new
    for line in new:
        entry = parse(line)
        assert entry is not None and entry.writer == writer(), line
    report = verify(room.ledger)
    assert report.ok, [str(p) for p in report.problems]


def outside(tmp: Path, room: Room) -> dict[str, int]:
    """Every path under ``tmp`` outside the room (name -> size): nothing may appear there.
    The room's ``..`` is ``tmp``: an escaping write lands here, or in ``tmp``'s parent."""
    found: dict[str, int] = {}
    for top in (tmp, tmp.parent):
        for dirpath, dirnames, filenames in os.walk(top):
            here = Path(dirpath)
            if here == tmp.parent:
                dirnames[:] = [d for d in dirnames if d == tmp.name]  # tmp's siblings are other tests'
            if here == room.root or room.root in here.parents:
                dirnames[:] = []
                continue
            for n in filenames:
                try:
                    found[str(here / n)] = (here / n).lstat().st_size
                except FileNotFoundError:
                    pass
    return found
