"""The room's history, folded from the ledger: per route (or ``task:<id>`` for a task without
one) its attempts, passes, fails, spend, last decisions, best result and current streak of
identical failures (a death loop once it reaches CONTROL.md ``death_loop_n``); the recurring
failure causes; the unsupported CONFIRMED claims; the runs whose brief overflowed the model's
context window (a task to split). Those are the route's own runs: a review's or an arbiter's run
(its ``result`` line names the task it ``serves``) is counted apart, as the route's ``reviews``
and ``review_spend``, and is never its best, its last decisions or a link of a streak (its
unsupported claims are listed with the rest).

The fold is kept in ``.cache/digest`` and brought up to date incrementally: each call reads
only the ledger lines appended since the last one (``ledger.follow``). DIGEST.md, findings,
``status`` read it; the cycle's death-loop holds read a fold of their own, ``.cache/death-loops``,
that keeps only the routes on a streak (``held``).
"""

from __future__ import annotations

from typing import Any

from control_room.ledger import events, result
from control_room.ledger.follow import follow, is_kept
from control_room.ledger.line import Col, unescape
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.store import cache
from control_room.text import one_line

KIND = "digest-6"  # 3: decisions and failures on one line; 4: reviews counted apart; 5: fingerprints;
# 6: tasks without a route past the most recent TASKS_KEPT folded into one entry (``older_tasks``)
LAST = 5  # decisions kept per route
STREAK_LINES = 10  # lines kept as evidence of a streak
CLEARS = (events.ROUTE_RESUME.name, events.ROUTE_REOPEN.name, events.ROUTE_KILL.name)  # a person acted


def _init() -> dict[str, Any]:
    return {
        "routes": {},
        "causes": {},
        "unsupported": [],
        "unsupported_n": 0,
        "last_time": "",
        "proposals": {},
        "tasks": 0,  # entries ``task:<id>`` in routes
        "older_tasks": _new_route(),  # what the entries of tasks without a route that were let go said
        "older_n": 0,  # how many were
    }


def _new_route() -> dict[str, Any]:
    return {
        "attempts": 0,
        "passes": 0,
        "fails": 0,
        "spend": 0.0,
        "reviews": 0,  # review and arbiter runs about the route's tasks, not its own runs
        "review_spend": 0.0,
        "last": [],
        "best": None,
        "last_time": "",
        "streak": _no_streak(),
        "decision_streak": _no_streak(),
        "fp_streak": _no_streak(),  # failed rounds in a row with the same fingerprint (no progress)
        "announced": False,
    }


def _no_streak() -> dict[str, Any]:
    return {"cause": "", "n": 0, "lines": []}


def _unsupported(state: dict[str, Any], entry: list[str]) -> None:
    state["unsupported_n"] += 1
    state["unsupported"] = (state["unsupported"] + [entry])[-20:]


_RESULT, _DEATH_LOOP, _UNSUPPORTED = events.RESULT.name, events.DEATH_LOOP.name, events.UNSUPPORTED_CLAIM.name
_PROPOSED = events.KILL_PROPOSED.name
_FOLDED = frozenset((_RESULT, _DEATH_LOOP, _UNSUPPORTED, _PROPOSED, *CLEARS))  # the events the history reads


def _fold(state: dict[str, Any], cells: list[str]) -> None:
    time = state["last_time"] = cells[Col.TIME]
    event = unescape(cells[Col.EVENT])
    if event not in _FOLDED:
        return
    eid, task, route = cells[Col.ID], unescape(cells[Col.TASK]), unescape(cells[Col.ROUTE])
    key = route or (f"task:{task}" if task else "")
    if event in CLEARS and key:
        r = state["routes"].get(key)
        if r is not None:
            _clear(r)
        state["proposals"].pop(key, None)
        return
    if event == _PROPOSED and key:
        state["proposals"][key] = [time, eid, task, unescape(cells[Col.DETAIL])]
        return
    if event == _DEATH_LOOP and key in state["routes"]:
        state["routes"][key]["announced"] = True
        return
    if event == _UNSUPPORTED:  # lines written before 0.2
        _unsupported(state, [time, eid, task, route, unescape(cells[Col.DETAIL])])
        return
    if event != _RESULT or not key:
        return
    outcome = unescape(cells[Col.OUTCOME])
    try:
        cost = float(cells[Col.COST_USD])
    except ValueError:
        cost = 0.0
    run = result.read(unescape(cells[Col.DETAIL]))
    decision, failed = one_line(run.decision), one_line(run.failed)  # shown in views and prompts
    if run.unsupported:
        why = f"report says CONFIRMED success; validator {run.validator or 'failed'}"
        _unsupported(state, [time, eid, task, route, why])
    if failed.startswith(result.TOO_BIG):  # a finding: split it
        state["too_big"] = [*state.get("too_big", []), [time, eid, task, route, failed]][-20:]
    if run.serves:  # a review or an arbiter: counted apart, on the route (or task) it serves
        key = route or f"task:{run.serves}"
    r = state["routes"].get(key)
    if r is None:
        r = state["routes"][key] = _new_route()
        state["tasks"] += key.startswith("task:")
    if run.serves:
        r["reviews"] += 1
        r["review_spend"] = round(r["review_spend"] + cost, 6)
        return
    r["attempts"] += 1
    r["spend"] = round(r["spend"] + cost, 6)
    r["last_time"], r["at"] = time, state["lines"]  # at: the line's number, for lines of one second
    r["last"] = (r["last"] + [[time, task, outcome, decision, failed]])[-LAST:]
    if outcome == "pass":
        r["passes"] += 1
        r["best"] = [time, task, decision]
        _clear(r)
        state["proposals"].pop(key, None)  # it made progress after all
        return
    r["fails"] += 1
    c = result.cause(failed or decision)
    state["causes"][c] = state["causes"].get(c, 0) + 1
    evidence = [time, eid, task, (failed or decision)[:200]]
    # The probe's DECISION only restates its exit code: not a decision that can repeat.
    own_decision = result.cause(decision) if unescape(cells[Col.ADAPTER]) != "probe" else ""
    streaks = (
        ("streak", result.cause(failed)),
        ("decision_streak", own_decision),
        ("fp_streak", run.fingerprint),
    )
    for name, value in streaks:
        s = r[name]
        if value and s["cause"] == value:
            s["n"] += 1
            s["lines"] = (s["lines"] + [evidence])[-STREAK_LINES:]
        else:
            r[name] = {"cause": value, "n": 1 if value else 0, "lines": [evidence] if value else []}


TASKS_KEPT = 256  # entries of tasks without a route kept, the most recently active, beyond those on a streak


def _fold_digest(state: dict[str, Any], cells: list[str]) -> None:
    """``_fold``, keeping the history bounded in a room that runs thousands of tasks without a
    route: past ``2 * TASKS_KEPT`` such entries, all but the ``TASKS_KEPT`` most recently active
    are let go, except those a death loop, a streak or a proposed kill reads, their counts and
    spend added up in ``older_tasks`` (DIGEST.md's spend table shows them as one row). A digest
    of ``digest_max_bytes`` (8 KB by default) shows about 40 entries: the ones let go are past
    what it would show."""
    _fold(state, cells)
    if state["tasks"] > 2 * TASKS_KEPT:
        _let_go(state)


def _let_go(state: dict[str, Any]) -> None:
    routes, older = state["routes"], state["older_tasks"]
    tasks = [(r["last_time"], r.get("at", 0), k) for k, r in routes.items() if k.startswith("task:")]
    tasks.sort(reverse=True)
    for _, _, key in tasks[TASKS_KEPT:]:
        r = routes[key]
        if _streaking(r) or key in state["proposals"]:
            continue
        for n in ("attempts", "passes", "fails", "reviews"):
            older[n] += r[n]
        for n in ("spend", "review_spend"):
            older[n] = round(older[n] + r[n], 6)
        state["older_n"] += 1
        del routes[key]
    state["tasks"] = sum(1 for k in routes if k.startswith("task:"))


def _clear(r: dict[str, Any]) -> None:
    r["streak"], r["decision_streak"], r["fp_streak"], r["announced"] = (
        _no_streak(),
        _no_streak(),
        _no_streak(),
        False,
    )


def stuck(st: dict[str, Any], key: str, n: int) -> dict[str, Any] | None:
    """The streak of ``n`` or more failed rounds in a row with one fingerprint on ``key`` (a
    route, or ``task:<id>``), when no kill was proposed for it yet; else None."""
    r = st["routes"].get(key)
    if r is None or key in st["proposals"]:
        return None
    streak = r["fp_streak"]
    return streak if streak["n"] >= n else None


def state(room: Room, *, whole: bool = False) -> tuple[dict[str, Any], int]:
    """The digest state, up to date; and how many ledger bytes this refresh read. On a big
    ledger's first days maybe of its recent lines only (``ledger.follow``; ``whole``: all)."""
    return follow(room.ledger, room.cache / "digest", KIND, _init, _fold_digest, whole=whole)


def reviews(room: Room) -> dict[str, dict[str, Any]]:
    """Per route, the review and arbiter runs about its tasks (``runs``, ``spend_usd``), counted
    apart from the route's own; only routes that have some. No ledger: none."""
    try:
        st, _ = state(room)
    except FileNotFoundError:
        return {}
    return {
        key: {"runs": r["reviews"], "spend_usd": r["review_spend"]}
        for key, r in sorted(st["routes"].items())
        if r["reviews"] and not key.startswith("task:")
    }


def death_loops(st: dict[str, Any], n: int) -> dict[str, dict[str, Any]]:
    """Routes (or ``task:<id>`` keys) failing the same way ``n`` or more times in a row."""
    out = {}
    for key, r in st["routes"].items():
        for name, what in (("streak", "error"), ("decision_streak", "decision")):
            s = r[name]
            if s["n"] >= n:
                out[key] = {
                    "same": what,
                    "cause": s["cause"],
                    "n": s["n"],
                    "lines": s["lines"],
                    "announced": r.get("announced", False),
                }
                break
    return out


def held(room: Room, settings: Settings) -> dict[str, dict[str, Any]]:
    """Routes held because of a death loop (fail closed until a person or the orchestrator acts).
    Asked by every cycle under the claim lock, so from a fold of its own (``.cache/death-loops``)
    that keeps only the routes on a streak: its size is that of the room's trouble, not of its
    history (the whole history, ``state``, grows with every task the room ran: about 300 bytes
    each, loaded and saved again by each claim)."""
    return death_loops(trouble(room), settings.death_loop_n)


def trouble(room: Room, *, whole: bool = False) -> dict[str, Any]:
    """The history's fold, up to date, with only the routes on a streak (``.cache/death-loops``):
    what ``death_loops`` reads, the unsupported claims and the kills proposed, as in ``state``
    (``whole``: as there)."""
    checkpoint = room.cache / "death-loops"
    if not is_kept(checkpoint) and not _seeded(cache.load(checkpoint)):
        st, _ = state(room)  # a first look: start from the history's own fold, not the ledger
        cache.save(checkpoint, {**_pruned(st), "kind": HELD_KIND})
    return follow(room.ledger, checkpoint, HELD_KIND, _init, _fold_held, whole=whole)[0]


HELD_KIND = f"{KIND}-held"


def _seeded(seed: Any) -> bool:
    return isinstance(seed, dict) and seed.get("kind") == HELD_KIND


_PRUNE_AT = 64  # routes kept before the ones on no streak are dropped


def _streaking(r: dict[str, Any]) -> bool:
    """Whether a route's entry says anything a death loop reads (a streak, or one announced)."""
    return bool(r["announced"] or r["streak"]["n"] or r["decision_streak"]["n"] or r["fp_streak"]["n"])


def _pruned(st: dict[str, Any]) -> dict[str, Any]:
    return {**st, "routes": {k: r for k, r in st["routes"].items() if _streaking(r)}}


def _fold_held(st: dict[str, Any], cells: list[str]) -> None:
    """The history's fold, dropping now and then the routes on no streak: a route dropped and
    seen again starts afresh, as it would have from no streak, so ``death_loops`` says the same."""
    _fold(st, cells)
    if len(st["routes"]) > _PRUNE_AT:
        st["routes"] = _pruned(st)["routes"]
