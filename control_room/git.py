"""The one git runner: every git command control-room runs goes through ``run`` (an argv
through ``proc.call``, never a shell).

- A git that gives no answer in its time is exit code 124 with a line saying so, never a hang
  and never an exception; nothing asks at a terminal: a remote that wants a password is one
  that cannot be reached (``GIT_TERMINAL_PROMPT=0``, ``credential.interactive=false``).
- One rule for who commits: whatever control-room commits itself (a task's work, a rebase in
  the merge queue, a failed round's work kept while reviewers look, a shared room's sync) is
  authored and committed by ``control-room (HOST) <control-room@HOST>``, HOST the clone's host
  id (``--committer``). A machine with no git identity of its own works, and every such commit
  says which machine made it.

A missing git raises ``proc.ExecutableNotFound``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from control_room import proc

TIMEOUT_S = 120.0
NO_ANSWER = 124  # the exit code of a git that was killed at its time limit (as timeout(1))


def identity(host: str) -> dict[str, str]:
    """The environment that makes control-room on ``host`` the author and committer."""
    who, mail = f"control-room ({host})", f"control-room@{host}"
    return {
        "GIT_AUTHOR_NAME": who,
        "GIT_COMMITTER_NAME": who,
        "GIT_AUTHOR_EMAIL": mail,
        "GIT_COMMITTER_EMAIL": mail,
    }


def run(
    repo: Path,
    *args: str,
    committer: str | None = None,
    config: Sequence[str] = (),
    timeout_s: float = TIMEOUT_S,
    input_text: str | None = None,
) -> tuple[int, str, str]:
    """``git -C repo [-c ...] ARGS``: (exit code, stdout, stderr). ``committer``: the host id
    whose control-room commits (see above); ``config``: ``-c`` pairs, as git takes them."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(identity(committer) if committer else {})}
    argv = ["git", "-C", str(repo), "-c", "credential.interactive=false", *config, *args]
    try:
        return proc.call(argv, cwd=repo, timeout_s=timeout_s, env=env, input_text=input_text)
    except proc.TimedOut:
        return NO_ANSWER, "", f"git {args[0] if args else ''} gave no answer in {timeout_s:g}s"


def said(text: str) -> str:
    """git's own words, in one line: its ``fatal:``/``error:`` lines, else its last two ("" if
    it said nothing)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    found = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines[-2:]
    return " / ".join(found[:2])


def told(text: str) -> str:
    """``said``, or "no message" when git said nothing: for an error that must name something."""
    return said(text) or "no message"
