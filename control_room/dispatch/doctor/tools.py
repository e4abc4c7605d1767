"""``doctor``'s checks of what the room runs with: each adapter CONTROL.md or a role names (its
executable, its version, with ``--check`` a one-turn hello), git and the target repository with
its worktrees, and the free disk. Each reuses the cycle's own code (``resolve``,
``pick``'s PATH look-up, ``hello``, ``worktrees``)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from control_room import adapters, errors, git, proc
from control_room.dispatch.doctor.finding import (
    FAIL,
    FIX,
    OK,
    WARN,
    Check,
    Context,
    Finding,
    rel,
    short,
    split_fix,
    unchecked,
)
from control_room.dispatch.queue import environment
from control_room.dispatch.queue.resolve import resolve
from control_room.dispatch.run import hello
from control_room.dispatch.worktrees import place, worktree
from control_room.room import gitmerge, roles
from control_room.room.tasks import Task
from control_room.store.files import read_optional
from control_room.timeutil import parse_duration, parse_iso
from control_room.words import count

GIB, MIB = 2**30, 2**20
VERSION_TIMEOUT_S = 10.0


def _named(ctx: Context) -> tuple[dict[str, list[str]], list[Finding]]:
    """adapter -> where it is named (CONTROL.md's keys, then roles in name order); and a finding
    for each role file that cannot be read."""
    assert ctx.settings is not None
    s = ctx.settings
    named: dict[str, list[str]] = {}
    bad: list[Finding] = []
    named.setdefault(s.default_adapter, []).append("CONTROL.md default_adapter")
    for name in s.adapters:
        named.setdefault(name, []).append("CONTROL.md adapters")
    if s.orchestrator_adapter:
        named.setdefault(s.orchestrator_adapter, []).append("CONTROL.md orchestrator_adapter")
    folder = ctx.room.root / "agents"
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
        try:
            meta, _ = roles.read(ctx.room, path.stem)
        except errors.ControlRoomError as exc:
            what = short(ctx.room, str(exc))
            bad.append(Finding(f"role {path.stem}", FAIL, what, f"fix {rel(ctx.room, path)}"))
            continue
        if meta.get("adapter"):
            named.setdefault(str(meta["adapter"]), []).append(f"agents/{path.stem}.md")
    return named, bad


def adapter_checks(ctx: Context) -> list[Finding]:
    """Each adapter CONTROL.md or a role names: known, its setup accepted, its executable on the
    PATH a cycle gives the agent, its version; with ``--check``, a hello through it."""
    if ctx.settings is None:
        return [unchecked("adapters")]
    named, out = _named(ctx)
    for name, where in named.items():
        out.append(_adapter(ctx, name, where))
    return out


def _adapter(ctx: Context, name: str, where: list[str]) -> Finding:
    assert ctx.settings is not None
    room, check = ctx.room, f"adapter {name}"
    said = f"named by {', '.join(where)}"
    if not adapters.known(name):
        return Finding(
            check,
            FAIL,
            f"{where[0]} names {name!r}, which is not an adapter (known: {', '.join(adapters.names())})",
            f"fix {'control-room/CONTROL.md' if where[0].startswith('CONTROL.md') else where[0]}",
        )
    role = next((w.split("/")[1][: -len(".md")] for w in where if w.startswith("agents/")), None)
    task: Task = {
        "id": "doctor",
        "objective": "doctor",
        "falsifier": "the adapter cannot be found",
        "validator": ["true"],
        "max_cost_usd": 0.0,
        "wall_clock_s": 60.0,
        "kill_condition": "never: a check, not a route",
        "adapter": name,
    }
    if role:
        task["role"] = role
    try:
        plan = resolve(room, ctx.settings, task)
        if name == "probe":  # built in: it runs each task's own command
            return Finding(check, OK, f"built in: runs each task's own command ({said})")
        exe = plan.adapter.executable(plan.invocation(task, "", room.cr / "brief.md", room.root))
    except errors.ControlRoomError as exc:
        what, fix = split_fix(short(room, str(exc)))
        return Finding(check, FAIL, what, fix)
    path = proc.which(exe, environment.agent_env(room, ctx.settings, task)) if exe else None
    if path is None:
        return Finding(check, FAIL, f"{exe} is not on the PATH agents get ({said})", plan.adapter.install)
    if plan.adapter.binary is None:  # `command`: a person's program; asking it --version could run it
        found = Finding(check, OK, f"{path} ({said})")
    else:
        version, why = _version(path, room.root)
        if version is None:
            what = f"{path} found, but `{exe} --version` {why} ({said})"
            found = Finding(check, WARN, what, f"run `{exe} --version` to see why")
        else:
            found = Finding(check, OK, f"{path}, {version} ({said})")
    if ctx.hello and name not in hello.BUILT_IN:
        said_hello = hello.check(room, ctx.settings, name, timeout_s=ctx.timeout_s)
        hello.log(room, said_hello)
        if not said_hello.ok:
            return Finding(
                check,
                FAIL,
                f"{found.detail}; hello: {short(room, said_hello.line)}",
                f"`control-room adapters --check {name}` tries again; see docs/adapters.md",
            )
        found.detail += f"; hello: {said_hello.line}"
    return found


def _version(path: str, cwd: Path) -> tuple[str | None, str]:
    """The first line ``PATH --version`` prints, or (None, what went wrong)."""
    try:
        code, out, err = proc.call([path, "--version"], cwd=cwd, timeout_s=VERSION_TIMEOUT_S)
    except proc.TimedOut:
        return None, f"did not answer within {VERSION_TIMEOUT_S:g}s"
    except (OSError, proc.ExecutableNotFound) as exc:
        return None, f"could not run ({exc})"
    first = next((ln.strip() for ln in (out or err).splitlines() if ln.strip()), "")
    if code != 0:
        return None, f"exited {code}" + (f": {first[:80]}" if first else "")
    return first[:80] or "(it printed nothing)", ""


def git_check(ctx: Context) -> list[Finding]:
    """git is installed (needed with CONTROL.md ``repo``, and for a room kept in git)."""
    path = proc.which("git")
    repo = bool(ctx.settings and ctx.settings.repo)
    if path is None:
        why = "CONTROL.md names a repo" if repo else "needed only with repo: or a room kept in git"
        return [Finding("git", FAIL if repo else WARN, f"git is not installed ({why})", "install git")]
    version, why = _version(path, ctx.room.root)
    if version is None:
        return [Finding("git", FAIL if repo else WARN, f"{path}: `git --version` {why}", "reinstall git")]
    return [Finding("git", OK, f"{version} at {path}")]


def repo_check(ctx: Context) -> list[Finding]:
    """With ``repo:``: it exists, is a git repository, is not mid-operation
    (``worktree.check``, as before a claim), and has its base branch checked out."""
    if ctx.settings is None:
        return [unchecked("repo")]
    room, s = ctx.room, ctx.settings
    repo = worktree.repo_of(room, s)
    if repo is None:
        return [Finding("repo", OK, "none (CONTROL.md repo: is empty): agents work in the work dir")]
    why = worktree.check(room, s)
    if why is not None:
        what, _, fix = short(room, why).partition("; ")
        return [Finding("repo", FAIL, what, fix)]
    code, out, _ = git.run(repo, "rev-parse", "--abbrev-ref", "HEAD")
    current = out.strip() if code == 0 else ""
    if not s.base_branch:
        on = f"on {current}" if current not in ("", "HEAD") else "with no branch checked out"
        return [
            Finding(
                "repo",
                OK,
                f"{repo} is a git repository {on} (base_branch is empty: the first worktree sets it "
                "to the current branch)",
            )
        ]
    if current != s.base_branch:
        return [
            Finding(
                "repo",
                WARN,
                f"{repo} has {current or '(nothing)'} checked out, not the base branch {s.base_branch}",
                f"`git -C {repo} switch {s.base_branch}` (the merge queue waits until then)",
            )
        ]
    return [Finding("repo", OK, f"{repo} is a git repository on its base branch {s.base_branch}")]


def _worktrees(ctx: Context) -> tuple[list[Path], list[Path], int] | None:
    """(registered worktrees whose folder is gone, folders git does not know, how many are
    registered); None when there is no repository to ask."""
    s = ctx.settings
    if s is None or not s.repo or worktree.check(ctx.room, s) is not None:
        return None
    known = worktree.under(ctx.room, s)
    dead = sorted(p for p in known if not p.exists())
    top = place.folder(ctx.room)
    present = sorted(p.resolve() for p in top.iterdir() if p.is_dir()) if top.is_dir() else []
    stray = [p for p in present if p not in known]
    return dead, stray, len(known)


def worktree_check(ctx: Context) -> list[Finding]:
    """Each worktree under control-room/worktrees/ is registered with git and its folder is there."""
    found = _worktrees(ctx)
    if found is None:
        why = "no repo" if ctx.settings is not None and not ctx.settings.repo else "the repo is not usable"
        return [Finding("worktrees", OK, f"none to check ({why})")]
    dead, stray, n = found
    room, out = ctx.room, []
    if dead:
        names = ", ".join(rel(room, p) for p in dead)
        out.append(
            Finding(
                "worktrees",
                WARN,
                f"{count(len(dead), 'dead worktree')} (registered with git, folder gone): {names}",
                f"{FIX} prunes {'it' if len(dead) == 1 else 'them'} (`git worktree prune`)",
                fixable=True,
            )
        )
    for p in stray:
        out.append(
            Finding(
                "worktrees",
                WARN,
                f"{rel(room, p)} is not a worktree git knows",
                "look inside, and remove it by hand if nothing there is needed",
            )
        )
    if not out:
        out.append(Finding("worktrees", OK, f"{count(n, 'worktree')}, each registered with git and present"))
    return out


def prune(ctx: Context) -> list[str]:
    """``git worktree prune``: drops git's records of worktrees whose folder is gone, nothing else."""
    found = _worktrees(ctx)
    assert found is not None and ctx.settings is not None
    repo = worktree.repo_of(ctx.room, ctx.settings)
    assert repo is not None
    with worktree.changing(ctx.room):
        code, out, err = git.run(repo, "worktree", "prune")
    if code != 0:
        raise errors.ControlRoomError(f"git worktree prune in {repo} failed: {(err or out).strip()}")
    return [f"pruned {', '.join(rel(ctx.room, p) for p in found[0])} (`git worktree prune` in {repo})"]


def disk(ctx: Context) -> list[Finding]:
    """Free space on the room's disk against CONTROL.md ``min_free_mb`` (a cycle needs it) and
    ``min_free_gb`` (``cleanup`` frees space below it)."""
    if ctx.settings is None:
        return [unchecked("disk")]
    s = ctx.settings
    free = shutil.disk_usage(ctx.room.root).free
    if free < s.min_free_mb * MIB:
        return [
            Finding(
                "disk",
                FAIL,
                f"{free / MIB:.1f} MiB free on the room's disk, below CONTROL.md min_free_mb {s.min_free_mb}",
                "free some space (`control-room cleanup` removes finished tasks' results); cycles claim "
                "nothing until then",
            )
        ]
    if s.min_free_gb > 0 and free < s.min_free_gb * GIB:
        return [
            Finding(
                "disk",
                WARN,
                f"{free / GIB:.1f} GiB free on the room's disk, below CONTROL.md min_free_gb {s.min_free_gb}",
                "`control-room cleanup` removes finished tasks' results, oldest first",
            )
        ]
    return [Finding("disk", OK, f"{free / GIB:.1f} GiB free on the room's disk")]


def schedule_check(ctx: Context) -> list[Finding]:
    """The schedule installed for this room (``schedule --install``) and when a cycle last ran:
    a schedule that has not fired for three of its periods is a WARN."""
    from control_room.dispatch.schedule import install  # crontab -l, the launchd and systemd folders

    found = install.installed(ctx.room)
    last = install.last_fired(ctx.room)
    when = f"a cycle last ran at {last}" if last else "no cycle has run yet"
    if not found:
        return [Finding("schedule", OK, f"none installed for this room (cycles by hand or `run`); {when}")]
    what = ", ".join(f"{i.kind} every {i.every}" for i in found)
    periods = [parse_duration(i.every) for i in found if i.every != "?"]  # "?": edited by hand
    late = bool(periods) and last is not None and time.time() - parse_iso(last) > 3 * min(periods)
    if late:
        return [
            Finding(
                "schedule",
                WARN,
                f"{what} installed, but {when}, more than three periods ago",
                "check that the scheduler runs (`systemctl status cron`, `launchctl list`, "
                "`systemctl --user list-timers`) and read control-room/cycle.log",
            )
        ]
    return [Finding("schedule", OK, f"{what} installed; {when}")]


def merge_drivers_check(ctx: Context) -> list[Finding]:
    """With the room in a git work tree: LEDGER.md, ROUTES.md and the views merge with
    control-room's drivers (their lines in control-room/.gitattributes, the drivers in this
    clone's git config)."""

    lacking = gitmerge.missing(ctx.room.root)
    if lacking is None:
        return [Finding("merge-drivers", OK, "the room is in no git work tree: nothing to merge")]
    attributes = set((read_optional(ctx.room.cr / ".gitattributes") or "").splitlines())
    unnamed = [line for line in gitmerge.attributes().splitlines() if line not in attributes]
    if unnamed:
        return [
            Finding(
                "merge-drivers",
                WARN,
                f"control-room/.gitattributes lacks {', '.join(f'`{u}`' for u in unnamed)} (a room made "
                "before the drivers: git's text merge conflicts, or `merge=union` duplicates lines)",
                "delete control-room/.gitattributes and run `control-room init` again",
            )
        ]
    if lacking:
        return [
            Finding(
                "merge-drivers",
                WARN,
                f"this clone's git config lacks {', '.join(lacking)}: a pull where both sides changed "
                "those files conflicts",
                "`control-room init` registers them (once per clone: git does not copy its config)",
            )
        ]
    drivers = ", ".join(d.name for d in gitmerge.DRIVERS)
    return [Finding("merge-drivers", OK, f"LEDGER.md, ROUTES.md and the views merge with {drivers}")]


CHECKS = (
    Check("adapters", adapter_checks),
    Check("git", git_check),
    Check("repo", repo_check),
    Check("worktrees", worktree_check, prune),
    Check("disk", disk),
    Check("schedule", schedule_check),
    Check("merge-drivers", merge_drivers_check),
)
