"""What the command modules share: finding the room, the --room and --json options, and the
edge of a command, where the views are refreshed."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from control_room import redact
from control_room.errors import ControlRoomError, PersonOnlyError
from control_room.room.layout import STATES, Room, find_room
from control_room.store import lock
from control_room.text import printable

F = TypeVar("F", bound=Callable[..., Any])
ROOM_KEY = "control_room.room"
_EDGE = "control_room.edge"


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Print one message of a command: every command prints through here, so that no text an
    agent wrote (a decision, a validator's output, an objective) reaches the terminal with its
    control characters (``text.printable``: escape sequences, C0/C1 controls, bidi overrides)
    nor a secret of our environment (``redact``). JSON escapes the controls itself."""
    click.echo(printable(redact.scrub(str(message))), err=err, nl=nl)


def person_only(f: F) -> F:
    """A person's decision: refused inside an agent's run (``lineage.inside_run``), with one line
    naming the rule. Put it last, right above the ``def``, so it wraps the command's body."""

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> Any:
        from control_room.lineage import UNKNOWN, inside_run  # /proc: only for a person's commands

        ctx = click.get_current_context()
        task = inside_run(ctx.info_name or "")
        if task is not None:
            whose = "an agent's run" if task == UNKNOWN else f"task {task}'s run"
            raise PersonOnlyError(
                f"{ctx.command_path}: refused inside {whose}: only a person approves, resumes, marks "
                "Done, accepts, reopens, kills, retries, cancels, integrates, schedules or runs "
                "cycles; run it from your own shell (docs/security.md)"
            )
        return f(*args, **kwargs)

    checked.person_only = True  # type: ignore[attr-defined]  # read by the docs and the tests
    return checked  # type: ignore[return-value]


def _remember_room(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta[ROOM_KEY] = value


def room_option(f: F) -> F:
    """``--room DIR`` after the subcommand too (``control-room status --room DIR``)."""
    return click.option(
        "--room",
        metavar="DIR",
        expose_value=False,
        is_eager=True,
        callback=_remember_room,
        help="The room to use (default: $CONTROL_ROOM, else this folder or its nearest parent).",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def current_room() -> Room:
    """The room this command works on; its views are refreshed when the command ends."""
    room = find_room(click.get_current_context().meta.get(ROOM_KEY))
    watch(room)
    return room


class _Edge:
    __slots__ = ("first", "room", "stamp")

    def __init__(self, room: Room, stamp: tuple[Any, ...]) -> None:
        self.room, self.stamp = room, stamp
        self.first = stamp  # as the command found the room (``stamp`` moves on as views refresh)


def _stat(path: os.PathLike[str] | str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def stamp(room: Room) -> tuple[object, ...]:
    """What the views are made from, cheaply: the ledger, STOP, each state folder (a task moved
    in or out changes its mtime) and CONTROL.md. Ten stat() calls."""
    paths = (room.ledger, room.stop, room.control, *(room.state_dir(s) for s in STATES))
    return tuple(_stat(p) for p in paths)


def watch(room: Room) -> None:
    """Refresh ``room``'s views at the end of this command if the command changed the room."""
    meta = click.get_current_context().meta
    if _EDGE not in meta:
        meta[_EDGE] = _Edge(room, stamp(room))


VIEWS_EVERY_S = 1.0  # a run loop whose next cycle starts at once refreshes the views at most this often


def refresh_views(ctx: click.Context | None = None, *, soon: bool = False) -> None:
    """The edge of a command: if what the views show changed since the command started (or
    since they were last refreshed in it), rewrite DIGEST.md and CURRENT_CONTEXT.md.

    Every change to a room writes a ledger line, but the views also show what a ledger line
    does not date: the task counts, STOP, the settings. So the test is a stamp of all of them,
    not only "the ledger grew": a change that failed before its ledger line, or a file a
    person moved while the command ran, is refreshed too.

    A refresh runs under ``control-room/.views.lock`` and takes its stamp before it reads the
    room, so the last views written are made from the newest state: a refresh made from an
    older one cannot land after it. ``soon``: a run loop between two cycles, the next starting
    at once; the refresh is skipped when any process refreshed this room's views less than
    ``VIEWS_EVERY_S`` ago or is refreshing them now, and the change stays to refresh at the
    loop's next edge (a cycle that waits or finds nothing to do, the loop's end)."""
    meta = (ctx or click.get_current_context()).meta
    edge: _Edge | None = meta.get(_EDGE)
    if edge is None:
        return
    now = stamp(edge.room)
    if now == edge.stamp:
        return
    from control_room.views.refresh import refresh  # loads the engine: only once a room changed

    path = edge.room.cr / VIEWS_LOCK
    if soon:
        try:
            if time.time() - os.stat(path).st_mtime < VIEWS_EVERY_S:
                return
        except OSError:
            pass
        fd = lock.take(path)
        if fd is None:  # another process refreshes them now
            return
    else:
        fd = lock.open_lock_file(path)
        lock.hold(fd, path)
    try:
        now = stamp(edge.room)  # what the refresh below is made from, at least
        refresh(edge.room)
        edge.stamp = now
        with contextlib.suppress(OSError):
            os.utime(fd)  # when the views were last refreshed, for the loops that pace theirs
    finally:
        os.close(fd)


VIEWS_LOCK = ".views.lock"


def notify_people(ctx: click.Context | None = None) -> None:
    """The edge, after the views: CONTROL.md ``notify:`` is told what a person must hear of
    (dispatch/person/notify.py). Without ``notify`` this reads CONTROL.md's text and nothing else; a
    broken CONTROL.md notifies nobody (the command says what is wrong itself)."""
    meta = (ctx or click.get_current_context()).meta
    edge: _Edge | None = meta.get(_EDGE)
    if edge is None:
        return
    from control_room.room import settings as settings_file  # loaded by most commands already

    if not settings_file.mentions(edge.room, "notify"):
        return
    try:
        settings = settings_file.load(edge.room)
    except ControlRoomError:
        return
    from control_room.dispatch.person import notify  # the ledger checkpoint and subprocess: only with notify

    ledger_then = edge.first[0][1] if edge.first[0] else 0  # the ledger's size when it began
    notify.flush(edge.room, settings, since=ledger_then)


def fold_behind() -> None:
    """The edge, last: a command that read only a big ledger's recent lines (``ledger.follow``)
    starts the fold of its older history in the background (views/catch_up.py)."""
    import sys  # loaded already; the follow module only if a fold ran in this command

    follow = sys.modules.get("control_room.ledger.follow")
    if follow is None or not follow.BEHIND:
        return
    from control_room.views import catch_up  # the views' folds: only on a big ledger's first days

    for cache_dir, names in sorted(follow.BEHIND.items()):
        catch_up.start(cache_dir, names)
    follow.BEHIND.clear()


def echo_json(data: Any) -> None:
    import json  # ~2 ms: only for --json

    echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))
