"""control-room adapters"""

from __future__ import annotations

import sys

import click

from control_room import adapters as registry
from control_room import errors
from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.proc import which
from control_room.timeutil import parse_duration


@click.command()
@room_option
@json_option
@click.option(
    "--check", "check", is_flag=True, help="Say hello through each installed adapter (one short turn)."
)
@click.option(
    "--timeout", default="60s", show_default=True, help="Time limit of each hello (with --check): 30s, 2m."
)
@click.argument("name", required=False)
def adapters(as_json: bool, check: bool, timeout: str, name: str | None) -> None:
    """List the adapters and whether each one's CLI is installed here.

    With --check [NAME]: a one-turn hello through each installed adapter (or NAME), run as a
    cycle would run it (CONTROL.md `adapters:` setup, its state folder, its environment), against
    the configured endpoint or your own login; OK, or the line that says what is wrong. Run it
    before scheduling. Each hello is logged with what it cost. Exit 14 if any check fails.
    """
    if name and not check:
        raise click.UsageError("NAME goes with --check: control-room adapters --check NAME")
    if check:
        _check(name, as_json, timeout)
        return
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
        echo(f"{r['name']:<13} {state}")


def _check(name: str | None, as_json: bool, timeout: str) -> None:
    from control_room.dispatch.run import hello  # runs agents: only for --check
    from control_room.room import settings as settings_file  # likewise

    try:
        limit = parse_duration(timeout)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--timeout") from None
    room = current_room()
    settings = settings_file.load(room)
    if name is not None and not registry.known(name):
        raise errors.NotFoundError(f"no adapter {name!r} (known: {', '.join(registry.names())})")
    names = [name] if name else hello.candidates(settings)
    if not names:
        echo("no agent CLI is installed here (control-room adapters lists them)")
        sys.exit(errors.ADAPTER_MISSING)
    found = []
    for n in names:
        c = hello.check(room, settings, n, timeout_s=limit)
        hello.log(room, c)
        found.append(c)
        if not as_json:
            echo(f"{n:<13} {'OK  ' if c.ok else 'FAIL'}  {c.line}")
    if as_json:
        echo_json([{"name": c.name, "ok": c.ok, "line": c.line, "cost_usd": c.cost_usd} for c in found])
    if not all(c.ok for c in found):
        sys.exit(errors.ADAPTER_MISSING)
