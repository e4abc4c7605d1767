"""control_room.views.dashboard.pages: overview, charts, routes and graveyard, findings, scorecard."""

from __future__ import annotations

import re
from typing import Any

from support import queue, set_gate

from control_room import ledger
from control_room.dispatch.person import brake
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.ledger.result import RunResult
from control_room.room.layout import Room
from control_room.store import cache
from control_room.views.dashboard import fold, pages

BROKEN_CONTROL = "---\nmax_parallel: [\n---\n"
STATES = (
    '<table class="states"><thead><tr><th>queue</th><th>running</th><th>passed</th><th>to-test</th>'
    "<th>done</th><th>parked</th><th>rejected</th><th>cancelled</th></tr></thead>"
)


def _fold(room: Room) -> dict[str, Any]:
    with cache.held({}):
        return fold.state(room)


def _overview(room: Room) -> str:
    with cache.held({}):
        return pages.overview(room, fold.state(room))


def _result(room: Room, task: str, outcome: str, cost: float = 0.0, **run: Any) -> None:
    detail = RunResult(**{"round": 1, "exit": 0, "decision": "d", "validator": "passed", **run}).detail()
    ledger.append(
        room.ledger, events.RESULT, task=task, adapter="probe", outcome=outcome, cost_usd=cost, detail=detail
    )


def test_the_overview_of_a_fresh_room(room: Room) -> None:
    head, charts = _overview(room).split("\n<h2>charts</h2>")
    assert head == (
        '<p class="ok">STOP: no</p>\n'
        '<div class="cards">'
        '<div class="card"><b>0 of 1</b>slots in use (running of max_parallel)</div>'
        '<div class="card"><b>$0.00 of $10.00</b>spend today (UTC) of daily budget</div>'
        '<div class="card"><b><a href="findings.html">0</a></b>findings</div>'
        '<div class="card"><b>1</b>ledger lines</div></div>\n'
        "<h2>tasks by state</h2>\n"
        + STATES
        + "<tbody><tr><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td><td>0</td></tr>"
        "</tbody></table>\n"
        "<h2>waiting</h2>\n"
        '<p class="empty">none</p>'
    )
    assert charts.startswith('<div class="charts">') and charts.endswith("</div>")


def test_the_overview_under_stop_names_it_and_why_each_queued_task_waits(room: Room) -> None:
    queue(room, "first", gate="approve")
    queue(room, "second", deps=["first"])
    brake.stop(room, "smoke <here>")
    html = _overview(room)
    stop = re.fullmatch(r'<p class="stop">STOP: every cycle halts: (.*)</p>', html.split("\n")[0])
    assert stop is not None and stop.group(1).endswith(" by tester reason: smoke &lt;here&gt;")
    assert '<p class="ok">' not in html
    assert "<tbody><tr><td>2</td><td>0</td>" in html
    assert (
        "<h2>waiting</h2>\n"
        '<table class="waiting"><thead><tr><th>task</th><th>kind</th><th>why</th></tr></thead><tbody>'
        "<tr><td>second</td><td>dep</td><td>waits for dep first (queue)</td></tr>"
        "<tr><td>first</td><td>refused</td><td>refused: gate must be a list of ids</td></tr>"
        "</tbody></table>"
    ) in html


def test_the_overview_with_a_broken_control_md(room: Room) -> None:
    queue(room, "first")
    room.control.write_text(BROKEN_CONTROL)
    html = _overview(room)
    assert f'<p class="bad">CONTROL.md: {room.control}: line 2: front matter is not valid YAML: ' in html
    assert '<div class="card"><b>0 of ?</b>slots in use (running of max_parallel)</div>' in html
    assert '<div class="card"><b>$0.00</b>spend today (UTC) of daily budget</div>' in html
    assert (
        "<h2>waiting</h2>\n"
        '<p class="empty">not checked: too many queued tasks, or the room cannot run a cycle</p>'
    ) in html


def test_the_overview_counts_spend_today_and_ledger_lines(room: Room) -> None:
    set_gate(room, "daily_budget_usd", "2.5")
    set_gate(room, "max_parallel", "3")
    _result(room, "t1", "pass", cost=1234.5)
    html = _overview(room)
    assert '<div class="card"><b>0 of 3</b>slots in use (running of max_parallel)</div>' in html
    assert '<div class="card"><b>$1,234.50 of $2.50</b>spend today (UTC) of daily budget</div>' in html
    assert '<div class="card"><b>2</b>ledger lines</div>' in html


def test_charts_put_the_metrics_first_then_spend_outcomes_depth_and_pressure(room: Room) -> None:
    _result(room, "t1", "pass", cost=0.5, metrics={"speedup": 2.0, "ms": 40.0})
    (room.swarm / "results" / "t1").mkdir()
    (room.swarm / "results" / "t1" / "meta.json").write_text('{"context_pressure": 0.5}')
    html = pages.charts(room, _fold(room))
    assert re.findall(r"<figcaption>([^<]*)</figcaption>", html) == [
        "metric ms over runs",
        "metric speedup over runs",
        "spend per day (USD)",
        "outcomes per day (pass, fail)",
        "queue depth (open tasks at the end of each day)",
        "context pressure per run (prompt tokens / context window)",
    ]
    assert re.findall(r'<svg class="chart ([\w-]+)"', html) == [
        "metric-curve",
        "metric-curve",
        "spend",
        "outcomes",
        "depth",
        "pressure",
    ]
    assert '<polyline class="line" data-metric="speedup" points="304.0,16.0"/>' in html
    assert re.search(r"<title>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ t1: 40</title>", html)
    assert '<rect class="pass" ' in html and '<rect class="fail" ' not in html
    assert "<title>t1 last: value 0.5</title>" in html


def test_charts_of_a_room_without_runs_say_so(room: Room) -> None:
    html = pages.charts(room, _fold(room))
    assert "metric" not in html
    assert '<p class="empty">context pressure per run: nothing yet</p>' in html


def test_the_routes_page_shows_the_board_and_each_tombstone(room: Room) -> None:
    routes.add(room, "fast-parse", "parse <faster>", "no gain")
    graveyard = room.root / "graveyard"
    (graveyard / "dead-end.md").write_text(
        "---\ncandidate: dead-end\nstate: killed\nverdict: too slow\n---\n"
        "# dead-end\n\n<script>x</script> *why*\n"
    )
    (graveyard / "broken.md").write_text("---\nstate: [killed\n---\nbody\n")
    html = pages.routes_page(room)
    assert html.startswith(
        '<table class="routes"><thead><tr><th>route</th><th>verdict</th><th>title</th><th>attempts</th>'
        "<th>spend_usd</th><th>last_result</th><th>falsifier</th></tr></thead><tbody>"
        "<tr><td>fast-parse</td><td>untested</td><td>parse &lt;faster&gt;</td><td>0</td><td>0</td><td></td>"
        "<td>no gain</td></tr></tbody></table>\n<h2>graveyard</h2>\n"
        '<table class="tombstones"><thead><tr><th>candidate</th><th>problem</th><th>state</th>'
        "<th>verdict</th></tr></thead><tbody><tr><td>broken</td>"
        f"<td>{graveyard / 'broken.md'}: line 2: front matter is not valid YAML: "
    )
    assert html.endswith(
        "<td>unreadable</td><td></td></tr><tr><td>dead-end</td><td></td><td>killed</td><td>too slow</td></tr>"
        "</tbody></table>\n"
        '<h3>dead-end</h3><div class="md"><h1>dead-end</h1>\n'
        "<p>&lt;script&gt;x&lt;/script&gt; <em>why</em></p>\n"
        "</div>"
    )
    assert "<h3>broken</h3>" not in html


def test_the_routes_page_of_an_empty_board(room: Room) -> None:
    assert pages.routes_page(room) == (
        '<p class="empty">none</p>\n<h2>graveyard</h2>\n<p class="empty">none</p>'
    )


def test_the_findings_page_links_a_task_that_has_runs(room: Room) -> None:
    _result(room, "t1", "fail", unsupported=True, validator="exited 1")
    (room.swarm / "results" / "t1").mkdir()
    parked = room.state_dir("parked")
    (parked / "t2.reason").write_text("for a person: its reviews disagree\nA: yes\nB: no\n")
    (parked / "t3.reason").write_text("max rounds\n")
    html = pages.findings_page(room)
    assert html.startswith('<h2>death loops</h2>\n<p class="empty">none</p>\n')
    assert re.search(
        r"<h2>unsupported CONFIRMED claims \(1\)</h2>\n"
        r'<table class="unsupported"><thead><tr><th>time</th><th>line id</th><th>task</th><th>route</th>'
        r"<th>detail</th></tr></thead><tbody><tr><td>[\dTZ:-]+</td><td>[0-9a-f]{16}</td>"
        r'<td><a href="run-t1.html">t1</a></td><td>-</td>'
        r"<td>report says CONFIRMED success; validator exited 1</td></tr></tbody></table>\n",
        html,
    )
    assert html.endswith(
        "<h2>escalated to a person (reviews disagree)</h2>\n"
        '<table class="escalated"><thead><tr><th>task</th><th>both positions in</th></tr></thead><tbody>'
        "<tr><td>t2</td><td>swarm/parked/t2.reason</td></tr></tbody></table>"
    )


def test_the_findings_page_of_a_room_whose_control_md_is_broken(room: Room) -> None:
    room.control.write_text(BROKEN_CONTROL)
    html = pages.findings_page(room)
    assert html.startswith(f'<p class="bad">{room.control}: line 2: front matter is not valid YAML: ')
    assert html.count("<p") == 1


def test_the_scorecard_page_of_a_fresh_room(room: Room) -> None:
    head = "".join(f"<th>{h}</th>" for h in pages.HEAD)
    assert pages.scorecard_page(room) == (
        '<h2>by adapter and model</h2>\n<p class="empty">none</p>\n'
        '<h2>by role</h2>\n<p class="empty">none</p>\n'
        f'<h2>total</h2>\n<table class="total"><thead><tr>{head}</tr></thead><tbody><tr>'
        "<td>0</td><td>0</td><td>0/0 (-)</td><td>0</td><td>0</td><td>-</td><td>0</td><td>0/0</td>"
        "<td>$0.0000</td><td>0/0 (-)</td><td>0/0 (-)</td></tr></tbody></table>"
    )


def test_the_scorecard_page_by_model_and_role(room: Room) -> None:
    _result(room, "t1", "pass", cost=0.5, model="m<1>", role="coder", input_tokens=10, output_tokens=5)
    _result(room, "t2", "fail", cost=0.25, model="m<1>", role="coder", input_tokens=1, output_tokens=2)
    html = pages.scorecard_page(room)
    row = (
        "<td>2</td><td>2</td><td>1/2 (50%)</td><td>1</td><td>0</td><td>1</td><td>0</td><td>11/7</td>"
        "<td>$0.7500</td><td>0/2 (0%)</td><td>0/0 (-)</td></tr>"
    )
    assert f"<tbody><tr><td>probe</td><td>m&lt;1&gt;</td>{row}</tbody>" in html
    assert f"<tbody><tr><td>coder</td>{row}</tbody>" in html
    assert f'<table class="total"><thead><tr>{"".join(f"<th>{h}</th>" for h in pages.HEAD)}</tr>' in html
