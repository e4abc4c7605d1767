"""control_room.knowledge.intelligence: intelligence/levers.md and branches.md: add, set_state, items.

Writes rewrite or insert one row line and keep every other byte; they look only at the row
they touch, so a broken row elsewhere blocks listing (named by file and line) but not writing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import data_lines, events

from control_room.errors import INVALID, NOT_FOUND, InvalidError, NotFoundError
from control_room.knowledge import intelligence
from control_room.knowledge.intelligence import add, items, set_state
from control_room.ledger.line import parse
from control_room.room.layout import Room

HEAD = "# Levers\n\nProse a person wrote.\n\n| id | state | title | because |\n|---|---|---|---|\n"
CACHE = "| cache-input | untested | Cache the parsed input | parsing is 30% of wall time |\n"
SIMD = "| simd | pending | Port the hot loop to SIMD | task simd-1 is testing it |\n"
NOTE = "\nA hand-written note below the table.\n"
PAGE = HEAD + CACHE + SIMD + NOTE  # the rows are on lines 7 and 8


def write(room: Room, text: str, kind: str = "lever") -> Path:
    path = intelligence.path(room, kind)
    path.write_bytes(text.encode("utf-8"))
    return path


def text_of(room: Room, kind: str = "lever") -> str:
    return intelligence.path(room, kind).read_bytes().decode("utf-8")


def ledger_entries(room: Room) -> list[tuple[str, str, str]]:
    """(event, outcome, detail) of every line after init."""
    out = []
    for line in data_lines(room.ledger)[1:]:
        entry = parse(line)
        assert entry is not None
        out.append((entry.event, entry.outcome, entry.detail))
    return out


def row(id: str, state: str, title: str, because: str, line: int) -> dict[str, Any]:
    return {"id": id, "state": state, "title": title, "because": because, "line": line}


# the pages init writes ------------------------------------------------------------------------


def test_the_pages_of_a_new_room_list_their_example_row(room: Room) -> None:
    assert items(room, "lever") == [row(
        "lever-example", "untested", "Cache the parsed input between benchmark runs",
        "Example row: profiling suggests parsing takes about 30% of wall time; replace it with "
        "your first lever", 14)]  # fmt: skip
    assert [r["id"] for r in items(room, "branch")] == ["branch-example"]


def test_items_reads_rows_with_their_lines_and_filters_by_state(room: Room) -> None:
    write(room, PAGE)
    cache = row("cache-input", "untested", "Cache the parsed input", "parsing is 30% of wall time", 7)
    simd = row("simd", "pending", "Port the hot loop to SIMD", "task simd-1 is testing it", 8)
    assert items(room, "lever") == [cache, simd]
    assert items(room, "lever", "pending") == [simd]
    assert items(room, "lever", "killed") == []
    with pytest.raises(InvalidError) as err:
        items(room, "lever", "dead")
    assert str(err.value) == "state 'dead' is not one of untested, pending, killed"


def test_a_missing_page_lists_nothing(room: Room) -> None:
    intelligence.path(room, "branch").unlink()
    assert items(room, "branch") == []


def test_a_table_in_a_code_fence_is_not_the_page_table(room: Room) -> None:
    fenced = "```\n| id | state | title | because |\n|---|---|---|---|\n| x | maybe | t | b |\n```\n\n"
    write(room, fenced + PAGE)
    assert [(r["id"], r["line"]) for r in items(room, "lever")] == [("cache-input", 13), ("simd", 14)]


# add ----------------------------------------------------------------------------------------


def test_add_inserts_one_row_after_the_last_one_and_keeps_every_other_byte(room: Room) -> None:
    write(room, PAGE)
    added = add(room, "lever", "mmap", "Memory-map  the\ninput", "saves a copy | maybe")
    new = "| mmap | untested | Memory-map the input | saves a copy \\| maybe |\n"
    assert text_of(room) == HEAD + CACHE + SIMD + new + NOTE
    assert added == row("mmap", "untested", "Memory-map the input", "saves a copy | maybe", 9)
    assert items(room, "lever")[-1] == added


def test_add_without_because_leaves_the_cell_empty(room: Room) -> None:
    write(room, PAGE)
    add(room, "lever", "mmap", "Memory-map the input")
    assert text_of(room) == HEAD + CACHE + SIMD + "| mmap | untested | Memory-map the input |  |\n" + NOTE


def test_add_to_an_empty_table_goes_under_the_separator(room: Room) -> None:
    write(room, HEAD + NOTE)
    assert add(room, "lever", "mmap", "Memory-map the input")["line"] == 7
    assert text_of(room) == HEAD + "| mmap | untested | Memory-map the input |  |\n" + NOTE


def test_add_after_a_last_row_without_a_final_newline(room: Room) -> None:
    write(room, HEAD + CACHE.rstrip("\n"))
    add(room, "lever", "mmap", "Memory-map the input")
    assert text_of(room) == HEAD + CACHE + "| mmap | untested | Memory-map the input |  |\n"


def test_add_to_a_page_without_the_table_appends_one(room: Room) -> None:
    write(room, "# Levers\n\nNo table yet.", "lever")
    assert add(room, "lever", "mmap", "Memory-map the input")["line"] == 7
    assert text_of(room) == (
        "# Levers\n\nNo table yet.\n\n| id | state | title | because |\n|---|---|---|---|\n"
        "| mmap | untested | Memory-map the input |  |\n"
    )
    assert [r["id"] for r in items(room, "lever")] == ["mmap"]


def test_add_to_a_missing_page_creates_it(room: Room) -> None:
    intelligence.path(room, "branch").unlink()
    add(room, "branch", "beam-8", "Beam search of width 8", "lever solver")
    assert text_of(room, "branch") == (
        "# Branches\n\n| id | state | title | because |\n|---|---|---|---|\n"
        "| beam-8 | untested | Beam search of width 8 | lever solver |\n"
    )
    assert items(room, "branch") == [row("beam-8", "untested", "Beam search of width 8", "lever solver", 5)]


def test_add_keeps_crlf_line_endings(room: Room) -> None:
    write(room, PAGE.replace("\n", "\r\n"))
    add(room, "lever", "mmap", "Memory-map the input")
    expected = HEAD + CACHE + SIMD + "| mmap | untested | Memory-map the input |  |\n" + NOTE
    assert text_of(room) == expected.replace("\n", "\r\n")


def test_add_refuses_an_id_already_there_naming_its_line(room: Room) -> None:
    write(room, PAGE)
    with pytest.raises(InvalidError) as err:
        add(room, "lever", "simd", "Port it again")
    assert str(err.value) == (
        "lever simd exists already (intelligence/levers.md:8); its state is pending: "
        "change it with `control-room lever set simd STATE`"
    )
    assert err.value.exit_code == INVALID
    assert text_of(room) == PAGE
    assert events(room.ledger) == ["init"]


@pytest.mark.parametrize(("id", "title", "message"), [
    ("Bad_Id", "t", "lever id 'Bad_Id' must match [a-z0-9][a-z0-9._-]{0,63}"),
    ("../up", "t", "lever id '../up' must match [a-z0-9][a-z0-9._-]{0,63}"),
    ("ok", " \n ", "a lever needs a title"),
])  # fmt: skip
def test_add_refuses_a_bad_id_or_an_empty_title(room: Room, id: str, title: str, message: str) -> None:
    write(room, PAGE)
    with pytest.raises(InvalidError) as err:
        add(room, "lever", id, title)
    assert str(err.value) == message
    assert text_of(room) == PAGE
    assert events(room.ledger) == ["init"]


# set_state ----------------------------------------------------------------------------------


def test_set_rewrites_only_that_row(room: Room) -> None:
    write(room, PAGE)
    result = set_state(room, "lever", "cache-input", "killed", "no gain over 5 runs (task cache-1)")
    assert text_of(room) == (
        HEAD
        + "| cache-input | killed | Cache the parsed input | no gain over 5 runs (task cache-1) |\n"
        + SIMD
        + NOTE
    )
    assert result == {**row("cache-input", "killed", "Cache the parsed input",
                            "no gain over 5 runs (task cache-1)", 7), "was": "untested"}  # fmt: skip


def test_set_without_because_keeps_the_because_cell(room: Room) -> None:
    write(room, PAGE)
    set_state(room, "lever", "simd", "untested")
    assert text_of(room) == HEAD + CACHE + SIMD.replace("pending", "untested") + NOTE


def test_set_keeps_crlf_line_endings(room: Room) -> None:
    write(room, PAGE.replace("\n", "\r\n"))
    set_state(room, "lever", "simd", "killed", "too slow")
    expected = HEAD + CACHE + "| simd | killed | Port the hot loop to SIMD | too slow |\n" + NOTE
    assert text_of(room) == expected.replace("\n", "\r\n")


@pytest.mark.parametrize("because", ["", "  \n "])
def test_a_kill_needs_a_reason(room: Room, because: str) -> None:
    write(room, PAGE)
    with pytest.raises(InvalidError) as err:
        set_state(room, "lever", "simd", "killed", because)
    assert str(err.value) == (
        "a kill needs a reason: give --because (what ruled simd out, with the task id or "
        "tombstone that shows it)"
    )
    assert text_of(room) == PAGE
    assert events(room.ledger) == ["init"]


def test_set_refuses_an_unknown_id_or_state(room: Room) -> None:
    write(room, PAGE)
    with pytest.raises(NotFoundError) as missing:
        set_state(room, "lever", "nope", "pending")
    assert (str(missing.value), missing.value.exit_code) == (
        "no lever 'nope' in intelligence/levers.md",
        NOT_FOUND,
    )
    with pytest.raises(InvalidError) as bad:
        set_state(room, "lever", "simd", "maybe")
    assert str(bad.value) == "state 'maybe' is not one of untested, pending, killed"
    intelligence.path(room, "branch").unlink()
    with pytest.raises(NotFoundError) as gone:
        set_state(room, "branch", "beam", "pending")
    assert str(gone.value) == "no branch 'beam': intelligence/branches.md is missing"
    assert text_of(room) == PAGE
    assert events(room.ledger) == ["init"]


# broken rows --------------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "message"), [
    ("| x | maybe | t | b |\n", "state 'maybe' is not one of untested, pending, killed"),
    ("| x | Killed | t | b |\n", "state 'Killed' is not one of untested, pending, killed"),
    ("| x | untested | t |\n", "a row needs 4 cells (| id | state | title | because |), this one has 3"),
    ("| x | untested | t | b | extra |\n",
     "a row needs 4 cells (| id | state | title | because |), this one has 5"),
    ("a note typed right under the table\n",
     ("a row needs 4 cells (| id | state | title | because |), this one has 1 (a line right after "
      "the table is read as one of its rows: leave a blank line)")),
    ("| X_1 | untested | t | b |\n", "id 'X_1' must match [a-z0-9][a-z0-9._-]{0,63}"),
    ("| x | killed | t |  |\n", "lever x is killed with no reason: say why in its because cell"),
    ("| simd | untested | t | b |\n", "duplicate id 'simd' (also on line 8)"),
])  # fmt: skip
def test_a_broken_row_is_named_by_file_and_line(room: Room, bad: str, message: str) -> None:
    write(room, HEAD + CACHE + SIMD + bad + NOTE)
    with pytest.raises(InvalidError) as err:
        items(room, "lever")
    assert str(err.value) == f"intelligence/levers.md:9: {message}"
    assert err.value.exit_code == INVALID


def test_a_broken_row_does_not_block_add_or_set_on_other_rows(room: Room) -> None:
    bad = "| x | maybe | t |\n"
    write(room, HEAD + CACHE + bad + SIMD + NOTE)
    set_state(room, "lever", "simd", "killed", "no gain (task simd-1)")
    add(room, "lever", "mmap", "Memory-map the input")
    killed = "| simd | killed | Port the hot loop to SIMD | no gain (task simd-1) |\n"
    assert text_of(room) == (HEAD + CACHE + bad + killed
                             + "| mmap | untested | Memory-map the input |  |\n" + NOTE)  # fmt: skip
    with pytest.raises(InvalidError) as err:
        items(room, "lever")
    assert str(err.value) == (
        "intelligence/levers.md:8: a row needs 4 cells (| id | state | title | because |), this one has 3"
    )
    assert events(room.ledger) == ["init", "lever-set", "lever-add"]


def test_listing_counts_the_other_broken_rows(room: Room) -> None:
    write(room, HEAD + "| a | maybe | t | b |\n| b | x | t | b |\n| c | y | t | b |\n" + NOTE)
    with pytest.raises(InvalidError) as err:
        items(room, "lever")
    assert str(err.value) == (
        "intelligence/levers.md:7: state 'maybe' is not one of untested, pending, killed "
        "(and 2 more broken rows)"
    )


def test_set_repairs_its_own_row_when_only_the_state_is_wrong(room: Room) -> None:
    write(room, HEAD + "| x | maybe | t | b |\n" + NOTE)
    set_state(room, "lever", "x", "pending")
    assert text_of(room) == HEAD + "| x | pending | t | b |\n" + NOTE
    assert items(room, "lever") == [row("x", "pending", "t", "b", 7)]


def test_set_refuses_its_own_row_when_it_has_the_wrong_cell_count(room: Room) -> None:
    page = HEAD + "| x | untested | t |\n" + NOTE
    write(room, page)
    with pytest.raises(InvalidError) as err:
        set_state(room, "lever", "x", "pending")
    assert str(err.value) == (
        "intelligence/levers.md:7: a row needs 4 cells (| id | state | title | because |), this one has 3"
    )
    assert text_of(room) == page


def test_set_refuses_an_id_that_is_on_two_rows(room: Room) -> None:
    page = HEAD + CACHE + SIMD + SIMD.replace("pending", "untested") + NOTE
    write(room, page)
    with pytest.raises(InvalidError) as err:
        set_state(room, "lever", "simd", "killed", "too slow")
    assert str(err.value) == (
        "intelligence/levers.md:9: duplicate id 'simd' (also on line 8); fix the page by hand first"
    )
    assert text_of(room) == page


@pytest.mark.parametrize(("page", "message"), [
    (PAGE.replace("| because |", "| why |"),
     ("intelligence/levers.md:5: the table header must be | id | state | title | because |, "
      "not | id | state | title | why |")),
    (PAGE + "\n| id | state | title | because |\n|---|---|---|---|\n",
     ("intelligence/levers.md:12: a second table of levers (the first is on line 5); keep exactly "
      "one table on this page")),
])  # fmt: skip
def test_a_broken_header_or_a_second_table_stops_every_command(room: Room, page: str, message: str) -> None:
    write(room, page)
    for call in (lambda: items(room, "lever"), lambda: add(room, "lever", "mmap", "t"),
                 lambda: set_state(room, "lever", "simd", "untested")):  # fmt: skip
        with pytest.raises(InvalidError) as err:
            call()
        assert str(err.value) == message
    assert text_of(room) == page
    assert events(room.ledger) == ["init"]


# concurrency --------------------------------------------------------------------------------


def test_a_hand_edit_saved_during_the_update_is_kept(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person saves the page after control-room read it and before it wrote: the update
    re-reads and re-applies the change, so both edits land."""
    path = write(room, PAGE)
    edited = PAGE.replace("A hand-written note", "A note a person edited meanwhile")
    real = intelligence._page
    seen: list[str] = []

    def page_while_a_person_saves(text: str, kind: str) -> Any:
        if not seen:
            path.write_bytes(edited.encode("utf-8"))
        seen.append(text)
        return real(text, kind)

    monkeypatch.setattr(intelligence, "_page", page_while_a_person_saves)
    set_state(room, "lever", "simd", "killed", "too slow")
    assert seen == [PAGE, edited]  # applied to what was read, then again to the person's text
    assert text_of(room) == edited.replace(SIMD, "| simd | killed | Port the hot loop to SIMD | too slow |\n")
    assert events(room.ledger) == ["init", "lever-set"]


def test_a_row_added_by_hand_during_an_add_is_kept(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(room, PAGE)
    by_hand = "| by-hand | untested | Typed by a person | b |\n"
    edited = HEAD + CACHE + SIMD + by_hand + NOTE
    real = intelligence._page
    calls: list[int] = []

    def page_while_a_person_saves(text: str, kind: str) -> Any:
        if not calls:
            path.write_bytes(edited.encode("utf-8"))
        calls.append(1)
        return real(text, kind)

    monkeypatch.setattr(intelligence, "_page", page_while_a_person_saves)
    assert add(room, "lever", "mmap", "Memory-map the input")["line"] == 10
    assert text_of(room) == edited.replace(NOTE, "| mmap | untested | Memory-map the input |  |\n" + NOTE)


# ledger -------------------------------------------------------------------------------------


def test_every_add_and_set_writes_one_ledger_line(room: Room) -> None:
    add(room, "lever", "mmap", "Memory-map the input", "saves a copy")
    set_state(room, "lever", "mmap", "pending", "task mmap-1")
    set_state(room, "lever", "mmap", "pending")
    set_state(room, "lever", "mmap", "killed", "no gain (task mmap-1)")
    add(room, "branch", "beam-8", "Beam search of width 8")
    set_state(room, "branch", "beam-8", "pending")
    assert ledger_entries(room) == [
        ("lever-add", "untested", "mmap: added as untested: Memory-map the input; because: saves a copy"),
        ("lever-set", "pending", "mmap: untested -> pending; because: task mmap-1"),
        ("lever-set", "pending", "mmap: still pending"),
        ("lever-set", "killed", "mmap: pending -> killed; because: no gain (task mmap-1)"),
        ("branch-add", "untested", "beam-8: added as untested: Beam search of width 8"),
        ("branch-set", "pending", "beam-8: untested -> pending"),
    ]


# properties ---------------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=_TEXT.filter(lambda t: t.split()), because=_TEXT)
def test_any_title_and_because_read_back_as_written(room: Room, title: str, because: str) -> None:
    write(room, PAGE)
    added = add(room, "lever", "x", title, because)
    assert added["title"] == " ".join(title.split())
    assert added["because"] == " ".join(because.split())
    assert items(room, "lever")[-1] == added
    assert text_of(room).startswith(HEAD + CACHE + SIMD) and text_of(room).endswith(NOTE)
    if added["because"]:
        set_state(room, "lever", "x", "killed", because)
        assert items(room, "lever")[-1] == {**added, "state": "killed"}
    killed = set_state(room, "lever", "simd", "killed", title)
    assert items(room, "lever")[1] == {k: v for k, v in killed.items() if k != "was"}
    assert killed["because"] == " ".join(title.split())
    lines = text_of(room).split("\n")
    assert lines[:7] == PAGE.split("\n")[:7] and lines[9:] == PAGE.split("\n")[8:]
