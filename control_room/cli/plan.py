"""control-room plan import / export"""

from __future__ import annotations

from pathlib import Path

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.errors import NotFoundError
from control_room.room import settings as settings_file
from control_room.store.files import atomic_write, read_text
from control_room.words import count

INTRO = "# Plan\n\nThe queue, as `control-room plan export` wrote it (`control-room plan import` reads it)."


@click.group()
@room_option
def plan() -> None:
    """Import a markdown plan into routes and tasks; export the queue as one (docs/plans.md)."""


@plan.command("import")
@room_option
@click.argument("path", metavar="PLAN.md", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--dry-run", is_flag=True, help="Check the plan and show what an import would do; write nothing."
)
@json_option
def import_plan(path: Path, dry_run: bool, as_json: bool) -> None:
    """Turn a markdown plan into routes and tasks, all or nothing.

    `## route — title` starts a route (a `Falsifier:` line under it), `### task-id` a task, its
    `key: value` fields right after it, the prose after them its brief. The whole plan is checked
    first: every problem is listed, naming the task and the field, and nothing is written (exit 4).
    Again, with an edited plan: queued tasks untouched since the last import are updated, new
    ones added; tasks that ran or were edited are reported, never changed.

    \b
    Example:
      control-room plan import PLAN.md --dry-run
      control-room plan import PLAN.md
    """
    # the plan modules load admission's checks and the claim lock: `status` never pays for them
    from control_room.dispatch.plan import importer as plans

    if not path.is_file():
        raise NotFoundError(f"no plan file {path}")
    text = read_text(path)
    room = current_room()
    settings = settings_file.load(room)
    if dry_run:
        out = plans.prepare(room, settings, path.name, text)
    else:
        out = plans.apply(room, settings, path.name, text)
    c = out.counts()
    if as_json:
        echo_json(
            {
                "plan": out.name,
                "dry_run": dry_run,
                "routes": [{"route": r.name, "title": r.title, "new": new} for r, new in out.routes],
                "tasks": [
                    {"id": i.id, "route": i.route, "action": i.action, "why": i.why} for i in out.items
                ],
                "counts": c,
            }
        )
        return
    echo(f"{out.name}: {count(len(out.items), 'task')} on {count(len(out.routes), 'route')}")
    sections: list[tuple[str, str | None]] = []
    if any(i.route is None for i in out.items):
        sections.append(("(no route)", None))
    for r, new in out.routes:
        title = f" — {r.title}" if r.title else ""
        sections.append((f"## {r.name}{title}" + ("  (new route)" if new else ""), r.name))
    width = max(len(i.id) for i in out.items) if out.items else 0
    for head, route in sections:
        echo(head)
        for i in (i for i in out.items if i.route == route):
            deps = i.task.get("deps", [])
            after = f"  [after {', '.join(deps)}]" if deps else ""
            what = i.why or str(i.task.get("objective", "")) + after
            echo(f"  {i.id:<{width}}  {i.action:<9}  {what}")
    tally = (
        f"{c['add']} to add, {c['update']} to update, {c['unchanged']} unchanged, "
        f"{c['kept']} kept as they are"
    )
    if dry_run:
        echo(f"dry run: {tally}; nothing was written")
    else:
        echo(tally.replace("to add", "added").replace("to update", "updated"))


@plan.command("export")
@room_option
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the plan to FILE (default: stdout).",
)
def export_plan(out: Path | None) -> None:
    """Write the queue as a plan, in the format `plan import` reads (it imports back as it is).

    \b
    Example:
      control-room plan export --out PLAN.md
    """
    from control_room.dispatch.plan import importer as plans  # see import_plan

    text, written, skipped = plans.export(current_room(), INTRO)
    for s in skipped:
        echo(f"note: left out {s}", err=True)
    if out is None:
        echo(text, nl=False)
        return
    atomic_write(out, text)
    routes = {t["route"] for t in written if t.get("route")}
    echo(f"wrote {count(len(written), 'task')} on {count(len(routes), 'route')} to {out}")
