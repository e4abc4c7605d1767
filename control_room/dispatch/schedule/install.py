"""Installing a room's schedule entry, removing exactly that, and saying what is installed.

- cron: a block between ``# control-room <room> begin`` and ``... end`` in the user's crontab,
  read with ``crontab -l`` and written back whole with ``crontab -``; every other line is kept,
  and installing again replaces the block where it stands.
- launchd: ``~/Library/LaunchAgents/<label>.plist``, loaded with ``launchctl load -w`` where
  launchctl exists.
- systemd: ``~/.config/systemd/user/<name>.service`` and ``.timer`` (``$XDG_CONFIG_HOME`` when
  set), enabled with ``systemctl --user`` where a user systemd answers.

Where a scheduler's own program is missing or not running, the files are written and the
commands to run are said. Each install and uninstall writes a ledger line. Home-relative paths
follow ``$HOME``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NamedTuple

from control_room import ledger
from control_room.dispatch.schedule import entries as sched
from control_room.errors import IO_ERROR, ConflictError, ControlRoomError, NotFoundError
from control_room.ledger import events, read
from control_room.ledger.line import HEADER, Entry, parse
from control_room.room.layout import Room
from control_room.store.files import atomic_write, read_optional

KINDS = ("cron", "launchd", "systemd")
# What only a cycle writes: its last one says when a cycle last ran (one with nothing to do
# writes no line; its log line says it).
CYCLE_EVENTS = frozenset(
    e.name
    for e in (
        events.CLAIM, events.RESULT, events.RECOVER, events.REQUEUE, events.INTERRUPTED, events.STOPPED,
        events.ADAPTER_MISSING, events.BUDGET_HOLD, events.ROUTE_HELD, events.ORCHESTRATE_HELD,
        events.ORCHESTRATE_REFUSED,
    )
)  # fmt: skip
SYSTEMD_ANSWERS = ("running", "degraded", "starting", "initializing", "maintenance")


class Installed(NamedTuple):
    """One installed entry of a room: which scheduler, where it is, how often, how many."""

    kind: str
    where: str
    every: str
    parallel: int


def _call(argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    """A scheduler's own short command, output captured: (exit code, stdout, stderr)."""
    # subprocess costs ~5 ms: only when a schedule is installed, removed or looked at
    from control_room import proc

    return proc.call(argv, cwd=Path.home(), timeout_s=60.0, input_text=stdin)


def _failed(argv: list[str], err: str) -> ControlRoomError:
    said = err.strip().splitlines()
    return ControlRoomError(
        f"`{' '.join([Path(argv[0]).name, *argv[1:]])}` failed: {said[-1] if said else 'no message'}",
        exit_code=IO_ERROR,
    )


def _ledger(room: Room, event: events.Event, detail: str) -> None:
    ledger.append(room.ledger, event, detail=detail)


# cron -----------------------------------------------------------------------------------


def _crontab() -> str:
    found = shutil.which("crontab")
    if found is None:
        raise NotFoundError(
            "crontab is not on PATH: install cron (Debian: apt-get install cron), or print the entry "
            "with `control-room schedule --cron` and add it by hand"
        )
    return found


def has_crontab() -> bool:
    return shutil.which("crontab") is not None


def crontab_user() -> str:
    import pwd  # only for naming whose crontab

    return pwd.getpwuid(os.getuid()).pw_name


def read_crontab() -> str:
    """The user's crontab (``crontab -l``); an absent crontab is empty."""
    argv = [_crontab(), "-l"]
    code, out, err = _call(argv)
    if code == 0:
        return out
    if "no crontab for" in err:
        return ""
    raise _failed(argv, err)


def _write_crontab(text: str) -> None:
    argv = [_crontab(), "-"]
    code, _, err = _call(argv, text)
    if code != 0:
        raise _failed(argv, err)


def _split_block(room: Room, text: str) -> tuple[list[str], list[str], list[str]] | None:
    """(lines before, the room's block, lines after), or None when there is no block."""
    lines = text.splitlines()
    begin, end = sched.cron_begin(room), sched.cron_end(room)
    if begin not in lines:
        return None
    i = lines.index(begin)
    if end not in lines[i:]:
        raise ConflictError(f"the crontab has `{begin}` without its `{end}` line: mend it with `crontab -e`")
    j = lines.index(end, i)
    return lines[:i], lines[i : j + 1], lines[j + 1 :]


def _joined(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def install_cron(room: Room, seconds: float, parallel: int) -> list[str]:
    block = sched.cron_block(room, seconds, parallel)
    current = read_crontab()
    parts = _split_block(room, current)
    if parts is None:
        new = _joined(current.splitlines()) + block
    else:
        new = _joined(parts[0]) + block + _joined(parts[2])
    _write_crontab(new)
    where = f"crontab of {crontab_user()}"
    what = f"cron: {where}, every {sched.every_text(seconds)}, {sched.per_firing(parallel)}"
    _ledger(room, events.SCHEDULE_INSTALL, what)
    return [f"{'replaced' if parts else 'installed'} {what}"]


def uninstall_cron(room: Room) -> list[str]:
    parts = _split_block(room, read_crontab())
    where = f"crontab of {crontab_user()}"
    if parts is None:
        raise NotFoundError(
            f"no cron entry of {room.root} is installed: the {where} has no `{sched.cron_begin(room)}` block"
        )
    _write_crontab(_joined(parts[0] + parts[2]))
    _ledger(room, events.SCHEDULE_UNINSTALL, f"cron: {where}")
    return [f"removed cron: the block of {room.root} from the {where} ({len(parts[1])} lines)"]


def cron_installed(room: Room) -> Installed | None:
    if not has_crontab():
        return None
    parts = _split_block(room, read_crontab())
    if parts is None:
        return None
    about = next((m for line in parts[1] if (m := sched.CRON_ABOUT.match(line))), None)
    every, parallel = (about.group(1), int(about.group(2))) if about else ("?", 1)
    return Installed("cron", f"crontab of {crontab_user()}", every, parallel)


# launchd --------------------------------------------------------------------------------


def plist_path(room: Room) -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{sched.launchd_label(room)}.plist"


def install_launchd(room: Room, seconds: float, parallel: int) -> list[str]:
    data = sched.launchd_plist(room, seconds, parallel)
    path = plist_path(room)
    existed = path.exists()
    launchctl = shutil.which("launchctl")
    if existed and launchctl:
        _call([launchctl, "unload", str(path)])  # the old one, if loaded; not loaded is fine
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    what = f"launchd: {path}, every {sched.every_text(seconds)}, {sched.per_firing(parallel)}"
    _ledger(room, events.SCHEDULE_INSTALL, what)
    out = [f"{'replaced' if existed else 'installed'} {what}"]
    if launchctl is None:
        return [
            *out,
            f"launchctl is not on PATH (launchd is macOS's): to load it there, run: launchctl load -w {path}",
        ]
    argv = [launchctl, "load", "-w", str(path)]
    code, _, err = _call(argv)
    if code != 0:
        raise _failed(argv, err)
    return [*out, f"loaded: launchctl load -w {path}"]


def uninstall_launchd(room: Room) -> list[str]:
    path = plist_path(room)
    if not path.exists():
        raise NotFoundError(f"no launchd entry of {room.root} is installed: {path} does not exist")
    launchctl = shutil.which("launchctl")
    out = []
    if launchctl:
        _call([launchctl, "unload", "-w", str(path)])  # not loaded is fine: the file goes anyway
        out.append(f"unloaded: launchctl unload -w {path}")
    path.unlink()
    _ledger(room, events.SCHEDULE_UNINSTALL, f"launchd: {path}")
    return [f"removed launchd: {path}", *out]


def launchd_installed(room: Room) -> Installed | None:
    import plistlib  # only when a launchd entry is looked at

    path = plist_path(room)
    if not path.exists():
        return None
    try:
        plist = plistlib.loads(path.read_bytes())
        every = sched.every_text(float(plist["StartInterval"]))
        parallel = sched.parallel_of([str(a) for a in plist["ProgramArguments"]])
    except Exception:  # a plist edited by hand: still there, its values unknown
        every, parallel = "?", 1
    return Installed("launchd", str(path), every, parallel)


# systemd --------------------------------------------------------------------------------


def unit_dir() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def unit_paths(room: Room) -> tuple[Path, Path]:
    stem = unit_dir() / sched.unit_name(room)
    return stem.with_name(stem.name + ".service"), stem.with_name(stem.name + ".timer")


def user_systemd() -> tuple[str | None, str]:
    """(systemctl's path when a user systemd answers here, else None; what it said)."""
    systemctl = shutil.which("systemctl")
    if systemctl is None:
        return None, "systemctl is not on PATH"
    _, out, err = _call([systemctl, "--user", "is-system-running"])
    state = (out.strip() or err.strip() or "no answer").splitlines()[0]
    return (systemctl if state in SYSTEMD_ANSWERS else None), f"systemctl --user is-system-running: {state}"


def install_systemd(room: Room, seconds: float, parallel: int) -> list[str]:
    timer_text = sched.systemd_timer(room, seconds, parallel)
    service, timer = unit_paths(room)
    existed = timer.exists() or service.exists()
    service.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(service, sched.systemd_service(room, parallel))
    atomic_write(timer, timer_text)
    what = f"systemd: {timer}, every {sched.every_text(seconds)}, {sched.per_firing(parallel)}"
    _ledger(room, events.SCHEDULE_INSTALL, what)
    out = [f"{'replaced' if existed else 'installed'} {what}", f"  and {service}"]
    systemctl, said = user_systemd()
    if systemctl is None:
        return [
            *out,
            f"no user systemd answers here ({said}); to start the timer where one runs:",
            "  systemctl --user daemon-reload",
            f"  systemctl --user enable --now {timer.name}",
        ]
    for argv in (
        [systemctl, "--user", "daemon-reload"],
        [systemctl, "--user", "enable", "--now", timer.name],
    ):
        code, _, err = _call(argv)
        if code != 0:
            raise _failed(argv, err)
    return [*out, f"started: systemctl --user enable --now {timer.name}"]


def uninstall_systemd(room: Room) -> list[str]:
    service, timer = unit_paths(room)
    if not (service.exists() or timer.exists()):
        raise NotFoundError(f"no systemd entry of {room.root} is installed: {timer} does not exist")
    systemctl, said = user_systemd()
    out = []
    if systemctl is not None:
        argv = [systemctl, "--user", "disable", "--now", timer.name]
        code, _, err = _call(argv)
        if code != 0:
            raise _failed(argv, err)
        out.append(f"stopped: systemctl --user disable --now {timer.name}")
    for path in (timer, service):
        path.unlink(missing_ok=True)
    if systemctl is not None:
        _call([systemctl, "--user", "daemon-reload"])
    else:
        out.append(f"no user systemd answers here ({said}): nothing to stop")
    _ledger(room, events.SCHEDULE_UNINSTALL, f"systemd: {timer} and {service.name}")
    return [f"removed systemd: {timer} and {service.name}", *out]


def systemd_installed(room: Room) -> Installed | None:
    _, timer = unit_paths(room)
    text = read_optional(timer)
    if text is None:
        return None
    about = sched.SYSTEMD_ABOUT.match(text)
    every, parallel = (about.group(1), int(about.group(2))) if about else ("?", 1)
    return Installed("systemd", str(timer), every, parallel)


# all kinds ------------------------------------------------------------------------------

INSTALL = {"cron": install_cron, "launchd": install_launchd, "systemd": install_systemd}
UNINSTALL = {"cron": uninstall_cron, "launchd": uninstall_launchd, "systemd": uninstall_systemd}
FIND = {"cron": cron_installed, "launchd": launchd_installed, "systemd": systemd_installed}


def install(room: Room, kind: str, seconds: float, parallel: int) -> list[str]:
    """Install ``kind``'s entry for ``room`` (replacing this room's own, if any); what was done."""
    sched.check_safe(room)  # before anything is written (a unit's folder, a crontab)
    sched.check_parallel(room, parallel)
    return INSTALL[kind](room, seconds, parallel)


def uninstall(room: Room, kind: str) -> list[str]:
    """Remove exactly what ``install`` put there for ``room``; what was done."""
    return UNINSTALL[kind](room)


def installed(room: Room) -> list[Installed]:
    """Every entry installed for ``room``, in the order of KINDS (cron only where crontab is)."""
    return [found for kind in KINDS if (found := FIND[kind](room)) is not None]


def last_cycle(room: Room) -> Entry | None:
    """The ledger's last line written by a cycle, read backwards from the end."""
    for line in read.backward(room.ledger):
        if line == HEADER:
            return None
        entry = parse(line)
        if entry is not None and (
            entry.event in CYCLE_EVENTS or events.canonical(entry.event).endswith("-approval-needed")
        ):
            return entry
    return None


def last_fired(room: Room) -> str | None:
    """When a cycle last ran, as the ledger says (its time, ``2026-01-31T12:00:00Z``), or None."""
    entry = last_cycle(room)
    return entry.time if entry else None


def last_log_line(room: Room) -> str | None:
    """The last line of the room's cycle.log, if it has one (read from the end)."""
    return next((line for line in read.backward(sched.log_path(room)) if line), None)
