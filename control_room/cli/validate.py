"""control-room validate"""

from __future__ import annotations

import click

from control_room.cli.common import current_room, echo, echo_json, json_option
from control_room.dispatch.round.report import LABELS
from control_room.dispatch.round.report import validate as check
from control_room.errors import INVALID, ControlRoomError, NotFoundError


@click.command()
@click.argument("file", metavar="FILE|-")
@click.option(
    "--proposals",
    is_flag=True,
    help="Check instead the tasks FILE proposes (```json blocks): fails when there are "
    "some and none is valid, as the orchestrator's validator does; needs a room.",
)
@json_option
@click.pass_context
def validate(ctx: click.Context, file: str, proposals: bool, as_json: bool) -> None:
    """Check the report at the end of an agent's output (FILE, or - for stdin).

    The report is the last block starting with DECISION: (skills/report-format.md). Prints
    `ok: ...` and exits 0, or prints each violation as FILE:LINE: message on stderr and
    exits 4. Line 0 means the file as a whole. --json prints the parsed report either way.

    \b
    Examples:
      control-room validate results/fix-parser-1/report.md
      my-agent ... | control-room validate -
    """
    name = "<stdin>" if file == "-" else file
    try:
        with click.open_file(file, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{file}: no such file") from None
    if proposals:
        _proposals(ctx, name, data.decode("utf-8", "replace"))
        return
    report = check(data)
    if as_json:
        echo_json(report.as_dict())
    elif report.ok:
        counts = dict.fromkeys(LABELS, 0)
        for item in report.evidence:
            counts[item.label] += 1
        n = len(report.evidence)
        detail = ", ".join(f"{k} {label}" for label, k in counts.items())
        echo(f"ok: report valid ({n} evidence item{'' if n == 1 else 's'}: {detail})")
    else:
        for v in report.violations:
            echo(f"{name}:{v.line}: {v.message}", err=True)
    if not report.ok:
        ctx.exit(INVALID)


def _proposals(ctx: click.Context, name: str, text: str) -> None:
    # Admission loads the adapters and the knowledge layer: only for --proposals (~10 ms).
    from control_room.dispatch.queue.admission import check_new
    from control_room.dispatch.queue.orchestrator import extract, slices_of  # likewise
    from control_room.room import settings as settings_file  # likewise: plain `validate` needs no room
    from control_room.room import swarm  # likewise

    room = current_room()
    settings = settings_file.load(room)
    good = 0
    found = extract(text)
    if not found:
        echo("ok: no proposals (proposing nothing is a valid decision)")
        return
    earlier: set[str] = set()  # proposals are queued in order: a later one may depend on these

    def where(task_id: str) -> str | None:
        return "queue" if task_id in earlier else swarm.state_of(room, task_id, order=swarm.LIVE_FIRST)

    for line, data, problem in found:
        if problem is None and "slices" in data:  # a fan-out, as the cycle's `accept` reads one
            data = dict(data)
            _, problem = slices_of(data.pop("slices"))
        if problem is None:
            try:
                earlier.add(check_new(room, settings, dict(data), where=where)["id"])
                good += 1
                continue
            except ControlRoomError as exc:
                problem = str(exc)
        echo(f"{name}:{line}: {problem}", err=True)
    if good:
        echo(f"ok: {good} valid proposal{'' if good == 1 else 's'}")
        return
    what = "the only proposal is not" if len(found) == 1 else f"none of the {len(found)} proposals is"
    echo(f"{name}: {what} a valid task", err=True)
    ctx.exit(INVALID)
