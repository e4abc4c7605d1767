"""The ledger, ``PER_PAGE`` lines a page, newest first.

Page 1 holds the oldest lines; page N, the newest, is the one not yet full (it may be empty),
and ``ledger.html`` is the same page. A full page never changes: it names no total and links
to ``ledger.html`` for the newest, so a build writes only the pages that grew (``write``
resumes where the last full page ended). Each page lists its lines newest first, with filters
by event, route and adapter: the names on that page, a few lines of vanilla JS hiding the rows
that do not match.

``one`` renders a single page for ``--serve``, reading backwards from the end as far as that
page, so the newest pages cost the least. Both stop at the size the fold has read, so the
pages and the counts agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from control_room.ledger import follow, read
from control_room.ledger.line import COLUMNS, Col, split_cells, unescape
from control_room.room.layout import Room
from control_room.views.dashboard.page import FILTER_JS, shell

PER_PAGE = 500
SHOWN = (Col.TIME, Col.EVENT, Col.TASK, Col.ROUTE, Col.ADAPTER, Col.OUTCOME, Col.COST_USD, Col.DETAIL)
FILTERS = (("event", 1), ("route", 3), ("adapter", 4))  # (name, column of the row shown)
_AMP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def pages(total: int) -> int:
    """Full pages, and the newest one after them (not full, maybe empty)."""
    return total // PER_PAGE + 1


def name(k: int) -> str:
    return f"ledger-{k}.html"


def _row(line: str) -> list[str] | None:
    """The shown cells of a ledger line, unescaped and HTML-escaped; None if not a ledger line."""
    if "\\" not in line and line.startswith("| ") and line.endswith(" |"):
        cells = line[2:-2].translate(_AMP).split(" | ")  # escaping adds no " | "
        if len(cells) != len(COLUMNS):
            return None
        return [cells[c] for c in SHOWN]
    raw = split_cells(line)
    if raw is None or len(raw) != len(COLUMNS):
        return None
    return [unescape(raw[c]).translate(_AMP) for c in SHOWN]


def _page(room: str, k: int, n: int, rows: list[list[str]], recent: str = "") -> str:
    """Page ``k`` of ``n`` with ``rows`` (newest first); ``recent``: the newest lines of a
    ledger whose history is still being folded in, since that time (no numbered pages yet)."""
    first = (k - 1) * PER_PAGE + 1
    links = ['<a href="ledger.html">newest</a>']
    if k < n:
        links.append(f'<a href="{name(k + 1)}">newer</a>')
    if k > 1:
        links += [f'<a href="{name(k - 1)}">older</a>', f'<a href="{name(1)}">oldest</a>']
    nav = f'<nav class="pages">page {k}: ' + " ".join(links) + "</nav>"
    span = f"lines {first:,} to {first + len(rows) - 1:,}, newest first" if rows else "no lines yet"
    if k == n:
        span += " (the newest page: it grows)"
    if recent:
        nav = ""
        span = (
            f"the newest {len(rows):,} lines, newest first; the ledger's history before "
            f"{recent.translate(_AMP)} is being folded in, and its numbered pages are written once it is "
            "(<code>control-room ledger fold</code> does it now)"
        )
    selects = []
    for facet, col in FILTERS:
        values = sorted({r[col] for r in rows})  # already escaped
        options = "".join(f"<option>{v}</option>" for v in values)
        select = f'<select data-col="{col}"><option value="">(all)</option>{options}</select>'
        selects.append(f"<label>{facet} {select}</label>")
    head = "".join(f"<th>{COLUMNS[c]}</th>" for c in SHOWN)
    body = "\n".join("<tr><td>" + "</td><td>".join(r) + "</td></tr>" for r in rows)
    html = (
        f"<p>{span}.</p>{nav}"
        + '<p class="filters">'
        + "".join(selects)
        + "</p>"
        + f'<table class="ledger"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>{nav}'
    )
    return shell(f"Ledger, page {k}", "ledger.html", room, html, FILTER_JS)


def write(
    room: Room, fold: dict[str, Any], sink: Callable[[str, str], None], resume: Any = None
) -> tuple[int, dict[str, Any]]:
    """The pages that changed since ``resume`` (every page without it) to ``sink(name, html)``,
    and ``ledger.html``. Returns (the number of pages, the record to resume from next time)."""
    if fold.get("from"):  # recent lines only: the newest of them, and no numbered page yet
        newest = _page(str(room.root), 1, 1, _newest(room, fold, PER_PAGE), recent=fold["from_time"])
        sink("ledger.html", newest)
        return 1, resume
    total = fold["lines"]
    n = pages(total)
    with read.opened(room.ledger) as fd:
        k, start, seen = 1, 0, 0
        if (
            isinstance(resume, dict)
            and isinstance(resume.get("offset"), int)
            and 0 < resume["offset"] <= fold["size"]
            and resume.get("boundary") == follow.boundary(fd, resume["offset"])
            and isinstance(resume.get("page"), int)
            and (resume["page"] - 1) * PER_PAGE <= total
        ):
            k, start = resume["page"], resume["offset"]
            seen = (k - 1) * PER_PAGE
        record = {"page": k, "offset": start, "boundary": follow.boundary(fd, start)}
        rows: list[list[str]] = []
        for end, line in follow.table_lines(fd, start, fold["size"]) if seen < total else ():
            row = _row(line)
            if row is None:
                continue
            rows.append(row)
            seen += 1
            if len(rows) == PER_PAGE:
                rows.reverse()
                sink(name(k), _page(str(room.root), k, n, rows))
                rows, k = [], k + 1
                record = {"page": k, "offset": end, "boundary": follow.boundary(fd, end)}
            if seen == total:
                break
    rows.reverse()
    newest = _page(str(room.root), k, n, rows)
    sink(name(k), newest)
    sink("ledger.html", newest)
    return n, record


def _newest(room: Room, fold: dict[str, Any], want: int) -> list[list[str]]:
    """The rows of the ``want`` newest lines the fold has read, newest first."""
    rows: list[list[str]] = []
    with read.opened(room.ledger) as fd:
        for line in read.data_lines_backward(fd, fold["size"]):
            row = _row(line)
            if row is not None:
                rows.append(row)
                if len(rows) == want:
                    break
    return rows


def one(room: Room, fold: dict[str, Any], k: int) -> str:
    """Page ``k`` alone, read backwards from the end."""
    if fold.get("from"):
        return _page(str(room.root), 1, 1, _newest(room, fold, PER_PAGE), recent=fold["from_time"])
    total = fold["lines"]
    n = pages(total)
    k = min(max(k, 1), n)
    skip = total - min(k * PER_PAGE, total)
    want = min(k * PER_PAGE, total) - (k - 1) * PER_PAGE
    rows: list[list[str]] = []
    if want > 0:
        with read.opened(room.ledger) as fd:
            for line in read.data_lines_backward(fd, fold["size"]):
                row = _row(line)
                if row is None:
                    continue
                if skip:
                    skip -= 1
                    continue
                rows.append(row)
                if len(rows) == want:
                    break
    return _page(str(room.root), k, n, rows)
