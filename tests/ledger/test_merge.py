"""ledger/merge.py on hand-made ledgers: every line once, by id; each side's order kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_room.errors import InvalidError
from control_room.ledger.line import GENESIS, PREAMBLE, Entry, render
from control_room.ledger.merge import merge_files, merge_lines, merge_text
from control_room.ledger.verify import verify


def chain(writer: str, times: list[str], start: int = 0, prev: str = GENESIS) -> list[str]:
    """Lines of one writer, chained, with ids w-<k>."""
    out = []
    for k, t in enumerate(times, start):
        line, prev = render(Entry(time=t, id=f"{writer}-{k:02d}", writer=writer, event="stop", prev=prev))
        out.append(line)
    return out


def ledger(lines: list[str]) -> str:
    return PREAMBLE + "".join(f"{line}\n" for line in lines)


T = [f"2026-12-01T10:00:{s:02d}Z" for s in range(60)]


def test_a_line_on_both_sides_comes_out_once() -> None:
    base = chain("vm", T[:2])
    shared = chain("vm", T[2:4], 2, prev=base[-1].split(" | ")[-1][:12])
    assert merge_lines(base, base + shared, base + shared) == base + shared


def test_new_lines_of_both_sides_merge_by_time_ours_first_on_a_tie() -> None:
    a = chain("alpha", [T[1], T[3], T[3]])
    b = chain("beta", [T[2], T[3]])
    assert merge_lines([], a, b) == [a[0], b[0], a[1], a[2], b[1]]


def test_each_sides_order_is_kept_even_when_a_clock_went_back() -> None:
    a = chain("alpha", [T[5], T[1]])  # alpha's clock went back
    b = chain("beta", [T[3]])
    merged = merge_lines([], a, b)
    assert merged == [b[0], a[0], a[1]]
    assert merged.index(a[0]) < merged.index(a[1])


def test_base_lines_first_in_base_order_then_the_new_ones(tmp_path: Path) -> None:
    base = chain("vm", [T[9], T[10]])
    a = chain("alpha", [T[1]])
    b = chain("beta", [T[0]])
    path = tmp_path / "LEDGER.md"
    path.write_text(merge_text(ledger(base), ledger(base + a), ledger(base + b)), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert text == ledger(base + b + a)
    assert verify(path).ok


def test_lines_interleaved_differently_on_each_side_come_out_once_in_a_valid_order(tmp_path: Path) -> None:
    a = chain("alpha", T[0:3])
    b = chain("beta", T[0:3])
    ours = [a[0], b[0], a[1], b[1], a[2]]  # both sides hold lines the other merged earlier
    theirs = [b[0], a[0], b[1], a[1], b[2]]
    merged = merge_lines([], ours, theirs)
    assert sorted(merged) == sorted(a + b)
    path = tmp_path / "LEDGER.md"
    path.write_text(ledger(merged), encoding="utf-8")
    assert verify(path).ok


def test_torn_and_odd_lines_are_kept_once_at_the_end_each_on_its_own_line() -> None:
    base = chain("vm", T[:1])
    a = chain("alpha", T[1:2])
    torn = a[0][:30]
    ours = ledger(base + a)
    theirs = ledger(base) + torn  # no newline
    merged = merge_text(ledger(base), ours, theirs)
    assert merged == ledger(base + a + [torn])
    assert merge_text(ledger(base), merged, merged) == merged


def test_an_empty_base_is_a_ledger_added_on_both_sides() -> None:
    a, b = chain("alpha", T[:1]), chain("beta", T[1:2])
    assert merge_text("", ledger(a), ledger(b)) == ledger(a + b)


@pytest.mark.parametrize("bad", ["ours", "theirs"])
def test_a_side_that_is_not_a_ledger_is_refused_and_ours_is_left_alone(tmp_path: Path, bad: str) -> None:
    files = {name: tmp_path / name for name in ("base", "ours", "theirs")}
    for name, path in files.items():
        path.write_text("just text\n" if name == bad else ledger(chain("vm", T[:1])), encoding="utf-8")
    before = files["ours"].read_bytes()
    with pytest.raises(InvalidError, match=rf"^{files[bad]}: it is not a ledger"):
        merge_files(files["base"], files["ours"], files["theirs"])
    assert files["ours"].read_bytes() == before
