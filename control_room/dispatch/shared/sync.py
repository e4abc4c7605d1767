"""A room shared by several machines through a git remote (SPEC §14, docs/many-machines.md).

With CONTROL.md ``remote:`` set, the room's folder is a git work tree and each machine's clone
of it:

- **syncs** (``Shared.sync``): commits what changed here, fetches the remote's branch and
  claim refs, merges (LEDGER.md by event id, the views by their own drivers; any other file
  both sides changed keeps the remote's version, with a ``sync-conflict`` ledger line naming
  it), then pushes, retrying on a rejected push. The push also *finishes* this machine's claims
  whose task left ``swarm/running/`` (each claim ref moves to the pushed commit, atomically with
  the branch), so a result and the end of its claim land together or not at all.
- **claims** a task by moving its claim ref with a compare-and-swap push
  (``dispatch/shared/claimrefs.py`` ``claim``); a refused push means another machine took it first.
- **loses** a claim cleanly (``dispatch/shared/lost_claims.py``) when its lease ran out and another
  machine took the task over.

What never goes to the branch: ``STOP`` (a local STOP halts this machine only; ``control-room
stop --everywhere`` commits it), ``swarm/running/``, and a run in progress (its queue file,
outbox note and results land whole, at its end). Every git call here is a subprocess of a few
milliseconds; the ones a cycle makes are counted in bench/many_machines.py.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from control_room import crashpoint, errors, git, proc, redact
from control_room.dispatch.round import claims
from control_room.dispatch.shared import claimrefs, lost_claims
from control_room.knowledge import routes
from control_room.ledger import rewrite
from control_room.room import gitmerge
from control_room.room.layout import Room
from control_room.store import lock
from control_room.store.files import append_lines, read_optional

MINE = "refs/control-room/"  # what a clone keeps of the remote: remote/<branch>, claims/<id>
TRACKING = MINE + "remote/"  # the remote's branch, as last fetched
PUSH_TRIES = 8  # `control-room sync`, the merge queue
CYCLE_TRIES = 2  # a cycle's syncs (see Shared.sync)
# Never on the branch: this clone's own files, a run's brief, a write's temp file (`git add` failed
# on one renamed as it read the folder: `stop` writing STOP while a cycle synced)
LOCAL_ONLY = ("**/control-room/.host", "**/control-room/.claims/", "**/control-room/.adapters/",
              "**/.brief-*.md", "**/.tmp-*")  # fmt: skip
NETWORK_TIMEOUT_S = 60.0
VIEWS = {"control-room/CURRENT_CONTEXT.md", "control-room/DIGEST.md"}  # each clone refreshes its own
_IGNORING: set[Path] = set()  # the rooms whose info/exclude this process checked
# A merge of task moves sees no renames: two task files differ by a few bytes, so git would take
# one machine's move of a.json for a rename of b.json, and the move of the last file out of a
# folder for the folder's rename. Each move is a deletion and an addition: they merge cleanly.
NO_RENAMES = ("-c", "merge.renames=false", "-c", "merge.directoryRenames=false")
# A fetch starts no `git maintenance run --auto` (or, before git 2.29, `gc --auto`) of its own:
# every commit of ours still does, so the clone is still packed in time (one process a cycle).
FETCH = ("-c", "maintenance.auto=false", "-c", "gc.auto=0", "fetch", "-q", "--no-tags")


@dataclass
class Synced:
    """What a sync did, in lines a person reads (empty: nothing new)."""

    said: list[str] = field(default_factory=list)
    merged: bool = False  # the remote brought something new
    pushed: bool = False
    unpushed: bool = False  # something of ours is still to push: the remote moved on every try


class Shared:
    """A room whose clones share ``remote``'s ``branch``; this clone is ``host``."""

    def __init__(self, room: Room, remote: str, branch: str, host: str) -> None:
        self.room, self.remote, self.branch, self.host = room, remote, branch, host
        self._seen: claimrefs.Seen | None = None  # the refs, as last scanned (see _scan)
        self._head_moved = False  # our commit or merge since the scan: its `head` is old
        self._holds: str | None = None  # a commit of the remote's branch ours is known to hold
        self._holding: set[str] = set()  # the locks this process holds (``_once``)
        self._running: set[str] = set()  # the tasks running here when our last commit looked

    def turn(self) -> contextlib.AbstractContextManager[None]:
        """This clone's turn at its git work (``control-room/.sync.lock``): the parallel cycles
        of one clone fetch, sync, pick and claim one at a time, so that none picks from a queue
        a merge is changing, judges a claim by refs another's fetch is rewriting, or fetches
        over another's fetch. Taken again by its holder, it is not waited for."""
        return self._once("turn", lambda: lock.held(self.room.cr / ".sync.lock"))

    def appends_held(self, rewriting: bool = False) -> contextlib.AbstractContextManager[None]:
        """The ledger's append lock (``ledger.rewrite.held``), taken once by this process: git
        reads or rewrites (``rewriting``) LEDGER.md while no process of this clone appends."""
        return self._once("appends", lambda: rewrite.held(self.room.ledger, rewriting))

    @contextlib.contextmanager
    def _once(self, name: str, take: Callable[[], contextlib.AbstractContextManager[None]]) -> Iterator[None]:
        """The lock ``take`` makes, held for the block unless this process holds it already
        (a lock file's ``flock`` taken again through another descriptor would wait for itself)."""
        if name in self._holding:
            yield
            return
        with take():
            self._holding.add(name)
            try:
                yield
            finally:
                self._holding.discard(name)

    # -- git ------------------------------------------------------------------------------
    def git(
        self, *args: str, timeout_s: float = NETWORK_TIMEOUT_S, input_text: str | None = None
    ) -> tuple[int, str, str]:
        """Git in the room's clone (``control_room.git``): its merge drivers passed as config,
        renames off, this host committing."""
        return git.run(
            self.room.root,
            *args,
            committer=self.host,
            config=(*gitmerge.config_args(), *NO_RENAMES),
            timeout_s=timeout_s,
            input_text=input_text,
        )

    def must(self, *args: str, input_text: str | None = None) -> str:
        code, out, err = self.git(*args, input_text=input_text)
        if code != 0:
            what = f"git {' '.join(args[:2])} in {self.room.root}"
            raise errors.ControlRoomError(f"{what} failed: {git.told(err or out)}")
        return out

    def head(self) -> str | None:
        """Our branch's commit (None: none yet), from the scan (again, if ours moved since)."""
        if self._head_moved:
            self._seen = None
        return self._scan().head

    def contains(self, sha: str) -> bool:
        """Whether our branch holds commit ``sha``."""
        return self.git("merge-base", "--is-ancestor", sha, "HEAD")[0] == 0

    def _scan(self) -> claimrefs.Seen:
        """Our branch, the remote's as last fetched and every claim ref: one ``for-each-ref``,
        kept until a fetch or a push of ours (a commit or merge of ours moves only our branch:
        ``head`` asks again). The remote's branch seen as ours is known to be in ours (``_holds``)."""
        if self._seen is None:
            ours = f"refs/heads/{self.branch}"
            out = self.must("for-each-ref", f"--format={claimrefs.FORMAT}", MINE, ours)
            self._seen = claimrefs.Seen(ours, TRACKING + self.branch)
            for line in out.splitlines():
                self._seen.saw(*[*line.split("\0"), "", ""][:3])
            self._head_moved = False
            if self._seen.tracking is not None and self._seen.tracking == self._seen.head:
                self._holds = self._seen.tracking
        return self._seen

    def tracking(self) -> str | None:
        """The remote branch's commit as last fetched, or None (the remote has no such branch)."""
        return self._scan().tracking

    def refs(self) -> dict[str, claimrefs.Ref]:
        """Every task's claim ref, as last fetched."""
        return self._scan().claims

    # -- commit, fetch, merge, push ---------------------------------------------------------
    def commit(self, message: str, likely: bool = False, views_wait: bool = False) -> bool:
        """Commit what changed in the room (``git add -A``), but STOP, swarm/running/, and the
        queue file, outbox note and results of a task running here (a run lands whole, at its
        end); whether there was anything. Unless ``likely`` (the end of a cycle: its task moved),
        one ``git status`` looks first, and a room with nothing new costs that one process;
        then ``add`` and ``commit``, and only a commit that found nothing asks ``diff``.
        ``views_wait``: a change of the views alone waits for the next commit (a sync would not
        push it alone) unless a merge must follow: the remote's branch, just fetched, is not ours."""
        keep_out = [".", ":(exclude)STOP", ":(exclude)swarm/running"]
        running = claims.running_ids(self.room)
        self._running = set(running)  # what this commit cannot hold yet
        for tid in running:
            keep_out += [f":(exclude)swarm/queue/{tid}.json", f":(exclude)swarm/outbox/{tid}.md"]
            keep_out.append(f":(exclude)swarm/results/{tid}")
        if not likely:
            argv = ("status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *keep_out)
            changed = {entry[3:] for entry in self.must(*argv).split("\0") if entry}
            if not changed:
                return False
            if views_wait and changed <= VIEWS and self._merged():
                return False  # (paths from the work tree's top: a room below it always commits)
        with self.appends_held():  # (a line written as git reads the file would go in half)
            self.must("add", "-A", "--", *keep_out)
        self._redact_staged()
        code, out, err = self.git("commit", "-q", "--no-verify", "-m", message)
        if code != 0 and self.git("diff", "--cached", "--quiet")[0] == 0:
            return False  # nothing staged: git's commit refuses with exit 1
        if code != 0:
            raise errors.ControlRoomError(f"git commit in {self.room.root} failed: {git.told(err or out)}")
        self._head_moved = True
        return True

    def _redact_staged(self) -> None:
        """A secret of our environment in a file about to be committed (an agent wrote it into
        the room itself) is redacted first: ``sync`` never pushes one (``redact``)."""
        if not redact.table():
            return
        out = self.must("diff", "--cached", "--name-only", "--relative", "-z", "--diff-filter=AM")
        changed = [rel for rel in out.split("\0") if rel and proc.scrub_file(self.room.root / rel)]
        if changed:
            self.must("add", "--", *changed)

    def ignore_local(self) -> None:
        """``LOCAL_ONLY`` never goes to the branch, even in a room whose .gitignore predates
        it: ``.git/info/exclude`` (this clone's, never shared) lists it. Once per process."""
        if self.room.root in _IGNORING:
            return
        _IGNORING.add(self.room.root)
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
        self._seen = None
        claims_spec = f"+{claimrefs.PREFIX}*:{claimrefs.PREFIX}*"
        branch_spec = f"+refs/heads/{self.branch}:{TRACKING}{self.branch}"
        code, _, err = self.git(*FETCH, self.remote, branch_spec, claims_spec)
        if code == 0:
            return
        if "couldn't find remote ref" in err:
            code, _, err = self.git(*FETCH, self.remote, claims_spec)
            if code == 0:
                self.git("update-ref", "-d", TRACKING + self.branch)
                return
        raise errors.OfflineError(f"cannot fetch from remote {self.remote!r}: {git.told(err)}")

    def _merged(self) -> bool:
        """Whether our branch holds the remote's as last fetched (or the remote has none)."""
        theirs = self.tracking()
        return theirs is None or theirs == self._holds

    def merge(self) -> tuple[bool, list[str]]:
        """Merge the fetched branch into ours: (whether it brought anything, the paths both
        sides changed that no driver could merge, each resolved to the remote's version)."""
        theirs = self.tracking()
        if theirs is None or theirs == self._holds:
            return False, []  # nothing to merge: git is not asked
        message = f"control-room sync on {self.host}"
        # LEDGER.md is rewritten by the merge: no line may be appended meanwhile (it would be
        # lost), and those appended since our commit go in first (git refuses a changed file).
        with self.appends_held(rewriting=True):
            self.commit(f"control-room: before a merge on {self.host}")
            code, out, err = self.git("merge", "--no-edit", "--no-verify", "--no-stat", "-m", message, theirs)
            self._head_moved = True  # our branch may have moved
            if code == 0:
                self._holds = theirs
                return "Already up to date" not in out, []
            conflicted = [p for p in self.must("diff", "--name-only", "--diff-filter=U").splitlines() if p]
            if not conflicted:
                self.git("merge", "--abort")
                what = f"git merge of {self.remote}/{self.branch} in {self.room.root}"
                raise errors.ControlRoomError(f"{what} failed: {git.told(err or out)}")
            lost_claims.keep_theirs(self, conflicted)
        self._holds = theirs
        return True, conflicted

    def push(self, finishing: dict[str, str]) -> bool:
        """Push our branch, and move each finishing claim ref (task -> our claim commit) to it,
        all or nothing. False when the remote refused (it moved on: fetch and try again).

        Our copies of the refs it moves are written first, from our branch, and the push sends
        that copy: they say exactly what was pushed, and no scan is needed to know our commit.
        A push that fails puts them back (the remote's branch as scanned, dropped when it never
        was; each claim ref to the claim we leased)."""
        copy, ours = TRACKING + self.branch, f"refs/heads/{self.branch}"
        leased = {claimrefs.PREFIX + tid: sha for tid, sha in sorted(finishing.items())}
        before = self._seen.tracking if self._seen is not None else None
        self._copy([f"update {ref} {ours}" for ref in (copy, *leased)])  # (fails with no commit to push)
        self._seen = None
        leases = [f"--force-with-lease={ref}:{sha}" for ref, sha in leased.items()]
        argv = ["push", "--porcelain", "--atomic", *leases, self.remote, f"{copy}:{ours}"]
        code, out, err = self.git(*argv, *(f"{copy}:{ref}" for ref in leased))
        if code == 0:
            return True
        back = [f"update {copy} {before}" if before else f"delete {copy}"]
        self._copy(back + [f"update {ref} {sha}" for ref, sha in leased.items()])
        if any(line.startswith("!") for line in out.splitlines()):
            return False
        raise errors.OfflineError(f"cannot push to remote {self.remote!r}: {git.told(err or out)}")

    def _copy(self, commands: list[str]) -> None:
        """``git update-ref --stdin``, all or nothing, on our copies of the remote's refs."""
        self.must("update-ref", "--stdin", input_text="".join(c + "\n" for c in commands))

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
            self._head_moved = True

    # -- the whole sync -------------------------------------------------------------------------
    def sync(
        self,
        *,
        why: str,
        fetched: bool = False,
        optimistic: bool = False,
        views_alone: bool = False,
        tries: int = PUSH_TRIES,
    ) -> Synced:
        """Commit, fetch, merge, push, retried while the remote moves on, ``tries`` pushes at
        most (see the module doc). ``fetched``: we fetched a moment ago; ``optimistic``: try the
        push before any fetch (the end of a cycle: nobody may have pushed since it began);
        ``views_alone``: a change of the views only is published too (``control-room sync``; a
        cycle's syncs leave it for their next change of substance, which halves the pushes:
        bench/many_machines.py). A cycle tries twice: a push another machine beat waits for the
        next cycle, which then publishes both results at once (a claim stays ours until then),
        rather than racing every other machine for the branch while they work. Runs in the
        clone's ``turn``."""
        done = Synced()
        self.room.make_folders()
        try:
            with self.turn():
                self.ignore_local()
                wait = fetched and not (optimistic or views_alone)
                self.commit(f"control-room: {why} on {self.host}", likely=optimistic, views_wait=wait)
                crashpoint.hit("sync.committed")
                self._publish(done, fetched, optimistic, views_alone, tries)
        finally:
            self.room.make_folders()  # a merge that emptied a folder removed it
        if done.merged:  # each side counted only its own runs on the board: count the merged ledger
            routes.recount(self.room)
        return done

    def _publish(self, done: Synced, fetched: bool, optimistic: bool, views_alone: bool, tries: int) -> None:
        for attempt in range(tries):
            if attempt or not (fetched or optimistic):
                self.fetch()
            if attempt or not optimistic:
                done.said += lost_claims.set_aside(self)
                merged, conflicted = self.merge()
                done.merged = done.merged or merged
                if conflicted:
                    done.said.append(lost_claims.conflicts(self, conflicted))
            finishing = self._finishing(optimistic and not attempt)
            if not finishing and not self._news(views_alone):
                return  # nothing of ours to publish
            if self.push(finishing):
                crashpoint.hit("sync.pushed")  # on the remote; this clone's claims not let go yet
                for tid in finishing:
                    claimrefs.forget(self.room, tid)
                done.pushed = True
                return
            if attempt + 1 < tries:
                time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))  # another machine pushed first
        done.unpushed = True
        done.said.append(
            f"not pushed yet: other machines pushed first ({tries} tries); what this machine did is "
            "committed here and the next sync pushes it"
        )

    def _news(self, views_alone: bool) -> bool:
        """Whether our branch holds something the remote's lacks, worth a push: not when it
        differs only in the views (each clone refreshes its own after a merge; they go with the
        next change of substance), unless ``views_alone``."""
        theirs = self.tracking()
        if self._head_moved and theirs is not None and not views_alone:
            head: str | None = f"refs/heads/{self.branch}"  # moved since the scan: the diff says
        else:
            head = self.head()
            if theirs == head:
                return False
        if theirs is None or head is None or views_alone:
            return True
        changed = self.must("diff", "--name-only", "--relative", theirs, head).split()
        return not set(changed) <= VIEWS

    def _finishing(self, optimistic: bool) -> dict[str, str]:
        """Our claims whose task had left ``running/`` when our last commit looked (a task
        finished since has no result in what we push: it waits) and that the remote (as last
        seen) still shows as ours: they finish with this push. ``optimistic`` (no fetch): those
        whose claim push landed, as kept (``claimrefs.remember``); the push's leases check them."""
        running = self._running | set(claims.running_ids(self.room))
        kept = claimrefs.pending(self.room, pushed=optimistic)
        refs = {} if optimistic else self.refs()
        return {
            tid: sha
            for tid, sha in kept.items()
            if tid not in running and (optimistic or (tid in refs and refs[tid].sha == sha))
        }
