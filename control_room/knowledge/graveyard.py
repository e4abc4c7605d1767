"""The graveyard (SPEC §7): one tombstone per killed route, ``graveyard/<route>.md``.

A tombstone holds what the route was, the verdict that killed it, the evidence, and the exact
conditions to reopen it. While a route's tombstone says ``state: killed``, cycles refuse its
tasks, pointing at the tombstone; ``route reopen`` keeps the tombstone, adds a Reopened section
and lets tasks through again. A dead route on record is worth more than a live one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room import ledger
from control_room.errors import ConflictError, InvalidError, NotFoundError
from control_room.knowledge import routes
from control_room.ledger import events
from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.values import check_id
from control_room.store import docs
from control_room.store.files import update
from control_room.text import one_line
from control_room.timeutil import now_iso

README = "README.md"


def path(room: Room, route: str) -> Path:
    return room.root / "graveyard" / f"{check_id(route, 'route')}.md"


def read(room: Room, route: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a tombstone; cached against the file so that cycles checking
    many tasks do not parse YAML each time."""
    return docs.read(
        path(room, route),
        room.cache / f"tomb-{route}",
        missing=f"route {route} has no tombstone (graveyard/{route}.md)",
    )


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
    verdict, reopen_if = (
        one_line(str(meta.get(k, "?"))) for k in ("verdict", "reopen_if")
    )  # a refusal's line
    return f"route {route} is killed: see graveyard/{route}.md (verdict: {verdict}; reopen if: {reopen_if})"


def _evidence_lines(evidence: list[str]) -> str:
    return "".join(f"- task {t}: swarm/results/{t}/\n" for t in evidence)


def kill(room: Room, route: str, verdict: str, reopen_if: str, evidence: list[str], what: str = "") -> Path:
    """Write the tombstone (or kill a reopened route again), mark the route killed, log it."""
    if not verdict.strip() or not reopen_if.strip():
        raise InvalidError("a kill needs both --verdict (why it died) and --reopen-if (what would revive it)")
    for task_id in evidence:
        swarm.locate(room, task_id)  # evidence must be a task that exists
    p = path(room, route)
    row = routes.find(room, route) or {}
    now = now_iso()

    def change(text: str) -> str:
        if text.strip():
            meta, body = docs.split(text, p)
            if str(meta.get("state", "killed")) == "killed":
                raise ConflictError(f"route {route} is killed already (graveyard/{route}.md)")
            listed = meta.get("evidence")
            old = [str(e) for e in listed] if isinstance(listed, list) else []
            meta.update(
                state="killed",
                killed_at=now,
                verdict=verdict,
                reopen_if=reopen_if,
                evidence=old + [e for e in evidence if e not in old],
            )
            meta.pop("reopened_at", None)
            body = (
                body.rstrip()
                + f"\n\n## Killed again {now}\n\n{verdict}\n\nReopen only if: {reopen_if}\n"
                + _evidence_lines(evidence)
            )
            return docs.render(meta, body)
        described = what or row.get("title") or "(no description was given)"
        falsifier = row.get("falsifier")
        body = (
            f"# {route}\n\n## What it was\n\n{described}\n"
            + (f"\nIts falsifier: {falsifier}\n" if falsifier else "")
            + f"\n## Why it died\n\n{verdict}\n\n## Reopen only if\n\n{reopen_if}\n"
            + ("\n## Evidence\n\n" + _evidence_lines(evidence) if evidence else "")
        )
        meta = {
            "candidate": route,
            "state": "killed",
            "killed_at": now,
            "verdict": verdict,
            "reopen_if": reopen_if,
            "evidence": evidence,
        }
        return docs.render(meta, body)

    update(p, change)
    routes.set_verdict(room, route, "killed")
    ledger.append(room.ledger, events.ROUTE_KILL, route=route, detail=f"{verdict} | reopen if: {reopen_if}")
    return p


def reopen(room: Room, route: str, because: str) -> Path:
    """Reopen a killed route: the tombstone stays, with a Reopened section; tasks run again."""
    if not because.strip():
        raise InvalidError("a reopen needs --because: which reopen_if condition now holds")
    if killed(room, route) is None:
        if path(room, route).exists():
            raise ConflictError(f"route {route} is not killed (graveyard/{route}.md says it was reopened)")
        raise NotFoundError(f"route {route} has no tombstone (graveyard/{route}.md)")
    now = now_iso()
    p = path(room, route)

    def change(text: str) -> str:
        meta, body = docs.split(text, p)
        meta.update(state="reopened", reopened_at=now)
        return docs.render(meta, body.rstrip() + f"\n\n## Reopened {now}\n\n{because}\n")

    update(p, change)
    routes.set_verdict(room, route, "alive")
    ledger.append(room.ledger, events.ROUTE_REOPEN, route=route, detail=because)
    return p


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
        out.append({**meta, "candidate": p.stem})  # the file names the route, whatever its text says
    return out
