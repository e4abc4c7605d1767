"""Claims on a shared remote (SPEC §14): one git ref per task, moved by compare-and-swap.

``refs/control-room/claims/<id>`` on the remote says who holds a task:

- absent: nobody ever claimed it;
- a *claim commit* (an empty tree; its subject ``control-room claim: <id> by <host> until <t>``,
  its body the claim as JSON): ``host`` holds it until ``t`` (epoch seconds: the task's wall
  clock plus the validator's), and after ``t + grace_s`` any machine may take it over (a lease);
- any other commit: the claim was finished by the push that published its result, and that
  commit holds the result. A machine may claim the task again (a failed round back in the
  queue) only once its own branch contains that commit, so nobody runs a task from a stale copy.

Every move is a push with ``--force-with-lease=<ref>:<expected>``: the remote updates the ref
only if it still holds what we saw (an empty expectation: only if it does not exist), under its
ref lock. Two machines that race for one task cannot both win, and a claim touches no shared
branch, so claims do not contend with the pushes of results (docs/many-machines.md).

This machine's claims not yet finished on the remote are remembered in
``control-room/.claims/<id>`` (git-ignored: the claim commit's id), so a cycle that died before
its push is finished, or found lost, by the next sync. It is written before the claim's push
(killed after the push, the clone still knows the claim for its own), and once the push landed
it says so (``<commit> pushed``): the push at the end of the cycle then finishes the claim
without a fetch first (its lease on the claim ref checks it on the remote), while a claim whose
push may never have landed waits for a fetch to tell.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from control_room import crashpoint, errors, git
from control_room.room.layout import Room
from control_room.store.files import atomic_write, read_optional

PREFIX = "refs/control-room/claims/"
SUBJECT = "control-room claim: "
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git knows it in every repository


@dataclass(frozen=True)
class Ref:
    """What the remote's claim ref of one task held at the last fetch."""

    task: str
    sha: str
    host: str | None  # None: a finished claim (a result commit)
    until: float  # a live claim's lease end, before grace; 0 when finished

    @property
    def live(self) -> bool:
        return self.host is not None


def parse(task: str, sha: str, subject: str) -> Ref:
    """One ref from ``git for-each-ref``'s id and subject."""
    if subject.startswith(SUBJECT):
        words = subject[len(SUBJECT) :].split()
        # "<id> by <host> until <epoch>"
        if len(words) == 5 and words[1] == "by" and words[3] == "until":
            try:
                return Ref(task, sha, words[2], float(words[4]))
            except ValueError:
                pass
        return Ref(task, sha, "?", 0.0)  # a claim we cannot read: held, lease already over
    return Ref(task, sha, None, 0.0)


FORMAT = "%(refname)%00%(objectname)%00%(subject)"  # a scan's for-each-ref: one ref a line


@dataclass
class Seen:
    """What a scan of a clone's refs showed: our branch's commit (``head``, ref ``ours``), the
    remote branch's as last fetched (``tracking``, ref ``theirs``), every task's claim ref;
    None: no such branch."""

    ours: str
    theirs: str
    head: str | None = None
    tracking: str | None = None
    claims: dict[str, Ref] = field(default_factory=dict)

    def saw(self, name: str, sha: str, subject: str) -> None:
        """Ref ``name`` holds ``sha``, a commit whose subject is ``subject``."""
        if name == self.ours:
            self.head = sha
        elif name == self.theirs:
            self.tracking = sha
        elif name.startswith(PREFIX):
            self.claims[name[len(PREFIX) :]] = parse(name[len(PREFIX) :], sha, subject)


def subject(task: str, host: str, until: float) -> str:
    return f"{SUBJECT}{task} by {host} until {until:.0f}"


def message(task: str, host: str, until: float, info: dict[str, object]) -> str:
    return subject(task, host, until) + "\n\n" + json.dumps(info, sort_keys=True) + "\n"


def lease_over(ref: Ref, grace_s: float, now: float | None = None) -> bool:
    return ref.live and (now if now is not None else time.time()) > ref.until + grace_s


# This machine's unfinished claims: control-room/.claims/<id> -> the claim commit.
def _pending_dir(room: Room) -> Path:
    return room.cr / ".claims"


PUSHED = "pushed"  # the second word of a claim the remote took (``remember(..., pushed=True)``)


def remember(room: Room, task: str, sha: str, pushed: bool = False) -> None:
    """Keep claim commit ``sha`` of ``task``: before its push (``pushed`` False), and once the
    remote took it (a file rewritten whole: a crash leaves the one record or the other)."""
    _pending_dir(room).mkdir(exist_ok=True)
    atomic_write(_pending_dir(room) / task, f"{sha} {PUSHED}\n" if pushed else sha + "\n")


def recorded(room: Room, task: str) -> tuple[str | None, bool]:
    """The claim commit this clone keeps for ``task`` (``remember``; None: none), and whether
    the remote took it."""
    return _read(_pending_dir(room) / task)


def _read(path: Path) -> tuple[str | None, bool]:
    words = (read_optional(path) or "").split()
    return (words[0] if words else None), words[1:2] == [PUSHED]


def forget(room: Room, task: str) -> None:
    (_pending_dir(room) / task).unlink(missing_ok=True)


def pending(room: Room, pushed: bool = False) -> dict[str, str]:
    """This machine's claims the remote may still show as ours: task id -> claim commit;
    ``pushed``: only those whose push landed (``remember``)."""
    try:
        names = sorted(os.listdir(_pending_dir(room)))
    except FileNotFoundError:
        return {}
    out = {}
    for name in names:
        if name.startswith("."):
            continue
        sha, landed = _read(_pending_dir(room) / name)
        if sha and (landed or not pushed):
            out[name] = sha
    return out


class Share(Protocol):
    """What the moves below use of ``dispatch.shared.sync.Shared`` (which imports this module)."""

    room: Room
    host: str
    remote: str

    def git(self, *args: str, timeout_s: float = ...) -> tuple[int, str, str]: ...
    def must(self, *args: str) -> str: ...


def claim(share: Share, task_id: str, expect: str, until: float, info: dict[str, object]) -> str | None:
    """Take ``task_id``'s claim ref from ``expect`` (empty: it must not exist) to a new claim
    commit of ``share``'s host; its id, or None when another machine moved the ref first. Kept
    in the clone before the push: killed after it, the clone still knows the claim for its own."""
    ref, before = PREFIX + task_id, recorded(share.room, task_id)
    keep = functools.partial(remember, share.room, task_id)
    sha = cas(share, ref, expect, message(task_id, share.host, until, info), keep)
    if sha is None:  # refused: the claim is not ours; what we kept before is
        if before[0]:
            keep(before[0], pushed=before[1])
        else:
            forget(share.room, task_id)
        return None
    crashpoint.hit("claim.pushed")
    keep(sha, pushed=True)  # the cycle's last push may finish it without a fetch first
    return sha


def cas(
    share: Share, ref: str, expect: str, text: str, ahead: Callable[[str], None] | None = None
) -> str | None:
    """git's compare-and-swap on the remote: point ``ref`` at a new commit (an empty tree,
    message ``text``; ``ahead(commit)`` first) only if it still holds ``expect`` (empty: only if
    it does not exist), under the remote's ref lock. The commit, or None when the remote refused."""
    sha = share.must("commit-tree", EMPTY_TREE, "-m", text).strip()
    if ahead is not None:
        ahead(sha)
    lease = f"--force-with-lease={ref}:{expect}"
    code, out, err = share.git("push", "--porcelain", lease, share.remote, f"{sha}:{ref}")
    if code == 0:
        return sha
    if any(line.startswith("!") for line in out.splitlines()):
        return None
    raise errors.OfflineError(f"cannot push {ref} to remote {share.remote!r}: {git.told(err or out)}")
