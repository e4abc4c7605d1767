"""The auto part of CURRENT_CONTEXT.md: a block between two markers, refreshed at the edge of
every command that changed the room.

The block repeats what ``status`` knows, in markdown, so an agent that reads only this file
still sees the queue, the latest results, STOP and the spend. The rest of the file belongs to
people and is never touched. Every value that came from outside (a ledger line's text, STOP's
reason, a warning) is put on one line of the block (``text.one_line``), so none can end the
block or plant a line outside it.
"""

from __future__ import annotations

from control_room.room.layout import MERGE_STATES, Room
from control_room.store.files import update
from control_room.store.markdown import replace_auto_block
from control_room.text import one_line
from control_room.timeutil import now_iso
from control_room.views.status import format_entry, gather


def render(room: Room) -> str:
    s = gather(room, last=5, elsewhere=False)
    t = s["tasks"]
    budget = s["daily_budget_usd"]
    lines = [
        f"_Refreshed {now_iso()} by control-room._",
        "",
        f"- STOP: {'YES, every cycle halts: ' + one_line(s['stop']) if s['stop'] else 'no'}",
        *[f"- WARNING: {one_line(w)}" for w in s["warnings"]],
        # passed/ and to-test/ only when they hold a task: a room without a repo never uses them
        "- tasks: " + ", ".join(f"{k} {v}" for k, v in t.items() if v or k not in MERGE_STATES),
        f"- spend today: ${s['spend_today_usd']:.2f}"
        + (f" of ${budget:.2f} daily budget" if budget is not None else ""),
        *[
            f"- cooling down: {one_line(c['says'])}; its tasks wait or take their fallback"
            for c in s["cooling"]
        ],
        f"- findings: {s['findings']}",
        *([f"- settings: BROKEN: {one_line(s['control_error'])}"] if s.get("control_error") else []),
        "- latest ledger events:",
    ]
    lines += [f"  - {format_entry(e)}" for e in s["last"]] or ["  - (none)"]
    return "\n".join(lines)


def refresh(room: Room) -> None:
    body = render(room)
    update(room.context, lambda text: replace_auto_block(text, body))
