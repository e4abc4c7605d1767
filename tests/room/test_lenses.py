"""control_room.room.lenses: a lens file read (defaults, sees, caps), its one-line errors, the lens names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from control_room import errors
from control_room.errors import InvalidError
from control_room.room import lenses
from control_room.room.layout import Room
from control_room.room.lenses import Lens

SEES = "diff, history, code, spec, positions"


def lens_file(room: Room, name: str, front: str, body: str = "# Lens\n\nLook hard.\n") -> Path:
    path = lenses.folder(room) / f"{name}.md"
    path.write_text(f"---\n{front}---\n{body}")
    return path


def refused(room: Room, name: str) -> str:
    with pytest.raises(InvalidError) as caught:
        lenses.read(room, name)
    assert caught.value.exit_code == errors.INVALID
    return str(caught.value)


def test_the_folder_is_agents_lenses(room: Room) -> None:
    assert lenses.folder(room) == room.root / "agents" / "lenses"


def test_a_new_room_has_the_five_lenses_of_init(room: Room) -> None:
    assert lenses.names(room) == ["arbiter", "claims", "correctness", "falsifier", "security"]
    security = lenses.read(room, "security")
    template = (lenses.folder(room) / "security.md").read_text()
    assert security == Lens(
        "security", ("diff",), None, None, 0.5, 600.0, template.split("---\n", 2)[2].strip()
    )
    assert security.prompt.startswith("# Lens: security\n\nYou read the change (the diff) only")
    assert lenses.read(room, lenses.ARBITER).sees == ("positions", "spec")


def test_every_setting_is_read_and_the_prompt_is_stripped(room: Room) -> None:
    front = "sees: [spec, code]\nadapter: codex\nmodel: m-big\nmax_cost_usd: 2\nwall_clock_s: 90.5\n"
    lens_file(room, "style", front, "\n\n# Lens: style\n\nNames matter.\n\n\n")
    assert lenses.read(room, "style") == Lens("style", ("spec", "code"), "codex", "m-big", 2.0, 90.5,
                                              "# Lens: style\n\nNames matter.")  # fmt: skip


def test_one_word_of_sees_is_a_list_and_unset_caps_take_the_defaults(room: Room) -> None:
    lens_file(room, "plain", "sees: diff\nadapter:\nmax_cost_usd:\n")
    defaults = (lenses.DEFAULT_COST, float(lenses.DEFAULT_WALL_S))
    assert lenses.read(room, "plain") == Lens(
        "plain", ("diff",), None, None, *defaults, "# Lens\n\nLook hard."
    )


def test_a_lens_name_that_is_no_id_is_refused(room: Room) -> None:
    assert refused(room, "../CONTROL") == "lens '../CONTROL' is not a valid lens name"
    assert refused(room, "Style") == "lens 'Style' is not a valid lens name"


def test_a_missing_lens_lists_the_lenses_there_are(room: Room) -> None:
    path = lenses.folder(room) / "nope.md"
    assert refused(room, "nope") == (
        f"lens 'nope' has no file: {path} is missing "
        "(lenses here: arbiter, claims, correctness, falsifier, security)"
    )
    shutil.rmtree(lenses.folder(room))
    assert refused(room, "nope") == f"lens 'nope' has no file: {path} is missing (lenses here: none)"


@pytest.mark.parametrize(("sees", "got"), [
    ("sees: [diff, smell]\n", "['diff', 'smell']"),
    ("sees: []\n", "[]"),
    ("", "None"),
    ("sees: {diff: 1}\n", "{'diff': 1}"),
    ("sees: 3\n", "3"),
])  # fmt: skip
def test_sees_must_list_what_a_reviewer_can_be_shown(room: Room, sees: str, got: str) -> None:
    path = lens_file(room, "odd", sees)
    assert refused(room, "odd") == f"{path}: sees must list some of {SEES} (got {got})"


@pytest.mark.parametrize(("line", "message"), [
    ("max_cost_usd: 0\n", "max_cost_usd must be a number > 0 (got 0)"),
    ("max_cost_usd: -1.5\n", "max_cost_usd must be a number > 0 (got -1.5)"),
    ("max_cost_usd: cheap\n", "max_cost_usd must be a number > 0 (got 'cheap')"),
    ("wall_clock_s: true\n", "wall_clock_s must be a number > 0 (got True)"),
    ("wall_clock_s: 10m\n", "wall_clock_s must be a number > 0 (got '10m')"),
])  # fmt: skip
def test_caps_must_be_positive_numbers(room: Room, line: str, message: str) -> None:
    path = lens_file(room, "capped", "sees: [diff]\n" + line)
    assert refused(room, "capped") == f"{path}: {message}"


def test_a_changed_lens_file_is_read_afresh(room: Room) -> None:
    lens_file(room, "style", "sees: [diff]\n")
    assert lenses.read(room, "style").sees == ("diff",)
    lens_file(room, "style", "sees: [diff, history]\nmodel: m2\n")
    assert (lenses.read(room, "style").sees, lenses.read(room, "style").model) == (("diff", "history"), "m2")


def test_names_are_the_md_files_whose_stem_is_an_id(room: Room) -> None:
    for name in ("Upper.md", ".hidden.md", "notes.txt", "z-last.md"):
        (lenses.folder(room) / name).write_text("x\n")
    (lenses.folder(room) / "drafts.md").mkdir()  # a folder, not a lens
    assert lenses.names(room) == ["arbiter", "claims", "correctness", "falsifier", "security", "z-last"]


def test_no_lens_folder_means_no_lenses(room: Room) -> None:
    shutil.rmtree(lenses.folder(room))
    assert lenses.names(room) == []


def test_check_is_a_command_that_checks_the_reviewers_claims(room: Room) -> None:
    lens_file(room, "a", "sees: [code]\ncheck: python check.py --strict\n")
    lens_file(room, "b", "sees: [code]\ncheck: [python, check.py]\n")
    lens_file(room, "c", "sees: [code]\n")
    assert [lenses.read(room, n).check for n in "abc"] == [
        "python check.py --strict",
        ["python", "check.py"],
        None,
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("check: 5", "check must be a command, a string or a list of strings (got 5)"),
        ("check: ''", "check must be a command, a string or a list of strings (got '')"),
        ("check: [python, 1]", "check must be a command, a string or a list of strings (got ['python', 1])"),
        (
            "check: make && ./check",
            "check `make && ./check` needs a shell (&&), and commands run without one: "
            "write `sh -c 'make && ./check'` to use a shell on purpose",
        ),
    ],
)
def test_a_check_that_cannot_run_is_refused(room: Room, line: str, message: str) -> None:
    path = lens_file(room, "x", f"sees: [code]\n{line}\n")
    assert refused(room, "x") == f"{path}: {message}"
