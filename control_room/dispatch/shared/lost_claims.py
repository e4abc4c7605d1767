"""Claims a shared room's machine lost, and files both machines changed (``dispatch/shared/sync.py``).

A claim is lost when this machine's lease (the task's wall clock plus ``grace_s``) ran out
before it published the result, and another machine took the task over: the remote's claim
ref no longer holds our claim commit. Our result is then set aside, never published: the
task's files go back to the remote's version (our commits keep our run in history), with a
``claim-lost`` ledger line. A claim of ours whose cycle is still running here is left to it;
one whose cycle died is let go by the cycle's recovery (``let_go``).
"""

from __future__ import annotations

from typing import Protocol

from control_room import ledger
from control_room.dispatch.round import claims
from control_room.dispatch.shared import claimrefs
from control_room.ledger import events
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.store.files import remove


class Shared(Protocol):
    """What this module uses of ``dispatch.shared.sync.Shared`` (which imports this module)."""

    room: Room
    host: str

    def git(self, *args: str, timeout_s: float = ...) -> tuple[int, str, str]: ...
    def must(self, *args: str) -> str: ...
    def refs(self) -> dict[str, claimrefs.Ref]: ...
    def tracking(self) -> str | None: ...
    def commit(self, message: str) -> bool: ...


def lost(share: Shared) -> dict[str, str]:
    """Our claims the remote (as last fetched) shows as another machine's now: task -> that
    machine. A claim we finished ourselves (a push that died before we noted it) is forgotten."""
    refs = share.refs()
    out = {}
    for tid, sha in claimrefs.pending(share.room).items():
        ref = refs.get(tid)
        if ref is None or ref.sha == sha:
            continue
        holder = ref.host if ref.live else _finisher(share, ref.sha)
        if holder == share.host:
            claimrefs.forget(share.room, tid)
        else:
            out[tid] = holder or "another machine"
    return out


def _finisher(share: Shared, sha: str) -> str | None:
    """The host whose push finished a claim at commit ``sha`` (its author is ``control-room
    (<host>)``), or None when we cannot tell."""
    code, out, _ = share.git("log", "-1", "--format=%an", sha)
    name = out.strip()
    if code == 0 and name.startswith("control-room (") and name.endswith(")"):
        return name[len("control-room (") : -1]
    return None


def set_aside(share: Shared) -> list[str]:
    """Set aside our results of lost claims whose task is not running here; what was done."""
    said = []
    running = set(claims.running_ids(share.room))
    for tid, holder in lost(share).items():
        if tid in running:
            continue  # its cycle's, or let_go's once that cycle is dead
        _restore(share, tid)
        ledger.append(
            share.room.ledger,
            events.CLAIM_LOST,
            task=tid,
            detail=f"{holder} took {tid} over (this machine's lease ran out); this machine's result is "
            "set aside: its swarm files are the remote's again, its commits keep it in history",
        )
        share.commit(f"control-room: {tid}'s claim was lost on {share.host}; its result set aside")
        claimrefs.forget(share.room, tid)
        said.append(f"claim on {tid} lost to {holder}; this machine's result set aside")
    return said


def let_go(share: Shared, task_id: str, holder: str, why: str) -> str:
    """A dead cycle of ours held ``task_id``, and ``holder`` took it over meanwhile: its running
    file goes and its other files are the remote's again (the remote's copy is the task now),
    with a ``claim-lost`` line; nothing goes back to the queue. What was done, in one line."""
    remove(swarm.task_file(share.room, "running", task_id))
    claims.release(share.room, task_id)
    _restore(share, task_id)
    claimrefs.forget(share.room, task_id)
    ledger.append(
        share.room.ledger,
        events.CLAIM_LOST,
        task=task_id,
        detail=f"claim is dead ({why}) and {holder} took {task_id} over meanwhile; let go here",
    )
    return f"let go of {task_id}: {why}; {holder} took it over"


def _restore(share: Shared, tid: str) -> None:
    """Put ``tid``'s files (its task file in every swarm state but running/, its outbox note,
    its results folder) back to the remote's version: as the remote has them, and absent
    where it has none."""
    room = share.room
    paths = [f"swarm/{d.name}/{tid}.json" for d in room.swarm.iterdir() if d.is_dir() and d.name != "running"]
    paths += [f"swarm/outbox/{tid}.md", f"swarm/results/{tid}"]
    for rel in paths:
        remove(room.root / rel)
    theirs = share.tracking()
    present = share.must("ls-tree", "--name-only", theirs, "--", *paths).split() if theirs else []
    if present:
        assert theirs is not None
        share.must("checkout", theirs, "--", *present)


def keep_theirs(share: Shared, paths: list[str]) -> None:
    """Conclude a merge that stopped on ``paths``: each is the remote's version, or ours where
    only our side still has the file (a task is never lost to a merge)."""
    for path in paths:
        stages = {line.split()[2] for line in share.must("ls-files", "-u", "--", path).splitlines() if line}
        side = "--theirs" if "3" in stages else "--ours" if "2" in stages else None
        if side is None:
            share.must("rm", "-q", "--", path)
            continue
        share.must("checkout", side, "--", path)
        share.must("add", "--", path)
    share.must("commit", "-q", "--no-edit", "--no-verify")


def conflicts(share: Shared, paths: list[str]) -> str:
    """A merge kept the remote's version of ``paths``: a ``sync-conflict`` line, committed."""
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    ledger.append(
        share.room.ledger,
        events.SYNC_CONFLICT,
        detail=f"both machines changed {shown}; the remote's version was kept (ours stays in history)",
    )
    share.commit(f"control-room: the sync's conflict line, on {share.host}")
    return f"merge: both machines changed {shown}; kept the remote's version"
