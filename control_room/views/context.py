"""The auto part of CURRENT_CONTEXT.md: a block between two markers that commands refresh.

The block repeats what ``status`` knows, in markdown, so an agent that reads only this file
still sees the queue, the latest results, STOP and the spend. The rest of the file belongs to
people and is never touched.
"""

from __future__ import annotations

from control_room.room.layout import Room
from control_room.timeutil import now_iso


def render(room: Room) -> str:
    from control_room.views.status import format_entry, gather

    s = gather(room, last=5)
    t = s["tasks"]
    budget = s["daily_budget_usd"]
    lines = [
        f"_Refreshed {now_iso()} by control-room._",
        "",
        f"- STOP: {'YES, every cycle halts: ' + s['stop'] if s['stop'] else 'no'}",
        "- tasks: " + ", ".join(f"{k} {v}" for k, v in t.items()),
        f"- spend today: ${s['spend_today_usd']:.2f}"
        + (f" of ${budget:.2f} daily budget" if budget is not None else ""),
        f"- findings: {s['findings']}",
        "- latest ledger events:",
    ]
    lines += [f"  - {format_entry(e)}" for e in s["last"]] or ["  - (none)"]
    return "\n".join(lines)


def refresh(room: Room) -> None:
    from control_room.store.files import update
    from control_room.store.markdown import replace_auto_block

    body = render(room)
    update(room.context, lambda text: replace_auto_block(text, body))
