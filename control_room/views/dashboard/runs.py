"""Each run's page: ``swarm/results/<id>/`` (the last run) and its ``run-K/`` (the earlier
ones): the prompt, the report, the validator's output, meta.json's context pressure, and the
task's ``review``, ``arbitration`` and ``escalated`` lines from the ledger."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from control_room.room.layout import Room
from control_room.room.results import read_capture
from control_room.store import records
from control_room.views.dashboard.page import esc, href, md, table

SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a folder name used in a page's file name
TEXT_MAX = 200_000  # characters of a prompt, report or output shown (the file has the rest)


def tasks(room: Room) -> list[str]:
    """The ids with a results folder, sorted."""
    try:
        names = os.listdir(room.swarm / "results")
    except OSError:
        return []
    return sorted(n for n in names if SAFE.fullmatch(n) and (room.swarm / "results" / n).is_dir())


def folders(room: Room, task: str) -> list[tuple[str, Path]]:
    """(label, folder) of each run of ``task``, the earliest first: ``run-1``, ..., ``last``."""
    base = room.swarm / "results" / task
    try:
        numbers = sorted(int(n[4:]) for n in os.listdir(base) if n.startswith("run-") and n[4:].isdigit())
    except OSError:
        return []
    return [*((f"run-{k}", base / f"run-{k}") for k in numbers), ("last", base)]


def meta(folder: Path) -> dict[str, Any]:
    try:
        return records.read_object(folder / "meta.json") or {}
    except Exception:  # a meta.json a person broke: shown as missing, never a failed page
        return {}


def pressures(room: Room) -> list[tuple[str, float]]:
    """(task and run, context pressure) of every run with a meta.json, in the order they started."""
    found = []
    for task in tasks(room):
        for label, folder in folders(room, task):
            m = meta(folder)
            p = m.get("context_pressure")
            if isinstance(p, (int, float)) and not isinstance(p, bool):
                found.append((str(m.get("started") or ""), f"{task} {label}", float(p)))
    found.sort()
    return [(name, p) for _, name, p in found]


def index(room: Room) -> str:
    rows = []
    for task in tasks(room):
        runs = folders(room, task)
        m = meta(runs[-1][1])
        rows.append(
            [
                f'<a href="{href(f"run-{task}.html")}">{esc(task)}</a>',
                esc(len(runs)),
                esc(m.get("verdict", "")),
                esc(m.get("adapter", "")),
                esc(m.get("started", "")),
                esc(_pressure(m)),
            ]
        )
    return table(["task", "runs", "last verdict", "adapter", "started", "context pressure"], rows)


def _pressure(m: dict[str, Any]) -> str:
    p = m.get("context_pressure")
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        return "-"
    return f"{p:.1%} ({m.get('prompt_tokens_est', '?')} of {m.get('context_window', '?')} tokens)"


def _text(path: Path) -> str | None:
    if not path.is_file():
        return None
    return read_capture(path)[:TEXT_MAX]


def _run(label: str, folder: Path) -> str:
    m = meta(folder)
    val: dict[str, Any] = m["validator"] if isinstance(m.get("validator"), dict) else {}
    facts = [
        ["verdict", esc(m.get("verdict", "-"))],
        ["round", esc(m.get("round", "-"))],
        ["adapter / model", esc(f"{m.get('adapter', '-')} / {m.get('model') or 'default'}")],
        ["started / ended", esc(f"{m.get('started', '-')} / {m.get('ended', '-')}")],
        ["context pressure", esc(_pressure(m))],
        ["validator", esc(f"exit {val.get('exit_code', '-')} in {val.get('duration_s', '-')} s")],
        ["metrics", esc(", ".join(f"{k}={v}" for k, v in (m.get("metrics") or {}).items()) or "-")],
    ]
    parts = [f"<h2>{esc(label)}</h2>", table(["", ""], facts, "facts")]
    report = _text(folder / "report.md")
    parts.append("<h3>report.md</h3>" + (md(report) if report is not None else '<p class="empty">none</p>'))
    for name in ("validator.stdout.txt", "validator.stderr.txt"):
        out = _text(folder / name)
        if out:
            parts.append(f"<h3>{name}</h3><pre>{esc(out)}</pre>")
    prompt = _text(folder / "prompt.md")
    if prompt is not None:
        parts.append(
            f"<details><summary>prompt.md ({len(prompt):,} characters)</summary>{md(prompt)}</details>"
        )
    return "\n".join(parts)


def page(room: Room, task: str, reviews: list[list[str]]) -> str:
    runs = folders(room, task)
    rows = [
        [esc(t), esc(e), esc(o), esc(a), f'<span class="detail">{esc(d)}</span>'] for t, e, o, a, d in reviews
    ]
    body = [
        "<h2>reviews and arbitration</h2>",
        table(["time", "event", "outcome", "adapter", "detail"], rows),
        *(_run(label, folder) for label, folder in reversed(runs)),
    ]
    return "\n".join(body)
