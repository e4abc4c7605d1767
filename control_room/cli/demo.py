"""control-room demo"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("directory", default="control-room-demo", type=click.Path(file_okay=False, path_type=Path))
def demo(directory: Path) -> None:
    """Build a demo room in DIRECTORY (default ./control-room-demo) and run it to the end.

    Needs no login and no network: every agent is the built-in probe adapter, every validator
    a real benchmark. At the end it prints the status and the files worth reading.
    """
    from control_room.cli.demo_room import run
    from control_room.views.status import gather, render

    room = run(directory.absolute(), click.echo)
    click.echo("")
    click.echo(render(gather(room)))
    d = directory
    click.echo(f"""
Now read the files, they are the whole state:
  cat {d}/control-room/CURRENT_CONTEXT.md     what is happening now
  cat {d}/control-room/LEDGER.md              every event, hash-chained
  cat {d}/control-room/ROUTES.md              the board
  cat {d}/swarm/parked/memo-1.reason          why a task waits for a person
  cat {d}/swarm/rejected/vibe.json.reason     why a task was refused (no falsifier)
  cat {d}/graveyard/rewrite-in-c.md           a killed route's tombstone
  cat {d}/swarm/rejected/c-ext-1.json.reason  a task on it, refused
  cat {d}/control-room/DIGEST.md              what a fresh agent reads first
  cat {d}/swarm/outbox/sieve-1.md             the exact prompt a run was given
  cat {d}/swarm/results/sieve-1/report.md     the report, in the DECISION/EVIDENCE format
  control-room --room {d} ledger verify""")
