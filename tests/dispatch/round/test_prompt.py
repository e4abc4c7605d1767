"""dispatch.round.prompt: what an agent is told, in a fixed order, and how big it is."""

from __future__ import annotations

import pytest
from support import probe_task

from control_room.dispatch.round import prompt
from control_room.errors import InvalidError
from control_room.room import settings
from control_room.room.layout import Room

HEADINGS = [
    "# Brief for task t1",
    "## Your role: engineer",
    "## Report format",
    "## Current context",
    "## Digest",
    "## Field guide",
    "## This route so far",
    "## Your task",
]


def test_the_parts_come_in_a_fixed_order(room: Room) -> None:
    task = probe_task("t1", route="r1", last_failure="validator exited 1", rounds=1)
    p = prompt.assemble(room, task, "engineer", settings.load(room), history="2 attempts so far")
    found = [
        line for line in p.text.splitlines() if line.startswith("#") and line.lstrip("#").startswith(" ")
    ]
    assert [h for h in found if h in HEADINGS] == HEADINGS
    tail = p.text[p.text.index("## Your task") :]
    assert "id: t1\nobjective: objective of t1\n" in tail
    assert "What failed in round 1 (do not repeat it):\nvalidator exited 1\n" in tail
    assert p.warnings == []


def test_no_route_history_no_section(room: Room) -> None:
    p = prompt.assemble(room, probe_task("t1"), "engineer", settings.load(room))
    assert "## This route so far" not in p.text


def test_the_field_guide_is_capped_and_the_cap_is_a_warning(room: Room) -> None:
    guide = room.root / "intelligence" / "FIELD_GUIDE.md"
    guide.write_text("".join(f"line {k}\n" for k in range(1, 11)))
    s = settings.load(room).replace(field_guide_max_lines=3)
    p = prompt.assemble(room, probe_task("t1"), "engineer", s)
    section = p.text[p.text.index("## Field guide") : p.text.index("## Your task")]
    assert section == "## Field guide\n\nline 1\nline 2\nline 3\n\n"
    assert p.warnings == [
        "intelligence/FIELD_GUIDE.md has 10 lesson lines, over the cap of 3: only the first 3 were injected"
    ]


def section(p: prompt.Prompt) -> str:
    return p.text[p.text.index("## Field guide") : p.text.index("## Your task")]


def test_the_shipped_field_guide_injects_nothing(room: Room) -> None:
    """Its guidance and examples are in an HTML comment: a new room's prompts carry no lesson."""
    guide = (room.root / "intelligence" / "FIELD_GUIDE.md").read_text()
    assert "<!--" in guide and "(task bench-noise-1)" in guide
    p = prompt.assemble(room, probe_task("t1"), "engineer", settings.load(room))
    assert section(p) == "## Field guide\n\n(empty)\n\n"


def test_only_lessons_are_injected_and_counted(room: Room) -> None:
    guide = room.root / "intelligence" / "FIELD_GUIDE.md"
    guide.write_text(
        guide.read_text()
        + "\n- lesson one (task a-1)\n\n<!-- a note for people -->\n- lesson <!-- inline -->two (task b-2)\n"
        + "<!-- left open\n- not a lesson\n"
    )
    s = settings.load(room).replace(field_guide_max_lines=2)
    p = prompt.assemble(room, probe_task("t1"), "engineer", s)
    assert section(p) == "## Field guide\n\n- lesson one (task a-1)\n- lesson two (task b-2)\n\n"
    assert p.warnings == []


def test_the_text_older_rooms_were_given_is_not_injected(room: Room) -> None:
    old = ["# Field guide", "", *sorted(prompt.SHIPPED_BEFORE_0_3), "", "- a real lesson (task c-3)"]
    (room.root / "intelligence" / "FIELD_GUIDE.md").write_text("\n".join(old) + "\n")
    p = prompt.assemble(room, probe_task("t1"), "engineer", settings.load(room))
    assert section(p) == "## Field guide\n\n- a real lesson (task c-3)\n\n"


def test_a_missing_report_format_skill_is_an_error(room: Room) -> None:
    (room.root / "skills" / "report-format.md").unlink()
    with pytest.raises(InvalidError) as err:
        prompt.assemble(room, probe_task("t1"), "engineer", settings.load(room))
    assert str(err.value) == f"{room.root / 'skills' / 'report-format.md'} is missing"


def test_pressure_counts_bytes_tokens_and_the_share_of_the_window() -> None:
    p = prompt.Prompt("é" * 10, [])
    assert p.pressure(100) == {
        "prompt_bytes": 20,
        "prompt_tokens_est": 3,
        "context_window": 100,
        "context_pressure": 0.03,
    }


def test_a_lesson_is_one_clean_line_and_at_most_its_cap(room: Room) -> None:
    s = settings.load(room)
    guide = room.root / "intelligence" / "FIELD_GUIDE.md"
    before = guide.read_text(encoding="utf-8")
    with pytest.raises(
        InvalidError, match=r"^lesson refused: it is 2001 characters long, over the cap of 2000 "
    ):
        prompt.add_lesson(room, s, "x" * 2001)
    with pytest.raises(InvalidError, match=r"^lesson refused: it must be a string, not int$"):
        prompt.add_lesson(room, s, 5)  # type: ignore[arg-type]
    assert guide.read_text(encoding="utf-8") == before
    assert prompt.LESSON_MAX == 2000
    prompt.add_lesson(room, s, "bench\n- FORGED \x1b[31mred\x1b[0m five times")
    assert guide.read_text(encoding="utf-8") == before + "- bench - FORGED red five times\n"
