"""A live spend cap: the agent's run ends once what it has spent crosses its task's
``max_cost_usd`` (docs/faults.md "Live spend caps").

A CLI that streams its usage step by step (``Adapter.step_usage``: codex's ``turn.completed``,
opencode's ``step_finish``) is read as it writes: at each poll of the run the new whole lines of
its stdout capture are parsed and their usage summed. A step that reports dollars counts as
reported; one that reports only tokens is priced from CONTROL.md ``prices:`` (per million
tokens, for the run's model), and the figure is marked estimated. With neither, nothing can be
capped live, and the run's spend is checked after it as before (``cost-overrun``).

A CLI may write its usage per model request to a log of its own rather than to stdout
(``Adapter.usage_log``: codex's session rollout, named by the ``thread.started`` line of its
stdout, holds a ``token_count`` per request where its stdout has one ``turn.completed`` at the
very end; ``Adapter.usage_home``: its CODEX_HOME). Once that log is found, it is read instead
of stdout: looked for at each poll for the first second, then once a second.

The cap is the task's ``max_cost_usd``: a task starts only when that much is left of the daily
budget (dispatch/queue/ready.py), so it holds both; and, with CONTROL.md ``daily_budget_tokens``,
what is left of that today. A run ended so is a failed round, its
failure ``cost-cap: ...`` naming the figure. It may overshoot by at most the one step that
crossed the line (a step is known only once it is done), plus the request the CLI had already
sent when it was ended, whose answer never arrives (tests/realcli/test_budget_realcli.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from control_room.adapters.base import Adapter, Outcome

CAP = "cost-cap"  # how the failure of a run ended by its cap starts
READ_MAX = 1 << 20  # bytes read at one poll at most
LOOK_EVERY = 10  # polls (of 0.1 s) between two looks for a usage log not yet written


class Tail:
    """The whole JSON lines a growing file has gained since the last read."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.partial = path, 0, b""

    def events(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(READ_MAX)
        except OSError:
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()  # a line not yet whole waits for the next poll
        events = []
        for line in lines:
            line = line.strip()
            if not line.startswith(b"{"):
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                events.append(obj)
        return events


class Meter:
    """The running spend of one run, read from its stdout capture (or its usage log) as it grows."""

    def __init__(
        self,
        adapter: Adapter,
        path: Path,
        cap_usd: float,
        prices: Mapping[str, float] | None,
        tokens_left: int | None = None,
        home: Path | None = None,
    ) -> None:
        self.adapter, self.path, self.cap, self.prices = adapter, path, cap_usd, prices
        self.tokens_left = tokens_left  # of CONTROL.md daily_budget_tokens; None: no such budget
        self.out = Tail(path)
        self.home = home  # the run's own state folder, where a CLI's usage log is looked for
        self.pattern: str | None = None  # the glob (in home) of the usage log stdout named
        self.log: Tail | None = None
        self.looks = 0  # polls since the log was named
        self.input_tokens = self.output_tokens = 0
        self.reported = 0.0  # dollars the CLI reported
        self.estimated = 0.0  # dollars priced from tokens of steps that reported none
        self.steps = 0

    @property
    def spent(self) -> float:
        return self.reported + self.estimated

    def says(self) -> str:
        """``cost-cap: $0.31 (estimated) spent over 4 steps, past max_cost_usd $0.25``"""
        how = " (estimated)" if self.estimated else ""
        return (
            f"{CAP}: ${self.spent:.4f}{how} spent over {self.steps} step(s) "
            f"({self.input_tokens} tokens in, {self.output_tokens} out), past max_cost_usd ${self.cap:g}"
        )

    def __call__(self) -> str:
        """``proc.run``'s watch: why the run must end now, or ""."""
        for from_log, event in self._new_events():
            if self.log is not None and not from_log:
                continue  # the log has every request; stdout's sums would count them twice
            usage = self.adapter.step_usage(event)
            if usage is None:
                continue
            tokens_in, tokens_out, cost = usage
            self.steps += 1
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
            if cost is not None:
                self.reported += cost
            elif self.prices is not None:
                self.estimated += dollars(self.prices, tokens_in, tokens_out)
        if self.cap and self.spent > self.cap:
            return self.says()
        used = self.input_tokens + self.output_tokens
        if self.tokens_left is not None and used > self.tokens_left:
            return (
                f"{CAP}: {used:,} tokens over {self.steps} step(s), past the {self.tokens_left:,} left "
                "today of daily_budget_tokens"
            )
        return ""

    def _new_events(self) -> list[tuple[bool, dict[str, Any]]]:
        """The new events of stdout, then of the usage log once found: (from the log, event)."""
        events = [(False, e) for e in self.out.events()]
        if self.home is not None and self.log is None:
            for _, event in events:
                self.pattern = self.pattern or self.adapter.usage_log(event)
            self.looks += 1 if self.pattern else 0
            if self.pattern and (self.looks <= LOOK_EVERY or self.looks % LOOK_EVERY == 0):  # then 1/s
                found = sorted(self.home.glob(self.pattern))
                self.log = Tail(found[0]) if found else None
        if self.log is not None:
            events += [(True, e) for e in self.log.events()]
        return events


def meter(
    adapter: Adapter,
    stdout: Path,
    task: Mapping[str, Any],
    model: str | None,
    prices: Mapping[str, Mapping[str, float]],
    tokens_left: int | None = None,
    home: Path | None = None,
) -> Meter | None:
    """The meter of a run, or None where nothing can be capped live (the CLI streams no usage;
    the task's cap is 0, a free run, and there is no daily token budget)."""
    cap = float(task.get("max_cost_usd", 0))
    if (cap <= 0 and tokens_left is None) or type(adapter).step_usage is Adapter.step_usage:
        return None
    return Meter(adapter, stdout, cap, rate_of(prices, model), tokens_left, home)


def settle(m: Meter | None, outcome: Outcome) -> bool:
    """Carry what the meter counted into the run's outcome where the CLI reported less (codex
    ended by its cap prints no ``turn.completed``: no tokens at all; opencode's unpriced model
    costs 0): its tokens, and its dollars where the CLI gave none, so that the ledger's
    ``result`` line (and so the daily budgets) has them. True when the cost is now the meter's
    estimate from ``prices:``."""
    if m is None or not m.steps:
        return False
    if (outcome.input_tokens or 0) + (outcome.output_tokens or 0) < m.input_tokens + m.output_tokens:
        outcome.input_tokens, outcome.output_tokens = m.input_tokens, m.output_tokens
    if not outcome.cost_usd and m.spent > 0:
        outcome.cost_usd = round(m.spent, 6)
        return bool(m.estimated)
    return False


def price(outcome: Outcome, prices: Mapping[str, Mapping[str, float]], model: str | None) -> bool:
    """A run whose CLI reported tokens but no dollars (gemini, kimi, codex at its end): its cost
    estimated from CONTROL.md ``prices:`` for its model, when the model has a price. True when
    the outcome's cost is now that estimate."""
    rate = rate_of(prices, model)
    tokens_in, tokens_out = outcome.input_tokens or 0, outcome.output_tokens or 0
    if outcome.cost_usd or rate is None or not (tokens_in or tokens_out):
        return False
    outcome.cost_usd = round(dollars(rate, tokens_in, tokens_out), 6)
    return outcome.cost_usd > 0


def rate_of(prices: Mapping[str, Mapping[str, float]], model: str | None) -> Mapping[str, float] | None:
    """CONTROL.md ``prices:`` for ``model`` (None: no model, or no price for it)."""
    return prices.get(model) if model else None


def dollars(rate: Mapping[str, float], tokens_in: int, tokens_out: int) -> float:
    """What ``tokens_in`` and ``tokens_out`` cost at ``rate`` (USD per million tokens)."""
    return (tokens_in * rate.get("input", 0.0) + tokens_out * rate.get("output", 0.0)) / 1e6
