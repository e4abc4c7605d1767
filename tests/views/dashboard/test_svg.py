"""control_room.views.dashboard.svg: bars, stacks and curves placed exactly, thinning, escaping."""

from __future__ import annotations

import re

from control_room.views.dashboard import svg

RECT = r'<rect class="(\w+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)">'
POLYLINE = r'<polyline class="line"[^>]* points="([^"]+)"/>'
Y_LABELS = r'<text class="y" x="52" y="\d+" text-anchor="end">([^<]*)</text>'


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


def test_the_frame_axes_and_end_labels() -> None:
    out = svg.bars("spend per day", ["2026-01-01", "2026-01-02", "2026-01-03"], [0.5, 2.0, 1.0], "spend")
    assert out == (
        '<svg class="chart spend" viewBox="0 0 560 200" width="560" height="200" role="img" '
        'xmlns="http://www.w3.org/2000/svg">'
        "<title>spend per day</title>"
        '<line class="axis" x1="56" y1="16" x2="56" y2="172"/>'
        '<line class="axis" x1="56" y1="172" x2="552" y2="172"/>'
        '<text class="y" x="52" y="20" text-anchor="end">2</text>'
        '<text class="y" x="52" y="172" text-anchor="end">0</text>'
        '<text class="x" x="56" y="192">2026-01-01</text>'
        '<text class="x" x="552" y="192" text-anchor="end">2026-01-03</text>'
        '<rect class="value" x="72.5" y="133.0" width="132.3" height="39.0">'
        "<title>2026-01-01: value 0.5</title></rect>"
        '<rect class="value" x="237.9" y="16.0" width="132.3" height="156.0">'
        "<title>2026-01-02: value 2</title></rect>"
        '<rect class="value" x="403.2" y="94.0" width="132.3" height="78.0">'
        "<title>2026-01-03: value 1</title></rect>"
        "</svg>"
    )


def test_all_zero_bars_draw_no_mark_on_a_zero_to_one_axis() -> None:
    out = svg.bars("idle", ["d1", "d2"], [0.0, 0.0])
    assert re.findall(RECT, out) == []
    assert re.findall(Y_LABELS, out) == ["1", "0"]


def test_a_stack_skips_a_zero_part_and_scales_to_the_tallest_total() -> None:
    out = svg.stacked("o", ["d1", "d2"], [("pass", [0.0, 2.0]), ("fail", [1.0, 0.0])], "outcomes")
    assert re.findall(RECT, out) == [
        ("fail", "80.8", "94.0", "198.4", "78.0"),
        ("pass", "328.8", "16.0", "198.4", "156.0"),
    ]
    assert "<title>d1: fail 1</title>" in out and "<title>d2: pass 2</title>" in out
    assert out.startswith('<svg class="chart outcomes" ')


def test_a_bar_is_at_least_one_unit_wide() -> None:
    out = svg.bars("many", [str(i) for i in range(1000)], [1.0] * 1000)
    widths = {w for _, _, _, w, _ in re.findall(RECT, out)}
    assert widths == {"1.0"}


def test_a_curve_across_zero_spans_its_lowest_to_its_highest_value() -> None:
    out = svg.curve("delta", ["a", "b"], [-2.0, 2.0])
    assert re.findall(POLYLINE, out) == ["56.0,172.0 552.0,16.0"]
    assert re.findall(Y_LABELS, out) == ["2", "-2"]


def test_a_negative_curve_runs_up_to_zero() -> None:
    out = svg.curve("loss", ["a", "b"], [-4.0, -1.0])
    assert re.findall(POLYLINE, out) == ["56.0,172.0 552.0,55.0"]
    assert re.findall(Y_LABELS, out) == ["0", "-4"]


def test_a_single_point_sits_in_the_middle_and_a_flat_zero_on_the_axis() -> None:
    assert re.findall(POLYLINE, svg.curve("one", ["a"], [5.0])) == ["304.0,16.0"]
    flat = svg.curve("zero", ["a", "b"], [0.0, 0.0])
    assert re.findall(POLYLINE, flat) == ["56.0,172.0 552.0,172.0"]
    assert re.findall(Y_LABELS, flat) == ["1", "0"]


def test_a_curve_without_a_name_has_no_data_attribute() -> None:
    out = svg.curve("depth", ["d1", "d2"], [1.0, 2.0], "depth")
    assert '<polyline class="line" points="56.0,94.0 552.0,16.0"/>' in out
    assert "data-metric" not in out
    assert '<circle cx="552.0" cy="16.0" r="2.5"><title>d2: 2</title></circle>' in out


def test_a_long_curve_draws_at_most_max_points_and_keeps_its_end_labels() -> None:
    labels = [f"run {i}" for i in range(1000)]
    out = svg.curve("m", labels, [float(i) for i in range(1000)])
    assert out.count("<circle") == svg.MAX_POINTS
    assert len(re.findall(POLYLINE, out)[0].split(" ")) == svg.MAX_POINTS
    assert '<text class="x" x="56" y="192">run 0</text>' in out
    assert '<text class="x" x="552" y="192" text-anchor="end">run 999</text>' in out
    assert "<title>run 999: 999</title>" in out


def test_thin_spreads_evenly() -> None:
    assert svg.thin(5, 3) == [0, 2, 4]
    assert svg.thin(11, 6) == [0, 2, 4, 6, 8, 10]
    assert svg.thin(0) == []


def test_values_are_shown_to_six_significant_digits() -> None:
    out = svg.bars("big", ["d1"], [1234567.0])
    assert re.findall(Y_LABELS, out) == ["1.23457e+06", "0"]
    assert "<title>d1: value 1.23457e+06</title>" in out


def test_titles_labels_and_names_are_escaped() -> None:
    out = svg.stacked("a<b & c", ["<d1>"], [('"x"', [1.0])])
    assert "<title>a&lt;b &amp; c</title>" in out
    assert '<text class="x" x="56" y="192">&lt;d1&gt;</text>' in out
    assert '<rect class="&quot;x&quot;" ' in out
    assert "<title>&lt;d1&gt;: &quot;x&quot; 1</title>" in out
    assert svg.empty("<i>") == '<p class="empty">&lt;i&gt;: nothing yet</p>'
    curve = svg.curve("c", ["a"], [1.0], name='m"><script>')
    assert 'data-metric="m&quot;&gt;&lt;script&gt;"' in curve
