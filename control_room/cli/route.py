"""control-room route add / list / show / kill / reopen / resume / recount"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, person_only, room_option
from control_room.errors import ControlRoomError
from control_room.knowledge import findings, graveyard, history, routes
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.views import answers


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
    routes.add(current_room(), route_id, title, falsifier)
    echo(f"route {route_id} added (untested)")


@route.command("list")
@room_option
@json_option
def list_routes(as_json: bool) -> None:
    """The routes in ROUTES.md, a route held by a death loop shown as `held`; a hand edit that
    broke a row is named by its line on stderr. `runs` and `spend` are the route's own runs; the
    review and arbiter runs about its tasks are counted apart (`reviews`, shown once there are
    any)."""
    room = current_room()
    rows = routes.rows(room)
    problems = routes.problems(room)
    held = sorted(_held(room))
    reviews = history.reviews(room)
    if as_json:
        echo_json({"routes": rows, "held": held, "problems": problems, "reviews": reviews})
        return
    for p in problems:
        echo(p, err=True)
    if not rows:
        echo("no routes yet (control-room route add ID --title ...)")
        return
    also = f"{'reviews':>7}  " if reviews else ""
    lines = [f"{'route':<24} {'verdict':<10} {'runs':>4}  {also}{'spend':<9} {'last result':<32} title"]
    for r in rows:
        verdict = "held" if r.get("route") in held else r.get("verdict", "") or "untested"
        seen = reviews.get(str(r.get("route", "")), {}).get("runs", 0)
        also = f"{seen:>7}  " if reviews else ""
        lines.append(
            f"{r.get('route', ''):<24} {verdict:<10} {r.get('attempts', '') or '0':>4}  {also}"
            f"{'$' + (r.get('spend_usd', '') or '0'):<9} {r.get('last_result', '') or '-':<32} "
            f"{r.get('title', '')}"
        )
    echo("\n".join(line.rstrip() for line in lines))


def _held(room: Room) -> set[str]:
    """Routes held by a death loop (``route resume`` releases one); CONTROL.md's
    ``death_loop_n``, or its default when CONTROL.md cannot be read (``status`` does the same)."""
    try:
        settings = settings_file.load(room)
    except ControlRoomError:
        settings = settings_file.DEFAULTS
    try:
        return set(history.held(room, settings))
    except FileNotFoundError:  # no LEDGER.md: no history, nothing held
        return set()


@route.command("show")
@room_option
@click.argument("route_id", metavar="ID")
@json_option
def show_route(route_id: str, as_json: bool) -> None:
    """One route: its row, its tasks, what it learned, its tombstone if any."""
    shown = answers.route_detail(current_room(), route_id)
    if as_json:
        echo_json(shown)
        return
    row, tasks, problem = shown["route"], shown["tasks"], shown["tombstone_problem"]
    if row:
        echo(f"{route_id}: {row.get('verdict') or 'untested'}  {row.get('title', '')}")
        echo(
            f"  attempts {row.get('attempts') or 0}, spend ${row.get('spend_usd') or 0}, "
            f"last {row.get('last_result') or '-'}"
        )
        if row.get("falsifier"):
            echo(f"  falsifier: {row['falsifier']}")
    echo("tasks: " + (", ".join(f"{i} ({s})" for s, i in tasks) or "none"))
    if problem:
        echo(f"tombstone: unreadable: {problem}")
    if shown["history"]:
        echo("\n" + shown["history"])


@route.command("kill")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--verdict", required=True, help="Why it died, in one or two sentences.")
@click.option("--reopen-if", required=True, help="The exact conditions under which it may be reopened.")
@click.option("--evidence", multiple=True, metavar="TASK", help="A task whose results show it (repeatable).")
@click.option("--what", default="", help="What the route was (default: its title in ROUTES.md).")
@person_only
def kill_route(route_id: str, verdict: str, reopen_if: str, evidence: tuple[str, ...], what: str) -> None:
    """Kill a route: write its tombstone in graveyard/; cycles then refuse its tasks."""
    path = graveyard.kill(current_room(), route_id, verdict, reopen_if, list(evidence), what)
    echo(f"route {route_id} killed: graveyard/{path.name}")


@route.command("reopen")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--because", required=True, help="Which reopen_if condition now holds.")
@person_only
def reopen_route(route_id: str, because: str) -> None:
    """Reopen a killed route: the tombstone stays, with a Reopened section."""
    graveyard.reopen(current_room(), route_id, because)
    echo(f"route {route_id} reopened; its tasks run again")


@route.command("resume")
@room_option
@click.argument("route_id", metavar="ID")
@click.option("--because", required=True, help="What changed since the identical failures.")
@person_only
def resume_route(route_id: str, because: str) -> None:
    """Release a route held by a death loop (see `control-room findings`)."""
    room = current_room()
    findings.resume(room, settings_file.load(room), route_id, because)
    echo(f"{route_id} released; its tasks run again")


@route.command("recount")
@room_option
def recount_route() -> None:
    """Recompute attempts, spend_usd and last_result of every route from the ledger.

    For after a merge of two clones' ROUTES.md (whose cycles' counts each side kept) or a hand
    edit that broke them. Rows the ledger never counted keep their cells; ROUTES.md is written
    only when a cell changes. A view refresh: no ledger line.
    """
    changed = routes.recount(current_room())
    if changed:
        echo(f"recounted from the ledger: {', '.join(changed)}")
    else:
        echo("ROUTES.md already agrees with the ledger")
