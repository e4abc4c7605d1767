"""``ledger merge BASE OURS THEIRS``: git's merge driver for LEDGER.md, a union keyed by event id.

git's built-in ``merge=union`` works on text hunks: where both sides changed the same region it
keeps both sides' lines, and a line both sides share after such a region can come out twice, so
``ledger verify`` calls it reordered. This driver works on events instead:

- the preamble (everything up to the table header and its separator) once, as OURS has it;
- every data line of BASE, OURS and THEIRS exactly once, keyed by its id (column 2);
- BASE's lines first, in BASE's order; then the lines new on either side, merged like two sorted
  lists: at each step the earlier (by ``time``) of the next OURS line and the next THEIRS line,
  OURS on a tie. Each side's own order is never changed, so each writer's lines keep their
  order (and ``verify`` passes) even when a machine's clock went backwards;
- a line that is not a whole ledger row (a torn write, a hand-made line) is keyed by its exact
  text: kept once, BASE's where BASE had it, the new ones at the very end (OURS's first), each
  ending with a newline, so ``verify`` still names them and the next append starts cleanly.

BASE may be empty (git gives an empty file when both sides added LEDGER.md); OURS and THEIRS
must have the table header, or nothing is written and the merge is left to a person.
"""

from __future__ import annotations

from pathlib import Path

from control_room.errors import InvalidError
from control_room.ledger.line import COLUMNS, HEADER, Col, split_cells, unescape
from control_room.store.files import atomic_write
from control_room.store.textmerge import read_sides


class Side:
    """One version of a ledger: its preamble (header and separator included) and data lines."""

    def __init__(self, preamble: str, lines: list[str]) -> None:
        self.preamble = preamble
        self.lines = lines


def split(text: str) -> Side | None:
    """``text`` as a ledger; None if it has no table header."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        at = lines.index(HEADER)
    except ValueError:
        return None
    end = at + 1
    if end < len(lines) and lines[end].startswith("|---"):
        end += 1
    return Side("".join(f"{line}\n" for line in lines[:end]), [line for line in lines[end:] if line != ""])


def _row(line: str) -> tuple[str, str] | None:
    """(id, time) of a whole ledger row; None for anything else."""
    cells = split_cells(line)
    if cells is None or len(cells) != len(COLUMNS):
        return None
    return unescape(cells[Col.ID]), unescape(cells[Col.TIME])


def _key(line: str) -> str:
    row = _row(line)
    return f"id:{row[0]}" if row else f"text:{line}"


def merge_lines(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """The merged data lines (see the module's doc for the rule)."""
    out: list[str] = []
    seen: set[str] = set()

    def take(line: str) -> None:
        key = _key(line)
        if key not in seen:
            seen.add(key)
            out.append(line)

    for line in base:
        take(line)
    odd: list[str] = []  # new lines that are not whole rows: at the end
    sides: list[list[tuple[str, str]]] = [[], []]  # (time, line) of the new whole rows of each side
    for lines, new in ((ours, sides[0]), (theirs, sides[1])):
        for line in lines:
            row = _row(line)
            if row is None:
                if f"text:{line}" not in seen:
                    odd.append(line)
            elif f"id:{row[0]}" not in seen:
                new.append((row[1], line))
    a, b = sides
    i = j = 0
    while i < len(a) or j < len(b):
        if j >= len(b) or (i < len(a) and a[i][0] <= b[j][0]):
            take(a[i][1])
            i += 1
        else:
            take(b[j][1])
            j += 1
    for line in odd:
        take(line)
    return out


def merge_text(
    base: str, ours: str, theirs: str, names: tuple[str, str, str] = ("BASE", "OURS", "THEIRS")
) -> str:
    """The merged ledger; raises ``InvalidError`` if OURS or THEIRS has no table header (BASE
    may be empty: both sides added the file). ``names`` name the three in that error."""
    sides: list[Side] = []
    for k, (name, text) in enumerate(zip(names, (base, ours, theirs), strict=True)):
        side = split(text)
        if side is None and k == 0 and not text.strip():
            side = Side("", [])
        if side is None:
            raise InvalidError(f"{name}: it is not a ledger: it has no table header ({HEADER[:24]}...)")
        sides.append(side)
    b, o, t = sides
    return o.preamble + "".join(f"{line}\n" for line in merge_lines(b.lines, o.lines, t.lines))


def merge_files(base: Path, ours: Path, theirs: Path) -> int:
    """git's protocol (%O %A %B): the result written into ``ours``; how many lines it has.
    On an error ``ours`` is left as it was."""
    texts = read_sides(base, ours, theirs)
    merged = merge_text(texts[0], texts[1], texts[2], names=(str(base), str(ours), str(theirs)))
    atomic_write(ours, merged, durable=False)
    side = split(merged)
    return len(side.lines) if side else 0
