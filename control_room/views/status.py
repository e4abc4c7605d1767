"""``control-room status``: the state of a room on one screen, and as JSON.

Everything here is cheap: folder listings, cached CONTROL.md and ROUTES.md values, an
incremental ledger summary and a backward read of its last lines. Why each queued task waits
is ``dispatch.queue.ready``'s answer, the one a cycle acts on, from the queue index (only files that
changed since the last scan are opened, and none is moved: status changes nothing) and the
running tasks' files; above ``WAITING_MAX`` queued tasks status leaves that to ``task list``.
"""

from __future__ import annotations

from typing import Any

from control_room.errors import ControlRoomError
from control_room.knowledge import history, routes
from control_room.ledger import events, result
from control_room.ledger.follow import misses, progress
from control_room.ledger.line import parse
from control_room.ledger.read import tail
from control_room.ledger.stats import spent_on, summary
from control_room.ledger.verify import Check, check
from control_room.room import cooldowns
from control_room.room import settings as settings_file
from control_room.room.layout import MERGE_STATES, Room
from control_room.room.settings import DEFAULTS, Settings
from control_room.store.files import read_text
from control_room.text import one_line
from control_room.timeutil import now_iso, today
from control_room.words import count

WAITING_MAX = 200  # status says why queued tasks wait up to this many; `task list` for more
SHOWN = 5  # waiting tasks named on the screen (all of them in --json)


def gather(room: Room, *, last: int = 5, elsewhere: bool = True) -> dict[str, Any]:
    """What ``status`` shows; ``elsewhere``: in a shared room, also the other machines' claims
    (two git calls; CURRENT_CONTEXT.md, refreshed after every cycle, goes without)."""
    out: dict[str, Any] = {"room": str(room.root), "stop": None, "ledger_error": None, "warnings": []}
    if room.stopped():
        out["stop"] = _stop_note(room)
    out["tasks"] = room.counts()
    out["routes"] = routes.verdict_counts(room)
    settings: Settings | None = None
    try:
        settings = settings_file.load(room)
        out["daily_budget_usd"] = settings.daily_budget_usd
        out["control_error"] = None
    except ControlRoomError as exc:
        out["daily_budget_usd"] = None
        out["control_error"] = str(exc)
    try:
        s = summary(room.ledger, room.cache / "ledger-summary")
        recent = [parse(line) for line in tail(room.ledger, last)]
        out["warnings"] = ledger_warnings(check(room.ledger, room.cache / "ledger-chain"))
    except FileNotFoundError:
        s = {"lines": 0, "events": {}, "spend_by_day": {}}
        recent = []
        out["ledger_error"] = f"{room.ledger} is missing"
        out["warnings"] = [
            f"{LEDGER} is missing: restore it (`git checkout {LEDGER}`), or run `control-room init` "
            "to start a new one"
        ]
    spent = s["spend_by_day"].get(today(), 0.0)
    if misses(s, today()):  # a big ledger's recent lines that do not reach today's first
        spent = spent_on(room.ledger, room.cache / "ledger-summary", today())
    out["spend_today_usd"] = round(spent, 6)
    out["ledger_lines"] = s["lines"]
    out["history"] = None if not s.get("from") else {"since": s["from_time"], "folded": progress(s)}
    out["findings"], out["held"], out["waiting"] = 0, [], None
    if out["ledger_error"] is None:
        st = history.trouble(room)  # not the whole history: what is in trouble
        loops = history.death_loops(st, (settings or DEFAULTS).death_loop_n)
        out["findings"] = st["unsupported_n"] + len(loops) + len(st.get("proposals", {}))
        out["held"] = sorted(loops)
        queued = out["tasks"]["queue"]
        if not queued:
            out["waiting"] = []
        elif settings is not None and queued <= WAITING_MAX:
            out["waiting"] = waiting(room, settings, spent, loops)
    shared = elsewhere and settings is not None and bool(settings.remote)
    out["running"] = running(room, settings if shared else None) if out["tasks"]["running"] or shared else []
    out["merging"] = []
    if settings is not None and 0 < out["tasks"].get("passed", 0) <= WAITING_MAX:
        out["merging"] = merging(room, settings)
    out["cooling"] = [
        {"adapter": c.key, "says": c.says(), **c.as_json()} for c in cooldowns.active(room).values()
    ]
    out["last"] = [e.as_dict() for e in recent if e is not None]
    return out


def running(room: Room, settings: Settings | None) -> list[dict[str, Any]]:
    """Who runs what: this clone's claims (swarm/running/), and with the ``settings`` of a
    shared room the other machines' live claims as of the last sync (their claim refs)."""
    from control_room.dispatch.round import claims  # only with a task running, or a shared room

    here = claims.host(room)
    out: list[dict[str, Any]] = []
    for tid in claims.running_ids(room):
        info = claims.read_claim(room, tid) or {}
        out.append(
            {"id": tid, "host": str(info.get("host") or here), "since": info.get("started"), "here": True}
        )
    if settings is not None and settings.remote:
        from control_room.dispatch.shared import sharing  # git: only in a shared room

        try:
            share = sharing.shared(room, settings)
            refs = share.refs() if share is not None else {}
        except ControlRoomError:
            refs = {}
        mine = {r["id"] for r in out}
        for ref in sorted(refs.values(), key=lambda r: r.task):
            if ref.live and ref.host != here and ref.task not in mine:
                until = now_iso(ref.until + settings.grace_s)
                out.append({"id": ref.task, "host": ref.host, "until": until, "here": False})
    return out


def merging(room: Room, settings: Settings) -> list[dict[str, str]]:
    """Each task in ``passed/``: why it is not merged yet (reviews, an arbiter, a gate, the
    merge queue)."""
    from control_room.dispatch.merge import integrate  # git and the review module: only with passed tasks
    from control_room.room import swarm  # loaded with integrate, just above

    out = []
    for tid in sorted(swarm.Folders(room).ids("passed")):
        task, problems = swarm.read_task(swarm.task_file(room, "passed", tid))
        why = "; ".join(problems) if problems else integrate.why_waiting(room, settings, task)
        out.append({"id": tid, "why": why})
    return out


def waiting(room: Room, settings: Settings, spent: float, loops: dict[str, Any]) -> list[dict[str, str]]:
    """Each queued task that does not run now, in run order: id, kind, why. A file a scan
    would reject is ``refused`` with its problem (status moves nothing)."""
    from control_room.dispatch.queue import index  # only with a queue to check (docs/performance.md)
    from control_room.dispatch.queue.ready import Readiness  # likewise

    ready = Readiness(room, settings, spent=spent, held=loops)
    out = []
    for t in index.scan(room, "queue", reject=False):
        s = t.summary
        if "problem" in s:
            out.append({"id": t.id, "kind": "refused", "why": f"refused: {s['problem']}"})
            continue
        wait = ready.why(t.id, s)
        if wait is not None:
            out.append({"id": t.id, "kind": wait.kind, "why": wait.shown})
    return out


LEDGER = "control-room/LEDGER.md"


def ledger_warnings(c: Check) -> list[str]:
    """What a person must know about the ledger file itself, one line each, with the fix."""
    if c.empty:
        return [
            f"{LEDGER} is empty: its header is gone and no line can be read; restore it "
            f"(`git checkout {LEDGER}`), or run `control-room init` to write its header again"
        ]
    out = []
    if not c.header:
        out.append(
            f"{LEDGER} has no ledger header (the table header under its preamble): none of its "
            "lines is read; run `control-room init` to put the header back, keeping every line"
        )
    if c.bad:
        first = c.first[0]
        more = f" (and {count(c.bad - 1, 'more bad line')})" if c.bad > 1 else ""
        out.append(
            f"{LEDGER}:{first.line}: {first.kind}: {first.why}{more}; "
            "`control-room ledger verify` lists every bad line"
        )
    if c.torn_tail:
        out.append(
            f"{LEDGER}: its last line has no newline (a torn write); the next append starts a new "
            "line, `control-room ledger verify` names the torn one"
        )
    return out


def _stop_note(room: Room) -> str:
    try:
        head = read_text(room.stop, 400).strip()
    except OSError:
        head = ""
    return " ".join(head.split()) or "(STOP file exists)"


def _money(v: float) -> str:
    return f"${v:,.2f}"


def render(s: dict[str, Any]) -> str:
    t = s["tasks"]
    lines = [f"room      {s['room']}"]
    lines.append(f"STOP      YES - every cycle halts: {s['stop']}" if s["stop"] else "STOP      no")
    lines += [f"warning   {w}" for w in s["warnings"]]
    # passed/ and to-test/ hold tasks only with a repo (the merge queue): shown when they do
    shown = [k for k in t if t[k] or k not in MERGE_STATES]
    lines.append("tasks     " + " · ".join(f"{k} {t[k]}" for k in shown))
    width = max((len(r["id"]) for r in s.get("running", [])), default=0)
    for k, r in enumerate(s.get("running", [])):
        when = f"since {r['since']}" if r["here"] else f"another machine; lease until {r['until']}"
        lines.append(f"{'running' if k == 0 else '':<10}{r['id']:<{width}}  on {r['host']}, {when}")
    lines += _render_waiting(s)
    width = max((len(m["id"]) for m in s.get("merging", [])[:SHOWN]), default=0)
    lines += [f"passed    {m['id']:<{width}}  {m['why']}" for m in s.get("merging", [])[:SHOWN]]
    routes = s["routes"]
    lines.append("routes    " + (" · ".join(f"{k} {v}" for k, v in sorted(routes.items())) or "none yet"))
    budget = s["daily_budget_usd"]
    spend = f"{_money(s['spend_today_usd'])} today"
    if budget is not None:
        spend += f" of {_money(budget)} daily budget"
        if budget:
            spend += f" ({100 * s['spend_today_usd'] / budget:.0f}%)"
    lines.append(f"spend     {spend}")
    lines += [f"{'cooling' if k == 0 else '':<10}{c['says']}" for k, c in enumerate(s.get("cooling", []))]
    if s.get("control_error"):
        lines.append(f"gate      BROKEN: {s['control_error']}")
    lines.append(f"findings  {s['findings']}" + ("  (control-room findings)" if s["findings"] else ""))
    if s["held"]:
        lines.append(
            "held      " + ", ".join(s["held"]) + "  (death loops: fed no tasks until a person acts)"
        )
    lines.append(f"ledger    {_ledger_size(s)}" + ("; last:" if s["last"] else ""))
    for e in s["last"]:
        lines.append("  " + format_entry(e))
    return "\n".join(lines)


def _ledger_size(s: dict[str, Any]) -> str:
    """How many lines, or (a big ledger's first days here) how many since when."""
    h = s.get("history")
    if not h:
        return count(s["ledger_lines"], "line")
    return (
        f"{count(s['ledger_lines'], 'line')} since {h['since']} read so far (the older history is "
        f"being folded in: {100 * (h['folded'] or 0):.0f}%)"
    )


def _render_waiting(s: dict[str, Any]) -> list[str]:
    queued, waits = s["tasks"]["queue"], s["waiting"]
    if not queued:
        return []
    if waits is None:
        if s.get("control_error") or s.get("ledger_error"):
            return []  # said below: a cycle could not run either
        return [
            f"waiting   not checked here: {queued:,} queued tasks, more than {WAITING_MAX:,}; "
            "control-room task list --state queue says why each waits"
        ]
    lines = [f"waiting   {len(waits)} of {queued} queued" + (":" if waits else "")]
    width = max((len(w["id"]) for w in waits[:SHOWN]), default=0)
    for w in waits[:SHOWN]:
        line = f"  {w['id']:<{width}}  {w['why']}"
        lines.append(line if len(line) <= 160 else line[:157] + "...")
    if len(waits) > SHOWN:
        lines.append(f"  and {len(waits) - SHOWN} more: control-room task list --state queue")
    return lines


def format_entry(e: dict[str, str]) -> str:
    """One ledger entry on one terminal line."""
    # each cell on one line: an agent's text, unescaped from its cell, never a line of its own
    parts = [one_line(x) for x in (e["time"].replace("T", " ").rstrip("Z"), e["event"])]
    parts += [one_line(x) for x in (e["task"], e["route"], e["adapter"], e["outcome"]) if x]
    if e["cost_usd"] not in ("", "0"):
        parts.append(f"${one_line(e['cost_usd'])}")
    line = "  ".join(parts)
    if e["detail"]:
        detail = result.for_people(e["detail"]) if e["event"] == events.RESULT.name else e["detail"]
        line += "  " + one_line(detail)
    return line if len(line) <= 160 else line[:157] + "..."
