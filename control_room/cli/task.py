"""control-room task add / fanout / list / show / retry / park / cancel / accept / pin / unpin"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any, TextIO

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, person_only, room_option
from control_room.cli.decide import who
from control_room.dispatch.person.decisions import park, retry
from control_room.dispatch.queue import admission, index
from control_room.dispatch.queue.ready import folded_meanwhile, readiness
from control_room.errors import ControlRoomError, InvalidError
from control_room.room import settings as settings_file
from control_room.room.layout import STATES, Room
from control_room.store import records
from control_room.timeutil import parse_duration
from control_room.views import answers


@click.group(invoke_without_command=True)
@room_option
@click.pass_context
def task(ctx: click.Context) -> None:
    """Queue, list and show tasks (default: list)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_tasks)


def _duration(_ctx: click.Context, _p: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@task.command("add")
@room_option
@click.option(
    "--file",
    "file",
    type=click.File("r", encoding="utf-8"),
    help="Read the task from a JSON file ('-' for stdin); flags override its fields.",
)
@click.option("--id", help="The task id (default: made from the objective).")
@click.option("--objective", help="What to do, in words.")
@click.option("--falsifier", help="The result that would prove this route wrong.")
@click.option("--validator", help="Command run after the agent, in the work dir; exit 0 = pass.")
@click.option("--max-cost", "max_cost_usd", type=float, help="Cost ceiling for this run, USD.")
@click.option(
    "--wall-clock",
    "wall_clock_s",
    callback=_duration,
    help="Hard time limit for the agent: 90, 90s, 30m, 1h.",
)
@click.option("--kill-condition", help="When the route should be killed rather than retried.")
@click.option("--role", help="agents/<role>.md (default engineer).")
@click.option("--route", help="The route in ROUTES.md this task serves (it must be there).")
@click.option(
    "--new-route",
    is_flag=True,
    help="Put the task's route on the board (ROUTES.md) if it is not there, instead of refusing it.",
)
@click.option("--adapter", help="Override the role's / CONTROL.md default adapter.")
@click.option("--model", help="Override the default model.")
@click.option("--dep", "deps", multiple=True, help="A task that must be done first (repeatable).")
@click.option("--owns", multiple=True, help="A path this task may edit (repeatable).")
@click.option("--gate", multiple=True, help="A gate needing approval: gpu, submit, ... (repeatable).")
@click.option(
    "--review", multiple=True, help="A lens that reviews it when it passes (repeatable; agents/lenses/)."
)
@click.option("--priority", type=int, help="Higher runs first (default 0).")
@click.option(
    "--extra-arg",
    "extra_args",
    multiple=True,
    help="An extra CLI flag for the agent (repeatable; CONTROL.md must allow it).",
)
@click.option("--command", help="The command the probe adapter runs.")
@json_option
def add_task(file: TextIO | None, as_json: bool, new_route: bool, **fields: Any) -> None:
    """Queue a task. Refuses one without falsifier, validator, max cost, wall clock or kill
    condition, naming each missing field; one on a route that is not in ROUTES.md (unless
    --new-route); and a validator or command that needs a shell (`a && b`: write
    `sh -c 'a && b'` to use a shell on purpose).

    \b
    Example:
      control-room task add --objective "make parse() 2x faster" \\
        --falsifier "no gain over 3 runs" --validator "python bench.py --check" \\
        --max-cost 1 --wall-clock 20m --kill-condition "two rounds without gain"
    """
    data: dict[str, Any] = {}
    if file is not None:
        try:
            loaded = records.parse(file.read())
        except InvalidError as exc:
            raise InvalidError(f"{file.name}: {exc}") from None
        if not isinstance(loaded, dict):
            raise InvalidError(f"{file.name}: a task must be a JSON object")
        data.update(loaded)
    data.update(
        {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields.items() if v not in (None, ())}
    )
    if new_route and not data.get("route"):
        raise InvalidError("--new-route needs the task's route: give --route ID")
    room = current_room()
    t = admission.add(room, settings_file.load(room), data, new_route="" if new_route else None)
    if as_json:
        echo_json(t)
    else:
        echo(f"queued {t['id']}  (swarm/queue/{t['id']}.json)")


def _pairs(what: str) -> Any:
    """A click callback for ``--owns-of`` / ``--validator-of``: each 'title=value' as a pair."""

    def parse(_ctx: click.Context, _p: click.Parameter, values: tuple[str, ...]) -> list[tuple[str, str]]:
        from control_room.dispatch.queue import fanout  # see fanout_task

        try:
            return [fanout.parse_of(v, what) for v in values]
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return parse


def _slices(_ctx: click.Context, _p: click.Parameter, values: tuple[str, ...]) -> list[Any]:
    from control_room.dispatch.queue import fanout  # see fanout_task

    try:
        return [fanout.parse_slice(v) for v in values]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@task.command("fanout")
@room_option
@click.argument("task_id", metavar="ID")
@click.option(
    "--slice",
    "slices",
    multiple=True,
    callback=_slices,
    metavar="'TITLE: OBJECTIVE'",
    help="One child task: its title (its id is ID-<title>) and what it is to do (repeat, 2 or more).",
)
@click.option(
    "--owns-of",
    "owns_of",
    multiple=True,
    callback=_pairs("path,path"),
    metavar="'TITLE=PATH,PATH'",
    help="The paths the slice with that title owns (repeatable; default: none).",
)
@click.option(
    "--validator-of",
    "validator_of",
    multiple=True,
    callback=_pairs("command"),
    metavar="'TITLE=COMMAND'",
    help="The slice's own validator (repeatable; default: the task's).",
)
@json_option
def fanout_task(
    task_id: str,
    slices: list[Any],
    owns_of: list[tuple[str, str]],
    validator_of: list[tuple[str, str]],
    as_json: bool,
) -> None:
    """Split a queued task into slices: child tasks, each with its own brief.

    The task waits for its slices (deps) and then runs as their gather step. Refuses fewer than 2 slices, and
    slices that tell their agents the same thing (or one all of another's and more): a fan-out
    pays only when each arm gets different information. See docs/fanout.md.

    \b
    Example:
      control-room task fanout auth --slice 'api: add the login endpoint' \\
        --slice 'ui: add the login form' --owns-of 'api=src/api' --owns-of 'ui=src/ui'
    """
    # dispatch.queue.fanout takes the claim lock and the ledger writer: `task list` never pays for them
    from control_room.dispatch.queue import fanout

    chosen = fanout.with_extras(slices, owns_of, validator_of)
    room = current_room()
    done = fanout.fanout(room, settings_file.load(room), task_id, chosen)
    if as_json:
        echo_json({"parent": done.parent, "children": done.children})
        return
    ids = [c["id"] for c in done.children]
    echo(
        f"fanned out {task_id} into {len(ids)} slices: {', '.join(ids)} (swarm/queue/); "
        f"{task_id} waits for them and then runs as their gather step"
    )


@task.command("list")
@room_option
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(STATES),
    help="Only tasks in this state (repeatable; default all).",
)
@json_option
def list_tasks(states: tuple[str, ...], as_json: bool) -> None:
    """List tasks by state: queue (in run order), running, done, parked, rejected, cancelled.

    For each queued task, the `ready` column says whether the next cycle may run it, or why
    not (the answer the cycle acts on). Listing the queue also rejects any file in it that is
    not a valid task.
    """
    room = current_room()
    with nullcontext() if as_json else _folding(room, states):
        rows = answers.task_rows(room, states)
    if as_json:
        echo_json([answers.task_row(t) for t in rows])
        return
    if not rows:
        echo("no tasks")
        return
    ready = _ready(room, [t for t in rows if t.state == "queue"])
    # Columns: state, id, priority, route, [ready: only when queued tasks are listed,] objective
    # (or the problem of a file that is not a task). One format for 10,000 rows.
    width = max(5, *(len(w) for w in ready.values())) if ready else 0
    line = "{:<9} {:<32} {:>4}  {:<16} " + (f"{{:<{width}}}  " if ready else "{}") + "{}"
    out = [line.format("state", "id", "pri", "route", "ready" if ready else "", "objective")]
    for t in rows:
        s = t.summary
        what = f"PROBLEM: {s['problem']}" if "problem" in s else s.get("objective", "")
        why = ready.get(t.name, "-") if ready else ""
        out.append(line.format(t.state, t.id, s.get("priority", ""), s.get("route", "") or "-", why, what))
    echo("\n".join(out))


def _folding(room: Room, states: tuple[str, ...]) -> AbstractContextManager[None]:
    """While the queue is listed (a first scan reads every file): the ledger states of the
    ``ready`` column folded meanwhile (``ready.folded_meanwhile``)."""
    if states and "queue" not in states:
        return nullcontext()
    try:
        return folded_meanwhile(room, settings_file.load(room))
    except ControlRoomError:
        return nullcontext()  # said by _ready, which cannot tell either


def _ready(room: Room, queued: list[index.Listed]) -> dict[str, str]:
    """For each queued task (by file name): `ready`, or why it waits or will be refused."""
    queued = [t for t in queued if "problem" not in t.summary]
    if not queued:
        return {}
    try:
        now = readiness(room, settings_file.load(room))
    except (ControlRoomError, OSError) as exc:
        echo(f"note: cannot tell which queued tasks are ready: {exc}", err=True)
        return {t.name: "?" for t in queued}
    out = {}
    for t in queued:
        wait = now.why(t.name[: -len(".json")], t.summary)  # a queued task's file is <id>.json
        out[t.name] = "ready" if wait is None else wait.shown
    return out


@task.command("show")
@room_option
@click.argument("task_id", metavar="ID")
@json_option
def show_task(task_id: str, as_json: bool) -> None:
    """Show one task: where it is, its fields, and why it was parked or rejected."""
    shown = answers.task_detail(current_room(), task_id)
    if as_json:
        echo_json(shown.as_dict())
        return
    echo(f"{task_id}  in swarm/{shown.state}/  ({shown.path})")
    echo(shown.text.rstrip())
    if shown.reason:
        echo(f"\nwhy ({shown.reason_path.name}):\n{shown.reason.rstrip()}")


@task.command("retry")
@room_option
@click.argument("task_id", metavar="ID")
@person_only
def retry_task(task_id: str) -> None:
    """Send a parked, rejected, cancelled or done task back to the queue, rounds reset."""
    state = retry(current_room(), task_id)
    echo(f"queued {task_id} again (was in swarm/{state}/)")


@task.command("park")
@room_option
@click.argument("task_id", metavar="ID")
@click.option("--reason", default="", help="Why, written beside the task.")
@person_only
def park_task(task_id: str, reason: str) -> None:
    """Take a queued task out of the queue and park it for a person."""
    park(current_room(), task_id, reason)
    echo(f"parked {task_id} (swarm/parked/{task_id}.json)")


@task.command("cancel")
@room_option
@click.argument("task_id", metavar="ID")
@click.option("--reason", default="", help="Why, written beside the task.")
@person_only
def cancel_task(task_id: str, reason: str) -> None:
    """Cancel a queued, parked, rejected or passed (not merged) task (it moves to swarm/cancelled/),
    and the review and arbiter tasks it waits for."""
    from control_room.dispatch.merge import withdraw  # the merge wing: only for this command

    state, kept = withdraw.cancel(current_room(), task_id, reason)
    echo(f"cancelled {task_id} (was in swarm/{state}/)" + (f"; {kept}" if kept else ""))


@task.command("accept")
@room_option
@click.argument("task_id", metavar="ID")
@click.option("--reason", default="", help="Why, for the ledger.")
@click.option("--by", help="Who accepts (default: user@host).")
@person_only
def accept_task(task_id: str, reason: str, by: str | None) -> None:
    """Accept a passed task whose reviews have no verdict (they wait, disagree, or a review or
    arbiter task is parked): the verdict is yours. Its review and arbiter tasks are cancelled;
    then `integrate` merges it (with nothing to merge, it is done)."""
    from control_room.dispatch.review import verdicts  # the review wing: only for this command

    room = current_room()
    said, _ = verdicts.accept(room, settings_file.load(room), task_id, who(by, room), reason)
    merge = f"; `control-room integrate {task_id}` merges it" if said.endswith("it may integrate") else ""
    echo(said + merge)


@task.command("pin")
@room_option
@click.argument("task_id", metavar="ID")
@person_only
def pin_task(task_id: str) -> None:
    """Pin a task: `cleanup` never removes its results (control-room/PINNED)."""
    from control_room.room import retention  # ~4 ms (its dataclasses): `task list` never pays it

    if retention.pin(current_room(), task_id):
        echo(f"pinned {task_id}: cleanup keeps its results")
    else:
        echo(f"{task_id} is pinned already")


@task.command("unpin")
@room_option
@click.argument("task_id", metavar="ID")
@person_only
def unpin_task(task_id: str) -> None:
    """Unpin a task: `cleanup` may remove its results again once it is finished and old."""
    from control_room.room import retention  # see pin_task

    if retention.unpin(current_room(), task_id):
        echo(f"unpinned {task_id}")
    else:
        echo(f"{task_id} was not pinned")
