"""Schedule entries for cron and launchd that fire one cycle each time.

Entries use absolute paths (the command, the room, the log) and carry the current PATH (each
folder once, in its first place), since schedulers start with an almost empty environment and
agent CLIs live on PATH. Entries cannot
overlap themselves in any harmful way: a cycle that finds every slot taken exits ``busy``
without changing anything.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

from control_room.errors import InvalidError
from control_room.room.layout import Room

LOG_NAME = "cycle.log"


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


def cron_spec(seconds: float) -> str:
    minutes = int(seconds // 60)
    if seconds % 60 or minutes < 1:
        raise InvalidError("cron fires at most once a minute: use whole minutes (--every 30m)")
    if minutes < 60 and 60 % minutes == 0:
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    if minutes % 60 == 0 and 24 % (minutes // 60) == 0:
        hours = minutes // 60
        return {1: "0 * * * *", 24: "0 0 * * *"}.get(hours, f"0 */{hours} * * *")
    raise InvalidError(
        f"cron cannot fire every {minutes} minutes evenly: pick a divisor of 60 "
        "minutes or of 24 hours (5m, 10m, 15m, 20m, 30m, 1h, 2h, ...)"
    )


def cron_entry(room: Room, seconds: float) -> str:
    argv = [*command_argv(), "--room", str(room.root), "cycle"]
    command = (
        f"cd {shlex.quote(str(room.root))} && PATH={shlex.quote(search_path())} "
        f"{shlex.join(argv)} >> {shlex.quote(str(log_path(room)))} 2>&1"
    )
    # cron turns an unescaped % into a newline (crontab(5)); \% reaches the shell as %.
    escaped = command.replace("%", "\\%")
    return f"# control-room: one cycle of {room.root}\n{cron_spec(seconds)} {escaped}\n"


def launchd_label(room: Room) -> str:
    import hashlib  # ~3 ms: only for a launchd entry

    slug = re.sub(r"[^a-z0-9]+", "-", room.root.name.lower()).strip("-") or "room"
    return f"dev.control-room.{slug}.{hashlib.sha1(str(room.root).encode()).hexdigest()[:8]}"


def launchd_plist(room: Room, seconds: float) -> bytes:
    import plistlib  # ~10 ms (xml.parsers.expat): only for a launchd entry, never in a cycle

    if seconds < 1:
        raise InvalidError("launchd needs an interval of at least 1 second")
    plist = {
        "Label": launchd_label(room),
        "ProgramArguments": [*command_argv(), "--room", str(room.root), "cycle"],
        "WorkingDirectory": str(room.root),
        "StartInterval": int(seconds),
        "RunAtLoad": False,
        "EnvironmentVariables": {"PATH": search_path()},
        "StandardOutPath": str(log_path(room)),
        "StandardErrorPath": str(log_path(room)),
    }
    return plistlib.dumps(plist)
