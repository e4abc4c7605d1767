"""``merge-driver routes BASE OURS THEIRS``: git's merge driver for ROUTES.md, row by row.

Two clones of a room both change ROUTES.md: people edit verdicts, titles and falsifiers, add
and remove rows and write prose around the table; cycles keep ``attempts``, ``spend_usd`` and
``last_result``. git's text merge conflicts as soon as both touched the same row, or two rows
next to each other. This driver merges the table by its key, ``route``:

- a row added on either side is kept: OURS's rows in OURS's order first, then THEIRS's new
  rows in THEIRS's order;
- a row removed on one side goes when the other side left its hand cells as BASE had them (a
  cycle's counters, and its ``untested`` -> ``alive``, do not keep it); a row one side removed
  and the other edited by hand stays, as edited;
- a hand cell (every column but the three a cycle keeps) changed on one side takes that side;
  changed differently on both, OURS (the local side) wins the tie;
- ``attempts``, ``spend_usd`` and ``last_result`` come together from the side with more
  ``attempts`` (OURS on a tie); ``routes.recount`` recomputes them from the merged ledger;
- the text outside the table is merged three-way (``git merge-file``); if that conflicts, OURS's
  text is kept;
- the header (its columns and their order) is OURS's; a row whose merged cells are exactly one
  side's keeps that side's line byte for byte.

It never leaves a conflict: when OURS or THEIRS has no table keyed by ``route`` it keeps OURS
as it is. BASE may have no table (both sides added the file): its rows are then none.
"""

from __future__ import annotations

from pathlib import Path

from control_room.knowledge.routes import COUNTED
from control_room.store import tables
from control_room.store.files import atomic_write
from control_room.store.textmerge import PLACEHOLDER, merge3, read_sides, split_at

KEY = "route"
KEPT_BY_CYCLES = COUNTED  # attempts, spend_usd, last_result


class Side:
    """One version of ROUTES.md: the text around the table, the table's header lines, and its
    rows by key (a key seen twice in a broken page gets ``#2``, ``#3`` ... so no row is lost)."""

    def __init__(self, text: str, table: tables.Table) -> None:
        page = tables.lines(text)
        first = table.header_line - 1  # 0-based index of the header line
        last = table.rows[-1][0] - 1 if table.rows else min(first + 1, len(page) - 1)
        self.header = table.header
        self.head = page[first : first + 2]  # the header and its separator, as written
        self.outside = "".join(page[:first]) + PLACEHOLDER + "\n" + "".join(page[last + 1 :])
        eol = page[first][len(page[first].rstrip("\r\n")) :]
        self.eol = eol or "\n"
        self.order: list[str] = []
        self.records: dict[str, dict[str, str]] = {}
        self.lines: dict[str, str] = {}
        for line, cells in table.rows:
            key = cells[0] if cells else ""
            n = 1
            while (key if n == 1 else f"{key}#{n}") in self.records:
                n += 1
            key = key if n == 1 else f"{key}#{n}"
            self.order.append(key)
            self.records[key] = table.record(cells)
            self.lines[key] = page[line - 1].rstrip("\r\n")


def _side(text: str) -> Side | None:
    table = tables.find(text, KEY)
    return Side(text, table) if table is not None else None


def _by_hand(rec: dict[str, str], was: dict[str, str]) -> bool:
    """Whether a person changed ``rec`` since ``was``: a hand cell differs (a cycle's own
    ``untested`` -> ``alive`` is not a person's)."""
    for column in dict.fromkeys([*rec, *was]):
        now, then = rec.get(column, ""), was.get(column, "")
        if column in KEPT_BY_CYCLES or now == then:
            continue
        if column == "verdict" and _automatic(then, now):
            continue
        return True
    return False


def _automatic(then: str, now: str) -> bool:
    """Whether a verdict went from ``then`` to ``now`` by a cycle (``record_run``'s first run)."""
    return then.lower() in ("", "untested") and now.lower() == "alive"


def _attempts(rec: dict[str, str]) -> int:
    try:
        return int(rec.get("attempts") or 0)
    except ValueError:
        return -1


def merge_row(base: dict[str, str] | None, ours: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    """One route both sides have: hand cells three-way (OURS on a tie, but a person's verdict
    over a cycle's ``untested`` -> ``alive``), the cycle's cells from the side with more
    attempts (OURS on a tie)."""
    was = base or {}
    out: dict[str, str] = {}
    for column in dict.fromkeys([*ours, *theirs]):
        o, t, b = ours.get(column, ""), theirs.get(column, ""), was.get(column, "")
        out[column] = t if (o == b and column in theirs) else o
        if column == "verdict" and o != t and _automatic(b, o) and column in theirs:
            out[column] = t  # our cycle's first run made it alive; their person said more
    counted = theirs if _attempts(theirs) > _attempts(ours) else ours
    for column in KEPT_BY_CYCLES:
        if column in out:
            out[column] = counted.get(column, "")
    return out


def merge_text(base: str, ours: str, theirs: str) -> str:
    """The merged ROUTES.md (see the module's doc); OURS as it is when OURS or THEIRS has no
    table keyed by ``route``."""
    o, t = _side(ours), _side(theirs)
    if o is None or t is None:
        return ours
    b = _side(base)
    base_records = b.records if b is not None else {}
    keys = [*o.order, *(k for k in t.order if k not in o.records)]
    rows: list[str] = []
    for key in keys:
        was = base_records.get(key)
        mine, other = o.records.get(key), t.records.get(key)
        if mine is not None and other is not None:
            rec = merge_row(was, mine, other)
        elif mine is not None:  # only OURS has it: new there, or THEIRS removed it
            if was is not None and not _by_hand(mine, was):
                continue
            rec = mine
        else:
            assert other is not None
            if was is not None and not _by_hand(other, was):
                continue
            rec = other
        cells = [rec.get(h, "") for h in o.header]
        if mine is not None and cells == [mine.get(h, "") for h in o.header]:
            rows.append(o.lines[key])
        elif other is not None and t.header == o.header and cells == [other.get(h, "") for h in o.header]:
            rows.append(t.lines[key])
        else:
            rows.append(tables.row_line(list(cells)))
    head = [line if line.endswith(("\n", "\r")) else line + o.eol for line in o.head]
    table = "".join(head) + "".join(row + o.eol for row in rows)
    outside = merge3(b.outside if b is not None else "", o.outside, t.outside)
    parts = split_at(outside) if outside is not None else None
    if parts is None:
        parts = split_at(o.outside)
        assert parts is not None  # OURS's own text has its placeholder once
    return parts[0] + table + parts[1]


def merge_files(base: Path, ours: Path, theirs: Path) -> None:
    """git's protocol (%O %A %B): the result written into ``ours`` (left alone when it is the
    same)."""
    texts = read_sides(base, ours, theirs)
    merged = merge_text(*texts)
    if merged != texts[1]:
        atomic_write(ours, merged, durable=False)
