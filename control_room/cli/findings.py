"""control-room digest / findings: what the ledger has taught the room"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.knowledge import digest as d
from control_room.knowledge.findings import gather
from control_room.room import settings as settings_file
from control_room.words import count


@click.command()
@room_option
def digest() -> None:
    """Rewrite control-room/DIGEST.md from the ledger and the graveyard (incremental, bounded)."""
    room = current_room()
    path, read = d.refresh(room, settings_file.load(room))
    echo(
        f"{path.relative_to(room.root)}: {count(path.stat().st_size, 'byte')} "
        f"(read {count(read, 'new ledger byte')})"
    )


@click.command()
@room_option
@json_option
def findings(as_json: bool) -> None:
    """Death loops (a route failing the same way again and again: held until a person acts),
    unsupported CONFIRMED claims, each with the ledger lines that show it, runs whose brief
    overflowed the model's context window (split them), and tasks whose reviews disagreed and
    were escalated to a person."""
    room = current_room()
    data = gather(room, settings_file.load(room))
    if as_json:
        echo_json(data)
        return
    if not any(
        data[k] for k in ("death_loops", "unsupported_claims", "escalated", "too_big", "kill_proposals")
    ):
        echo("no findings")
        return
    for lp in data["death_loops"]:
        echo(
            f"death loop: {lp['key']} failed {count(lp['n'], 'time')} in a row with the same {lp['same']}: "
            f"{lp['cause']}  (held; release: control-room route resume {lp['key']} --because ...)"
        )
        for time, eid, task, what in lp["lines"]:
            echo(f"  {time}  {eid}  {task}  {what}")
    if data["unsupported_claims"]:
        echo(f"unsupported CONFIRMED claims: {data['unsupported_total']}")
        for u in data["unsupported_claims"]:
            echo(f"  {u['time']}  {u['id']}  {u['task']}  {u['route'] or '-'}  {u['detail']}")
    for kp in data["kill_proposals"]:
        route = kp["key"]
        echo(
            f"proposed kill: {route}: {kp['detail']}  (a person decides: control-room route kill {route} "
            f"--verdict ... --reopen-if ..., or route resume {route} --because ...)"
        )
        echo(f"  {kp['time']}  {kp['id']}  {kp['task']}")
    if data["too_big"]:
        echo(f"too big for one brief (split it: control-room task fanout): {len(data['too_big'])}")
        for b in data["too_big"]:
            echo(f"  {b['time']}  {b['id']}  {b['task']}  {b['route'] or '-'}  {b['detail']}")
    if data["escalated"]:
        echo(f"escalated to a person (reviews disagree): {len(data['escalated'])}")
        for e in data["escalated"]:
            echo(f"  {e['task']}  both positions in {e['reason']}")
