"""DIGEST.md (SPEC §7): what a fresh agent must know, generated from the ledger and the
graveyard, bounded in size however long the ledger grows.

The ledger is folded into a derived state (``.cache/digest.json``) incrementally: a refresh
reads only the lines appended since the last one (see ``ledger.follow``). The state holds, per
route: attempts, passes, fails, spend, the last decisions, the best result, and the current
streak of identical failures (a death loop once it reaches CONTROL.md ``death_loop_n``). The
markdown is rendered from that state and the tombstones, most useful first, and cut to
``digest_max_bytes``: older decisions go first, then routes least recently active.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room.errors import ControlRoomError
from control_room.knowledge import graveyard
from control_room.ledger import events, result
from control_room.ledger.follow import follow
from control_room.ledger.line import Col, unescape
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store.files import atomic_write, read_optional

KIND = "digest-2"
LAST = 5  # decisions kept per route
STREAK_LINES = 10  # lines kept as evidence of a streak
CLEARS = (events.ROUTE_RESUME.name, events.ROUTE_REOPEN.name, events.ROUTE_KILL.name)  # a person acted


def _init() -> dict[str, Any]:
    return {"routes": {}, "causes": {}, "unsupported": [], "unsupported_n": 0, "last_time": ""}


def _new_route() -> dict[str, Any]:
    return {
        "attempts": 0,
        "passes": 0,
        "fails": 0,
        "spend": 0.0,
        "last": [],
        "best": None,
        "last_time": "",
        "streak": _no_streak(),
        "decision_streak": _no_streak(),
        "announced": False,
    }


def _no_streak() -> dict[str, Any]:
    return {"cause": "", "n": 0, "lines": []}


def _unsupported(state: dict[str, Any], entry: list[str]) -> None:
    state["unsupported_n"] += 1
    state["unsupported"] = (state["unsupported"] + [entry])[-20:]


def _fold(state: dict[str, Any], cells: list[str]) -> None:
    time, eid, event = cells[Col.TIME], cells[Col.ID], unescape(cells[Col.EVENT])
    task, route = unescape(cells[Col.TASK]), unescape(cells[Col.ROUTE])
    state["last_time"] = time
    key = route or (f"task:{task}" if task else "")
    if event in CLEARS and key:
        r = state["routes"].get(key)
        if r is not None:
            r["streak"], r["decision_streak"], r["announced"] = _no_streak(), _no_streak(), False
        return
    if event == events.DEATH_LOOP.name and key in state["routes"]:
        state["routes"][key]["announced"] = True
        return
    if event == events.UNSUPPORTED_CLAIM.name:  # lines written before 0.2
        _unsupported(state, [time, eid, task, route, unescape(cells[Col.DETAIL])])
        return
    if event != events.RESULT.name or not key:
        return
    outcome = unescape(cells[Col.OUTCOME])
    try:
        cost = float(cells[Col.COST_USD])
    except ValueError:
        cost = 0.0
    run = result.read(unescape(cells[Col.DETAIL]))
    decision, failed = run.decision, run.failed
    if run.unsupported:
        why = f"report says CONFIRMED success; validator {run.validator or 'failed'}"
        _unsupported(state, [time, eid, task, route, why])
    r = state["routes"].setdefault(key, _new_route())
    r["attempts"] += 1
    r["spend"] = round(r["spend"] + cost, 6)
    r["last_time"] = time
    r["last"] = (r["last"] + [[time, task, outcome, decision, failed]])[-LAST:]
    if outcome == "pass":
        r["passes"] += 1
        r["best"] = [time, task, decision]
        r["streak"], r["decision_streak"], r["announced"] = _no_streak(), _no_streak(), False
        return
    r["fails"] += 1
    c = result.cause(failed or decision)
    state["causes"][c] = state["causes"].get(c, 0) + 1
    evidence = [time, eid, task, (failed or decision)[:200]]
    # The probe's DECISION only restates its exit code: not a decision that can repeat.
    own_decision = result.cause(decision) if unescape(cells[Col.ADAPTER]) != "probe" else ""
    for name, value in (("streak", result.cause(failed)), ("decision_streak", own_decision)):
        s = r[name]
        if value and s["cause"] == value:
            s["n"] += 1
            s["lines"] = (s["lines"] + [evidence])[-STREAK_LINES:]
        else:
            r[name] = {"cause": value, "n": 1 if value else 0, "lines": [evidence] if value else []}


def state(room: Room) -> tuple[dict[str, Any], int]:
    """The digest state, up to date; and how many ledger bytes this refresh read."""
    return follow(room.ledger, room.cache / "digest", KIND, _init, _fold)


def death_loops(st: dict[str, Any], n: int) -> dict[str, dict[str, Any]]:
    """Routes (or ``task:<id>`` keys) failing the same way ``n`` or more times in a row."""
    out = {}
    for key, r in st["routes"].items():
        for name, what in (("streak", "error"), ("decision_streak", "decision")):
            s = r[name]
            if s["n"] >= n:
                out[key] = {
                    "same": what,
                    "cause": s["cause"],
                    "n": s["n"],
                    "lines": s["lines"],
                    "announced": r.get("announced", False),
                }
                break
    return out


def held(room: Room, settings: Settings) -> dict[str, dict[str, Any]]:
    """Routes held because of a death loop (fail closed until a person or the orchestrator acts)."""
    st, _ = state(room)
    return death_loops(st, settings.death_loop_n)


def _money(v: float) -> str:
    return f"${v:,.2f}"


TOMB_MAX = 3000  # characters of a tombstone's body in a prompt


def route_history(room: Room, route: str, st: dict[str, Any] | None = None) -> str:
    """What the prompt says about one route: its tombstone if it has one (bounded), and what it
    learned."""
    out = []
    try:
        meta, body = graveyard.read(room, route)
        body = body.strip()
        if len(body) > TOMB_MAX:  # a route killed and reopened many times: keep the latest
            body = (
                f"[... {len(body) - TOMB_MAX} earlier characters: see graveyard/{route}.md]\n"
                + body[-TOMB_MAX:]
            )
        out.append(f"Tombstone (graveyard/{route}.md, state {meta.get('state', 'killed')}):\n\n{body}")
    except (ControlRoomError, OSError):  # no tombstone, or an unreadable one: the digest still speaks
        pass
    st = st if st is not None else state(room)[0]
    r = st["routes"].get(route)
    if r:
        lines = [
            f"{r['attempts']} attempts ({r['passes']} passed, {r['fails']} failed), {_money(r['spend'])} spent."
        ]
        if r["best"]:
            lines.append(f"Best: {r['best'][0][:10]} task {r['best'][1]} passed: {r['best'][2]}")
        for time, task, outcome, decision, failed in reversed(r["last"]):
            lines.append(
                f"- {time[:16]} {task} {outcome}: {decision or '-'}"
                + (f" (failed: {failed[:160]})" if failed else "")
            )
        out.append("\n".join(lines))
    return "\n\n".join(out)


def render(room: Room, st: dict[str, Any], settings: Settings) -> str:
    """DIGEST.md from the state and the tombstones, within ``digest_max_bytes``."""
    cap = settings.digest_max_bytes
    loops = death_loops(st, settings.death_loop_n)
    tombs = [t for t in graveyard.tombstones(room) if t.get("state") == "killed"]
    live = sorted(
        ((k, r) for k, r in st["routes"].items() if k not in {t["candidate"] for t in tombs}),
        key=lambda kv: kv[1]["last_time"],
        reverse=True,
    )
    # (section, importance, text): the most important blocks are kept when space runs out.
    blocks: list[tuple[int, int, str]] = []
    for t in sorted(tombs, key=lambda t: str(t.get("killed_at", "")), reverse=True):
        verdict = str(t.get("verdict", "?")).rstrip()
        verdict += "" if verdict.endswith((".", "!", "?")) else "."
        blocks.append(
            (
                1,
                0,
                f"- **{t['candidate']}** killed {str(t.get('killed_at', '?'))[:10]}: "
                f"{verdict} Reopen only if: {t.get('reopen_if', '?')}",
            )
        )
    for key, lp in loops.items():
        blocks.append(
            (
                2,
                0,
                f"- **{key}**: failed {lp['n']} times in a row with the same {lp['same']}: "
                f'"{lp["cause"][:160]}". Held until `control-room route resume {key} --because ...`',
            )
        )
    for rank, (key, r) in enumerate(live):
        head = (
            f"- **{key}**: {r['attempts']} attempts, {r['passes']} passed, {r['fails']} failed, "
            f"{_money(r['spend'])}"
        )
        if r["best"]:
            head += f"; best: {r['best'][1]} ({r['best'][0][:10]}): {r['best'][2][:160]}"
        blocks.append((3, 1 + rank, head))
        for age, (time, task, outcome, decision, failed) in enumerate(reversed(r["last"])):
            text = f"  - {time[:10]} {task} {outcome}: {decision[:140] or '-'}"
            if failed:
                text += f" (failed: {failed[:120]})"
            blocks.append((3, 100 + 10 * age + rank, text))
    causes = sorted(st["causes"].items(), key=lambda kv: -kv[1])
    for rank, (c, n) in enumerate([kv for kv in causes if kv[0]][:10]):
        blocks.append((4, 50 + rank, f"- {n}× {c}"))
    for rank, (key, r) in enumerate(sorted(st["routes"].items(), key=lambda kv: -kv[1]["spend"])):
        blocks.append((5, 60 + rank, f"| {key} | {_money(r['spend'])} | {r['attempts']} |"))
    titles = {
        1: "## Dead routes (graveyard): do not retry them\n",
        2: "## Held routes: death loops\n",
        3: "## Live routes: what each has learned\n",
        4: "## Recurring failures\n",
        5: "## Spend by route\n\n| route | spend | attempts |\n|---|---|---|",
    }
    header = (
        f"# DIGEST\n\nGenerated by control-room from the ledger ({st['lines']:,} lines, up to "
        f"{st['last_time'] or 'the start'}) and the graveyard. Do not edit: "
        f"`control-room digest` rewrites it.\n"
    )
    note_max = len(f"_{len(blocks)} older or smaller details left out to stay under {cap:,} bytes._\n\n")
    budget = cap - len(header.encode()) - sum(len(t.encode()) + 3 for t in titles.values()) - note_max
    kept: set[int] = set()
    used = 0
    for i in sorted(range(len(blocks)), key=lambda i: blocks[i][1]):
        size = len(blocks[i][2].encode()) + 1
        if used + size <= budget:
            kept.add(i)
            used += size
    out = [header]
    for section, title in titles.items():
        lines = [blocks[i][2] for i in range(len(blocks)) if i in kept and blocks[i][0] == section]
        if lines:
            out.append(f"{title}\n" + "\n".join(lines) + "\n")
    dropped = len(blocks) - len(kept)
    if dropped:
        out.append(f"_{dropped} older or smaller details left out to stay under {cap:,} bytes._\n")
    if len(out) == 1:
        out.append("Nothing has run yet.\n")
    text = "\n".join(out)
    while len(text.encode()) > cap:  # titles alone over a tiny cap: cut, never overflow
        text = text[: max(0, len(text) - (len(text.encode()) - cap) - 1)]
    return text


def refresh(room: Room, settings: Settings) -> tuple[Path, int]:
    """Bring DIGEST.md up to date (a view: called at the edge of a command); return its path
    and the ledger bytes this read."""
    st, read = state(room)
    text = render(room, st, settings)
    if text != read_optional(room.digest):
        atomic_write(room.digest, text)
    return room.digest, read
