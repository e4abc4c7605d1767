"""The overview, routes, findings and scorecard pages."""

from __future__ import annotations

from typing import Any

from control_room.errors import ControlRoomError
from control_room.knowledge import findings, graveyard, routes, scorecard
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.views.dashboard import fold as ledger_fold
from control_room.views.dashboard import runs, svg
from control_room.views.dashboard.page import esc, figure, href, md, table
from control_room.views.status import gather


def _card(label: str, value: str, cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<div class="card"><b{c}>{value}</b>{esc(label)}</div>'


def charts(room: Room, st: dict[str, Any]) -> str:
    days = sorted(st["days"])
    col = st["days"]
    out: list[str] = []  # the objective's metrics first: what the swarm is for
    for name in sorted(st["metrics"]):
        points = st["metrics"][name]
        out.append(
            figure(
                f"metric {name} over runs",
                svg.curve(
                    f"{name}, per run that printed it",
                    [f"{t} {task}" for t, task, _ in points],
                    [v for _, _, v in points],
                    "metric-curve",
                    name,
                ),
            )
        )
    out += [
        figure(
            "spend per day (USD)",
            svg.bars("spend per UTC day, USD", days, [col[d][ledger_fold.SPEND] for d in days], "spend"),
        ),
        figure(
            "outcomes per day (pass, fail)",
            svg.stacked(
                "results per UTC day: pass, fail",
                days,
                [
                    ("pass", [col[d][ledger_fold.PASSES] for d in days]),
                    ("fail", [col[d][ledger_fold.FAILS] for d in days]),
                ],
                "outcomes",
            ),
        ),
    ]
    depth = ledger_fold.queue_depth(col)
    out.append(
        figure(
            "queue depth (open tasks at the end of each day)",
            svg.curve(
                "open tasks at the end of each UTC day",
                [d for d, _ in depth],
                [float(v) for _, v in depth],
                "depth",
            ),
        )
    )
    pressure = runs.pressures(room)[-200:]
    out.append(
        figure(
            "context pressure per run (prompt tokens / context window)",
            svg.bars(
                "context pressure per run", [n for n, _ in pressure], [p for _, p in pressure], "pressure"
            ),
        )
    )
    return '<div class="charts">' + "".join(out) + "</div>"


def overview(room: Room, st: dict[str, Any]) -> str:
    s = gather(room)
    parts = []
    if s["stop"]:
        parts.append(f'<p class="stop">STOP: every cycle halts: {esc(s["stop"])}</p>')
    else:
        parts.append('<p class="ok">STOP: no</p>')
    parts += [f'<p class="bad">warning: {esc(w)}</p>' for w in s["warnings"]]
    if s.get("control_error"):
        parts.append(f'<p class="bad">CONTROL.md: {esc(s["control_error"])}</p>')
    try:
        slots = str(settings_file.load(room).max_parallel)
    except ControlRoomError:
        slots = "?"
    budget = s["daily_budget_usd"]
    spend = f"${s['spend_today_usd']:,.2f}" + (f" of ${budget:,.2f}" if budget is not None else "")
    cards = [
        _card("slots in use (running of max_parallel)", esc(f"{s['tasks']['running']} of {slots}")),
        _card("spend today (UTC) of daily budget", esc(spend)),
        _card("findings", f'<a href="findings.html">{esc(s["findings"])}</a>'),
        _card("ledger lines", esc(f"{s['ledger_lines']:,}")),
    ]
    parts.append('<div class="cards">' + "".join(cards) + "</div>")
    parts.append("<h2>tasks by state</h2>")
    parts.append(table([k for k in s["tasks"]], [[esc(v) for v in s["tasks"].values()]], "states"))
    waiting = s["waiting"]
    parts.append("<h2>waiting</h2>")
    if waiting is None:
        parts.append(
            '<p class="empty">not checked: too many queued tasks, or the room cannot run a cycle</p>'
        )
    else:
        parts.append(
            table(
                ["task", "kind", "why"],
                [[esc(w["id"]), esc(w["kind"]), esc(w["why"])] for w in waiting],
                "waiting",
            )
        )
    if s["merging"]:
        parts.append("<h2>passed, not merged yet</h2>")
        parts.append(table(["task", "why"], [[esc(m["id"]), esc(m["why"])] for m in s["merging"]], "merging"))
    if s["held"]:
        parts.append("<h2>held routes (death loops)</h2><p>" + esc(", ".join(s["held"])) + "</p>")
    parts.append("<h2>charts</h2>" + charts(room, st))
    return "\n".join(parts)


def routes_page(room: Room) -> str:
    rows = routes.rows(room)
    head = [k for k in (rows[0] if rows else {}) if k != "line"]
    body = [table(head, [[esc(r.get(k, "")) for k in head] for r in rows], "routes")]
    body.append("<h2>graveyard</h2>")
    tombs = graveyard.tombstones(room)
    keys = sorted({k for t in tombs for k in t})
    keys = ["candidate", *(k for k in keys if k != "candidate")]
    body.append(table(keys, [[esc(t.get(k, "")) for k in keys] for t in tombs], "tombstones"))
    for t in tombs:
        try:
            _, text = graveyard.read(room, t["candidate"])
        except ControlRoomError:
            continue
        body.append(f"<h3>{esc(t['candidate'])}</h3>{md(text)}")
    return "\n".join(body)


def findings_page(room: Room) -> str:
    try:
        data = findings.gather(room, settings_file.load(room))
    except ControlRoomError as exc:
        return f'<p class="bad">{esc(exc)}</p>'
    out = ["<h2>death loops</h2>"]
    out.append(
        table(
            ["route", "failures in a row", "the same", "cause", "ledger lines"],
            [
                [
                    esc(d["key"]),
                    esc(d["n"]),
                    esc(d["same"]),
                    esc(d["cause"]),
                    "<br>".join(esc(" ".join(str(x) for x in line)) for line in d["lines"]),
                ]
                for d in data["death_loops"]
            ],
            "loops",
        )
    )
    out.append(f"<h2>unsupported CONFIRMED claims ({esc(data['unsupported_total'])})</h2>")
    out.append(
        table(
            ["time", "line id", "task", "route", "detail"],
            [
                [
                    esc(u["time"]),
                    esc(u["id"]),
                    _task_link(room, u["task"]),
                    esc(u["route"] or "-"),
                    esc(u["detail"]),
                ]
                for u in data["unsupported_claims"]
            ],
            "unsupported",
        )
    )
    out.append("<h2>escalated to a person (reviews disagree)</h2>")
    out.append(
        table(
            ["task", "both positions in"],
            [[_task_link(room, e["task"]), esc(e["reason"])] for e in data["escalated"]],
            "escalated",
        )
    )
    return "\n".join(out)


def _task_link(room: Room, task: str) -> str:
    if runs.SAFE.fullmatch(task) and (room.swarm / "results" / task).is_dir():
        return f'<a href="{href(f"run-{task}.html")}">{esc(task)}</a>'
    return esc(task)


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else f"{part}/{whole} (-)"


def _metrics_row(m: dict[str, Any]) -> list[str]:
    mean = m["mean_rounds_to_pass"]
    return [
        esc(m["tasks"]),
        esc(m["runs"]),
        esc(_rate(m["first_round_pass"]["passed"], m["first_round_pass"]["of"])),
        esc(m["passed"]),
        esc(m["parked"]),
        esc(f"{mean['mean']:g}" if mean["of"] else "-"),
        esc(f"{m['agent_minutes']:g}"),
        esc(f"{m['tokens']['input']}/{m['tokens']['output']}"),
        esc(f"${m['spend_usd']:.4f}"),
        esc(_rate(m["unsupported_claims"]["count"], m["unsupported_claims"]["of"])),
        esc(_rate(m["post_rebase_validator_failures"]["count"], m["post_rebase_validator_failures"]["of"])),
    ]


HEAD = [
    "tasks",
    "runs",
    "first-round pass",
    "passed",
    "parked",
    "mean rounds to pass",
    "agent minutes",
    "tokens in/out",
    "spend",
    "unsupported claims",
    "post-rebase failures",
]


def scorecard_page(room: Room) -> str:
    sc = scorecard.card(room)
    return "\n".join(
        [
            "<h2>by adapter and model</h2>",
            table(
                ["adapter", "model", *HEAD],
                [[esc(m["adapter"]), esc(m["model"]), *_metrics_row(m)] for m in sc["by_model"]],
                "by-model",
            ),
            "<h2>by role</h2>",
            table(["role", *HEAD], [[esc(m["role"]), *_metrics_row(m)] for m in sc["by_role"]], "by-role"),
            "<h2>total</h2>",
            table(HEAD, [_metrics_row(sc["total"])], "total"),
        ]
    )
