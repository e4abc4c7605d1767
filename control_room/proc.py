"""The one subprocess wrapper: every child process control-room starts goes through ``run``.

- argv lists only, never a shell; the executable is looked up first, on the child's PATH;
- the child gets its own session (so its own process group): a time-out or STOP kills the
  whole group, children and grandchildren, with SIGTERM then SIGKILL one second later; what
  left the group (``setsid``) is ended too, and a watchdog ends the group should we die first
  (``reaper``);
- stdout and stderr stream to files as they arrive, so a crash leaves what was said, and
  each is capped: past ``cap_bytes`` the rest is read and dropped, and the cut is noted; each
  file is made before the child starts, and a link at its path (an earlier agent's, pointing
  out of the room) is replaced, never followed (``capture``);
- the stdin payload (the prompt) goes in as the pipe takes it, from the same loop that reads
  the output and hears the child's exit (``capture.Pipes``): no thread, and a child that does
  not read its stdin cannot block us.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from control_room import capture, crashpoint, reaper, redact
from control_room.capture import Stream
from control_room.errors import ControlRoomError
from control_room.interrupt import deferred
from control_room.plain import Plain

POLL_S = 0.1
KILL_GRACE_S = 1.0


class ExecutableNotFound(ControlRoomError):
    """The program to run is not installed (not on PATH)."""


class TimedOut(ControlRoomError):
    """A short command of ours (``call``) gave no answer in its time; it was killed."""


class Result(Plain):
    """How a run of ``run`` ended."""

    __slots__ = (
        "argv", "duration_s", "ended", "exit_code", "limit_s", "notes", "stderr", "stdout", "stopped",
        "timed_out",
    )  # fmt: skip

    def __init__(
        self,
        argv: list[str],
        exit_code: int | None,
        duration_s: float,
        stdout: Stream,
        stderr: Stream,
        timed_out: bool = False,
        stopped: bool = False,
        ended: str = "",
        notes: list[str] | None = None,
        limit_s: float | None = None,
    ) -> None:
        self.argv = argv
        self.exit_code = exit_code  # None when we killed it
        self.duration_s = duration_s
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.stopped = stopped  # killed because STOP appeared
        self.ended = ended  # killed because ``watch`` said so, and why (a live spend cap)
        self.notes: list[str] = [] if notes is None else notes
        self.limit_s = limit_s  # the wall clock it ran under

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped and not self.ended


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    """The full path of ``program`` on the PATH the child will see. A program found is
    remembered for that PATH, and looked up again only if it is no longer there (a cycle asks
    three times: the pick, the agent's run, the validator's)."""
    path = (env or os.environ).get("PATH", os.defpath)
    if os.sep in program:
        return program if os.access(program, os.X_OK) and os.path.isfile(program) else None
    found = _FOUND.get((program, path))
    if found is not None and os.access(found, os.X_OK) and os.path.isfile(found):
        return found
    found = _search(program, path)
    if found is not None:
        if len(_FOUND) > 64:
            _FOUND.clear()
        _FOUND[(program, path)] = found
    return found


_FOUND: dict[tuple[str, str], str] = {}  # (program, PATH) -> where ``which`` found it


def _search(program: str, path: str) -> str | None:
    """The first executable file ``program`` in the folders of ``path``, as ``shutil.which``
    finds it on POSIX (an empty entry: the current folder), without loading shutil."""
    seen = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        name = os.path.join(folder, program)
        if os.access(name, os.X_OK) and os.path.exists(name) and not os.path.isdir(name):
            return name
    return None


def run(
    argv: list[str],
    *,
    cwd: Path,
    stdout_path: Path,
    stderr_path: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    cap_bytes: int = 10_000_000,
    stop_file: Path | None = None,
    on_tick: Callable[[float, int], None] | None = None,
    watch: Callable[[], str] | None = None,
) -> Result:
    """Run ``argv`` to completion, time-out or STOP. Raises ExecutableNotFound if missing.
    ``on_tick(seconds elapsed, output bytes)`` is called at each poll while it runs; so is
    ``watch()``, whose answer, when not empty, ends the run (``Result.ended``: why)."""
    if not argv or not argv[0]:
        raise ControlRoomError("empty command")
    exe = which(argv[0], env)
    if exe is None:
        raise ExecutableNotFound(f"{argv[0]}: command not found on PATH")
    out, err = Stream(stdout_path), Stream(stderr_path)
    sinks = [capture.sink(out), capture.sink(err)]
    adopting = reaper.subreaper(True)  # an orphan below us comes to us, not to init
    start = time.monotonic()
    try:  # not under ``deferred``: a child inherits the signal mask, and must get the normal one
        child = subprocess.Popen(
            reaper.watched([exe, *argv[1:]], timeout_s, env),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except BaseException as exc:  # (a run announced to the watchdog is said never started)
        reaper.started(None)
        for fd in sinks:
            if fd is not None:
                os.close(fd)
        if adopting:
            reaper.subreaper(False)
        if isinstance(exc, OSError):
            raise ExecutableNotFound(f"{argv[0]}: cannot start: {exc.strerror or exc}") from None
        raise
    reaper.started(child.pid)  # before anything else: a run loop's watchdog now knows its group
    reaper.spawned.add(child.pid)
    assert child.stdout is not None and child.stderr is not None
    pipes = capture.Pipes(
        [(child.stdout, out, sinks[0]), (child.stderr, err, sinks[1])],
        cap_bytes,
        child.stdin,
        stdin or b"",
        capture.exit_fd(child.pid),
    )
    result = Result(list(argv), None, 0.0, out, err, limit_s=timeout_s)
    deadline = start + timeout_s
    code: int | None
    try:
        crashpoint.hit("agent.started")  # the child runs; nothing written down about it yet
        tick = start + POLL_S
        while (code := child.poll()) is None:
            now = time.monotonic()
            if now >= tick:
                tick = now + POLL_S
                if on_tick is not None:
                    on_tick(now - start, out.bytes_seen + err.bytes_seen)
                if stop_file is not None and os.path.lexists(stop_file):
                    result.stopped = True
                elif now >= deadline:
                    result.timed_out = True
                elif watch is not None:
                    result.ended = watch()
                if result.stopped or result.timed_out or result.ended:
                    # a run past its cap gets no grace: given one, a CLI may send another request
                    _kill_group(child, grace=not result.ended)
                    break
            pipes.wait(tick - now)
    except BaseException:  # Interrupted, or a bug: the child's whole group ends before we go
        with deferred():
            _kill_group(child)
            _end_the_rest(child, adopting)
            pipes.close()
        raise
    strays = _end_the_rest(child, adopting)
    pipes.drain(2.0)
    pipes.close()
    result.exit_code = code
    result.duration_s = time.monotonic() - start
    for name, s in (("stdout", out), ("stderr", err)):
        if s.truncated:
            result.notes.append(f"{name} cut at {s.bytes_kept} bytes of {s.bytes_seen}")
        if s.error:
            result.notes.append(f"{name} could not be saved: {s.error}")
    if result.timed_out:
        result.notes.append(f"killed after the {timeout_s:g}s time limit")
    if result.stopped:
        result.notes.append("killed because STOP appeared")
    if result.ended:
        result.notes.append(f"ended: {result.ended}")
    if strays:
        result.notes.append(f"ended {strays} process(es) it left running outside its group")
    for s in (out, err):
        scrub_file(s.path)
    return result


def scrub_file(path: Path) -> bool:
    """Rewrite a run's file (its capture, once the run ended; a file the CLI wrote; one ``sync``
    is about to commit) with the secrets of our environment replaced (``redact``): the room,
    and whatever ``sync`` pushes of it, never holds them; whether it changed. Nothing to do (no
    read) when no secret is set."""
    if not redact.table():
        return False
    try:  # without blocking, and only a regular file: a FIFO planted there is never waited on
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "r+b") as f, contextlib.suppress(OSError):
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        data = f.read()
        clean = redact.scrub_bytes(data)
        if clean != data:  # ours alone: the run ended
            f.seek(0)
            f.write(clean)
            f.truncate()
            return True
    return False


def _end_the_rest(child: subprocess.Popen[bytes], adopting: bool) -> int:
    """Whatever the child left behind: in its group (a background grandchild), and outside it
    (``setsid``: adopted by us as their subreaper). How many of the latter were ended."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=KILL_GRACE_S)
    reaper.spawned.discard(child.pid)
    reaper.ended(child.pid)
    if not adopting:
        return 0
    try:
        return reaper.end_strays(child.pid)  # the child leads its own group: pgid == pid
    finally:
        reaper.subreaper(False)


def call(
    argv: list[str],
    *,
    cwd: Path,
    timeout_s: float = 120.0,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
) -> tuple[int, str, str]:
    """A short command of our own (git), its output captured in memory: (exit code, stdout,
    stderr); ``input_text`` on its stdin (else none). No shell; raises ExecutableNotFound if
    the program is missing, and TimedOut (the program killed) after ``timeout_s``."""
    exe = which(argv[0], env)
    if exe is None:
        raise ExecutableNotFound(f"{argv[0]}: command not found on PATH")
    try:
        done = subprocess.run(
            [exe, *argv[1:]],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL if input_text is None else None,
            input=input_text,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise TimedOut(f"`{' '.join(argv[:2])}` gave no answer in {timeout_s:g}s") from None
    return done.returncode, done.stdout, done.stderr


def run_all(argvs: list[list[str]], *, cwd: Path) -> list[tuple[int, str, str]]:
    """Start every argv at once (each in a session of its own, so a Ctrl-C at the terminal
    reaches only us), wait for all; (exit code, stdout, stderr) of each. Interrupted meanwhile,
    we pass the same signal to each child still running (it ends its own work cleanly: a cycle
    puts its task back), wait for them, and let the interruption go on, with what they said."""
    children = []
    try:  # not under ``deferred``: each child must get the normal signal mask (it is inherited)
        for argv in argvs:
            children.append(
                subprocess.Popen(
                    argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True, start_new_session=True,
                )
            )  # fmt: skip
            reaper.spawned.add(children[-1].pid)
        done = []
        for c in children:
            out, err = c.communicate()
            done.append((c.returncode, out, err))
        return done
    except BaseException as exc:
        with deferred():
            for c in children:
                if c.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        c.send_signal(getattr(exc, "signum", signal.SIGTERM))
            said = []
            for c in children:
                try:
                    _, err = c.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    c.kill()
                    _, err = c.communicate()
                said += [line for line in err.splitlines() if line.strip()]
        if hasattr(exc, "said"):
            exc.said = said
        raise
    finally:
        reaper.spawned.difference_update(c.pid for c in children)


def _kill_group(child: subprocess.Popen[bytes], *, grace: bool = True) -> None:
    if grace:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=KILL_GRACE_S)
