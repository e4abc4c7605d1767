"""A live spend cap: the agent's run ends once what it has spent crosses its task's
``max_cost_usd``, what is left of today's ``daily_budget_tokens``, or its ``max_turns``
(docs/faults.md "Live spend caps").

A CLI that reports its usage step by step is read as it writes: at each poll of the run the new
whole lines are read and each model request's usage (``Adapter.step_usage`` for a JSON line,
``text_usage`` for a line of text) summed. Where it reports them:

- on stdout: opencode's ``step_finish`` events, aider's ``Tokens: ...`` lines;
- in a usage log of its own (``Adapter.usage_log``, in ``usage_home``): the session log of a CLI
  that takes its session id from control-room (``Invocation.session``: claude's transcript,
  gemini's chat recording, copilot's ``events.jsonl``, kimi's ``wire.jsonl``), known before the
  run; or one a line of stdout names (codex's ``thread.started`` names its session rollout).
  Once found, the log is read instead of stdout: looked for at each poll for the first second,
  then once a second.

A request logged more than once under the same key (gemini rewrites a message as its tool
calls run) counts once. A step that reports dollars counts as reported; one that reports only
tokens is priced from CONTROL.md ``prices:`` (per million tokens, for the run's model), and the
figure is marked estimated. The cap is the task's ``max_cost_usd``: a task starts only when that
much is left of the daily budget (dispatch/queue/ready.py), so it holds both. A run ended so is
a failed round, its failure ``cost-cap: ...`` naming the figure (``turn-cap: ...`` for its
turns). It may overshoot by at most the one step that crossed the line (a step is known only
once it is done), plus the request the CLI had already sent when it was ended, whose answer never
arrives (tests/realcli/test_budget_realcli.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from control_room.adapters.base import COST_CAP, TURN_CAP, Adapter, Invocation, Outcome, Usage
from control_room.adapters.output import as_object

READ_MAX = 1 << 20  # bytes read at one poll at most
LOOK_EVERY = 10  # polls (of 0.1 s) between two looks for a usage log not yet written


class Tail:
    """The whole lines a growing file has gained since the last read."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.partial = path, 0, b""

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(READ_MAX)
        except OSError:
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()  # a line not yet whole waits for the next poll
        return [t for line in lines if (t := line.decode("utf-8", "replace").strip())]


class Meter:
    """The running spend of one run, read from its stdout capture (or its usage log) as it grows."""

    def __init__(
        self,
        adapter: Adapter,
        inv: Invocation,
        path: Path,
        cap_usd: float,
        prices: Mapping[str, float] | None,
        tokens_left: int | None = None,
        home: Path | None = None,
    ) -> None:
        self.adapter, self.inv, self.path, self.cap, self.prices = adapter, inv, path, cap_usd, prices
        self.tokens_left = tokens_left  # of CONTROL.md daily_budget_tokens; None: no such budget
        self.max_turns = inv.max_turns  # 0: none
        self.out = Tail(path)
        self.home = home  # the run's own state folder, where a CLI's usage log is looked for
        # the glob (in home) of the usage log: known before the run, or named by stdout later
        self.pattern = adapter.usage_log(inv, None) if home is not None else None
        self.log: Tail | None = None
        self.looks = 0  # polls since the log was named
        self.seen: set[str] = set()  # keys of the requests counted
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
            f"{COST_CAP}: ${self.spent:.4f}{how} spent over {self.steps} step(s) "
            f"({self.input_tokens} tokens in, {self.output_tokens} out), past max_cost_usd ${self.cap:g}"
        )

    def __call__(self) -> str:
        """``proc.run``'s watch: why the run must end now, or ""."""
        for usage in self._new_steps():
            if usage.key is not None:
                if usage.key in self.seen:
                    continue
                self.seen.add(usage.key)
            self.steps += 1
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            if usage.cost_usd is not None:
                self.reported += usage.cost_usd
            elif self.prices is not None:
                self.estimated += dollars(self.prices, usage.input_tokens, usage.output_tokens)
        if self.cap and self.spent > self.cap:
            return self.says()
        used = self.input_tokens + self.output_tokens
        if self.tokens_left is not None and used > self.tokens_left:
            return (
                f"{COST_CAP}: {used:,} tokens over {self.steps} step(s), past the {self.tokens_left:,} left "
                "today of daily_budget_tokens"
            )
        if self.max_turns and self.steps > self.max_turns:
            return f"{TURN_CAP}: {self.steps} model turns, past max_turns {self.max_turns}"
        return ""

    def _new_steps(self) -> list[Usage]:
        """The usage of the requests reported since the last poll: on stdout until the usage
        log is found, then in that log only (it has every request: stdout's would count twice)."""
        found: list[Usage] = []
        for line in self.out.lines():
            event = as_object(line)
            if event is None:
                usage = self.adapter.text_usage(line)
            else:
                if self.pattern is None and self.home is not None:
                    self.pattern = self.adapter.usage_log(self.inv, event)
                usage = self.adapter.step_usage(event)
            if usage is not None:
                found.append(usage)
        if self.pattern is not None and self.log is None:
            assert self.home is not None
            self.looks += 1
            if self.looks <= LOOK_EVERY or self.looks % LOOK_EVERY == 0:  # then once a second
                named = sorted(self.home.glob(self.pattern))
                self.log = Tail(named[0]) if named else None
        if self.log is None:
            return found
        steps = (self.adapter.step_usage(e) for line in self.log.lines() if (e := as_object(line)))
        return [u for u in steps if u is not None]


def meter(
    adapter: Adapter,
    inv: Invocation,
    stdout: Path,
    prices: Mapping[str, Mapping[str, float]],
    tokens_left: int | None = None,
    home: Path | None = None,
) -> Meter | None:
    """The meter of a run, or None where nothing can be capped live (the CLI reports no usage
    as it runs; or the task's cap is 0, a free run, with no daily token budget and no
    max_turns)."""
    cap = float(inv.task.get("max_cost_usd", 0))
    if (cap <= 0 and tokens_left is None and not inv.max_turns) or not adapter.meters():
        return None
    return Meter(adapter, inv, stdout, cap, rate_of(prices, inv.model), tokens_left, home)


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
