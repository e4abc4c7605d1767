"""The ROUTES.md merge driver on hand-made boards: exact merged text."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result

from control_room.knowledge.routes_merge import merge_text

TOP = "# ROUTES\n\nThe board.\n\n"
HEAD = (
    "| route | verdict | title | attempts | spend_usd | last_result | falsifier |\n"
    "|---|---|---|---|---|---|---|\n"
)
R1 = "| r1 | alive | cache the parse | 2 | 0.5 | pass t2 2026-11-30 | no gain |\n"
R2 = "| r2 | untested | vectorise | 0 | 0 |  | slower |\n"
BOTTOM = "\nNotes below the table.\n"
Run = Callable[..., Result]


def board(*rows: str, top: str = TOP, bottom: str = BOTTOM) -> str:
    return top + HEAD + "".join(rows) + bottom


def test_rows_added_on_both_sides_are_all_kept_ours_first() -> None:
    r3 = "| r3 | untested | ours new | 0 | 0 |  | x |\n"
    r4 = "| r4 | untested | theirs new | 0 | 0 |  | y |\n"
    r5 = "| r5   |  untested | theirs other |0|0||z|\n"  # theirs' own spacing is kept
    merged = merge_text(board(R1, R2), board(R1, R2, r3), board(R1, r4, R2, r5))
    assert merged == board(R1, R2, r3, r4, r5)


def test_a_verdict_edited_on_one_side_and_a_cycle_on_the_other_both_land() -> None:
    ours = board(R1.replace("| alive |", "| promising |"), R2)
    ran = "| r1 | alive | cache the parse | 3 | 0.75 | fail t3 2026-12-01 | no gain |\n"
    merged = merge_text(board(R1, R2), ours, board(ran, R2))
    assert merged == board(
        "| r1 | promising | cache the parse | 3 | 0.75 | fail t3 2026-12-01 | no gain |\n", R2
    )
    # the same the other way round: THEIRS's verdict, OURS's cycle
    assert merge_text(board(R1, R2), board(ran, R2), ours) == merged


def test_a_persons_verdict_beats_a_first_runs_untested_to_alive_on_either_side() -> None:
    ran = "| r2 | alive | vectorise | 1 | 0.1 | pass t9 2026-12-01 | slower |\n"
    said = R2.replace("| untested |", "| promising |")
    merged = merge_text(board(R1, R2), board(R1, ran), board(R1, said))
    assert merged == board(R1, "| r2 | promising | vectorise | 1 | 0.1 | pass t9 2026-12-01 | slower |\n")
    assert merge_text(board(R1, R2), board(R1, said), board(R1, ran)) == merged


def test_the_same_hand_cell_changed_on_both_sides_takes_ours() -> None:
    ours = board(R1.replace("cache the parse", "cache it"), R2)
    theirs = board(R1.replace("cache the parse", "memoise the parse").replace("| no gain |", "| none |"), R2)
    merged = merge_text(board(R1, R2), ours, theirs)
    # title: both changed, ours wins; falsifier: only theirs changed, theirs
    assert merged == board("| r1 | alive | cache it | 2 | 0.5 | pass t2 2026-11-30 | none |\n", R2)


def test_the_cycle_cells_come_from_the_side_with_more_attempts() -> None:
    ours = board("| r1 | alive | cache the parse | 4 | 1 | pass a4 2026-12-01 | no gain |\n", R2)
    theirs = board("| r1 | alive | cache the parse | 3 | 2.5 | fail b3 2026-12-01 | no gain |\n", R2)
    assert merge_text(board(R1, R2), ours, theirs) == ours
    assert merge_text(board(R1, R2), theirs, ours) == ours  # whichever side it is
    tie = board("| r1 | alive | cache the parse | 4 | 9 | fail b4 2026-12-01 | no gain |\n", R2)
    assert merge_text(board(R1, R2), ours, tie) == ours  # a tie: ours


def test_a_row_removed_on_one_side_goes_unless_the_other_edited_it_by_hand() -> None:
    assert merge_text(board(R1, R2), board(R1), board(R1, R2)) == board(R1)
    assert merge_text(board(R1, R2), board(R1, R2), board(R2)) == board(R2)
    # a cycle's counters alone do not keep it
    ran = "| r2 | alive | vectorise | 1 | 0.1 | fail t9 2026-12-01 | slower |\n"
    assert merge_text(board(R1, R2), board(R1), board(R1, ran)) == board(R1)
    # a person's edit does: it stays, as edited
    edited = R2.replace("vectorise", "vectorise the loop")
    assert merge_text(board(R1, R2), board(R1), board(R1, edited)) == board(R1, edited)
    assert merge_text(board(R1, R2), board(R1, edited), board(R1)) == board(R1, edited)


def test_the_text_around_the_table_merges_three_way_and_ours_wins_a_collision() -> None:
    ours = board(R1, top="# ROUTES\n\nThe board, ours.\n\n")
    theirs = board(R1, bottom="\nNotes below the table.\nAnd one more from theirs.\n")
    merged = merge_text(board(R1), ours, theirs)
    assert merged == board(R1, top="# ROUTES\n\nThe board, ours.\n\n",
                           bottom="\nNotes below the table.\nAnd one more from theirs.\n")  # fmt: skip
    clash = board(R2, top="# ROUTES\n\nThe board, theirs.\n\n")
    # the prose collides: ours; the table still merges (r1 removed there, r2 added)
    assert merge_text(board(R1), ours, clash) == board(R2, top="# ROUTES\n\nThe board, ours.\n\n")


def test_rows_both_sides_added_under_the_same_route_merge_as_cells() -> None:
    empty = board()
    ours = board("| r9 | untested | ours | 0 | 0 |  | a |\n")
    theirs = board("| r9 | alive | theirs | 1 | 0.2 | pass t 2026-12-01 | a |\n")
    assert merge_text(empty, ours, theirs) == board(
        "| r9 | untested | ours | 1 | 0.2 | pass t 2026-12-01 | a |\n"
    )
    assert merge_text("", ours, theirs) == board(
        "| r9 | untested | ours | 1 | 0.2 | pass t 2026-12-01 | a |\n"
    )


def test_a_side_without_the_table_leaves_ours_as_it_is() -> None:
    ours = board(R1)
    assert merge_text(board(R1), ours, "# ROUTES\n\nsomeone deleted the table\n") == ours
    broken = "# ROUTES\n\n| id | x |\n|---|---|\n| r1 | y |\n"
    assert merge_text(board(R1), broken, board(R1, R2)) == broken


def test_crlf_boards_stay_crlf() -> None:
    def crlf(text: str) -> str:
        return text.replace("\n", "\r\n")

    r3 = "| r3 | untested | new | 0 | 0 |  | x |\n"
    merged = merge_text(crlf(board(R1)), crlf(board(R1.replace("alive", "killed"))), crlf(board(R1, r3)))
    assert merged == crlf(board(R1.replace("alive", "killed"), r3))
