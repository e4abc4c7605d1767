"""The ledger, ``PER_PAGE`` lines a page, newest first.

Page 1 holds the oldest lines and page N the newest, so a page once full never changes;
``ledger.html`` is page N. Each page lists its lines newest first, and offers filters by event,
route and adapter (a few lines of vanilla JS hiding the rows of that page that do not match).

``write_all`` writes every page in one forward pass over the ledger (the only pass besides the
fold); ``one`` renders a single page for ``--serve``, reading backwards from the end as far as
that page, so the newest pages cost the least. Both stop at the size the fold has read, so
the pages and the counts agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from control_room.ledger.line import COLUMNS, HEADER, Col, split_cells, unescape
from control_room.ledger.read import lines_backward
from control_room.room.layout import Room
from control_room.views.dashboard.page import FILTER_JS, esc, shell

PER_PAGE = 500
SHOWN = (Col.TIME, Col.EVENT, Col.TASK, Col.ROUTE, Col.ADAPTER, Col.OUTCOME, Col.COST_USD, Col.DETAIL)
FILTERS = (("event", 1), ("route", 3), ("adapter", 4))  # (facet, column of the row shown)
_AMP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def pages(total: int) -> int:
    return max(1, -(-total // PER_PAGE))


def name(k: int) -> str:
    return f"ledger-{k}.html"


def _row(cells: list[str]) -> str:
    out = []
    for c in SHOWN:
        v = cells[c]
        if "\\" in v:
            v = unescape(v)
        out.append(v.translate(_AMP))
    return "<tr><td>" + "</td><td>".join(out) + "</td></tr>"


def _cells(line: str) -> list[str] | None:
    cells = split_cells(line)
    return cells if cells is not None and len(cells) == len(COLUMNS) else None


def _nav(k: int, n: int) -> str:
    links = [f'<a href="{name(n)}">newest</a>' if k != n else "<span>newest</span>"]
    if k < n:
        links.append(f'<a href="{name(k + 1)}">newer</a>')
    if k > 1:
        links.append(f'<a href="{name(k - 1)}">older</a>')
    links.append(f'<a href="{name(1)}">oldest</a>' if k != 1 else "<span>oldest</span>")
    return f'<nav class="pages">page {k} of {n}: ' + " ".join(links) + "</nav>"


def _filters(facets: dict[str, dict[str, int]]) -> str:
    out = []
    for facet, col in FILTERS:
        options = "".join(f"<option>{esc(unescape(v))}</option>" for v in sorted(facets.get(facet, {})))
        select = f'<select data-col="{col}"><option value="">(all)</option>{options}</select>'
        out.append(f"<label>{facet} {select}</label>")
    return '<p class="filters">' + "".join(out) + " (filters this page)</p>"


def _page(room: str, k: int, n: int, total: int, rows: list[str], facets: dict[str, Any]) -> str:
    first = (k - 1) * PER_PAGE + 1
    last = min(k * PER_PAGE, total)
    head = "".join(f"<th>{COLUMNS[c]}</th>" for c in SHOWN)
    body = (
        f"<p>{total:,} lines; this page: lines {first:,} to {last:,}, newest first.</p>"
        + _nav(k, n)
        + _filters(facets)
        + f'<table class="ledger"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table>"
        + _nav(k, n)
    )
    return shell(f"Ledger, page {k} of {n}", "ledger.html", room, body, FILTER_JS)


def _forward(path: os.PathLike[str], size: int) -> Iterator[str]:
    """The physical lines after the table header, up to byte ``size``."""
    with open(path, "rb") as f:
        in_table = False
        left = size
        for raw in f:
            left -= len(raw)
            if left < 0:
                return
            line = raw.rstrip(b"\n").decode("utf-8", "replace")
            if in_table:
                yield line
            else:
                in_table = line == HEADER


def write_all(room: Room, fold: dict[str, Any], sink: Callable[[str, str], None]) -> int:
    """Every page to ``sink(name, html)``, and ``ledger.html``; returns the number of pages."""
    total, facets = fold["lines"], fold["facets"]
    n = pages(total)
    rows: list[str] = []
    k, seen = 1, 0
    if total:
        for line in _forward(room.ledger, fold["size"]):
            cells = _cells(line)
            if cells is None:
                continue
            rows.append(_row(cells))
            seen += 1
            if len(rows) == PER_PAGE or seen == total:
                rows.reverse()
                sink(name(k), _page(str(room.root), k, n, total, rows, facets))
                rows, k = [], k + 1
                if seen == total:
                    break
    if not total:
        sink(name(1), _page(str(room.root), 1, 1, 0, [], facets))
    sink("ledger.html", one(room, fold, n))
    return n


def one(room: Room, fold: dict[str, Any], k: int) -> str:
    """Page ``k`` alone (``n`` for the newest), read backwards from the end."""
    total, facets = fold["lines"], fold["facets"]
    n = pages(total)
    k = min(max(k, 1), n)
    skip = total - min(k * PER_PAGE, total)
    want = min(k * PER_PAGE, total) - (k - 1) * PER_PAGE
    rows: list[str] = []
    if want > 0:
        fd = os.open(room.ledger, os.O_RDONLY)
        try:
            first = True
            for line in lines_backward(fd, fold["size"]):
                if first and line == "":
                    first = False
                    continue
                first = False
                if line == HEADER:
                    break
                cells = _cells(line)
                if cells is None:
                    continue
                if skip:
                    skip -= 1
                    continue
                rows.append(_row(cells))
                if len(rows) == want:
                    break
        finally:
            os.close(fd)
    return _page(str(room.root), k, n, total, rows, facets)
