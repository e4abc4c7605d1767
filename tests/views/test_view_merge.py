"""The views' merge driver (CURRENT_CONTEXT.md, DIGEST.md) on hand-made files: exact text."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result

from control_room.store.markdown import AUTO_BEGIN, AUTO_END
from control_room.views.merge import merge_text

Run = Callable[..., Result]
FREE = (
    "# CURRENT CONTEXT\n\n## Objective\n\nBeat 12 ms.\n\n"
    "## Now\n\nRoutes r1 and r2.\n\n## Rules of thumb\n\nNone yet.\n\n"
)


def context(auto: str, free: str = FREE, after: str = "") -> str:
    return f"{free}{AUTO_BEGIN}\n{auto}\n{AUTO_END}\n{after}"


def test_a_hand_edit_on_one_side_survives_both_sides_refreshing_the_block() -> None:
    base = context("_Refreshed 10:00_")
    ours = context(
        "_Refreshed 10:05 (ours)_", FREE.replace("Routes r1 and r2.\n", "Routes r1 and r2.\nr2 is slow.\n")
    )
    theirs = context("_Refreshed 10:07 (theirs)_")
    expected = context(
        "_Refreshed 10:05 (ours)_", FREE.replace("Routes r1 and r2.\n", "Routes r1 and r2.\nr2 is slow.\n")
    )
    assert merge_text(base, ours, theirs, "CURRENT_CONTEXT.md") == expected
    # the edit on THEIRS's side: it lands, under OURS's block
    mine = context("_Refreshed 10:05 (ours)_")
    theirs_edit = context("_Refreshed 10:07 (theirs)_", FREE.replace("Beat 12 ms.", "Beat 10 ms."))
    assert merge_text(base, mine, theirs_edit, "CURRENT_CONTEXT.md") == context(
        "_Refreshed 10:05 (ours)_", FREE.replace("Beat 12 ms.", "Beat 10 ms.")
    )


def test_edits_on_both_sides_that_do_not_collide_both_survive() -> None:
    base = context("b", after="A footer.\n")
    ours = context("o", FREE.replace("Beat 12 ms.", "Beat 11 ms."), after="A footer.\n")
    theirs = context("t", FREE, after="A footer, edited.\n")
    assert merge_text(base, ours, theirs, "control-room/CURRENT_CONTEXT.md") == context(
        "o", FREE.replace("Beat 12 ms.", "Beat 11 ms."), after="A footer, edited.\n"
    )


def test_edits_that_collide_keep_all_of_ours() -> None:
    base = context("b")
    ours = context("o", FREE.replace("Beat 12 ms.", "Beat 11 ms."))
    theirs = context("t", FREE.replace("Beat 12 ms.", "Beat 9 ms."))
    assert merge_text(base, ours, theirs, "CURRENT_CONTEXT.md") == ours


def test_a_side_whose_markers_were_removed_merges_its_text_as_free() -> None:
    base = context("b")
    theirs = FREE + "Someone deleted the block and wrote this.\n"
    assert merge_text(base, context("o"), theirs, "CURRENT_CONTEXT.md") == context(
        "o", FREE + "Someone deleted the block and wrote this.\n"
    )


def test_digest_is_ours() -> None:
    assert (
        merge_text("# DIGEST\nold\n", "# DIGEST\nours\n", "# DIGEST\ntheirs\n", "DIGEST.md")
        == "# DIGEST\nours\n"
    )
    # without a path, a file with no auto block is taken as generated
    assert merge_text("# DIGEST\nold\n", "# DIGEST\nours\n", "# DIGEST\ntheirs\n") == "# DIGEST\nours\n"
