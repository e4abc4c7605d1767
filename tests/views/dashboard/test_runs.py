"""control_room.views.dashboard.runs: results folders as runs, meta.json, pressures, index, run page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_room.room.layout import Room
from control_room.views.dashboard import runs

META = {
    "verdict": "pass",
    "round": 2,
    "adapter": "probe",
    "model": None,
    "started": "2026-03-01T00:00:00Z",
    "ended": "2026-03-01T00:01:00Z",
    "context_pressure": 0.125,
    "prompt_tokens_est": 125,
    "context_window": 1000,
    "validator": {"exit_code": 0, "duration_s": 1.5},
    "metrics": {"ms": 40, "speedup": 1.5},
}


def _folder(room: Room, task: str, run: str = "", meta: dict[str, Any] | None = None) -> Path:
    folder = room.swarm / "results" / task / run if run else room.swarm / "results" / task
    folder.mkdir(parents=True, exist_ok=True)
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta))
    return folder


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


def test_tasks_are_the_folders_whose_names_are_safe_in_a_file_name(room: Room) -> None:
    for name in ("b2", "a1", "a.b_c-d", ".hidden", "-dash", "x y", "é"):
        _folder(room, name)
    (room.swarm / "results" / "file.txt").write_text("not a folder")
    (room.swarm / "results" / ("l" * 129)).mkdir()
    assert runs.tasks(room) == ["a.b_c-d", "a1", "b2"]


def test_no_results_folder_means_no_tasks(room: Room) -> None:
    (room.swarm / "results").rename(room.root / "elsewhere")
    assert runs.tasks(room) == []
    assert runs.pressures(room) == []
    assert runs.index(room) == '<p class="empty">none</p>'


def test_folders_are_the_numbered_runs_in_order_then_the_last(room: Room) -> None:
    base = _folder(room, "t1")
    for run in ("run-10", "run-2", "run-x", "notes"):
        (base / run).mkdir()
    assert runs.folders(room, "t1") == [
        ("run-2", base / "run-2"),
        ("run-10", base / "run-10"),
        ("last", base),
    ]
    assert runs.folders(room, "t9") == []


def test_a_meta_that_is_missing_or_broken_reads_as_empty(room: Room) -> None:
    folder = _folder(room, "t1")
    assert runs.meta(folder) == {}
    for text in ("{not json", "[1, 2]", "null", ""):
        (folder / "meta.json").write_text(text)
        assert runs.meta(folder) == {}, text
    (folder / "meta.json").write_text('{"verdict": "fail"}')
    assert runs.meta(folder) == {"verdict": "fail"}


def test_pressures_are_the_runs_with_a_number_in_the_order_they_started(room: Room) -> None:
    _folder(room, "b", meta={"context_pressure": 0.5, "started": "2026-03-01T00:00:02Z"})
    _folder(room, "b", "run-1", meta={"context_pressure": 1, "started": "2026-03-01T00:00:00Z"})
    _folder(room, "a", meta={"context_pressure": 0.25, "started": "2026-03-01T00:00:01Z"})
    _folder(room, "c", meta={"context_pressure": True, "started": "2026-03-01T00:00:03Z"})
    _folder(room, "d", meta={"context_pressure": "0.9", "started": "2026-03-01T00:00:04Z"})
    _folder(room, "e", meta={"started": "2026-03-01T00:00:05Z"})
    _folder(room, "f", meta={"context_pressure": 0.75})  # no start: first
    assert runs.pressures(room) == [("f last", 0.75), ("b run-1", 1.0), ("a last", 0.25), ("b last", 0.5)]


def test_the_index_lists_each_task_with_its_last_run(room: Room) -> None:
    _folder(room, "x1", meta=META)
    _folder(room, "x1", "run-1", meta={"verdict": "fail"})
    _folder(room, "y 2", meta=META)  # not a safe name: no page, not listed
    _folder(room, "z3")
    assert runs.index(room) == (
        "<table><thead><tr><th>task</th><th>runs</th><th>last verdict</th><th>adapter</th>"
        "<th>started</th><th>context pressure</th></tr></thead><tbody>"
        '<tr><td><a href="run-x1.html">x1</a></td><td>2</td><td>pass</td><td>probe</td>'
        "<td>2026-03-01T00:00:00Z</td><td>12.5% (125 of 1000 tokens)</td></tr>"
        '<tr><td><a href="run-z3.html">z3</a></td><td>1</td><td></td><td></td><td></td><td>-</td></tr>'
        "</tbody></table>"
    )


def test_a_run_page_states_its_facts_and_shows_its_files(room: Room) -> None:
    folder = _folder(room, "x1", meta=META)
    (folder / "prompt.md").write_text("# Task\nDo <it>\n")
    (folder / "validator.stdout.txt").write_text("ok <1>\n")
    (folder / "validator.stderr.txt").write_text("")  # empty: not shown
    html = runs.page(room, "x1", [])
    assert html == (
        "<h2>reviews and arbitration</h2>\n"
        '<p class="empty">none</p>\n'
        "<h2>last</h2>\n"
        '<table class="facts"><thead><tr><th></th><th></th></tr></thead><tbody>'
        "<tr><td>verdict</td><td>pass</td></tr>"
        "<tr><td>round</td><td>2</td></tr>"
        "<tr><td>adapter / model</td><td>probe / default</td></tr>"
        "<tr><td>started / ended</td><td>2026-03-01T00:00:00Z / 2026-03-01T00:01:00Z</td></tr>"
        "<tr><td>context pressure</td><td>12.5% (125 of 1000 tokens)</td></tr>"
        "<tr><td>validator</td><td>exit 0 in 1.5 s</td></tr>"
        "<tr><td>metrics</td><td>ms=40, speedup=1.5</td></tr>"
        "</tbody></table>\n"
        '<h3>report.md</h3><p class="empty">none</p>\n'
        "<h3>validator.stdout.txt</h3><pre>ok &lt;1&gt;\n</pre>\n"
        '<details><summary>prompt.md (15 characters)</summary><div class="md"><h1>Task</h1>\n'
        "<p>Do &lt;it&gt;</p>\n</div></details>"
    )


def test_a_run_without_meta_shows_dashes(room: Room) -> None:
    _folder(room, "x1")
    html = runs.page(room, "x1", [])
    assert (
        "<tr><td>verdict</td><td>-</td></tr><tr><td>round</td><td>-</td></tr>"
        "<tr><td>adapter / model</td><td>- / default</td></tr>"
        "<tr><td>started / ended</td><td>- / -</td></tr>"
        "<tr><td>context pressure</td><td>-</td></tr>"
        "<tr><td>validator</td><td>exit - in - s</td></tr>"
        "<tr><td>metrics</td><td>-</td></tr>"
    ) in html
    assert "<details>" not in html


def test_review_lines_are_a_table_newest_as_given(room: Room) -> None:
    _folder(room, "x1")
    reviews = [
        ["2026-03-01T00:00:00Z", "review", "reject", "probe", "too slow"],
        ["2026-03-01T00:00:01Z", "escalated", "parked", "", "both"],
    ]
    assert (
        "<tr><td>2026-03-01T00:00:00Z</td><td>review</td><td>reject</td><td>probe</td>"
        '<td><span class="detail">too slow</span></td></tr>'
        "<tr><td>2026-03-01T00:00:01Z</td><td>escalated</td><td>parked</td><td></td>"
        '<td><span class="detail">both</span></td></tr>'
    ) in runs.page(room, "x1", reviews)


def test_long_text_is_cut_and_bytes_not_utf8_are_read(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "TEXT_MAX", 8)
    folder = _folder(room, "x1")
    (folder / "validator.stdout.txt").write_text("0123456789abcdef")
    (folder / "validator.stderr.txt").write_bytes(b"caf\xe9")
    html = runs.page(room, "x1", [])
    assert "<h3>validator.stdout.txt</h3><pre>01234567</pre>" in html
    assert "<h3>validator.stderr.txt</h3><pre>café</pre>" in html
