"""control_room.views.dashboard.ledger_pages: pages newest first, read either way, resumed, escaped."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support import rewrite

from control_room import ledger
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.store import cache
from control_room.views.dashboard import fold, ledger_pages


def _lines(room: Room, n: int) -> None:
    for i in range(n):
        ledger.append(room.ledger, events.WARNING, task=f"t{i}", detail=f"line {i} <i>")


def _rows(html: str) -> list[str]:
    return re.findall(r"<td>line (\d+) &lt;i&gt;</td>", html)


def _line(k: int, event: str = "warning", route: str = "", adapter: str = "", detail: str = "") -> str:
    """A ledger line written by hand, at second ``k`` of the day."""
    return (
        f"| 2026-03-01T00:00:{k:02d}Z | id{k} | w | {event} | t{k} | {route} | {adapter} | ok | 0 | "
        f"{detail or f'd{k}'} | - | 000000000000 |"
    )


def _build(room: Room, resume: Any = None) -> tuple[dict[str, str], int, dict[str, Any], dict[str, Any]]:
    """Every page ``write`` writes, the page count, the resume record and the fold it read."""
    written: dict[str, str] = {}
    with cache.held({}):
        st = fold.state(room)
        n, record = ledger_pages.write(room, st, written.__setitem__, resume)
    return written, n, record, st


def _one(room: Room, k: int) -> str:
    with cache.held({}):
        return ledger_pages.one(room, fold.state(room), k)


def _details(html: str) -> list[str]:
    return re.findall(r"<td>(d\d+)</td></tr>", html)


def test_ledger_pages_newest_first_and_the_same_read_either_way(room: Room) -> None:
    _lines(room, 1203)
    written: dict[str, str] = {}
    with cache.held({}):
        st = fold.state(room)
        n, resume = ledger_pages.write(room, st, written.__setitem__)
        assert n == 3
        for k in (1, 2, 3):
            assert ledger_pages.one(room, st, k) == written[f"ledger-{k}.html"]
    assert sorted(written) == ["ledger-1.html", "ledger-2.html", "ledger-3.html", "ledger.html"]
    assert written["ledger.html"] == written["ledger-3.html"]
    assert st["lines"] == 1204  # the init line and the 1203 warnings
    assert _rows(written["ledger-1.html"]) == [str(i) for i in range(498, -1, -1)]
    assert _rows(written["ledger-3.html"])[0] == "1202" and len(_rows(written["ledger-3.html"])) == 204
    assert "lines 501 to 1,000, newest first." in written["ledger-2.html"]
    assert 'href="ledger-3.html">newer' in written["ledger-2.html"]
    assert "(the newest page: it grows)" in written["ledger-3.html"]
    assert "<option>warning</option>" in written["ledger-1.html"]
    assert "<option>init</option>" in written["ledger-1.html"]
    assert "<option>init</option>" not in written["ledger-2.html"]  # the names on that page
    # the next build writes only the pages that grew: the newest, then one more when it fills
    _lines(room, 300)
    again: dict[str, str] = {}
    with cache.held({}):
        st = fold.state(room)
        assert ledger_pages.write(room, st, again.__setitem__, resume)[0] == 4
        assert ledger_pages.one(room, st, 4) == again["ledger-4.html"]
        assert ledger_pages.one(room, st, 3) == again["ledger-3.html"]
    assert sorted(again) == ["ledger-3.html", "ledger-4.html", "ledger.html"]
    assert len(_rows(again["ledger-3.html"])) == 500 and _rows(again["ledger-4.html"]) == [
        "299",
        "298",
        "297",
        "296",
    ]


def test_an_exactly_full_last_page_is_followed_by_an_empty_newest(room: Room) -> None:
    _lines(room, 499)
    written: dict[str, str] = {}
    with cache.held({}):
        st = fold.state(room)
        assert ledger_pages.write(room, st, written.__setitem__)[0] == 2
        assert ledger_pages.one(room, st, 2) == written["ledger-2.html"] == written["ledger.html"]
    assert "no lines yet (the newest page: it grows)." in written["ledger.html"]
    assert len(_rows(written["ledger-1.html"])) == 499


def test_pages_counts_the_full_ones_and_the_newest() -> None:
    assert [ledger_pages.pages(n) for n in (0, 1, 499, 500, 501, 1000)] == [1, 1, 1, 2, 2, 3]
    assert ledger_pages.name(3) == "ledger-3.html"


def test_a_page_is_a_table_of_the_shown_columns_with_filters(room: Room) -> None:
    rewrite(room.ledger, [_line(1, "task-add", "r1", "probe"), _line(2, "result", "r2", "")])
    written, n, _, _ = _build(room)
    html = written["ledger.html"]
    assert n == 1 and sorted(written) == ["ledger-1.html", "ledger.html"]
    assert html.startswith("<!DOCTYPE html>") and "<title>Ledger, page 1 - control-room</title>" in html
    assert '<a href="ledger.html" class=here>Ledger</a>' in html
    assert (
        "<p>lines 1 to 2, newest first (the newest page: it grows).</p>"
        '<nav class="pages">page 1: <a href="ledger.html">newest</a></nav>'
        '<p class="filters">'
        '<label>event <select data-col="1"><option value="">(all)</option>'
        "<option>result</option><option>task-add</option></select></label>"
        '<label>route <select data-col="3"><option value="">(all)</option>'
        "<option>r1</option><option>r2</option></select></label>"
        '<label>adapter <select data-col="4"><option value="">(all)</option>'
        "<option></option><option>probe</option></select></label></p>"
        '<table class="ledger"><thead><tr><th>time</th><th>event</th><th>task</th><th>route</th>'
        "<th>adapter</th><th>outcome</th><th>cost_usd</th><th>detail</th></tr></thead><tbody>\n"
        "<tr><td>2026-03-01T00:00:02Z</td><td>result</td><td>t2</td><td>r2</td><td></td>"
        "<td>ok</td><td>0</td><td>d2</td></tr>\n"
        "<tr><td>2026-03-01T00:00:01Z</td><td>task-add</td><td>t1</td><td>r1</td><td>probe</td>"
        "<td>ok</td><td>0</td><td>d1</td></tr>\n"
        "</tbody></table>"
    ) in html
    assert html.endswith("</script></body></html>\n") and "querySelectorAll('.filters select')" in html


def test_a_cell_is_unescaped_then_shown_as_text(room: Room) -> None:
    rewrite(
        room.ledger,
        [
            _line(1, detail="a \\| b <script>x</script> & \\n"),
            _line(2, detail='"quoted" <b>'),
        ],
    )
    written, _, _, _ = _build(room)
    html = written["ledger.html"]
    assert "<td>a | b &lt;script&gt;x&lt;/script&gt; &amp; \n</td>" in html
    assert "<td>&quot;quoted&quot; &lt;b&gt;</td>" in html
    assert "<script>x" not in html and "<b>" not in html
    assert _one(room, 1) == html


def test_the_navigation_of_first_middle_and_newest_pages(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    rewrite(room.ledger, [_line(k) for k in range(1, 6)])
    written, n, _, _ = _build(room)
    assert n == 3 and sorted(written) == ["ledger-1.html", "ledger-2.html", "ledger-3.html", "ledger.html"]
    nav = {k: re.findall(r'<nav class="pages">(.*?)</nav>', written[f"ledger-{k}.html"]) for k in (1, 2, 3)}
    assert nav[1] == ['page 1: <a href="ledger.html">newest</a> <a href="ledger-2.html">newer</a>'] * 2
    assert (
        nav[2]
        == [
            'page 2: <a href="ledger.html">newest</a> <a href="ledger-3.html">newer</a> '
            '<a href="ledger-1.html">older</a> <a href="ledger-1.html">oldest</a>'
        ]
        * 2
    )
    assert (
        nav[3]
        == [
            'page 3: <a href="ledger.html">newest</a> <a href="ledger-2.html">older</a> '
            '<a href="ledger-1.html">oldest</a>'
        ]
        * 2
    )
    assert [_details(written[f"ledger-{k}.html"]) for k in (1, 2, 3)] == [["d2", "d1"], ["d4", "d3"], ["d5"]]
    assert "<p>lines 3 to 4, newest first.</p>" in written["ledger-2.html"]
    assert "<p>lines 5 to 5, newest first (the newest page: it grows).</p>" in written["ledger-3.html"]
    for k in (1, 2, 3):
        assert _one(room, k) == written[f"ledger-{k}.html"]


def test_one_clamps_the_page_number(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    rewrite(room.ledger, [_line(k) for k in range(1, 6)])
    assert _one(room, 0) == _one(room, -3) == _one(room, 1)
    assert _one(room, 99) == _one(room, 3)


def test_a_resume_writes_only_the_pages_that_grew(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    rewrite(room.ledger, [_line(k) for k in range(1, 6)])
    _, _, record, _ = _build(room)
    assert record["page"] == 3 and record["offset"] == room.ledger.read_text().index(_line(5))
    with room.ledger.open("a") as f:
        f.write(_line(6) + "\n" + _line(7) + "\n")
    written, n, again, _ = _build(room, record)
    assert n == 4 and sorted(written) == ["ledger-3.html", "ledger-4.html", "ledger.html"]
    assert _details(written["ledger-3.html"]) == ["d6", "d5"] and _details(written["ledger.html"]) == ["d7"]
    assert again["page"] == 4
    nothing_new, _, same, _ = _build(room, again)
    assert sorted(nothing_new) == ["ledger-4.html", "ledger.html"] and same == again


@pytest.mark.parametrize(
    "spoil",
    [
        {"boundary": "00"},  # the bytes before the offset changed: another ledger
        {"page": 9},  # more full pages than the ledger has lines for
        {"offset": 10**9},  # past what the fold read
        {"offset": "12"},
    ],
)
def test_a_resume_that_does_not_fit_rewrites_every_page(
    room: Room, monkeypatch: pytest.MonkeyPatch, spoil: dict[str, Any]
) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    rewrite(room.ledger, [_line(k) for k in range(1, 6)])
    first, _, record, _ = _build(room)
    again, _, _, _ = _build(room, {**record, **spoil})
    assert again == first


def test_lines_appended_after_the_fold_are_left_for_the_next_build(room: Room) -> None:
    rewrite(room.ledger, [_line(1), _line(2)])
    written: dict[str, str] = {}
    with cache.held({}):
        st = fold.state(room)
        with room.ledger.open("a") as f:
            f.write(_line(3) + "\n")
        ledger_pages.write(room, st, written.__setitem__)
        late = ledger_pages.one(room, st, 1)
    assert _details(written["ledger.html"]) == ["d2", "d1"] == _details(late)
    assert "lines 1 to 2" in late


def test_a_line_that_is_not_a_ledger_line_is_left_out(room: Room) -> None:
    rewrite(room.ledger, [_line(1), "| a person's | note |", "", "loose words", _line(2), "| a \\| b |"])
    written, _, _, st = _build(room)
    assert st["lines"] == 2
    assert _details(written["ledger.html"]) == ["d2", "d1"] == _details(_one(room, 1))
    assert "note" not in written["ledger.html"] and "loose" not in written["ledger.html"]
