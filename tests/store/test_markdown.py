"""control_room.store.markdown: the auto block is replaced or appended, and the text around it is kept."""

from __future__ import annotations

import pytest

from control_room.store.markdown import AUTO_BEGIN, AUTO_END, replace_auto_block

HUMAN_TOP = "# CONTEXT\r\n\nA person's notes, with trailing spaces   \n\tand a tab.\n\n"
HUMAN_BOTTOM = "\n## After the block\nmore notes, no final newline"


def test_replace_auto_block_keeps_everything_outside_the_markers() -> None:
    text = f"{HUMAN_TOP}{AUTO_BEGIN}\nold generated\nlines\n{AUTO_END}\n{HUMAN_BOTTOM}"
    out = replace_auto_block(text, "new body\n\n")
    assert out == f"{HUMAN_TOP}{AUTO_BEGIN}\nnew body\n{AUTO_END}\n{HUMAN_BOTTOM}"


def test_replace_auto_block_is_idempotent() -> None:
    text = f"{HUMAN_TOP}{AUTO_BEGIN}\n{AUTO_END}\n{HUMAN_BOTTOM}"
    once = replace_auto_block(text, "body")
    assert replace_auto_block(once, "body") == once


@pytest.mark.parametrize(
    ("text", "sep"),
    [("no newline at end", "\n\n"), ("one newline\n", "\n"), ("two newlines\n\n", ""), ("", "")],
)
def test_replace_auto_block_appends_when_markers_are_missing(text: str, sep: str) -> None:
    out = replace_auto_block(text, "body")
    assert out == f"{text}{sep}{AUTO_BEGIN}\nbody\n{AUTO_END}\n"


def test_replace_auto_block_with_a_removed_end_marker_never_eats_human_text() -> None:
    # A person deleted the end marker. The first refresh appends a whole block; the human
    # text after the orphan begin marker must survive every later refresh too.
    text = f"top\n{AUTO_BEGIN}\nhuman notes written after the marker\n"
    first = replace_auto_block(text, "body 1")
    assert first == f"{text}\n{AUTO_BEGIN}\nbody 1\n{AUTO_END}\n"
    second = replace_auto_block(first, "body 2")
    assert "human notes written after the marker\n" in second
    assert second == f"{text}\n{AUTO_BEGIN}\nbody 2\n{AUTO_END}\n"
