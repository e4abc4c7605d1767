"""The graveyard (SPEC §7): one tombstone per killed route, ``graveyard/<route>.md``.

A tombstone holds what the route was, the verdict that killed it, the evidence, and the exact
conditions to reopen it. While a route's tombstone says ``state: killed``, cycles refuse its
tasks, pointing at the tombstone; ``route reopen`` keeps the tombstone, adds a Reopened section
and lets tasks through again. A dead route on record is worth more than a live one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room.errors import ConflictError, InvalidError, NotFoundError
from control_room.room.layout import Room
from control_room.timeutil import now_iso

README = "README.md"


def path(room: Room, route: str) -> Path:
    from control_room.room.tasks import is_id

    if not is_id(route):
        raise InvalidError(f"{route!r} is not a route id (ids match [a-z0-9][a-z0-9._-]{{0,63}})")
    return room.root / "graveyard" / f"{route}.md"


def read(room: Room, route: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a tombstone; cached against the file so that cycles checking
    many tasks do not parse YAML each time."""
    from control_room.store import cache
    from control_room.store.files import read_text
    from control_room.store.markdown import front_matter

    p = path(room, route)
    if not p.exists():
        raise NotFoundError(f"route {route} has no tombstone (graveyard/{route}.md)")

    def parse() -> list[Any]:
        meta, body = front_matter(read_text(p), p)
        return [_plain(meta), body]

    meta, body = cache.derived(room.cache / f"tomb-{route}", p, parse)
    return meta, body


def _plain(meta: dict[str, Any]) -> dict[str, Any]:
    """YAML dates and the like as strings, so the values are JSON and compare simply."""
    return {
        str(k): (v if isinstance(v, (str, int, float, bool, list, type(None))) else str(v))
        for k, v in meta.items()
    }


def killed(room: Room, route: str) -> dict[str, Any] | None:
    """The tombstone's front matter if ``route`` is killed now, else None. A plain existence
    test first: a route without a tombstone costs one stat."""
    if not route or not path(room, route).exists():
        return None
    meta, _ = read(room, route)
    return meta if str(meta.get("state", "killed")) == "killed" else None


def refusal(room: Room, route: str) -> str | None:
    """Why a task on ``route`` is refused, pointing at the tombstone; None if it may run."""
    try:
        meta = killed(room, route)
    except InvalidError as exc:  # fail closed for this route only
        return f"graveyard/{route}.md cannot be read ({exc}); fix or remove it"
    if meta is None:
        return None
    return (
        f"route {route} is killed: see graveyard/{route}.md (verdict: {meta.get('verdict', '?')}; "
        f"reopen if: {meta.get('reopen_if', '?')})"
    )


def kill(room: Room, route: str, verdict: str, reopen_if: str, evidence: list[str], what: str = "") -> Path:
    """Write the tombstone (or kill a reopened route again), mark the route killed, log it."""
    import frontmatter

    from control_room import ledger
    from control_room.knowledge import routes
    from control_room.room import swarm
    from control_room.store.files import update

    if not verdict.strip() or not reopen_if.strip():
        raise InvalidError("a kill needs both --verdict (why it died) and --reopen-if (what would revive it)")
    for task_id in evidence:
        swarm.locate(room, task_id)  # evidence must be a task that exists
    p = path(room, route)
    row = next((r for r in routes.rows(room) if r.get("route") == route), {})
    now = now_iso()

    def change(text: str) -> str:
        if text.strip():
            post = frontmatter.loads(text)
            if str(post.metadata.get("state", "killed")) == "killed":
                raise ConflictError(f"route {route} is killed already (graveyard/{route}.md)")
            old = [str(e) for e in post.metadata.get("evidence") or []]
            post.metadata.update(
                state="killed",
                killed_at=now,
                verdict=verdict,
                reopen_if=reopen_if,
                evidence=old + [e for e in evidence if e not in old],
            )
            post.metadata.pop("reopened_at", None)
            post.content = (
                post.content.rstrip() + f"\n\n## Killed again {now}\n\n{verdict}\n\n"
                f"Reopen only if: {reopen_if}\n"
                + ("".join(f"- task {t}: swarm/results/{t}/\n" for t in evidence) if evidence else "")
            )
            return frontmatter.dumps(post, sort_keys=False) + "\n"
        described = what or row.get("title") or "(no description was given)"
        falsifier = row.get("falsifier")
        body = (
            f"# {route}\n\n## What it was\n\n{described}\n"
            + (f"\nIts falsifier: {falsifier}\n" if falsifier else "")
            + f"\n## Why it died\n\n{verdict}\n\n## Reopen only if\n\n{reopen_if}\n"
            + (
                "\n## Evidence\n\n" + "".join(f"- task {t}: swarm/results/{t}/\n" for t in evidence)
                if evidence
                else ""
            )
        )
        post = frontmatter.Post(
            body,
            candidate=route,
            state="killed",
            killed_at=now,
            verdict=verdict,
            reopen_if=reopen_if,
            evidence=evidence,
        )
        return frontmatter.dumps(post, sort_keys=False) + "\n"

    update(p, change)
    routes.set_verdict(room, route, "killed")
    ledger.append(
        room.ledger, "route-kill", route=route, outcome="killed", detail=f"{verdict} | reopen if: {reopen_if}"
    )
    _refresh(room)
    return p


def reopen(room: Room, route: str, because: str) -> Path:
    """Reopen a killed route: the tombstone stays, with a Reopened section; tasks run again."""
    import frontmatter

    from control_room import ledger
    from control_room.knowledge import routes
    from control_room.store.files import update

    if not because.strip():
        raise InvalidError("a reopen needs --because: which reopen_if condition now holds")
    if killed(room, route) is None:
        if path(room, route).exists():
            raise ConflictError(f"route {route} is not killed (graveyard/{route}.md says it was reopened)")
        raise NotFoundError(f"route {route} has no tombstone (graveyard/{route}.md)")
    now = now_iso()

    def change(text: str) -> str:
        post = frontmatter.loads(text)
        post.metadata.update(state="reopened", reopened_at=now)
        post.content = post.content.rstrip() + f"\n\n## Reopened {now}\n\n{because}\n"
        return frontmatter.dumps(post, sort_keys=False) + "\n"

    p = path(room, route)
    update(p, change)
    routes.set_verdict(room, route, "alive")
    ledger.append(room.ledger, "route-reopen", route=route, outcome="reopened", detail=because)
    _refresh(room)
    return p


def _refresh(room: Room) -> None:
    """DIGEST.md and CURRENT_CONTEXT.md, so the next prompt already knows."""
    from control_room.knowledge import digest
    from control_room.views import context

    digest.refresh(room)
    context.refresh(room)


def tombstones(room: Room) -> list[dict[str, Any]]:
    """Every tombstone's front matter (README.md is the graveyard's own guide, not a tombstone)."""
    folder = room.root / "graveyard"
    out = []
    for p in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        if p.name == README:
            continue
        try:
            meta, _ = read(room, p.stem)
        except (InvalidError, NotFoundError) as exc:
            out.append({"candidate": p.stem, "state": "unreadable", "problem": str(exc)})
            continue
        out.append({"candidate": p.stem, **meta})
    return out
