"""control-room ledger verify / tail / stats / merge"""

from __future__ import annotations

import os
from pathlib import Path

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.errors import LEDGER_BAD
from control_room.ledger.line import parse
from control_room.ledger.merge import merge_files
from control_room.ledger.read import tail as read_tail
from control_room.ledger.stats import stats as compute
from control_room.ledger.verify import verify as do_verify
from control_room.views.status import format_entry
from control_room.words import count


@click.group(invoke_without_command=True)
@room_option
@click.pass_context
def ledger(ctx: click.Context) -> None:
    """Read and check the append-only ledger (default: tail)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(tail)


@ledger.command()
@room_option
@click.option(
    "-n", "count", default=10, show_default=True, type=click.IntRange(min=0), help="How many lines."
)
@click.option("--raw", is_flag=True, help="Print the lines as they are in LEDGER.md.")
@json_option
def tail(count: int, raw: bool, as_json: bool) -> None:
    """The last lines of the ledger, read from its end."""
    lines = read_tail(current_room().ledger, count)
    if raw:
        echo("\n".join(lines)) if lines else None
        return
    entries = [parse(line) for line in lines]
    if as_json:
        echo_json([e.as_dict() if e else {"unparsed": line} for e, line in zip(entries, lines, strict=True)])
        return
    for e, line in zip(entries, lines, strict=True):
        echo(format_entry(e.as_dict()) if e else f"(not a ledger line) {line}")


@ledger.command()
@room_option
@json_option
def verify(as_json: bool) -> None:
    """Check every line's hash chain; name each edited, deleted, reordered or torn line.

    Exits 6 when a line is bad. Deleting the very last lines of a writer cannot be seen by a
    hash chain alone (see docs/ledger.md).
    """
    room = current_room()
    report = do_verify(room.ledger)
    rel = "control-room/LEDGER.md"
    if as_json:
        echo_json(
            {
                "ok": report.ok,
                "lines": report.lines,
                "writers": sorted(report.writers),
                "header_found": report.header_found,
                "problems": [p._asdict() for p in report.problems],
            }
        )
    elif not report.header_found:
        echo(
            f"{rel}: no ledger table header found, so none of its lines is read; "
            "`control-room init` puts the header back, keeping every line",
            err=True,
        )
    elif report.ok:
        echo(
            f"ledger ok: {count(report.lines, 'line')} from {count(len(report.writers), 'writer')}, "
            "every chain intact"
        )
    else:
        first = report.problems[0]
        echo(f"{rel}:{first.line}: {first.kind}: {first.why}", err=True)
        for p in report.problems[1:20]:
            echo(f"{rel}:{p.line}: {p.kind}: {p.why}", err=True)
        more = len(report.problems) - 20
        if more > 0:
            echo(f"... and {more} more", err=True)
        echo(f"ledger BAD: {count(len(report.problems), 'bad line')} of {report.lines:,}", err=True)
    if not report.ok:
        raise SystemExit(LEDGER_BAD)


@ledger.command()
@room_option
@click.option("--background", is_flag=True, hidden=True, help="Run at low priority, saying nothing.")
@click.option("--only", hidden=True, help="The states to fold, by checkpoint name (comma-separated).")
def fold(background: bool, only: str | None) -> None:
    """Fold the whole ledger into the room's caches now.

    A first command on a big ledger reads only its recent lines and starts this in the
    background for the older history (docs/ledger.md, "A big ledger's first run"); run it
    yourself to have every view whole at once.
    """
    from control_room.views import catch_up  # the folds of every view: only here

    if background:
        os.nice(10)
    room = current_room()
    names = catch_up.run(room, only.split(",") if only else None)
    if background:
        return
    if names is None:
        echo("a fold of this room is running already")
    else:
        echo(f"folded: {', '.join(names)}" if names else "every view already holds the whole ledger")


@ledger.command()
@click.argument("base", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("ours", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("theirs", type=click.Path(path_type=Path, dir_okay=False))
def merge(base: Path, ours: Path, theirs: Path) -> None:
    """git's merge driver for LEDGER.md: every line of the three once, by event id.

    Writes the result into OURS and exits 0; exits 4, leaving OURS as it was, if OURS or
    THEIRS is not a ledger. `init` registers it in the room's git repository as
    `control-room-ledger` (docs/ledger.md, "Merging ledgers from several machines").

    \b
    Example (what git runs):
      control-room ledger merge %O %A %B
    """
    merge_files(base, ours, theirs)


@ledger.command()
@room_option
@json_option
def stats(as_json: bool) -> None:
    """Events, outcomes and spend per day, per adapter and per route (streams the file)."""
    data = compute(current_room().ledger)
    if as_json:
        echo_json(data)
        return
    t = data["total"]
    echo(f"{count(t['events'], 'event')}, ${t['spend_usd']:,.4f} spent")
    for group in ("day", "adapter", "route"):
        rows = data[f"by_{group}"]
        if not rows:
            continue
        echo(f"\nby {group}:")
        for key, b in rows.items():
            outcomes = ", ".join(f"{k} {v}" for k, v in sorted(b["outcomes"].items()))
            events = f"{b['events']:>8,} {'event ' if b['events'] == 1 else 'events'}"
            echo(f"  {key:<20} {events}  ${b['spend_usd']:>10,.4f}  {outcomes}")
