"""control_room.ledger.verify: names every edited, deleted, reordered or torn line; merges are ok."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import data_lines, ev, five_lines, lineno, many_lines, rewrite

from control_room.ledger import append, follow
from control_room.ledger import verify as verify_module
from control_room.ledger.line import PREAMBLE, parse
from control_room.ledger.verify import Check, Problem, check, verify


def test_verify_a_clean_ledger(ledger: Path) -> None:
    five_lines(ledger)
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers, report.problems) == (
        True, 5, {"tester"}, [],
    )  # fmt: skip


def test_verify_an_empty_ledger_is_ok(ledger: Path) -> None:
    report = verify(ledger)
    assert (report.ok, report.lines, report.header_found) == (True, 0, True)


def test_verify_a_file_without_header_is_not_ok(tmp_path: Path) -> None:
    path = tmp_path / "LEDGER.md"
    path.write_text("# not a ledger\n")
    report = verify(path)
    assert (report.ok, report.header_found, report.problems) == (False, False, [])


def test_verify_names_an_edited_line(ledger: Path) -> None:
    lines = five_lines(ledger)
    stored = parse(lines[2]).hash  # type: ignore[union-attr]
    lines[2] = lines[2].replace("detail-2", "detail-X")
    rewrite(ledger, lines)
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(3), "edited", f"its content does not match its hash {stored}")
    ]


def test_verify_names_the_line_after_a_deleted_line(ledger: Path) -> None:
    lines = five_lines(ledger)
    gone = parse(lines[2]).hash  # type: ignore[union-attr]
    rewrite(ledger, lines[:2] + lines[3:])
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(3), "deleted",
         f"the line of writer tester it follows (hash {gone}) is missing from the ledger"),
    ]  # fmt: skip
    assert report.lines == 4


def test_verify_names_swapped_lines_as_reordered(ledger: Path) -> None:
    lines = five_lines(ledger)
    lines[1], lines[2] = lines[2], lines[1]
    rewrite(ledger, lines)
    report = verify(ledger)
    assert [(p.line, p.kind) for p in report.problems] == [
        (lineno(2), "reordered"), (lineno(3), "reordered"), (lineno(4), "reordered"),
    ]  # fmt: skip
    assert report.problems[0].why == f"it follows line {lineno(3)}, which comes after it"
    assert report.problems[1].why == (
        f"it follows line {lineno(1)}, but line {lineno(2)} of writer tester came between "
        "(moved or duplicated)"
    )


def test_verify_names_a_torn_last_line(ledger: Path) -> None:
    five_lines(ledger)
    data = ledger.read_bytes()
    ledger.write_bytes(data[:-20])  # cut the newline and the end of the last line
    report = verify(ledger)
    assert [(p.line, p.kind, p.why) for p in report.problems] == [
        (lineno(5), "torn", "the last line has no newline")
    ]


def test_verify_interleaved_writers(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(6):
        monkeypatch.setenv("CONTROL_ROOM_WRITER", "laptop" if k % 2 else "server")
        append(ledger, ev("e"), detail=str(k))
    append(ledger, ev("e"), writer="ci")
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 7, {"laptop", "server", "ci"})


def test_verify_a_union_merge_of_two_machines(tmp_path: Path, ledger: Path) -> None:
    append(ledger, ev("init"), writer="laptop")
    append(ledger, ev("e"), writer="server")
    append(ledger, ev("e"), writer="laptop")
    base = ledger.read_bytes()
    mine, theirs = tmp_path / "mine.md", tmp_path / "theirs.md"
    mine.write_bytes(base)
    theirs.write_bytes(base)
    for k in range(3):
        append(mine, ev("e"), detail=f"laptop {k}", writer="laptop")
        append(theirs, ev("e"), detail=f"server {k}", writer="server")
    # git's union merge keeps the base, then our new lines, then theirs
    merged = base + mine.read_bytes()[len(base) :] + theirs.read_bytes()[len(base) :]
    ledger.write_bytes(merged)
    report = verify(ledger)
    assert (report.ok, report.lines, report.writers) == (True, 9, {"laptop", "server"})
    # and the machine that pulls the merge keeps chaining onto it
    append(ledger, ev("e"), writer="server")
    assert verify(ledger).ok is True


# check: the first pass kept current incrementally, for status ----------------------------------


def test_check_a_clean_ledger_then_only_what_is_appended(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = tmp_path / "chain"
    five_lines(ledger)
    assert check(ledger, cp) == Check(empty=False, header=True, bad=0, first=[], torn_tail=False)
    hashed: list[str] = []
    real = verify_module.line_hash
    monkeypatch.setattr(verify_module, "line_hash", lambda body: hashed.append(body) or real(body))
    append(ledger, ev("e"), detail="six")
    assert check(ledger, cp).ok
    assert len(hashed) == 1 and "| six |" in hashed[0]  # the new line only
    hashed.clear()
    assert check(ledger, cp).ok and hashed == []  # nothing new: nothing hashed


UNLINKED = "it does not follow the line of writer tester before it: a line was deleted or moved"


def test_check_names_a_bad_line_appended_by_hand(ledger: Path, tmp_path: Path) -> None:
    cp = tmp_path / "chain"
    lines = five_lines(ledger)
    assert check(ledger, cp).ok
    stored = parse(lines[4]).hash  # type: ignore[union-attr]
    with open(ledger, "a") as f:  # a copy of line 5, edited: wrong hash, and a link that repeats
        f.write(lines[4].replace("detail-4", "detail-X") + "\n")
    c = check(ledger, cp)
    assert (c.ok, c.bad) == (False, 2)
    assert c.first == [
        Problem(lineno(6), "edited", f"its content does not match its hash {stored}"),
        Problem(lineno(6), "unlinked", UNLINKED),
    ]


def test_check_sees_a_rewrite_and_starts_over(ledger: Path, tmp_path: Path) -> None:
    cp = tmp_path / "chain"
    lines = five_lines(ledger)
    assert check(ledger, cp).ok
    rewrite(ledger, lines[:2] + lines[3:])  # a line deleted: the bytes it stopped at moved
    c = check(ledger, cp)
    assert (c.bad, [(p.line, p.kind) for p in c.first]) == (1, [(lineno(3), "unlinked")])


def test_check_a_torn_tail_an_empty_file_and_no_header(ledger: Path, tmp_path: Path) -> None:
    lines = five_lines(ledger)
    ledger.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines[:4]) + lines[4])
    c = check(ledger, tmp_path / "a")
    assert (c.header, c.bad, c.torn_tail, c.ok) == (True, 0, True, False)
    ledger.write_bytes(b"")
    assert check(ledger, tmp_path / "b") == Check(empty=True, header=False, bad=0, first=[], torn_tail=False)
    ledger.write_text("".join(f"{ln}\n" for ln in lines))
    c = check(ledger, tmp_path / "c")
    assert (c.empty, c.header, c.bad, c.ok) == (False, False, 0, False)


def test_a_first_check_of_a_big_ledger_starts_at_its_end(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing every line is `ledger verify`'s job: a first check starts at the end, links each
    writer's new lines to its last line before, and numbers a bad line from the top."""
    monkeypatch.setattr(follow, "SMALL", 12000)
    many_lines(ledger, 300, writer="old")
    lines = data_lines(ledger)
    rewrite(ledger, [lines[0].replace("lever 0", "lever X"), *lines[1:]])  # an old line edited
    hashed: list[str] = []
    real = verify_module.line_hash
    monkeypatch.setattr(verify_module, "line_hash", lambda body: hashed.append(body) or real(body))
    cp = tmp_path / "chain"
    assert check(ledger, cp) == Check(empty=False, header=True, bad=0, first=[], torn_tail=False)
    assert hashed == []  # nothing hashed: the edit is for `ledger verify`
    assert not verify(ledger).ok
    hashed.clear()
    append(ledger, ev("e"), writer="old", detail="links to line 300")
    append(ledger, ev("e"), writer="new", detail="a writer's first line")
    assert check(ledger, cp).ok and len(hashed) == 2
    with open(ledger, "a") as f:  # line 300 again: its link repeats (line 301 came between)
        f.write(lines[-1] + "\n")
    c = check(ledger, cp)
    assert (c.bad, [(p.line, p.kind) for p in c.first]) == (1, [(lineno(303), "unlinked")])
