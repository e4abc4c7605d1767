"""The target repository shared through a remote (CONTROL.md ``repo_remote:``; SPEC §14).

When several machines work on one repository, each has its own clone of it (CONTROL.md
``repo:`` names the same relative path on each), and they meet through ``repo_remote``:

- a route's branch is pushed after each commit the dispatcher makes on it (``push_branch``;
  forced: the merge queue rebases route branches, and a route runs on one machine at a time);
- a route worktree, when made or moved up to the base, first brings the base up to date from
  the remote (``refresh_base``; best effort: offline, it starts from the local base);
- the merge queue takes the base from the remote before each merge (``catch_up``: the main
  tree's base fast-forwards to it, or the merge is refused) and pushes it back after the
  merge, fast-forward only (``push_base``). In a shared room the whole merge queue runs under
  one lock on the room's remote (``dispatch/shared/sync.py``), so one machine merges at a time and the
  base only ever fast-forwards.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from control_room import errors, git
from control_room.dispatch.shared import claimrefs, sharing, sync
from control_room.room.layout import Room
from control_room.room.settings import Settings

FETCHED = "refs/control-room/base"  # the remote's base, as last fetched into the repo


def _git(repo: Path, *args: str) -> tuple[int, str, str]:
    """Git in the target repository, with a remote's time limit."""
    return git.run(repo, *args, timeout_s=60.0)


def fetch_base(repo: Path, settings: Settings, base: str) -> str | None:
    """The remote's ``base`` commit, fetched; None when the remote has no such branch yet.
    OfflineError when the remote cannot be reached."""
    assert settings.repo_remote
    code, _, err = _git(
        repo, "fetch", "-q", "--no-tags", settings.repo_remote, f"+refs/heads/{base}:{FETCHED}"
    )
    if code != 0:
        if "couldn't find remote ref" in err:
            return None
        raise errors.OfflineError(
            f"cannot fetch {base} from repo_remote {settings.repo_remote!r}: {git.said(err)}"
        )
    return _git(repo, "rev-parse", FETCHED)[1].strip() or None


def catch_up(repo: Path, settings: Settings, base: str) -> None:
    """Before a merge: the main tree's ``base`` (checked out, clean: the caller checked)
    fast-forwards to the remote's. A local base with commits the remote lacks is refused
    (RoomInvalidError): push or drop them first, or the base would stop fast-forwarding."""
    theirs = fetch_base(repo, settings, base)
    if theirs is None:
        return  # the first push makes it
    if _git(repo, "merge-base", "--is-ancestor", "HEAD", theirs)[0] == 0:
        code, out, err = _git(repo, "merge", "--ff-only", "-q", theirs)
        if code != 0:
            raise errors.RoomInvalidError(
                f"room invalid: {base} in {repo} cannot fast-forward to {settings.repo_remote}'s "
                f"({git.said(err or out)}); nothing was merged"
            )
        return
    raise errors.RoomInvalidError(
        f"room invalid: {base} in {repo} has commits {settings.repo_remote}/{base} lacks; push them "
        f"(or reset {base} to {settings.repo_remote}/{base}) so the base only fast-forwards; "
        "nothing was merged"
    )


def push_base(repo: Path, settings: Settings, base: str) -> str | None:
    """After a merge: push ``base``, fast-forward only; None when pushed, else why not."""
    assert settings.repo_remote
    code, out, err = _git(
        repo, "push", "--porcelain", "-q", settings.repo_remote, f"{base}:refs/heads/{base}"
    )
    if code == 0:
        _git(repo, "update-ref", FETCHED, base)
        return None
    return git.said(err or out) or f"git push exit {code}"


def push_branch(worktree: Path, settings: Settings, branch: str) -> str | None:
    """A route's branch, after the dispatcher committed on it; None when pushed, else why not."""
    assert settings.repo_remote
    code, out, err = _git(
        worktree, "push", "-q", "--force", settings.repo_remote, f"{branch}:refs/heads/{branch}"
    )
    return None if code == 0 else (git.said(err or out) or f"git push exit {code}")


def bring_branch(repo: Path, settings: Settings, branch: str, worktree: Path | None) -> None:
    """Before a route's worktree is used: its branch as another machine left it. Missing here,
    it is made from the remote's; behind the remote's (a later task of the route ran on another
    machine), it fast-forwards (in ``worktree`` when one has it checked out). A branch with
    work of its own here, or no remote, is left as it is."""
    assert settings.repo_remote
    theirs = f"refs/control-room/branches/{branch}"
    code, _, _ = _git(
        repo, "fetch", "-q", "--no-tags", settings.repo_remote, f"+refs/heads/{branch}:{theirs}"
    )
    if code != 0:
        return  # not pushed by anyone yet, or offline: the local branch it is
    if _git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")[0] != 0:
        _git(repo, "branch", "-q", branch, theirs)
    elif _git(repo, "merge-base", "--is-ancestor", branch, theirs)[0] == 0:
        if worktree is not None:
            _git(worktree, "merge", "--ff-only", "-q", theirs)
        else:
            _git(repo, "branch", "-q", "-f", branch, theirs)


def refresh_base(repo: Path, settings: Settings, base: str) -> None:
    """Before a route worktree is made or moved up: the main tree's base fast-forwards to the
    remote's when it is checked out, clean and behind; otherwise nothing (offline included)."""
    try:
        theirs = fetch_base(repo, settings, base)
    except errors.OfflineError:
        return
    current = _git(repo, "rev-parse", "--abbrev-ref", "HEAD")[1].strip()
    clean = _git(repo, "status", "--porcelain", "--untracked-files=no")[1].strip() == ""
    if theirs is not None and current == base and clean:
        _git(repo, "merge", "--ff-only", "-q", theirs)


MERGE_QUEUE = "refs/control-room/locks/merge-queue"  # a shared room's merge queue lock, on its remote


@contextlib.contextmanager
def merge_queue(room: Room, settings: Settings) -> Iterator[None]:
    """In a shared room whose repo is shared too (``remote`` and ``repo_remote``): hold the
    merge queue's lock on the room's remote while merging, so one machine merges at a time (its
    lease: the validator's time limit, ``grace_s`` and 5 minutes), with the room synced once
    the lock is held (what the others merged is known: a task is merged once) and again before
    it is let go (the next holder knows what we merged). Held by another machine:
    ConflictError, and the tasks wait in passed/."""
    share = sharing.shared(room, settings) if settings.repo_remote else None
    if share is None:
        yield
        return
    until = time.time() + settings.validator_timeout_s + settings.grace_s + 300
    held = _hold(share, until)
    if not held.startswith("ours "):
        raise errors.ConflictError(
            f"the merge queue is {held} (another machine merges); the tasks wait in passed/"
        )
    share.sync(why="the merge queue starts")
    try:
        yield
    finally:
        # let go only once what we merged is on the remote: the next holder must see it (else
        # it would merge a task again); unpushed, the lock runs out with its lease, or a later
        # merge queue of ours (which may take our own lock back) publishes and lets it go
        try:
            published = not share.sync(why="the merge queue merged").unpushed
        except errors.ControlRoomError:
            published = False
        if published:
            lease = f"--force-with-lease={MERGE_QUEUE}:{held[len('ours ') :]}"
            share.git("push", "--porcelain", lease, share.remote, f":{MERGE_QUEUE}")


def _hold(share: sync.Shared, until: float) -> str:
    """Take the merge queue's lock until ``until`` (a claim-like commit on its ref, by
    compare-and-swap); ``ours <commit>``, else who holds it and till when."""
    code, _, err = share.git("fetch", "-q", "--no-tags", share.remote, f"+{MERGE_QUEUE}:{MERGE_QUEUE}")
    if code != 0 and "couldn't find remote ref" not in err:
        raise errors.OfflineError(f"cannot fetch from remote {share.remote!r}: {git.said(err)}")
    if code != 0:  # nobody holds it: our stale copy goes
        share.git("update-ref", "-d", MERGE_QUEUE)
    out = share.git("for-each-ref", "--format=%(objectname)%00%(subject)", MERGE_QUEUE)[1].strip()
    expect = ""
    if out:
        sha, subject = [*out.split("\0"), ""][:2]
        lock = claimrefs.parse("merge-queue", sha, subject)
        if lock.live and not claimrefs.lease_over(lock, 0) and lock.host != share.host:
            return f"held by {lock.host} until {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(lock.until))}"
        expect = sha
    text = claimrefs.message("merge-queue", share.host, until, {"host": share.host, "pid": os.getpid()})
    mine = claimrefs.cas(share, MERGE_QUEUE, expect, text)
    return f"ours {mine}" if mine is not None else "taken by another machine a moment ago"
