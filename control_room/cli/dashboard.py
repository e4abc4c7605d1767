"""control-room dashboard: the room as a static, read-only HTML site"""

from __future__ import annotations

from pathlib import Path

import click

from control_room.cli.common import current_room, echo, room_option
from control_room.views.dashboard import site
from control_room.words import count


@click.command()
@room_option
@click.option(
    "--out",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the site (default: control-room/.dashboard/ in the room).",
)
@click.option("--serve", is_flag=True, help="Serve it on 127.0.0.1 instead, each page made when asked.")
@click.option("--port", type=click.IntRange(0, 65535), default=8750, show_default=True, help="With --serve.")
def dashboard(out: Path | None, serve: bool, port: int) -> None:
    """Write the room as a static HTML site that opens from disk: overview, routes, the ledger,
    each run, findings, scorecard, and charts (spend, outcomes, queue depth, context pressure,
    the objective's metrics). It never writes to the room outside its folder.

    With --serve, serve it on 127.0.0.1 only, rendering each page afresh at each request and
    writing nothing at all. See docs/dashboard.md.
    """
    room = current_room()
    if serve:
        if out is not None:
            raise click.UsageError("--out and --serve do not go together: --serve writes nothing")
        httpd = site.server(room, port, lambda line: echo(line, err=True))
        real = httpd.server_address[1]
        echo(f"serving {room.root} on http://{site.HOST}:{real}/ (read-only; Ctrl-C to stop)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            echo("stopped")
        finally:
            httpd.server_close()
        return
    target = (out or site.default_out(room)).absolute()
    done = site.build(room, target)
    echo(
        f"{target / 'index.html'}: {count(done['files'], 'file')} written "
        f"({count(done['ledger_lines'], 'ledger line')} on {count(done['ledger_pages'], 'page')}, "
        f"{count(done['runs'], 'task')} with runs)"
    )
