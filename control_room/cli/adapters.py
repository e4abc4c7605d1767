"""control-room adapters"""

from __future__ import annotations

import click

from control_room import adapters as registry
from control_room.cli.common import echo_json, json_option
from control_room.proc import which


@click.command()
@json_option
def adapters(as_json: bool) -> None:
    """List the adapters and whether each one's CLI is installed here."""
    rows = []
    for name in registry.names():
        try:
            a = registry.get(name)
        except Exception as exc:  # a broken plugin is listed, not fatal
            rows.append({"name": name, "binary": None, "installed": False, "path": None, "note": str(exc)})
            continue
        path = which(a.binary) if a.binary else None
        rows.append(
            {
                "name": name,
                "binary": a.binary,
                "installed": a.binary is None or path is not None,
                "path": path,
                "prompt_via": a.prompt_via,
                "note": a.install,
            }
        )
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        state = "built in" if r["binary"] is None else (r["path"] or f"not installed ({r['note']})")
        click.echo(f"{r['name']:<13} {state}")
