"""A room shared by several machines through a git remote (SPEC §14, docs/many-machines.md).

With CONTROL.md ``remote:`` set, the room's folder is a git work tree and each machine's clone
of it:

- **syncs** (``sync``): commits what changed here, fetches the remote's branch and claim refs,
  merges (LEDGER.md by event id, the views by their own drivers; any other file both sides
  changed keeps the remote's version, with a ``sync-conflict`` ledger line naming it), then
  pushes, retrying on a rejected push. The push also *finishes* this machine's claims whose task
  left ``swarm/running/`` (each claim ref moves to the pushed commit, atomically with the branch),
  so a result and the end of its claim land together or not at all.
- **claims** (``claim``) a task by moving its claim ref (``dispatch/claimrefs.py``) with a
  compare-and-swap push; a refused push means another machine took it first.
- **loses** a claim cleanly: when the remote shows another machine's claim on a task this
  machine ran (its lease ran out and it was taken over), this machine's result is set aside
  (its swarm files go back to the remote's version; the commits keep it in history) with a
  ``claim-lost`` ledger line, and its push then goes through without it.

What never goes to the branch: ``STOP`` (a local STOP halts this machine only; commit it to halt
every machine, ``control-room stop --everywhere``), ``swarm/running/`` (a claim is its ref, not
a folder move), and the queue file of a task running here.
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from control_room import errors, ledger, proc
from control_room.dispatch import claimrefs, claims
from control_room.ledger import events
from control_room.room import gitmerge, swarm
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store import lock
from control_room.store.files import append_lines, read_optional, remove

TRACKING = "refs/control-room/remote/"  # the remote's branch, as last fetched
PUSH_TRIES = 8
LOCAL_ONLY = ("**/control-room/.host", "**/control-room/.claims/", "**/control-room/.adapters/")
NETWORK_TIMEOUT_S = 60.0


@dataclass
class Synced:
    """What a sync did, in lines a person reads (empty: nothing new)."""

    said: list[str] = field(default_factory=list)
    merged: bool = False  # the remote brought something new
    pushed: bool = False


@dataclass(frozen=True)
class Shared:
    """A room whose clones share ``remote``'s ``branch``."""

    room: Room
    remote: str
    branch: str
    host: str

    # -- git ------------------------------------------------------------------------------
    def git(self, *args: str, timeout_s: float = NETWORK_TIMEOUT_S) -> tuple[int, str, str]:
        env = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",  # a remote asking for a password is unreachable, not a hang
            "GIT_AUTHOR_NAME": f"control-room ({self.host})",
            "GIT_AUTHOR_EMAIL": f"control-room@{self.host}",
            "GIT_COMMITTER_NAME": f"control-room ({self.host})",
            "GIT_COMMITTER_EMAIL": f"control-room@{self.host}",
        }
        argv = ["git", "-C", str(self.room.root), *gitmerge.config_args(), *args]
        try:
            return proc.call(argv, cwd=self.room.root, timeout_s=timeout_s, env=env)
        except subprocess.TimeoutExpired:
            return 124, "", f"git {args[0]} gave no answer in {timeout_s:g}s"

    def must(self, *args: str) -> str:
        code, out, err = self.git(*args)
        if code != 0:
            what = f"git {' '.join(args[:2])} in {self.room.root}"
            raise errors.ControlRoomError(f"{what} failed: {_tail(err or out)}")
        return out

    def head(self) -> str:
        return self.must("rev-parse", "HEAD").strip()

    def tracking(self) -> str | None:
        """The remote branch's commit as last fetched, or None (the remote has no such branch)."""
        code, out, _ = self.git("rev-parse", "--verify", "-q", TRACKING + self.branch)
        return out.strip() if code == 0 else None

    def contains(self, sha: str) -> bool:
        """Whether our branch holds commit ``sha``."""
        return self.git("merge-base", "--is-ancestor", sha, "HEAD")[0] == 0

    # -- commit, fetch, merge, push ---------------------------------------------------------
    def commit(self, message: str) -> bool:
        """Commit what changed in the room (``git add -A``), but STOP, swarm/running/, and the
        queue file, outbox note and results of a task running here (a run lands whole, at its
        end); whether there was anything."""
        keep_out = [":(exclude)STOP", ":(exclude)swarm/running"]
        for tid in claims.running_ids(self.room):  # a run in progress lands whole, at its end
            keep_out += [
                f":(exclude)swarm/{p}" for p in (f"queue/{tid}.json", f"outbox/{tid}.md", f"results/{tid}")
            ]
        self.must("add", "-A", "--", ".", *keep_out)
        if self.git("diff", "--cached", "--quiet")[0] == 0:
            return False
        self.must("commit", "-q", "--no-verify", "-m", message)
        return True

    def ignore_local(self) -> None:
        """This clone's own files never go to the branch, even in a room whose .gitignore
        predates them: ``.git/info/exclude`` (this clone's, never shared) lists them."""
        path = Path(self.must("rev-parse", "--git-path", "info/exclude").strip())
        path = path if path.is_absolute() else self.room.root / path
        text = read_optional(path) or ""
        missing = [p for p in LOCAL_ONLY if p not in text.splitlines()]
        if missing:
            path.parent.mkdir(parents=True, exist_ok=True)
            append_lines(path, ["# control-room: this clone's own files (docs/many-machines.md)", *missing])

    def fetch(self) -> None:
        """The remote's branch and every claim ref; OfflineError when the remote cannot be
        reached. A remote without the branch yet is not an error (the first push makes it)."""
        claims_spec = f"+{claimrefs.PREFIX}*:{claimrefs.PREFIX}*"
        branch_spec = f"+refs/heads/{self.branch}:{TRACKING}{self.branch}"
        code, _, err = self.git("fetch", "-q", "--no-tags", self.remote, branch_spec, claims_spec)
        if code == 0:
            return
        if "couldn't find remote ref" in err:
            code, _, err = self.git("fetch", "-q", "--no-tags", self.remote, claims_spec)
            if code == 0:
                self.git("update-ref", "-d", TRACKING + self.branch)
                return
        raise errors.OfflineError(f"cannot fetch from remote {self.remote!r}: {_tail(err)}")

    def merge(self) -> list[str]:
        """Merge the fetched branch into ours; the paths both sides changed that no driver could
        merge, each resolved to the remote's version."""
        theirs = self.tracking()
        if theirs is None or self.contains(theirs):
            return []
        code, out, err = self.git(
            "merge", "-q", "--no-edit", "--no-verify", "-m", f"control-room sync on {self.host}", theirs
        )
        if code == 0:
            return []
        conflicted = [p for p in self.must("diff", "--name-only", "--diff-filter=U").splitlines() if p]
        if not conflicted:
            self.git("merge", "--abort")
            raise errors.ControlRoomError(
                f"git merge of {self.remote}/{self.branch} in {self.room.root} failed: {_tail(err or out)}"
            )
        for path in conflicted:
            stages = self.must("ls-files", "-u", "--", path)
            if any(line.split()[2] == "3" for line in stages.splitlines() if line.strip()):
                self.must("checkout", "--theirs", "--", path)
                self.must("add", "--", path)
            else:
                self.must("rm", "-q", "--", path)
        self.must("commit", "-q", "--no-edit", "--no-verify")
        return conflicted

    def push(self, finishing: dict[str, str]) -> bool:
        """Push our branch, and move each finishing claim ref (task -> our claim commit) to it,
        all or nothing. False when the remote refused (it moved on: fetch and try again)."""
        argv = ["push", "--porcelain", "--atomic", self.remote, f"HEAD:refs/heads/{self.branch}"]
        for tid, mine in sorted(finishing.items()):
            argv[2:2] = [f"--force-with-lease={claimrefs.PREFIX}{tid}:{mine}"]
            argv.append(f"HEAD:{claimrefs.PREFIX}{tid}")
        code, out, err = self.git(*argv)
        if code == 0:
            return True
        if any(line.startswith("!") for line in out.splitlines()):
            return False
        raise errors.OfflineError(f"cannot push to remote {self.remote!r}: {_tail(err or out)}")

    def publish_stop(self, stopped: bool) -> None:
        """Commit STOP's presence (``stopped``) or its absence, for every machine; ``sync``
        then pushes it."""
        if stopped:
            self.must("add", "-f", "--", "STOP")
        else:
            self.git("rm", "-q", "--cached", "--ignore-unmatch", "--", "STOP")
        if self.git("diff", "--cached", "--quiet", "--", "STOP")[0] != 0:
            what = "STOP: every machine halts" if stopped else "STOP removed: every machine resumes"
            message = f"control-room: {what} (from {self.host})"
            self.must("commit", "-q", "--no-verify", "-m", message, "--", "STOP")

    # -- claims -------------------------------------------------------------------------------
    def refs(self) -> dict[str, claimrefs.Ref]:
        """Every task's claim ref, as last fetched."""
        fmt = "%(refname)%00%(objectname)%00%(subject)"
        out = self.must("for-each-ref", f"--format={fmt}", claimrefs.PREFIX)
        found = {}
        for line in out.splitlines():
            name, sha, subject = [*line.split("\0"), "", ""][:3]
            tid = name[len(claimrefs.PREFIX) :]
            found[tid] = claimrefs.parse(tid, sha, subject)
        return found

    def claim(self, task_id: str, expect: str, until: float, info: dict[str, object]) -> str | None:
        """Take ``task_id``'s claim ref from ``expect`` (empty: it must not exist) to a new
        claim commit of ours; its id, or None when another machine moved the ref first."""
        text = claimrefs.message(task_id, self.host, until, info)
        sha = self.must("commit-tree", claimrefs.EMPTY_TREE, "-m", text).strip()
        ref = claimrefs.PREFIX + task_id
        code, out, err = self.git(
            "push", "--porcelain", f"--force-with-lease={ref}:{expect}", self.remote, f"{sha}:{ref}"
        )
        if code == 0:
            claimrefs.remember(self.room, task_id, sha)
            self.git("update-ref", ref, sha)  # our copy follows without a fetch
            return sha
        if any(line.startswith("!") for line in out.splitlines()):
            return None
        raise errors.OfflineError(f"cannot push a claim to remote {self.remote!r}: {_tail(err or out)}")

    # -- the whole sync -------------------------------------------------------------------------
    def sync(self, *, why: str, fetched: bool = False) -> Synced:
        """Commit, fetch, merge, push (retried while the remote moves on); see the module doc.
        Runs under ``control-room/.sync.lock`` (parallel cycles of one clone take turns)."""
        done = Synced()
        self.room.make_folders()
        try:
            with lock.held(self.room.cr / ".sync.lock"):
                self._sync(done, why, fetched)
        finally:
            self.room.make_folders()  # a merge that emptied a folder removed it
        return done

    def _sync(self, done: Synced, why: str, fetched: bool) -> None:
        self.ignore_local()
        self.commit(f"control-room: {why} on {self.host}")
        for attempt in range(PUSH_TRIES):
            if attempt or not fetched:
                self.fetch()
            refs = self.refs()
            done.said += self._drop_lost(refs)
            before = self.head()
            conflicted = self.merge()
            if self.head() != before:
                done.merged = True
            if conflicted:
                done.said.append(self._conflicts(conflicted))
                self.commit(f"control-room: the sync's conflict line, on {self.host}")
            finishing = self._finishing(refs)
            if not finishing and self.tracking() == self.head():
                return  # nothing of ours to publish
            if self.push(finishing):
                for tid in finishing:
                    claimrefs.forget(self.room, tid)
                done.pushed = True
                self._follow(finishing)
                return
            time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))  # another machine pushed first
        done.said.append(
            f"not pushed: the remote moved on {PUSH_TRIES} times in a row; what this machine did is "
            "committed here and the next sync pushes it"
        )

    def lost(self, refs: dict[str, claimrefs.Ref] | None = None) -> dict[str, str]:
        """Our claims the remote (as last fetched) shows as another machine's now: task ->
        that machine. A claim we finished ourselves is forgotten on the way."""
        refs = self.refs() if refs is None else refs
        out = {}
        for tid, sha in claimrefs.pending(self.room).items():
            ref = refs.get(tid)
            if ref is None or ref.sha == sha:
                continue
            holder = ref.host if ref.live else self._finisher(ref.sha)
            if holder == self.host:
                claimrefs.forget(self.room, tid)  # finished by a push of ours that died before forgetting
            else:
                out[tid] = holder or "another machine"
        return out

    def _finisher(self, sha: str) -> str | None:
        """The host whose push finished a claim at commit ``sha`` (its author, ``control-room
        (<host>)``), or None when we cannot tell."""
        code, out, _ = self.git("log", "-1", "--format=%an", sha)
        name = out.strip()
        if code == 0 and name.startswith("control-room (") and name.endswith(")"):
            return name[len("control-room (") : -1]
        return None

    def _follow(self, finishing: dict[str, str]) -> None:
        """Our copies of what we just pushed: the remote's branch and the finished claim refs
        now hold our HEAD (no fetch needed)."""
        head = self.head()
        names = [TRACKING + self.branch, *(claimrefs.PREFIX + tid for tid in finishing)]
        for name in names:
            self.must("update-ref", name, head)

    def _finishing(self, refs: dict[str, claimrefs.Ref]) -> dict[str, str]:
        """Our claims whose task is no longer running here and that the remote still shows as
        ours: they finish with this push."""
        running = set(claims.running_ids(self.room))
        out = {}
        for tid, sha in claimrefs.pending(self.room).items():
            if tid in running:
                continue
            ref = refs.get(tid)
            if ref is not None and ref.sha == sha:
                out[tid] = sha
            elif ref is not None and not ref.live and self.contains(ref.sha):
                claimrefs.forget(self.room, tid)  # finished by an earlier push of ours
        return out

    def _drop_lost(self, refs: dict[str, claimrefs.Ref]) -> list[str]:
        """Claims of ours another machine took over (our lease ran out): set our result aside.
        (One still in swarm/running/ here is the cycle's, or ``let_go``'s once it is dead.)"""
        said = []
        running = set(claims.running_ids(self.room))
        for tid, holder in self.lost(refs).items():
            if tid in running:
                continue
            self._restore_task(tid)
            ledger.append(
                self.room.ledger,
                events.CLAIM_LOST,
                task=tid,
                detail=f"{holder} took {tid} over (this machine's lease ran out); this machine's result is "
                "set aside: its swarm files are the remote's again, its commits keep it in history",
            )
            self.commit(f"control-room: {tid}'s claim was lost on {self.host}; its result set aside")
            claimrefs.forget(self.room, tid)
            said.append(f"claim on {tid} lost to {holder}; this machine's result set aside")
        return said

    def let_go(self, task_id: str, holder: str, why: str) -> str:
        """A dead cycle of ours held ``task_id``, and ``holder`` took it over meanwhile: its
        running file goes and its other files are the remote's again (the remote's copy is the
        task now), with a ``claim-lost`` line; nothing goes back to the queue."""
        remove(swarm.task_file(self.room, "running", task_id))
        claims.release(self.room, task_id)
        self._restore_task(task_id)
        claimrefs.forget(self.room, task_id)
        ledger.append(
            self.room.ledger,
            events.CLAIM_LOST,
            task=task_id,
            detail=f"claim is dead ({why}) and {holder} took {task_id} over meanwhile; let go here",
        )
        return f"let go of {task_id}: {why}; {holder} took it over"

    def _restore_task(self, tid: str) -> None:
        """Put ``tid``'s files (its task file in every swarm state but running/, its outbox
        note, its results folder) back to the remote's version: as the remote has them, and
        absent where it has none."""
        theirs = self.tracking()
        paths = [f"swarm/{d.name}/{tid}.json" for d in self.room.swarm.iterdir() if d.is_dir()]
        paths = [p for p in paths if not p.startswith("swarm/running/")]
        paths += [f"swarm/outbox/{tid}.md", f"swarm/results/{tid}"]
        for rel in paths:
            remove(self.room.root / rel)
        present = ""
        if theirs is not None:
            present = self.must("ls-tree", "--name-only", theirs, "--", *paths)
        if present.strip():
            assert theirs is not None
            self.must("checkout", theirs, "--", *present.split())

    def _conflicts(self, paths: list[str]) -> str:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        ledger.append(
            self.room.ledger,
            events.SYNC_CONFLICT,
            detail=f"both machines changed {shown}; the remote's version was kept (ours stays in history)",
        )
        return f"merge: both machines changed {shown}; kept the remote's version"


def stop_is_shared(room: Room) -> bool:
    """Whether STOP is committed in a shared room (so a commit may lift it): a look at
    CONTROL.md's text, then git's index; False in any other room, at no cost."""
    if not settings_file.mentions(room, "remote"):
        return False
    try:
        code, _, _ = proc.call(
            ["git", "-C", str(room.root), "ls-files", "--error-unmatch", "STOP"], cwd=room.root
        )
    except (proc.ExecutableNotFound, subprocess.TimeoutExpired):
        return False
    return code == 0


def shared(room: Room, settings: Settings) -> Shared | None:
    """The room's sharing, or None when CONTROL.md sets no ``remote``. A ``remote`` on a room
    that is no git work tree, or on a detached HEAD, is a RoomInvalidError."""
    if not settings.remote:
        return None
    host = claims.host(room)
    probe = Shared(room, settings.remote, "", host)
    code, out, _ = probe.git("rev-parse", "--show-toplevel")
    if code != 0:
        raise errors.RoomInvalidError(
            f"CONTROL.md remote: {settings.remote} but {room.root} is not a git work tree "
            "(clone the shared room, or `git init` it and add the remote; docs/many-machines.md)"
        )
    code, out, _ = probe.git("symbolic-ref", "-q", "--short", "HEAD")
    if code != 0 or not out.strip():
        raise errors.RoomInvalidError(
            f"CONTROL.md remote: {settings.remote} but {room.root} is on no branch (detached HEAD)"
        )
    return Shared(room, settings.remote, out.strip(), host)


def _tail(text: str) -> str:
    """git's own words, in one line: its ``fatal:``/``error:`` lines, else its last two."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines[-2:]
    return " / ".join(said[:2]) or "no message"
