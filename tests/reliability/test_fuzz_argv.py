"""Bad input, fuzzed (#23 item 5), in-process: the command line. Each command that takes a
person's words (`task add`'s flags, `route add/kill/reopen`, levers, branches, `approve`,
`done`, `stop --reason`, `task fanout`, `scorecard --since`, ids everywhere) given hostile
values, bytes that were not UTF-8 among them: it answers, or refuses in one line (a usage error
is click's, exit 2), a refusal appends no ledger line, every line appended is the person's, the
ledger verifies; nothing outside the room is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from fuzzing import NASTY, TEXT, bounded, ledger_grows, outside
from hypothesis import event, example, given
from hypothesis import strategies as st
from support import VALID_TASK

from control_room.errors import BUG, USAGE
from control_room.room.layout import Room

Run = Callable[..., Result]
WORD = (
    NASTY
    | TEXT
    | st.sampled_from(["bad \udcff byte", "\udcff", "t1", "r1", "gpu", "security", "30m", "1", "0"])
)
ID = st.sampled_from(["t1", "r1", "lv1", "new-1", "T1", "../t1", "t1/x", "", "-t", "x" * 65]) | WORD

TEMPLATES: tuple[tuple[str, ...], ...] = (
    ("task", "add", "--objective", "{W}", "--falsifier", "{W}", "--validator", "{W}", "--max-cost", "{W}",
     "--wall-clock", "{W}", "--kill-condition", "{W}"),
    ("task", "add", "--objective", "do it", "--falsifier", "f", "--validator", "true", "--max-cost", "1",
     "--wall-clock", "10m", "--kill-condition", "k", "--{O}", "{I}"),
    ("task", "add", "--objective", "{W}", "--falsifier", "f", "--validator", "true", "--max-cost", "1",
     "--wall-clock", "10m", "--kill-condition", "k", "--route", "{I}", "--new-route"),
    ("route", "add", "{I}", "--title", "{W}", "--falsifier", "{W}"),
    ("route", "kill", "{I}", "--verdict", "{W}", "--reopen-if", "{W}"),
    ("route", "kill", "r1", "--verdict", "v", "--reopen-if", "r", "--evidence", "{I}", "--what", "{W}"),
    ("route", "reopen", "{I}", "--because", "{W}"),
    ("route", "show", "{I}"), ("route", "resume", "{I}", "--because", "{W}"),
    ("lever", "add", "{I}", "--title", "{W}", "--because", "{W}"),
    ("lever", "set", "{I}", "{W}", "--because", "{W}"),
    ("branch", "add", "{I}", "--title", "{W}", "--because", "{W}"),
    ("approve", "{I}", "--gate", "{W}", "--by", "{W}"), ("done", "{I}", "--by", "{W}"),
    ("stop", "--reason", "{W}"), ("task", "show", "{I}"), ("task", "fanout", "{I}", "--slice", "{W}"),
    ("task", "fanout", "t1", "--slice", "a: do a", "--slice", "{W}", "--owns-of", "{W}",
     "--validator-of", "{W}"),
    ("scorecard", "--since", "{W}"), ("graveyard", "show", "{I}"), ("task", "list", "--state", "{W}"),
)  # fmt: skip
OPTIONS = (
    "id",
    "role",
    "route",
    "adapter",
    "model",
    "dep",
    "owns",
    "gate",
    "review",
    "priority",
    "extra-arg",
)


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    fill = {"{W}": WORD, "{I}": ID, "--{O}": st.sampled_from(OPTIONS).map(lambda o: f"--{o}")}
    return [draw(fill[a]) if a in fill else a for a in draw(st.sampled_from(TEMPLATES))]


def _usage(result: Result) -> bool:
    """click's own refusal of the command line: exit 2, its usage, then one `Error:` line."""
    lines = result.stderr.splitlines()
    return result.exit_code == USAGE and bool(lines) and lines[-1].startswith("Error: ")


@bounded(400)
@given(args=argv())
@example(args=["stop", "--reason", "bad \udcff byte"])  # a UnicodeEncodeError, before
@example(args=["route", "add", "r9", "--title", "bad \udcff byte"])  # likewise
@example(args=["route", "resume", "a\nb", "--because", "x"])  # its refusal on two lines, before
@example(args=["approve", "t1", "--gate", "\u2028", "--by", ""])  # likewise
def test_a_command_line_of_hostile_values(room: Room, tmp_path: Path, run: Run, args: list[str]) -> None:
    if not (room.state_dir("queue") / "t1.json").exists():
        (room.state_dir("queue") / "t1.json").write_text(
            json.dumps({**VALID_TASK, "id": "t1", "gate": ["gpu"]})
        )
        assert run("--room", str(room.root), "route", "add", "r1", "--title", "the route").exit_code == 0
    room.stop.unlink(missing_ok=True)
    before = outside(tmp_path, room)
    got: list[Result] = []
    with ledger_grows(room, lambda: None if got[0].exit_code == 0 else 0):
        got.append(run("--room", str(room.root), *args))
    result = got[0]
    event(f"exit {result.exit_code}")
    assert result.exit_code != BUG, result.output
    if result.exit_code not in (0, USAGE) or (result.exit_code == USAGE and not _usage(result)):
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    result.stdout.encode("utf-8")  # what reaches the terminal is text
    assert outside(tmp_path, room) == before  # and every line appended is the person's (ledger_grows)
