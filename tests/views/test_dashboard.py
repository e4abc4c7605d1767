"""The dashboard's parts: the charts, the fold, escaping, the ledger's pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from control_room import ledger
from control_room.errors import InvalidError
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room.layout import Room
from control_room.store import cache
from control_room.views.dashboard import fold, ledger_pages, page, runs, site, svg


def test_bars_are_placed_exactly() -> None:
    out = svg.bars("spend", ["d1", "d2"], [1.0, 3.0], "spend")
    rects = re.findall(
        r'<rect class="value" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)">', out
    )
    assert rects == [("80.8", "120.0", "198.4", "52.0"), ("328.8", "16.0", "198.4", "156.0")]
    assert out.startswith('<svg class="chart spend" viewBox="0 0 560 200"')
    assert "<title>d2: value 3</title>" in out
    assert ">3</text>" in out and ">d1</text>" in out and ">d2</text>" in out


def test_stacked_bars_put_fail_on_pass() -> None:
    out = svg.stacked("o", ["d1"], [("pass", [1.0]), ("fail", [3.0])])
    assert re.findall(
        r'<rect class="(\w+)" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)">', out
    ) == [
        ("pass", "133.0", "39.0"),
        ("fail", "16.0", "117.0"),
    ]


def test_curve_points_and_empty_chart() -> None:
    out = svg.curve("m", ["a", "b", "c"], [1.0, 2.0, 4.0], "metric-curve", "speedup")
    assert '<polyline class="line" data-metric="speedup" points="56.0,133.0 304.0,94.0 552.0,16.0"/>' in out
    assert out.count("<circle") == 3
    assert svg.curve("m", [], []) == '<p class="empty">m: nothing yet</p>'
    assert svg.bars("s", [], []) == '<p class="empty">s: nothing yet</p>'


def test_a_long_curve_is_thinned_keeping_both_ends() -> None:
    keep = svg.thin(10_000)
    assert len(keep) == svg.MAX_POINTS and keep[0] == 0 and keep[-1] == 9_999
    assert svg.thin(3) == [0, 1, 2]


def test_markdown_and_text_are_escaped() -> None:
    html = page.md("# hi\n\n<script>document.title='pwned'</script>\n\n[x](javascript:alert(1))")
    assert "<script>" not in html
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in html
    assert 'href="javascript' not in html
    assert page.esc("<b>&") == "&lt;b&gt;&amp;"


def _result(
    room: Room, task: str, outcome: str, metrics: dict[str, float] | None = None, cost: float = 0.0
) -> None:
    run = RunResult(round=1, exit=0, decision="d", validator="passed", metrics=metrics)
    ledger.append(
        room.ledger,
        events.RESULT,
        task=task,
        adapter="probe",
        outcome=outcome,
        cost_usd=cost,
        detail=run.detail(),
    )


def test_the_fold_counts_days_metrics_and_reviews(room: Room) -> None:
    ledger.append(room.ledger, events.TASK_ADD, task="t1", adapter="probe", detail="x")
    ledger.append(room.ledger, events.TASK_ADD, task="t2", adapter="probe", detail="x")
    _result(room, "t1", "pass", {"speedup": 1.5}, cost=0.25)
    _result(room, "t2", "fail", {"speedup": 0.5, "ms": 40.0})
    ledger.append(
        room.ledger, events.REVIEW, task="t1", adapter="probe", outcome="reject", detail="<b>no</b>"
    )
    ledger.append(room.ledger, events.PARK, task="t2", detail="max rounds")
    memory: dict[str, bytes] = {}
    with cache.held(memory):
        st = fold.state(room)
    [(day, counts)] = [(d, c) for d, c in st["days"].items() if c[fold.LINES] > 1]
    assert counts[fold.SPEND] == 0.25
    assert counts[fold.PASSES : fold.LINES] == [1, 1, 2, 2]
    assert fold.queue_depth(st["days"])[-1] == (day, 0)
    assert sorted(st["metrics"]) == ["ms", "speedup"]
    assert [(task, v) for _, task, v in st["metrics"]["speedup"]] == [("t1", 1.5), ("t2", 0.5)]
    assert [r[1:] for r in st["reviews"]["t1"]] == [["review", "reject", "probe", "<b>no</b>"]]
    assert not (room.cache / "dashboard").exists()  # kept in memory, not written
    assert str(room.cache / "dashboard") in memory


def test_queue_depth_never_goes_below_zero() -> None:
    days = {
        "2026-01-02": [0.0, 0, 0, 0, 3, 3],
        "2026-01-01": [0.0, 0, 0, 2, 0, 2],
        "2026-01-03": [0.0, 0, 0, 1, 0, 1],
    }
    assert fold.queue_depth(days) == [("2026-01-01", 2), ("2026-01-02", 0), ("2026-01-03", 1)]


def _lines(room: Room, n: int) -> None:
    for i in range(n):
        ledger.append(room.ledger, events.WARNING, task=f"t{i}", detail=f"line {i} <i>")


def _rows(html: str) -> list[str]:
    return re.findall(r"<td>line (\d+) &lt;i&gt;</td>", html)


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


def test_a_run_page_shows_a_script_as_text(room: Room) -> None:
    folder = room.swarm / "results" / "x1"
    (folder / "run-1").mkdir(parents=True)
    (folder / "report.md").write_text("DECISION: <script>document.title='pwned'</script>\n")
    (folder / "validator.stdout.txt").write_text("METRIC speedup=2\n<img src=x onerror=alert(1)>\n")
    (folder / "meta.json").write_text(
        '{"context_pressure": 0.25, "prompt_tokens_est": 250, "context_window": 1000, '
        '"started": "2026-12-01T00:00:01Z"}'
    )
    (folder / "run-1" / "meta.json").write_text(
        '{"context_pressure": 0.5, "started": "2026-12-01T00:00:00Z"}'
    )
    (folder / "run-1" / "report.md").write_text("DECISION: first\n")
    html = runs.page(room, "x1", [["t", "arbitration", "A", "", "<u>side A</u>"]])
    assert "<script>" not in html and "<img" not in html and "<u>" not in html
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;u&gt;side A&lt;/u&gt;" in html
    assert html.index("<h2>last</h2>") < html.index("<h2>run-1</h2>")
    assert "25.0% (250 of 1000 tokens)" in html
    assert runs.pressures(room) == [("x1 run-1", 0.5), ("x1 last", 0.25)]
    assert runs.tasks(room) == ["x1"]


def test_render_knows_its_pages(room: Room) -> None:
    with cache.held({}):
        st = fold.state(room)
        assert site.render(room, "nope.html", st) is None
        assert site.render(room, "ledger-2.html", st) is None
        assert site.render(room, "run-..%2f.html", st) is None
        assert site.render(room, "style.css", st) == page.CSS
        for name in (
            "index.html",
            "routes.html",
            "findings.html",
            "scorecard.html",
            "runs.html",
            "ledger.html",
        ):
            text = site.render(room, name, st)
            assert text is not None and text.startswith("<!DOCTYPE html>")


def test_out_must_be_new_empty_or_made_by_the_dashboard(room: Room, tmp_path: Path) -> None:
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(InvalidError) as caught:
        site.build(room, other)
    assert str(caught.value) == (
        f"{other}: not empty and not a dashboard this command made (no .control-room-dashboard); "
        "name a new or empty folder"
    )
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
