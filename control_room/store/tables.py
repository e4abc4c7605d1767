"""Markdown tables keyed by their first column: ROUTES.md, intelligence/levers.md, branches.md.

A page holds a table whose first header cell names its key (``route``, ``id``); each row is
one record. People edit these pages by hand, so:

- a write rewrites one row's line (``set_row``) or inserts one after the last row
  (``add_row``), and keeps every other byte of the file, line endings included;
- the table is found with markdown-it (a table inside a code fence is not one), but each row's
  cells are split from the line itself, the way markdown-it splits them: markdown-it pads or
  drops cells to fit the header, which would hide a row with the wrong number of cells.

The parse of a page can be memoised against its exact text (``memo``), and a write stores the
table it wrote, so commands import markdown-it only after a person edited the page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from control_room.store import cache

_EOL = r"(\r\n|\r|\n)"  # what markdown-it counts as a line break
# What markdown-it trims from a cell (CommonMark whitespace), so cells read the same either way.
_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)


class Table:
    """One table: its header, the line of its header, and its rows with their lines."""

    __slots__ = ("header", "header_line", "rows")

    def __init__(self, header: list[str], header_line: int, rows: list[tuple[int, list[str]]]) -> None:
        self.header = header  # the header's cells, stripped and lowercased
        self.header_line = header_line  # 1-based
        self.rows = rows  # (1-based line, cells)

    def __repr__(self) -> str:
        return f"Table({self.header!r}, {self.header_line}, {self.rows!r})"

    def find(self, key: str) -> list[tuple[int, list[str]]]:
        """The rows whose first cell is ``key`` (more than one is a broken page)."""
        return [(line, cells) for line, cells in self.rows if cells and cells[0] == key]

    def record(self, cells: list[str]) -> dict[str, str]:
        """A row as {column: cell}; missing cells are empty, extra cells are dropped."""
        padded = [*cells, *[""] * (len(self.header) - len(cells))]
        return dict(zip(self.header, padded[: len(self.header)], strict=True))


def lines(text: str) -> list[str]:
    """Every line with its own line ending, so ``"".join(lines(text)) == text``."""
    parts = re.split(_EOL, text)
    out = [parts[i] + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
    return out + ([parts[-1]] if parts[-1] else [])


def _eol(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def row_cells(line: str) -> list[str]:
    """The cells of one table line, split as markdown-it splits them (``\\|`` is a pipe)."""
    s = line.strip(_SPACE)
    cells: list[str] = []
    current = ""
    escaped = False
    for ch in s:
        if ch == "|" and not escaped:
            cells.append(current)
            current = ""
        elif ch == "|":
            current = current[:-1] + "|"
        else:
            current += ch
        escaped = ch == "\\"
    cells.append(current)
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return [c.strip(_SPACE) for c in cells]


def cell(value: object) -> str:
    """One value as a table cell: one line, runs of whitespace as one space, pipes escaped."""
    s = "" if value is None else str(value)
    return " ".join(s.split()).replace("|", "\\|")


def row_line(cells: list[object]) -> str:
    """A table row without its line ending."""
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def find_all(text: str, key: str) -> list[Table]:
    """Every table in ``text`` whose first header cell is ``key`` (case-insensitive)."""
    from markdown_it import MarkdownIt  # ~15 ms to import: only when a page changed

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    page = lines(text)
    found: list[Table] = []
    current: Table | None = None
    in_head, table_line = False, 0
    for tok in tokens:
        line = (tok.map[0] + 1) if tok.map else 0
        if tok.type == "table_open":
            table_line, current = line, None
        elif tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open" and 0 < line <= len(page):
            cells = row_cells(page[line - 1])
            if in_head:
                header = [c.lower() for c in cells]
                current = Table(header, table_line, []) if header and header[0] == key.lower() else None
                if current is not None:
                    found.append(current)
            elif current is not None:
                current.rows.append((line, cells))
        elif tok.type == "table_close":
            current = None
    return found


def find(text: str, key: str, memo: Path | None = None) -> Table | None:
    """The first table keyed by ``key``; memoised in ``memo`` against the exact text."""
    if memo is not None:
        saved = cache.load(memo)
        if isinstance(saved, dict) and saved.get("text") == text and saved.get("key") == key:
            return _table(saved["table"])
    tables = find_all(text, key)
    table = tables[0] if tables else None
    remember(memo, text, key, table)
    return table


def remember(memo: Path | None, text: str, key: str, table: Table | None) -> None:
    if memo is not None:
        plain = None if table is None else [table.header, table.header_line, table.rows]
        cache.save(memo, {"text": text, "key": key, "table": plain})


def _table(saved: Any) -> Table | None:
    if saved is None:
        return None
    header, header_line, rows = saved
    return Table(list(header), int(header_line), [(int(n), list(c)) for n, c in rows])


def set_row(text: str, table: Table, line: int, cells: list[object]) -> tuple[str, Table]:
    """Rewrite the row on ``line`` (1-based) with ``cells``; return the text and the table as
    it now reads."""
    page = lines(text)
    new = row_line(cells)
    page[line - 1] = new + _eol(page[line - 1])
    rows = [(n, row_cells(new) if n == line else c) for n, c in table.rows]
    return "".join(page), Table(table.header, table.header_line, rows)


def add_row(
    text: str, table: Table | None, cells: list[object], *, columns: tuple[str, ...], title: str = ""
) -> tuple[str, Table]:
    """Insert a row after the table's last row; a page without the table gets one at its end
    (an empty page also gets ``# title``). Return the text and the table as it now reads."""
    page = lines(text)
    new = row_line(cells)
    if table is not None:
        at = table.rows[-1][0] if table.rows else table.header_line + 1  # the line it follows
        eol = _eol(page[at - 1]) or _eol(page[0]) or "\n"
        if not _eol(page[at - 1]):
            page[at - 1] += eol
        page.insert(at, new + eol)
        return "".join(page), Table(table.header, table.header_line, [*table.rows, (at + 1, row_cells(new))])
    eol = (_eol(page[0]) if page else "") or "\n"
    block = [row_line(list(columns)) + eol, "|" + "---|" * len(columns) + eol, new + eol]
    if not text.strip():
        page = [f"# {title}{eol}", eol] if title else []
    else:
        if not _eol(page[-1]):
            page[-1] += eol
        if page[-1].strip():
            page.append(eol)  # a blank line before the table
    header_line = len(page) + 1
    table = Table([c.lower() for c in columns], header_line, [(header_line + 2, row_cells(new))])
    return "".join(page + block), table
