"""Schedule entries for cron, launchd and systemd that fire cycles of one room.

Entries use absolute paths (the command, the room, the log) and carry the current PATH (each
folder once, in its first place), since schedulers start with an almost empty environment and
agent CLIs live on PATH. Each firing starts ``parallel`` cycles (one unless asked), each
``control-room --room ROOM cycle --log LOG``: the log gets each line after its UTC time. Entries
cannot overlap themselves in any harmful way: a cycle that finds every slot taken exits
``busy`` without changing anything, so at most ``max_parallel`` cycles ever run.

This module renders entries; ``dispatch/schedule/install.py`` installs, removes and finds them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from control_room.errors import InvalidError
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.text import escaped, has_control

LOG_NAME = "cycle.log"
STDERR_NAME = "cycle.stderr.log"  # launchd's StandardErrorPath (cron mails stderr; systemd journals it)
SHELL = "/bin/sh"


def command_argv() -> list[str]:
    """How to start control-room from a scheduler: the console script, else ``python -m``."""
    found = shutil.which("control-room")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "control_room"]


def search_path() -> str:
    """The current PATH with each folder kept once, where it first appears (a shell that
    sources its profile twice repeats entries; the entry would carry the repeats)."""
    seen: dict[str, None] = {}
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if folder:
            seen.setdefault(folder, None)
    return os.pathsep.join(seen)


def log_path(room: Room) -> Path:
    return room.cr / LOG_NAME


def check_safe(room: Room) -> None:
    """Refuse a room whose path, or the command or PATH an entry would carry, holds a control
    character: a line break there would end the crontab line (the rest a line of its own, run by
    cron) or the systemd setting (the rest a directive of its own). Nothing is written first."""
    for what, value in (
        ("the room's path", str(room.root)),
        ("control-room's own path", " ".join(command_argv())),
        ("PATH", search_path()),
    ):
        if has_control(value):
            raise InvalidError(
                f"{what} '{escaped(value)}' holds a control character (a line break, a tab, ...): a "
                "schedule entry cannot carry it safely; move the room (or fix PATH) and run again"
            )


def cycle_argv(room: Room) -> list[str]:
    """One cycle of ``room``, its lines appended with their time to the room's log; refused
    (``check_safe``) when a path in it holds a control character."""
    check_safe(room)
    return [*command_argv(), "--room", str(room.root), "cycle", "--log", str(log_path(room))]


def check_parallel(room: Room, parallel: int) -> None:
    """``parallel`` cycles per firing must fit in the room's slots (CONTROL.md max_parallel)."""
    slots = settings_file.load(room).max_parallel
    if parallel > slots:
        raise InvalidError(
            f"--parallel {parallel}: max_parallel is {slots} in {room.control}, and cycles past the "
            f"slots would only exit busy; ask for at most {slots}, or raise max_parallel"
        )


def every_text(seconds: float) -> str:
    """A period as ``--every`` takes it: ``30m``, ``2h``, ``90s``."""
    s = int(seconds)
    if s % 3600 == 0:
        return f"{s // 3600}h"
    return f"{s // 60}m" if s % 60 == 0 else f"{s}s"


def per_firing(parallel: int) -> str:
    return f"{parallel} cycle{'' if parallel == 1 else 's'} per firing"


def _shell_cycles(room: Room, parallel: int) -> str:
    """``parallel`` cycles started at once by a shell, which waits for them all."""
    one = shlex.join(cycle_argv(room))
    return " & ".join([one] * parallel) + " & wait"


def _calendar_step(seconds: float) -> tuple[str, int] | None:
    """The period as a step of one clock field (``("m", 30)``), when it divides the next field
    evenly, so firings fall at the same times every day; else None."""
    s = int(seconds)
    if s != seconds or s < 1:
        return None
    if s < 60:
        return ("s", s) if 60 % s == 0 else None
    if s % 60 == 0 and s < 3600:
        return ("m", s // 60) if 3600 % s == 0 else None
    if s % 3600 == 0 and 86400 % s == 0:
        return ("h", s // 3600)
    return None


# cron -----------------------------------------------------------------------------------


def cron_spec(seconds: float) -> str:
    minutes = int(seconds // 60)
    if seconds % 60 or minutes < 1:
        raise InvalidError("cron fires at most once a minute: use whole minutes (--every 30m)")
    step = _calendar_step(seconds)
    if step is None:
        raise InvalidError(
            f"cron cannot fire every {minutes} minutes evenly: pick a divisor of 60 "
            "minutes or of 24 hours (5m, 10m, 15m, 20m, 30m, 1h, 2h, ...)"
        )
    unit, n = step
    if unit == "m":
        return "* * * * *" if n == 1 else f"*/{n} * * * *"
    return {1: "0 * * * *", 24: "0 0 * * *"}.get(n, f"0 */{n} * * *")


def cron_begin(room: Room) -> str:
    return f"# control-room {room.root} begin"


def cron_end(room: Room) -> str:
    return f"# control-room {room.root} end"


CRON_ABOUT = re.compile(r"^# every (\S+), (\d+) cycles? per firing")


def cron_line(room: Room, seconds: float, parallel: int = 1) -> str:
    """The crontab line: its fields, then a command for sh. What a cycle says goes to the log
    through ``cycle --log``, each line after its time (an error too); stderr (the same error
    again, or a traceback) is left to cron, which mails it: a person hears of what went wrong."""
    q = shlex.quote
    root, path = q(str(room.root)), q(search_path())
    if parallel == 1:
        command = f"cd {root} && PATH={path} {shlex.join(cycle_argv(room))}"
    else:
        command = f"cd {root} && export PATH={path} && {{ {_shell_cycles(room, parallel)}; }}"
    # cron turns an unescaped % into a newline (crontab(5)); \% reaches the shell as %.
    return f"{cron_spec(seconds)} {command.replace('%', chr(92) + '%')}"


def cron_block(room: Room, seconds: float, parallel: int = 1) -> str:
    """What `--install` puts in the crontab, between markers naming the room (and what is
    printed without it): removed whole by `--uninstall`."""
    line = cron_line(room, seconds, parallel)  # first: refuses a period cron cannot fire
    remove = "`control-room schedule --cron --uninstall` removes this block"
    about = f"# every {every_text(seconds)}, {per_firing(parallel)}; {remove}"
    return f"{cron_begin(room)}\n{about}\n{line}\n{cron_end(room)}\n"


# launchd --------------------------------------------------------------------------------


def _slug_hash(room: Room) -> str:
    """The room folder's name and 8 hex digits of its path's hash: stable per room, never shared."""
    import hashlib  # ~3 ms: only for a launchd or systemd entry

    slug = re.sub(r"[^a-z0-9]+", "-", room.root.name.lower()).strip("-") or "room"
    return f"{slug}.{hashlib.sha1(str(room.root).encode()).hexdigest()[:8]}"


def launchd_label(room: Room) -> str:
    return f"dev.control-room.{_slug_hash(room)}"


def program_arguments(room: Room, parallel: int = 1) -> list[str]:
    return cycle_argv(room) if parallel == 1 else [SHELL, "-c", _shell_cycles(room, parallel)]


def launchd_plist(room: Room, seconds: float, parallel: int = 1) -> bytes:
    import plistlib  # ~10 ms (xml.parsers.expat): only for a launchd entry, never in a cycle

    if seconds < 1:
        raise InvalidError("launchd needs an interval of at least 1 second")
    plist = {
        "Label": launchd_label(room),
        "ProgramArguments": program_arguments(room, parallel),
        "WorkingDirectory": str(room.root),
        "StartInterval": int(seconds),
        "RunAtLoad": False,
        "EnvironmentVariables": {"PATH": search_path()},
        "StandardErrorPath": str(room.cr / STDERR_NAME),  # errors, tracebacks: beside the log
    }
    return plistlib.dumps(plist)


def parallel_of(arguments: list[str]) -> int:
    """How many cycles a firing of these ProgramArguments (or ExecStart) starts."""
    return max(1, " ".join(arguments).count(" cycle --log "))


# systemd --------------------------------------------------------------------------------


def unit_name(room: Room) -> str:
    """The stem of the room's two user units: ``control-room-<folder>-<hash8>``."""
    return "control-room-" + _slug_hash(room).replace(".", "-")


def _specifiers(text: str) -> str:
    """systemd expands ``%x`` specifiers in most settings: a literal % is ``%%``."""
    return text.replace("%", "%%")


def _exec_word(word: str) -> str:
    """One word of ExecStart=: quoted when it needs it; ``$`` and ``%`` kept literal."""
    word = _specifiers(word).replace("$", "$$")
    if word and not re.search(r"[\s\"'\\;]", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


SYSTEMD_ABOUT = re.compile(r"^# control-room: every (\S+), (\d+) cycles? per firing")


def systemd_service(room: Room, parallel: int = 1) -> str:
    argv = program_arguments(room, parallel)
    env = _specifiers(f"PATH={search_path()}").replace("\\", "\\\\").replace('"', '\\"')
    return (
        f"# control-room: cycles of {room.root}; `control-room schedule --systemd --uninstall` removes it\n"
        "[Unit]\n"
        f"Description=control-room: {per_firing(parallel)} of {_specifiers(str(room.root))}\n"
        "\n[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={_specifiers(str(room.root))}\n"
        f'Environment="{env}"\n'
        f"ExecStart={' '.join(_exec_word(w) for w in argv)}\n"
    )


def systemd_timer(room: Room, seconds: float, parallel: int = 1) -> str:
    """A calendar timer (``Persistent``: a firing missed while the machine slept comes at
    wake-up) when the period divides a minute, an hour or a day evenly; else a monotonic one
    (from boot, then from each firing's start)."""
    check_safe(room)
    if seconds < 1:
        raise InvalidError("systemd needs an interval of at least 1 second")
    step = _calendar_step(seconds)
    if step is None:
        when = f"OnBootSec={int(seconds)}s\nOnUnitActiveSec={int(seconds)}s\n"
    else:
        unit, n = step
        spec = {"s": f"*-*-* *:*:00/{n}", "m": f"*-*-* *:00/{n}:00", "h": f"*-*-* 00/{n}:00:00"}[unit]
        when = f"OnCalendar={spec}\nPersistent=true\n"
    every = every_text(seconds)
    return (
        f"# control-room: every {every}, {per_firing(parallel)}; for {room.root}\n"
        "[Unit]\n"
        f"Description=control-room: cycles of {_specifiers(str(room.root))} every {every}\n"
        "\n[Timer]\n"
        f"{when}"
        "AccuracySec=1s\n"
        f"Unit={unit_name(room)}.service\n"
        "\n[Install]\n"
        "WantedBy=timers.target\n"
    )
