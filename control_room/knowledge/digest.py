"""DIGEST.md (SPEC §7): what a fresh agent must know, rendered from the room's history
(``knowledge.history``) and the graveyard, bounded in size however long the ledger grows; and
the part of it a prompt carries about one route.

The markdown lists the most useful first and is cut to ``digest_max_bytes``: older decisions
go first, then routes least recently active. DIGEST.md is a view: it is rewritten at the edge
of a command (``views.refresh``), never from inside a change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room.errors import ControlRoomError
from control_room.knowledge import graveyard, history
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store.files import atomic_write, read_optional
from control_room.words import count


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
    st = st if st is not None else history.state(room)[0]
    r = st["routes"].get(route)
    if r:
        counts = f"{count(r['attempts'], 'attempt')} ({r['passes']} passed, {r['fails']} failed)"
        lines = [f"{counts}, {_money(r['spend'])} spent{_reviews(r)}."]
        if r["best"]:
            lines.append(f"Best: {r['best'][0][:10]} task {r['best'][1]} passed: {r['best'][2]}")
        for time, task, outcome, decision, failed in reversed(r["last"]):
            lines.append(
                f"- {time[:16]} {task} {outcome}: {decision or '-'}"
                + (f" (failed: {failed[:160]})" if failed else "")
            )
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _reviews(r: dict[str, Any]) -> str:
    """The review and arbiter runs about a route's tasks, counted apart from its own runs."""
    if not r["reviews"]:
        return ""
    return f" (and {count(r['reviews'], 'review run')} of its tasks, {_money(r['review_spend'])})"


def render(room: Room, st: dict[str, Any], settings: Settings) -> str:
    """DIGEST.md from the state and the tombstones, within ``digest_max_bytes``."""
    cap = settings.digest_max_bytes
    loops = history.death_loops(st, settings.death_loop_n)
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
                f"- **{key}**: failed {count(lp['n'], 'time')} in a row with the same {lp['same']}: "
                f'"{lp["cause"][:160]}". Held until `control-room route resume {key} --because ...`',
            )
        )
    for rank, (key, r) in enumerate(live):
        head = (
            f"- **{key}**: {count(r['attempts'], 'attempt')}, {r['passes']} passed, {r['fails']} failed, "
            f"{_money(r['spend'])}{_reviews(r)}"
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
    rows = sorted(st["routes"].items(), key=lambda kv: -kv[1]["spend"])
    if st.get("older_n"):  # tasks without a route let go from the history (``history.TASKS_KEPT``)
        rows.append((f"({count(st['older_n'], 'older task')} without a route)", st["older_tasks"]))
    for rank, (key, r) in enumerate(rows):
        blocks.append(
            (
                5,
                60 + rank,
                f"| {key} | {_money(r['spend'])} | {r['attempts']} | {_money(r['review_spend'])} |",
            )
        )
    titles = {
        1: "## Dead routes (graveyard): do not retry them\n",
        2: "## Held routes: death loops\n",
        3: "## Live routes: what each has learned\n",
        4: "## Recurring failures\n",
        5: "## Spend by route\n\n| route | spend | attempts | its reviews' spend |\n|---|---|---|---|",
    }
    since = f"since {st['from_time']}, " if st.get("from") else ""  # a big ledger's first days here
    header = (
        f"# DIGEST\n\nGenerated by control-room from the ledger ({count(st['lines'], 'line')}, {since}up to "
        f"{st['last_time'] or 'the start'}) and the graveyard. Do not edit: "
        f"`control-room digest` rewrites it.\n"
    )
    if since:
        header += (
            "\nThe ledger's older history is being folded in (`control-room ledger fold`): until it is, "
            "the counts here are of its recent lines only.\n"
        )
    note_max = len(f"_{_left_out(len(blocks), cap)}_\n\n")
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
        out.append(f"_{_left_out(dropped, cap)}_\n")
    if len(out) == 1:
        out.append("Nothing has run yet.\n")
    text = "\n".join(out)
    while len(text.encode()) > cap:  # titles alone over a tiny cap: cut, never overflow
        text = text[: max(0, len(text) - (len(text.encode()) - cap) - 1)]
    return text


def _left_out(n: int, cap: int) -> str:
    return f"{count(n, 'older or smaller detail')} left out to stay under {count(cap, 'byte')}."


def refresh(room: Room, settings: Settings) -> tuple[Path, int]:
    """Bring DIGEST.md up to date (a view: called at the edge of a command); return its path
    and the ledger bytes this read."""
    st, read = history.state(room)
    text = render(room, st, settings)
    if text != read_optional(room.digest):
        atomic_write(room.digest, text)
    return room.digest, read
