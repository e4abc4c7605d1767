"""Charts as inline SVG, written by hand: bars, stacked bars and a curve.

Every chart is 560 x 200 user units with the plot inside fixed margins; the y axis runs from 0
(or the lowest value, if negative) to the highest value, labelled at both ends; the x axis is
labelled with its first and last label. Each chart carries a ``<title>`` and a class, and each
mark a ``<title>`` of its own (its label and value), which a browser shows on hover.
"""

from __future__ import annotations

from html import escape

W, H = 560, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 16, 28
PW, PH = W - LEFT - RIGHT, H - TOP - BOTTOM
MAX_POINTS = 400  # a curve with more points is thinned to this many (evenly, the last kept)


def _num(v: float) -> str:
    return f"{v:.1f}"


def _value(v: float) -> str:
    return f"{v:.6g}"


def _frame(cls: str, title: str, lo: float, hi: float, first: str, last: str, marks: list[str]) -> str:
    bottom, right = TOP + PH, LEFT + PW
    return "".join(
        [
            f'<svg class="chart {cls}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
            'xmlns="http://www.w3.org/2000/svg">',
            f"<title>{escape(title)}</title>",
            f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}"/>',
            f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
            f'<text class="y" x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{escape(_value(hi))}</text>',
            f'<text class="y" x="{LEFT - 4}" y="{bottom}" text-anchor="end">{escape(_value(lo))}</text>',
            f'<text class="x" x="{LEFT}" y="{H - 8}">{escape(first)}</text>',
            f'<text class="x" x="{right}" y="{H - 8}" text-anchor="end">{escape(last)}</text>',
            *marks,
            "</svg>",
        ]
    )


def _range(values: list[float]) -> tuple[float, float]:
    lo, hi = min(0.0, *values), max(0.0, *values)
    return lo, (hi if hi > lo else lo + 1.0)


def _y(v: float, lo: float, hi: float) -> float:
    return TOP + PH - (v - lo) / (hi - lo) * PH


def empty(title: str) -> str:
    return f'<p class="empty">{escape(title)}: nothing yet</p>'


def bars(title: str, labels: list[str], values: list[float], cls: str = "bars") -> str:
    """One bar per value, from 0."""
    return stacked(title, labels, [("value", values)], cls)


def stacked(
    title: str, labels: list[str], series: list[tuple[str, list[float]]], cls: str = "stacked"
) -> str:
    """Bars stacked from 0, one series on the other (non-negative values), one class each."""
    if not labels:
        return empty(title)
    totals = [sum(s[1][i] for s in series) for i in range(len(labels))]
    lo, hi = _range(totals)
    step = PW / len(labels)
    width = max(1.0, step * 0.8)
    marks = []
    for i, label in enumerate(labels):
        base = 0.0
        x = LEFT + i * step + (step - width) / 2
        for name, values in series:
            v = values[i]
            if v <= 0:
                continue
            y0, y1 = _y(base, lo, hi), _y(base + v, lo, hi)
            marks.append(
                f'<rect class="{escape(name)}" x="{_num(x)}" y="{_num(y1)}" width="{_num(width)}" '
                f'height="{_num(y0 - y1)}"><title>{escape(label)}: {escape(name)} {_value(v)}</title></rect>'
            )
            base += v
    return _frame(cls, title, lo, hi, labels[0], labels[-1], marks)


def thin(n: int, most: int = MAX_POINTS) -> list[int]:
    """Indices of at most ``most`` of ``n`` points, evenly spread, the first and last kept."""
    if n <= most:
        return list(range(n))
    return sorted({round(k * (n - 1) / (most - 1)) for k in range(most)})


def curve(title: str, labels: list[str], values: list[float], cls: str = "curve", name: str = "") -> str:
    """A polyline through the values, in order, and a dot on each."""
    if not values:
        return empty(title)
    keep = thin(len(values))
    labels, values = [labels[i] for i in keep], [values[i] for i in keep]
    lo, hi = min(values), max(values)
    lo, hi = (min(lo, 0.0), max(hi, 0.0)) if lo >= 0 or hi <= 0 else (lo, hi)
    hi = hi if hi > lo else lo + 1.0
    n = len(values)
    xs = [LEFT + PW / 2] if n == 1 else [LEFT + i * PW / (n - 1) for i in range(n)]
    pts = [(x, _y(v, lo, hi)) for x, v in zip(xs, values, strict=True)]
    data = f' data-metric="{escape(name)}"' if name else ""
    marks = [f'<polyline class="line"{data} points="{" ".join(f"{_num(x)},{_num(y)}" for x, y in pts)}"/>']
    for (x, y), label, v in zip(pts, labels, values, strict=True):
        tip = f"<title>{escape(label)}: {_value(v)}</title>"
        marks.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="2.5">{tip}</circle>')
    return _frame(cls, title, lo, hi, labels[0], labels[-1], marks)
