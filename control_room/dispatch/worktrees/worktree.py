"""A git worktree per route (SPEC §4 step 4, §11), when CONTROL.md names a target repository.

With ``repo:`` set (a path to a git repository, relative to the room), a task runs, and its
validator runs, in a worktree of that repository on the branch ``route/<route>`` (a task with
no route: ``task/<id>``), made from ``base_branch`` (default: the branch the repository has
checked out) the first time and reused by the route's later tasks. Worktrees live in
``control-room/worktrees/<route-name>/``, a folder that git-ignores itself. Without ``repo:``
nothing here runs: agents work in CONTROL.md ``workdir``.

Fail closed: while the repository is in the middle of a rebase, a merge, a cherry-pick or a
revert, no worktree is made or touched (``check``, called before the claim). A worktree whose
folder vanished, or whose branch was deleted, is made again, with a ledger line.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from control_room import errors, git, ledger, proc
from control_room.dispatch.shared import repo_remote
from control_room.dispatch.worktrees.place import MID, branch_of, folder, half_done, path_of
from control_room.ledger import events
from control_room.room import scaffold
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store import lock
from control_room.store.files import atomic_write, update

IGNORE = "# worktrees of the target repository, one per route: never state\n*\n"


def repo_of(room: Room, settings: Settings) -> Path | None:
    return (room.root / settings.repo).resolve() if settings.repo else None


def commit(path: Path, message: str, host: str) -> str | None:
    """Commit everything the agent changed in worktree ``path`` (the dispatcher commits, as
    control-room on ``host``: ``control_room.git``'s rule); the new commit, or None if nothing
    changed. Raises ControlRoomError if git refuses (a hook, say)."""
    code, out, err = git.run(path, "status", "--porcelain")
    if code != 0:
        raise errors.ControlRoomError(f"git status in {path} failed: {err.strip()}")
    if not out.strip():
        return None
    for what, args in (("add", ("add", "-A")), ("commit", ("commit", "-q", "-m", message))):
        code, out, err = git.run(path, *args, committer=host)
        if code != 0:
            tail = " / ".join((err.strip() or out.strip()).splitlines()[-3:])
            raise errors.ControlRoomError(f"git {what} in {path} failed: {tail}")
    return git.run(path, "rev-parse", "HEAD")[1].strip()


def ahead(room: Room, settings: Settings, path: Path) -> bool:
    """Whether the branch checked out at ``path`` holds commits the base does not (something
    to merge). When git cannot say, True: the merge queue will look."""
    repo = repo_of(room, settings)
    assert repo is not None
    code, out, _ = git.run(path, "rev-list", "--count", f"{base_of(repo, settings)}..HEAD")
    return code != 0 or out.strip() != "0"


def dirty(path: Path, *, room: Room | None = None) -> list[str]:
    """The paths with uncommitted changes in the tree at ``path`` (``git status --porcelain``),
    leaving out the room's own files when the room lives inside that tree (the ledger changes
    with every command: it is not a person's unfinished work)."""
    # --no-optional-locks: git only looks (no index refresh), so `cleanup --dry-run` changes nothing
    code, out, err = git.run(path, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all")
    if code != 0:
        raise _invalid(f"git status in {path} failed: {err.strip()}")
    names = [line[3:].split(" -> ")[-1].strip('"') for line in out.splitlines() if line.strip()]
    if room is None:
        return names
    try:
        at = room.root.resolve().relative_to(path.resolve()).as_posix()
    except ValueError:
        return names  # the room is beside the repository
    prefix = "" if at == "." else at + "/"
    tops = {item.rel.split("/")[0] for item in scaffold.plan()}  # control-room/, swarm/, AGENTS.md...
    mine = tuple(f"{prefix}{d}" for d in sorted({"STOP", *tops}))
    return [n for n in names if not any(n == m or n.startswith(m + "/") for m in mine)]


def remove(room: Room, settings: Settings, task: Task, why: str) -> bool:
    """Remove ``task``'s worktree, and its branch if merged into the base, with one
    ``worktree-remove`` line. A worktree git will not remove (uncommitted changes) stays:
    returns False."""
    repo = repo_of(room, settings)
    assert repo is not None
    path, branch = path_of(room, task), branch_of(task)
    with changing(room):
        if path.exists() and retire(repo, path) is not None:
            return False  # changes git would lose: kept
        git.run(repo, "worktree", "prune")
        dropped = drop_branch(repo, branch, base_of(repo, settings))
    ledger.append(
        room.ledger,
        events.WORKTREE_REMOVE,
        task=task["id"],
        route=task.get("route", ""),
        detail=f"{path.relative_to(room.root)} removed: {why}; {dropped}",
    )
    return True


def _invalid(why: str) -> errors.RoomInvalidError:
    return errors.RoomInvalidError(f"room invalid: {why}")


def check(room: Room, settings: Settings) -> str | None:
    """What stops worktrees from being made now (for the check before the claim), or None."""
    repo = repo_of(room, settings)
    if repo is None:
        return None
    if not repo.is_dir():
        return f"{room.control}: repo {repo} does not exist; fix repo in CONTROL.md"
    try:
        code, out, err = git.run(repo, "rev-parse", "--absolute-git-dir")
    except proc.ExecutableNotFound:
        return "git is not installed, and CONTROL.md names a repo; install git"
    if code != 0:
        return (
            f"{room.control}: repo {repo} is not a git repository ({err.strip() or 'git rev-parse failed'})"
        )
    git_dir = Path(out.strip())
    for name, what in MID.items():
        if (git_dir / name).exists():
            return (
                f"{repo} is in the middle of {what}; finish or abort it there "
                "(no worktree is made or touched until then)"
            )
    return None


def changing(room: Room) -> contextlib.AbstractContextManager[None]:
    """Held while worktrees are made or removed (``control-room/.worktrees.lock``): git reads
    every ``.git/worktrees/*`` entry while it adds one, and fails on one half made by a cycle
    beside it."""
    return lock.held(room.cr / ".worktrees.lock")


def workdir(room: Room, settings: Settings, task: Task) -> Path:
    """The worktree ``task`` runs in, made (or made again) if needed. Raises RoomInvalidError."""
    with changing(room):
        return _workdir(room, settings, task)


def _workdir(room: Room, settings: Settings, task: Task) -> Path:
    repo = repo_of(room, settings)
    assert repo is not None
    why = check(room, settings)
    if why is not None:
        raise _invalid(why)
    branch = branch_of(task)
    path = path_of(room, task)
    half = half_done(path)
    if half is not None:  # a person's rebase there detaches the branch: never run over it or remake it
        raise _invalid(
            f"the worktree {path} is in the middle of {half}; finish or abort it there "
            "(its task waits until then)"
        )
    registered = _registered(repo)
    if settings.repo_remote:  # what other machines merged, and did on this route
        repo_remote.refresh_base(repo, settings, base_of(repo, settings))
        here = path if registered.get(path) == branch and (path / ".git").exists() else None
        repo_remote.bring_branch(repo, settings, branch, here)
    if registered.get(path) == branch and (path / ".git").exists():
        _catch_up(path, base_of(repo, settings))
        return path  # reused: the route's earlier work is there
    has_branch = git.run(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")[0] == 0
    rebuilt = path in registered or path.exists()
    if rebuilt:  # the folder vanished, or its branch went: start it again cleanly
        git.run(repo, "worktree", "remove", "--force", str(path))
        git.run(repo, "worktree", "prune")
    if not (folder(room) / ".gitignore").exists():
        folder(room).mkdir(parents=True, exist_ok=True)
        atomic_write(folder(room) / ".gitignore", IGNORE, durable=False)
    if has_branch:
        code, _, err = git.run(repo, "worktree", "add", str(path), branch)
        base = branch
    else:
        base = base_of(repo, settings)
        code, _, err = git.run(repo, "worktree", "add", "-b", branch, str(path), base)
        if code == 0 and not settings.base_branch:
            _keep_base(room, base)
    if code != 0:
        raise _invalid(f"git worktree add {path} ({branch} from {base}) failed: {err.strip()}")
    event = events.WORKTREE_REBUILT if rebuilt else events.WORKTREE_ADD
    what = "made again" if rebuilt else "made"
    ledger.append(
        room.ledger,
        event,
        task=task["id"],
        route=task.get("route", ""),
        detail=f"{branch} {what} at {path.relative_to(room.root)} from {base}",
    )
    return path


def base_of(repo: Path, settings: Settings) -> str:
    """The branch worktrees start from and integration fast-forwards: CONTROL.md
    ``base_branch``, else the repository's current branch."""
    return settings.base_branch or _current(repo)


def _catch_up(path: Path, base: str) -> None:
    """A reused worktree whose branch holds nothing the base lacks (its work was merged) moves
    up to the base, so the route's next task starts from what other routes merged meanwhile
    (a task's ``deps`` on them). A branch with work of its own is left to the merge queue."""
    code, out, _ = git.run(path, "rev-list", "--count", f"{base}..HEAD")
    if code == 0 and out.strip() == "0":
        git.run(path, "merge", "--ff-only", "-q", base)  # refused (a change in the way): left as it is


def _keep_base(room: Room, base: str) -> None:
    """The first worktree made from the current branch fixes it as the base: written into
    CONTROL.md (``base_branch``), so that a person switching branches in the repository later
    does not change what routes merge into (the merge queue refuses instead)."""
    wrote: list[bool] = []

    def change(text: str) -> str:
        wrote.clear()
        if settings_file.parse(text, str(room.control)).base_branch:
            return text  # a person, or a cycle beside this one, set it meanwhile
        wrote.append(True)
        return settings_file.set_value(text, "base_branch", base)

    update(room.control, change)
    if wrote:
        ledger.append(
            room.ledger,
            events.WARNING,
            detail=f"base_branch was empty: set to {base}, the repository's current branch, in CONTROL.md",
        )


def _current(repo: Path) -> str:
    code, out, _ = git.run(repo, "rev-parse", "--abbrev-ref", "HEAD")
    if code != 0 or out.strip() in ("", "HEAD"):
        raise _invalid(f"{repo} has no current branch to start worktrees from; set base_branch in CONTROL.md")
    return out.strip()


def _registered(repo: Path) -> dict[Path, str]:
    """The repository's worktrees: path -> branch (``""`` when detached or the branch is gone)."""
    code, out, _ = git.run(repo, "worktree", "list", "--porcelain")
    found: dict[Path, str] = {}
    current: Path | None = None
    for line in out.splitlines() if code == 0 else ():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :]).resolve()
            found[current] = ""
        elif line.startswith("branch refs/heads/") and current is not None:
            found[current] = line[len("branch refs/heads/") :]
    return found


# For `cleanup` (dispatch/merge/sweep.py): finished routes' worktrees -----------------------------------


def under(room: Room, settings: Settings) -> dict[Path, str]:
    """The repository's worktrees in ``control-room/worktrees/``: path -> branch (``""`` when
    detached or the branch is gone)."""
    repo = repo_of(room, settings)
    assert repo is not None
    top = folder(room).resolve()
    return {p: b for p, b in _registered(repo).items() if p.parent == top}


def retire(repo: Path, path: Path) -> str | None:
    """``git worktree remove`` (never ``--force``: git refuses a worktree with changes it would
    lose, or a locked one), then ``git worktree prune``. None once removed, else git's reason."""
    code, out, err = git.run(repo, "worktree", "remove", str(path))
    if code != 0:
        return " / ".join((err.strip() or out.strip()).splitlines()[-2:]) or f"git exited {code}"
    git.run(repo, "worktree", "prune")
    return None


def drop_branch(repo: Path, branch: str, base: str) -> str:
    """Delete ``branch`` with ``git branch -d`` if it is merged into ``base``; an unmerged branch
    stays (its work is kept in git). Says what happened, for the ledger line."""
    if git.run(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")[0] != 0:
        return f"branch {branch} was gone already"
    if git.run(repo, "merge-base", "--is-ancestor", branch, base)[0] != 0:
        return f"branch {branch} kept: not merged into {base}, its work stays in git"
    code, out, err = git.run(repo, "branch", "-d", branch)
    if code != 0:
        why = (err.strip() or out.strip()).splitlines()
        return f"branch {branch} kept: git branch -d refused ({why[-1] if why else code})"
    return f"branch {branch} deleted (merged into {base})"
