"""The scorecard: how each adapter and model, and each role, has done, folded from the ledger.

Read from ``result``, ``park`` and ``integrate`` lines only. A ``result`` line's detail
(``ledger/result.py``) names its round, seconds, tokens, model and role; a line written before
0.3 names no model or role, and counts under ``unknown``. A ``park`` line names no adapter: it
counts for the adapter, model and role of the task's last run before it (``unknown`` if it never
ran). So does an ``integrate`` line (its ``adapter`` column alone does not say the model or the
role): ``failed`` is a post-rebase validator failure, and ``failed`` and ``merged`` lines are the
post-rebase validator runs it is out of; a ``merged`` line for a task merged with the helper task
that served it (``merged with ...``) is not a run of its own. A task that never ran counts under
its line's adapter, model and role ``unknown``.

The fold keeps, per UTC hour and per (adapter, model, role), additive counters and the set of
tasks seen, so ``--since`` sums the hours from the one holding the cutoff. It is kept in
``.cache/scorecard`` and brought up to date incrementally (``ledger.follow``): a scorecard
reads only the ledger lines appended since the last one.
"""

from __future__ import annotations

import time
from typing import Any

from control_room import errors
from control_room.ledger import events, result
from control_room.ledger.follow import follow
from control_room.ledger.line import Col, unescape
from control_room.room.layout import Room
from control_room.timeutil import now_iso, parse_duration

KIND = "scorecard-2"  # -2: the post-rebase counters
UNKNOWN = "unknown"
SEP = "\x1f"  # between adapter, model and role in a group key

# The counters of one (hour, group), by position.
RUNS, FIRST_N, FIRST_PASS, PASSES, PASS_ROUNDS, SECONDS = range(6)
TOKENS_IN, TOKENS_OUT, TOKENS_RUNS, SPEND, UNSUPPORTED, PARKED = range(6, 12)
POST_RUNS, POST_FAILED = range(12, 14)  # validator runs after a rebase (integrate), and failures
_N = 14
_RESULT, _PARK, _INTEGRATE = events.RESULT.name, events.PARK.name, events.INTEGRATE.name


def _init() -> dict[str, Any]:
    return {"hours": {}, "last": {}}


def _bucket(state: dict[str, Any], hour: str, group: str) -> list[Any]:
    """``[counters, tasks]`` of one (hour, group), made on first use."""
    groups: dict[str, list[Any]] = state["hours"].setdefault(hour, {})
    b = groups.get(group)
    if b is None:
        counts: list[Any] = [0] * _N
        counts[SECONDS] = counts[SPEND] = 0.0
        b = groups[group] = [counts, set()]
    return b


def _fold(state: dict[str, Any], cells: list[str]) -> None:
    event = cells[Col.EVENT]  # these names need no unescaping: compare the raw cell
    if event != _RESULT and event != _PARK and event != _INTEGRATE:
        return
    hour = cells[Col.TIME][:13]
    task = unescape(cells[Col.TASK])
    if event == _PARK:
        group = state["last"].get(task) or SEP.join((UNKNOWN, UNKNOWN, UNKNOWN))
        _bucket(state, hour, group)[0][PARKED] += 1
        return
    if event == _INTEGRATE:
        outcome = unescape(cells[Col.OUTCOME])
        if outcome != "failed" and outcome != "merged":
            return  # conflict, refused, unfit: the validator did not run again
        if outcome == "merged" and unescape(cells[Col.DETAIL]).startswith("merged with "):
            return  # merged with the helper task that served it: the helper's line is the run
        adapter = unescape(cells[Col.ADAPTER]) or UNKNOWN
        group = state["last"].get(task) or SEP.join((adapter, UNKNOWN, UNKNOWN))
        counts = _bucket(state, hour, group)[0]
        counts[POST_RUNS] += 1
        counts[POST_FAILED] += outcome == "failed"
        return
    run = result.read(unescape(cells[Col.DETAIL]))
    adapter = unescape(cells[Col.ADAPTER]) or UNKNOWN
    group = SEP.join((adapter, run.model or UNKNOWN, run.role or UNKNOWN))
    state["last"][task] = group
    counts, tasks = _bucket(state, hour, group)
    passed = unescape(cells[Col.OUTCOME]) == "pass"
    counts[RUNS] += 1
    if run.round == 1:
        counts[FIRST_N] += 1
        counts[FIRST_PASS] += passed
    if passed:
        counts[PASSES] += 1
        counts[PASS_ROUNDS] += run.round
    counts[SECONDS] += run.seconds
    if run.input_tokens is not None or run.output_tokens is not None:
        counts[TOKENS_RUNS] += 1
        counts[TOKENS_IN] += run.input_tokens or 0
        counts[TOKENS_OUT] += run.output_tokens or 0
    try:
        counts[SPEND] += float(cells[Col.COST_USD])
    except ValueError:
        pass
    counts[UNSUPPORTED] += run.unsupported
    tasks.add(task)


def state(room: Room, *, whole: bool = False) -> tuple[dict[str, Any], int]:
    """The fold, up to date; and how many ledger bytes this call read (``whole``: see history)."""
    return follow(room.ledger, room.cache / "scorecard", KIND, _init, _fold, whole=whole)


def cutoff(since: str, now: float | None = None) -> str:
    """The first UTC hour (``YYYY-MM-DDTHH``) ``--since`` counts: a date (``2026-12-01``), a
    time (``2026-12-01T14:30:00Z``) or a duration back from now (``7d``, ``12h``, ``90m``)."""
    text = since.strip()
    if len(text) >= 10 and text[4:5] == "-" and text[7:8] == "-":
        try:
            time.strptime(text[:10], "%Y-%m-%d")
            if len(text) > 10:
                time.strptime(text[:13], "%Y-%m-%dT%H")
        except ValueError:
            pass
        else:
            return text[:13] if len(text) > 10 else text + "T00"
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise errors.InvalidError(
            f"--since {since!r}: not a date, a time or a duration (try 2026-12-01, 7d, 12h)"
        ) from None
    return now_iso((time.time() if now is None else now) - seconds)[:13]


def _metrics(counts: list[Any], tasks: set[str]) -> dict[str, Any]:
    passes = counts[PASSES]
    return {
        "tasks": len(tasks),
        "runs": counts[RUNS],
        "first_round_pass": {"passed": counts[FIRST_PASS], "of": counts[FIRST_N]},
        "passed": passes,
        "parked": counts[PARKED],
        "mean_rounds_to_pass": {
            "mean": round(counts[PASS_ROUNDS] / passes, 2) if passes else None,
            "of": passes,
        },
        "agent_minutes": round(counts[SECONDS] / 60, 1),
        "tokens": {
            "input": counts[TOKENS_IN],
            "output": counts[TOKENS_OUT],
            "runs_reporting": counts[TOKENS_RUNS],
        },
        "spend_usd": round(counts[SPEND], 6),
        "unsupported_claims": {"count": counts[UNSUPPORTED], "of": counts[RUNS]},
        "post_rebase_validator_failures": {"count": counts[POST_FAILED], "of": counts[POST_RUNS]},
    }


def _add(into: list[Any], counts: list[Any]) -> None:
    for i, v in enumerate(counts):
        into[i] += v


def card(room: Room, since: str | None = None) -> dict[str, Any]:
    """The scorecard: per adapter and model, per role, and in total, for the hours from
    ``since`` on (every hour when None)."""
    st, _ = state(room)
    first = cutoff(since) if since else ""
    by: dict[str, dict[tuple[str, ...], list[Any]]] = {"model": {}, "role": {}, "total": {}}
    for hour, groups in st["hours"].items():
        if hour < first:
            continue
        for group, (counts, tasks) in groups.items():
            adapter, model, role = group.split(SEP)
            for name, key in (("model", (adapter, model)), ("role", (role,)), ("total", ())):
                acc = by[name].setdefault(key, [[0] * _N, set()])
                _add(acc[0], counts)
                acc[1] |= tasks
    total = by["total"].get((), [[0] * _N, set()])
    return {
        "since": f"{first}:00:00Z" if first else None,
        "ledger_lines": st["lines"],
        "by_model": [{"adapter": a, "model": m, **_metrics(*v)} for (a, m), v in sorted(by["model"].items())],
        "by_role": [{"role": r, **_metrics(*v)} for (r,), v in sorted(by["role"].items())],
        "total": _metrics(*total),
    }
