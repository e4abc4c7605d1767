"""control-room route add / list / show / kill / reopen / resume; graveyard list / show"""

from __future__ import annotations

import sys

import click

from control_room.cli.common import current_room, echo_json, json_option, room_option


@click.group(invoke_without_command=True)
@room_option
@click.pass_context
def route(ctx: click.Context) -> None:
    """The board of routes in ROUTES.md, and killing or reviving them (default: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_routes)


@route.command("add")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--title", required=True, help="What the route tries, in a few words.")
@click.option("--falsifier", default="", help="The result that would prove this route wrong.")
def add_route(route_id: str, title: str, falsifier: str) -> None:
    """Put a new route on the board, untested."""
    from control_room.knowledge import routes

    routes.add(current_room(), route_id, title, falsifier)
    click.echo(f"route {route_id} added (untested)")


@route.command("list")
@room_option
@json_option
def list_routes(as_json: bool) -> None:
    """The routes in ROUTES.md; a hand edit that broke a row is named by its line on stderr."""
    from control_room.knowledge import routes

    room = current_room()
    rows = routes.rows(room)
    problems = routes.problems(room)
    if as_json:
        echo_json({"routes": rows, "problems": problems})
        return
    for p in problems:
        click.echo(p, err=True)
    if not rows:
        click.echo("no routes yet (control-room route add ID --title ...)")
    for r in rows:
        click.echo(
            f"{r.get('route', ''):<24} {r.get('verdict', '') or 'untested':<10} "
            f"{r.get('attempts', '') or '0':>4} runs  ${r.get('spend_usd', '') or '0':<8} "
            f"{r.get('last_result', '') or '-':<32} {r.get('title', '')}"
        )


@route.command("show")
@room_option
@click.argument("route_id", metavar="ID")
@json_option
def show_route(route_id: str, as_json: bool) -> None:
    """One route: its row, its tasks, what it learned, its tombstone if any."""
    from control_room.dispatch import index
    from control_room.knowledge import digest, graveyard, routes
    from control_room.room.layout import STATES

    room = current_room()
    graveyard.path(room, route_id)  # validates the id
    row = next((r for r in routes.rows(room) if r.get("route") == route_id), None)
    tomb = graveyard.path(room, route_id)
    if row is None and not tomb.exists():
        from control_room.errors import NotFoundError

        raise NotFoundError(f"no route {route_id} in control-room/ROUTES.md or graveyard/")
    tasks = [
        (t.state, t.id)
        for state in STATES
        for t in index.scan(room, state)
        if t.summary.get("route") == route_id
    ]
    history = digest.route_history(room, route_id)
    if as_json:
        echo_json(
            {
                "route": row,
                "tasks": tasks,
                "history": history,
                "tombstone": str(tomb) if tomb.exists() else None,
            }
        )
        return
    if row:
        click.echo(f"{route_id}: {row.get('verdict') or 'untested'}  {row.get('title', '')}")
        click.echo(
            f"  attempts {row.get('attempts') or 0}, spend ${row.get('spend_usd') or 0}, "
            f"last {row.get('last_result') or '-'}"
        )
        if row.get("falsifier"):
            click.echo(f"  falsifier: {row['falsifier']}")
    click.echo("tasks: " + (", ".join(f"{i} ({s})" for s, i in tasks) or "none"))
    if history:
        click.echo("\n" + history)


@route.command("kill")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--verdict", required=True, help="Why it died, in one or two sentences.")
@click.option("--reopen-if", required=True, help="The exact conditions under which it may be reopened.")
@click.option("--evidence", multiple=True, metavar="TASK", help="A task whose results show it (repeatable).")
@click.option("--what", default="", help="What the route was (default: its title in ROUTES.md).")
def kill_route(route_id: str, verdict: str, reopen_if: str, evidence: tuple[str, ...], what: str) -> None:
    """Kill a route: write its tombstone in graveyard/; cycles then refuse its tasks."""
    from control_room.knowledge import graveyard

    path = graveyard.kill(current_room(), route_id, verdict, reopen_if, list(evidence), what)
    click.echo(f"route {route_id} killed: graveyard/{path.name}")


@route.command("reopen")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--because", required=True, help="Which reopen_if condition now holds.")
def reopen_route(route_id: str, because: str) -> None:
    """Reopen a killed route: the tombstone stays, with a Reopened section."""
    from control_room.knowledge import graveyard

    graveyard.reopen(current_room(), route_id, because)
    click.echo(f"route {route_id} reopened; its tasks run again")


@route.command("resume")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--because", required=True, help="What changed since the identical failures.")
def resume_route(route_id: str, because: str) -> None:
    """Release a route held by a death loop (see `control-room findings`)."""
    from control_room.knowledge.findings import resume

    resume(current_room(), route_id, because)
    click.echo(f"{route_id} released; its tasks run again")


@click.group(invoke_without_command=True)
@room_option
@click.pass_context
def graveyard(ctx: click.Context) -> None:
    """The tombstones of killed routes (default: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_graves)


@graveyard.command("list")
@room_option
@json_option
def list_graves(as_json: bool) -> None:
    """Every tombstone: route, state, when it was killed, the verdict."""
    from control_room.knowledge import graveyard as g

    stones = g.tombstones(current_room())
    if as_json:
        echo_json(stones)
        return
    if not stones:
        click.echo("the graveyard is empty")
    for t in stones:
        click.echo(
            f"{t['candidate']:<24} {t.get('state', '?'):<9} {str(t.get('killed_at', ''))[:10]}  "
            f"{t.get('verdict', t.get('problem', ''))}"
        )


@graveyard.command("show")
@room_option
@click.argument("route_id", metavar="ID")
def show_grave(route_id: str) -> None:
    """Print a tombstone."""
    from control_room.errors import NotFoundError
    from control_room.knowledge import graveyard as g
    from control_room.store.files import read_text

    p = g.path(current_room(), route_id)
    if not p.exists():
        raise NotFoundError(f"route {route_id} has no tombstone (graveyard/{route_id}.md)")
    sys.stdout.write(read_text(p))


@click.command()
@room_option
def digest() -> None:
    """Rewrite control-room/DIGEST.md from the ledger and the graveyard (incremental, bounded)."""
    from control_room.knowledge import digest as d

    room = current_room()
    path, read = d.refresh(room)
    click.echo(
        f"{path.relative_to(room.root)}: {path.stat().st_size:,} bytes (read {read:,} new ledger bytes)"
    )


@click.command()
@room_option
@json_option
def findings(as_json: bool) -> None:
    """Death loops (a route failing the same way again and again: held until a person acts)
    and unsupported CONFIRMED claims, each with the ledger lines that show it."""
    from control_room.knowledge.findings import gather
    from control_room.room import settings as control

    room = current_room()
    data = gather(room, control.load(room))
    if as_json:
        echo_json(data)
        return
    if not data["death_loops"] and not data["unsupported_claims"]:
        click.echo("no findings")
        return
    for lp in data["death_loops"]:
        click.echo(
            f"death loop: {lp['key']} failed {lp['n']} times in a row with the same {lp['same']}: "
            f"{lp['cause']}  (held; release: control-room route resume {lp['key']} --because ...)"
        )
        for time, eid, task, what in lp["lines"]:
            click.echo(f"  {time}  {eid}  {task}  {what}")
    if data["unsupported_claims"]:
        click.echo(f"unsupported CONFIRMED claims: {data['unsupported_total']}")
        for u in data["unsupported_claims"]:
            click.echo(f"  {u['time']}  {u['id']}  {u['task']}  {u['route'] or '-'}  {u['detail']}")
