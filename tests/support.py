"""Plain helpers shared by several test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

from control_room import errors
from control_room.dispatch.queue import listing
from control_room.ledger import append
from control_room.ledger.events import Event
from control_room.ledger.line import GENESIS, HEADER, PREAMBLE, Entry, parse, render
from control_room.ledger.read import last_hash
from control_room.room.layout import STATES, Room

FAKES = Path(__file__).resolve().parent / "fakes"  # the fake agent CLIs and helper programs
PY = sys.executable

VALID_TASK: dict[str, Any] = {
    "objective": "make parse() twice as fast",
    "falsifier": "no gain over three runs",
    "validator": "python bench.py --check",
    "max_cost_usd": 1,
    "wall_clock_s": 600,
    "kill_condition": "two rounds without gain",
    "command": "python bench.py",
}


def task(task_id: str, **fields: Any) -> dict[str, Any]:
    """A valid task with this id (fields override)."""
    return {"id": task_id, **VALID_TASK, **fields}


def drop(room: Room, name: str, content: str | bytes | dict[str, Any]) -> Path:
    """Drop a file into swarm/queue/ by hand, as a person or a script would."""
    path = room.state_dir("queue") / name
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def written(room: Room, state: str, t: dict[str, Any]) -> Path:
    """Write task ``t`` into swarm/<state>/ as control-room writes it (``swarm.dumps``: its
    dispatcher fields sealed), unlike ``drop``, which writes what a person would."""
    from control_room.room import swarm  # as the package's writers do

    path = room.state_dir(state) / f"{t['id']}.json"
    path.write_text(swarm.dumps(t))
    return path


def sealed(t: dict[str, Any]) -> dict[str, Any]:
    """``t`` with the seal control-room writes beside its dispatcher fields (``tasks.seal``)."""
    from control_room.room import tasks  # as above

    seal = tasks.seal(t)
    return {**t, "seal": seal} if seal else dict(t)


def unsealed(t: dict[str, Any]) -> dict[str, Any]:
    """A task file's fields without its seal, once the seal is checked: control-room wrote
    them (or the file has none of the fields the seal covers)."""
    from control_room.room import tasks  # as above

    assert tasks.sealed(t), f"task {t.get('id')}: its seal does not match its fields"
    return {k: v for k, v in t.items() if k != "seal"}


def data_lines(ledger: Path) -> list[str]:
    """The ledger's data lines (after the header and the separator)."""
    lines = ledger.read_text(encoding="utf-8").split("\n")
    body = lines[lines.index(HEADER) + 2 :]
    return body[:-1] if body and body[-1] == "" else body


def events(ledger: Path) -> list[str]:
    """The event column of every data line."""
    from control_room.ledger.line import parse

    out = []
    for line in data_lines(ledger):
        entry = parse(line)
        assert entry is not None, line
        out.append(entry.event)
    return out


def no_room_error(where: Path) -> str:
    """The exact stderr of a room command run in ``where``, outside any room."""
    return (
        f"Error: not inside a control room ({where} and its parents have no control-room/ "
        "folder); run `control-room init` or pass --room DIR\n"
    )


ADD_ARGS = [
    "--objective", "make parse() twice as fast",
    "--falsifier", "no gain over three runs",
    "--validator", "python bench.py --check",
    "--max-cost", "1",
    "--wall-clock", "10m",
    "--kill-condition", "two rounds without gain",
    "--command", "python bench.py",
]  # fmt: skip


def probe_task(task_id: str, **fields: Any) -> dict[str, Any]:
    """A task the probe adapter runs at once and that passes (fields override)."""
    py = sys.executable
    task = {"id": task_id, "objective": f"objective of {task_id}", "falsifier": "it fails",
            "validator": [py, "-c", "pass"], "max_cost_usd": 0.1, "wall_clock_s": 60,
            "kill_condition": "two failed rounds", "adapter": "probe",
            "command": [py, "-c", "print('did the work')"], **fields}  # fmt: skip
    return {k: v for k, v in task.items() if v is not None}


def queue(room: Room, task_id: str, **fields: Any) -> Path:
    """Drop a probe task into swarm/queue/ by hand; a field given as None is left out."""
    path = room.state_dir("queue") / f"{task_id}.json"
    path.write_text(json.dumps(probe_task(task_id, **fields)))
    return path


def where(room: Room, task_id: str) -> list[str]:
    """Every state folder holding this task (exactly one, if nothing was lost or doubled)."""
    return [s for s in STATES if (room.state_dir(s) / f"{task_id}.json").exists()]


def task_json(room: Room, state: str, task_id: str) -> dict[str, Any]:
    return json.loads((room.state_dir(state) / f"{task_id}.json").read_text())


def ev(name: str) -> Event:
    """A ledger event for tests of the ledger itself: any name, any outcome."""
    return Event(name, (), ("task", "route", "adapter", "cost_usd", "detail"), "written by a test")


# the ledger's own tests (an empty ledger file is the ``ledger`` fixture in conftest.py) ---------

LEDGER_HEAD = PREAMBLE.count("\n")  # the separator's line number: data line k is on line LEDGER_HEAD + k


def lineno(k: int) -> int:
    """The file line number of the k-th data line (1-based k)."""
    return LEDGER_HEAD + k


def rewrite(path: Path, lines: list[str]) -> None:
    """Replace the data lines of the ledger at ``path``."""
    path.write_text(PREAMBLE + "".join(f"{ln}\n" for ln in lines), encoding="utf-8")


def five_lines(ledger: Path) -> list[str]:
    """Append five lines (details ``detail-0`` to ``detail-4``); the ledger's data lines."""
    for k in range(5):
        append(ledger, ev("e"), detail=f"detail-{k}")
    return data_lines(ledger)


# tasks and settings of a room at work ---------------------------------------------------------


def drop_task(room: Room, t: dict[str, Any]) -> None:
    """Drop this task into swarm/queue/ by hand as <id>.json (``drop`` takes any file name and content)."""
    (room.state_dir("queue") / f"{t['id']}.json").write_text(json.dumps(t))


def set_gate(room: Room, key: str, value: str) -> None:
    """Set one key of CONTROL.md's front matter by rewriting its line."""
    lines = room.control.read_text().splitlines(keepends=True)
    lines = [f"{key}: {value}\n" if ln.startswith(f"{key}:") else ln for ln in lines]
    room.control.write_text("".join(lines))


def order(room: Room) -> list[str]:
    """The queue's task ids in the order cycles would run them."""
    return [t.id for t in listing.run_order(room)]


# What CLI tests share --------------------------------------------------------------------

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"  # a ledger or task timestamp
FAIL = [sys.executable, "-c", "import sys; print('took 40 ms'); sys.exit(1)"]  # the same failure every time
BROKEN_TOMB = "---\nstate: [killed\n---\nbody\n"  # a tombstone whose YAML is broken on line 2


def ok(result: Result, stdout: str) -> None:
    """The command succeeded, said nothing on stderr, and printed exactly ``stdout``."""
    assert (result.exit_code, result.stderr, result.stdout) == (0, "", stdout)


def error(result: Result, code: int, message: str) -> None:
    """The command exited ``code`` with exactly one line ``Error: message`` on stderr."""
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", f"Error: {message}\n")


def snapshot(root: Path) -> dict[Path, bytes]:
    """Every file under ``root`` and its bytes."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def entries(room: Room, event: str) -> list[Entry]:
    """The ledger's entries of one event, oldest first."""
    found = [parse(ln) for ln in data_lines(room.ledger)]
    return [e for e in found if e is not None and e.event == event]


def tomb(room: Room, route: str) -> Path:
    return room.root / "graveyard" / f"{route}.md"


def hold(run: Callable[..., Result], room: Room, route: str) -> None:
    """Three identical failures on ``route``, one task a cycle: a death loop holds it (the
    no-progress breaker, which the same three would trip too, is set out of the way)."""
    set_gate(room, "max_rounds", "1")
    set_gate(room, "max_identical_failures", "9")
    for n in (1, 2, 3):
        queue(room, f"{route}-{n}", route=route, validator=FAIL)
        result = run("cycle")
        assert (result.exit_code, result.stdout) == (
            errors.FAILED,
            f"failed: {route}-{n} (validator exited 1: took 40 ms); parked for a person (swarm/parked/)\n",
        )


def dead(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` is gone (or a zombie) within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _state(pid) == "Z":
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``, from /proc."""
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":  # fields: state, ppid, pgrp, ...
            alive.append(int(name))
    return alive


def wait_for(path: Path, within: float = 30.0) -> None:
    end = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def verify_ok(cr: Callable[..., Any]) -> None:
    done = cr("ledger", "verify")
    assert done.returncode == 0, done.stderr


def refuse_new_files(monkeypatch: Any, folder: Path) -> None:
    """Creating a file in ``folder`` fails as on a read-only disk (EROFS, as ``os.open``
    raises it), whatever the file: a target, a temp file, a lock file."""
    real = os.open

    def fake(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        name = os.fsdecode(path)
        if flags & os.O_CREAT and Path(name).parent == folder:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), name)
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake)


# the views and status agree ----------------------------------------------------------------


def auto_lines(context_text: str) -> list[str]:
    """The lines between the auto block's markers of CURRENT_CONTEXT.md."""
    from control_room.store.markdown import AUTO_BEGIN, AUTO_END

    lines = context_text.split("\n")
    return lines[lines.index(AUTO_BEGIN) + 1 : lines.index(AUTO_END)]


def assert_views_agree(room: Room, status: dict[str, Any]) -> None:
    """CURRENT_CONTEXT.md's auto block and DIGEST.md say exactly what ``status --json`` says:
    task counts, STOP, warnings, findings, the latest events; DIGEST.md counts every line."""
    import re

    from control_room.views.status import format_entry

    block = auto_lines(room.context.read_text())
    tasks = next(ln for ln in block if ln.startswith("- tasks: "))[len("- tasks: ") :]
    counts = {k: int(v) for k, v in (part.split(" ") for part in tasks.split(", "))}
    # passed/ and to-test/ are left out of the views while they hold nothing
    shown = {k: v for k, v in status["tasks"].items() if v or k not in ("passed", "to-test")}
    assert counts == shown, (counts, status["tasks"])
    stop = next(ln for ln in block if ln.startswith("- STOP: "))
    halts = f"YES, every cycle halts: {status['stop']}"
    assert stop == "- STOP: " + ("no" if status["stop"] is None else halts)
    assert [ln[len("- WARNING: ") :] for ln in block if ln.startswith("- WARNING: ")] == status["warnings"]
    assert f"- findings: {status['findings']}" in block
    events = block[block.index("- latest ledger events:") + 1 :]
    assert events == ([f"  - {format_entry(e)}" for e in status["last"]] or ["  - (none)"])
    found = re.search(r"from the ledger \(([\d,]+) lines?, ", room.digest.read_text())
    assert found is not None
    assert int(found.group(1).replace(",", "")) == status["ledger_lines"] == len(data_lines(room.ledger))


# Real git repositories for the worktree, merge-queue and review tests -------------------------


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``, checked; its stdout, stripped."""
    import subprocess

    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository at ``path`` with one commit ("first") of ``files`` on `main`, and an
    identity of its own (the machine may have none)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    for name, text in (files or {"README": "hello\n"}).items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def passed_on_branch(room: Room, task_id: str, files: dict[str, str], **fields: Any) -> Path:
    """``task_id`` (a probe task; fields override) as a passing cycle leaves it when CONTROL.md
    names a repo: its worktree made by the library, ``files`` written there and committed by the
    dispatcher, the task file in swarm/passed/. Returns the worktree."""
    from control_room.dispatch.worktrees import worktree
    from control_room.room import settings as settings_file
    from control_room.timeutil import now_iso

    t = probe_task(task_id, **{"passed_at": now_iso(), **fields})
    wt = worktree.workdir(room, settings_file.load(room), t)
    for name, text in files.items():
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
    worktree.commit(wt, f"{task_id}: {t['objective']}", "tester")
    (room.state_dir("passed") / f"{task_id}.json").write_text(json.dumps(t))
    return wt


def recount_agrees(cr: Callable[..., Any]) -> None:
    """`route recount` (through the installed command) finds ROUTES.md as the cycles left it:
    it computes from the ledger exactly what ``record_run`` wrote, run by run."""
    done = cr("route", "recount")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "ROUTES.md already agrees with the ledger\n",
        "",
    )


def many_lines(ledger: Path, n: int, *, days: int = 3, writer: str = "old", cost: str = "0.01") -> None:
    """Append ``n`` chained ``result`` lines of ``writer`` to ``ledger`` at once (not through
    ``append``: thousands a second), spread over the last ``days`` days in time order, today's last."""
    with open(ledger, "rb") as f:
        prev = last_hash(f.fileno(), os.fstat(f.fileno()).st_size, writer) or GENESIS
    now = time.time()
    out = []
    for i in range(n):
        day = days - 1 - (i * days) // n
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - day * 86400))
        outcome = "pass" if i % 3 == 0 else "fail"
        entry = Entry(when, f"{i:016x}", writer, "result", f"t-{i % 50}", f"route-{i % 5}", "probe",
                      outcome, cost, f"round 1; decision: lever {i}", prev)  # fmt: skip
        line, prev = render(entry)
        out.append(line + "\n")
    with open(ledger, "a", encoding="utf-8") as f:
        f.write("".join(out))
