"""control-room lever / branch: add, set, list (one factory, so the two groups stay identical)"""

from __future__ import annotations

from typing import Any

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.knowledge import intelligence

_SHORT = {
    "lever": "Levers: knobs that could move the objective",
    "branch": "Branches: concrete lines of attack",
}
_ABOUT = {
    "lever": "a knob or technique that could move the objective",
    "branch": "a concrete line of attack: a specific way of turning one or more levers",
}
_EXAMPLE = {
    "lever": ("cache-input", "Cache the parsed input between runs", "parsing is 30% of wall time"),
    "branch": ("mmap-input", "Parse once and memory-map the result", "builds on cache-input"),
}


def _line(item: dict[str, Any], width: int) -> str:
    because = f"  (because: {item['because']})" if item["because"] else ""
    return f"{item['state']:<8}  {item['id']:<{width}}  {item['title']}{because}"


def make_group(kind: str) -> click.Group:
    """The ``lever`` or ``branch`` command group."""
    page = intelligence.where(kind)
    plural = page.removeprefix("intelligence/").removesuffix(".md")
    ex_id, ex_title, ex_because = _EXAMPLE[kind]

    @click.group(
        name=kind,
        invoke_without_command=True,
        help=(
            f"{_SHORT[kind]} (default: list).\n\n"
            f"A {kind} is {_ABOUT[kind]}. They live in {page}, one table row each, in one of three "
            f"states: untested, pending or killed; a killed {kind} stays on the page with the reason "
            "it was ruled out."
        ),
    )
    @room_option
    @click.pass_context
    def group(ctx: click.Context) -> None:
        if ctx.invoked_subcommand is None:
            ctx.invoke(list_cmd)

    @group.command(
        "add",
        help=(
            f"Add a {kind}, as untested.\n\nThe row goes after the last row of the table in {page}. "
            "Refuses an id the page holds already.\n\n"
            "\b\nExample:\n"
            f'  control-room {kind} add {ex_id} --title "{ex_title}" \\\n'
            f'    --because "{ex_because}"'
        ),
    )
    @room_option
    @click.argument("item_id", metavar="ID")
    @click.option("--title", required=True, help=f"What the {kind} is, in one line.")
    @click.option("--because", default="", help=f"Why the {kind} is worth testing (evidence, task id).")
    def add_cmd(item_id: str, title: str, because: str) -> None:
        item = intelligence.add(current_room(), kind, item_id, title, because)
        echo(f"added {kind} {item['id']} (untested)  {page}:{item['line']}")

    @group.command(
        "set",
        help=(
            f"Set the state of a {kind}: untested, pending or killed.\n\n--because replaces its "
            "because cell; a kill needs one. Only that row of the page is rewritten.\n\n"
            "\b\nExamples:\n"
            f'  control-room {kind} set {ex_id} pending --because "task {ex_id}-1 is testing it"\n'
            f'  control-room {kind} set {ex_id} killed --because "no gain over 5 runs (task {ex_id}-1)"'
        ),
    )
    @room_option
    @click.argument("item_id", metavar="ID")
    @click.argument("state", metavar="STATE")
    @click.option("--because", default="", help="Why: the evidence, with the task id or tombstone.")
    def set_cmd(item_id: str, state: str, because: str) -> None:
        item = intelligence.set_state(current_room(), kind, item_id, state, because)
        change = f"still {state}" if item["was"] == state else f"{item['was']} -> {state}"
        echo(f"{kind} {item['id']}: {change}  {page}:{item['line']}")

    @group.command(
        "list",
        help=(f"List the {plural}, in page order.\n\nA broken row in {page} is an error naming its line."),
    )
    @room_option
    @click.option("--state", type=click.Choice(intelligence.STATES), help=f"Only {plural} in this state.")
    @json_option
    def list_cmd(state: str | None, as_json: bool) -> None:
        rows = intelligence.items(current_room(), kind, state)
        if as_json:
            echo_json(rows)
            return
        if not rows:
            echo(f"no {state + ' ' if state else ''}{plural}")
            return
        width = max(len(r["id"]) for r in rows)
        echo("\n".join(_line(r, width) for r in rows))

    return group


lever = make_group("lever")
branch = make_group("branch")
