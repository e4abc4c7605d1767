"""control-room scorecard: how each adapter, model and role has done"""

from __future__ import annotations

from typing import Any

import click

from control_room.cli.common import current_room, echo, echo_json, json_option, room_option
from control_room.knowledge.scorecard import card
from control_room.words import count


def _rate(part: int, whole: int) -> str:
    """``3/5 (60%)``: a rate always beside its sample size."""
    return f"{part}/{whole} ({part / whole:.0%})" if whole else f"{part}/{whole} (-)"


def _rows(m: dict[str, Any]) -> list[tuple[str, str]]:
    mean = m["mean_rounds_to_pass"]
    tokens = m["tokens"]
    unsupported = m["unsupported_claims"]
    post = m["post_rebase_validator_failures"]
    return [
        ("tasks run", f"{m['tasks']} ({count(m['runs'], 'run')})"),
        ("first-round pass", _rate(m["first_round_pass"]["passed"], m["first_round_pass"]["of"])),
        ("passed", str(m["passed"])),
        ("parked", str(m["parked"])),
        ("mean rounds to pass", f"{mean['mean']:g} (of {mean['of']})" if mean["of"] else "- (of 0)"),
        ("agent minutes", f"{m['agent_minutes']:g}"),
        (
            "tokens in/out",
            f"{tokens['input']}/{tokens['output']} ({tokens['runs_reporting']} of "
            f"{count(m['runs'], 'run')} reported)",
        ),
        ("spend", f"${m['spend_usd']:.4f}"),
        ("unsupported claims", _rate(unsupported["count"], unsupported["of"])),
        ("post-rebase failures", _rate(post["count"], post["of"])),
    ]


def _block(title: str, m: dict[str, Any]) -> list[str]:
    return [f"  {title}", *(f"    {label:<22}{value}" for label, value in _rows(m))]


@click.command()
@room_option
@click.option(
    "--since",
    metavar="DATE|DURATION",
    help="Only runs from then on: a date (2026-12-01), a UTC time, or a duration back (7d, 12h). "
    "Counted by whole UTC hours.",
)
@json_option
def scorecard(since: str | None, as_json: bool) -> None:
    """Per adapter and model, and per role: tasks run, first-round passes, parks, mean rounds,
    agent minutes, tokens, spend, unsupported claims, post-rebase validator failures (folded
    from the ledger, incrementally).

    Each rate stands beside its sample size (`first-round pass 3/5 (60%)`; `post-rebase
    failures 1/4 (25%)`: of the validator runs after a rebase). See docs/scorecard.md.
    """
    sc = card(current_room(), since)
    if as_json:
        echo_json(sc)
        return
    total = sc["total"]
    when = f" since {sc['since']}" if sc["since"] else ""
    echo(f"scorecard{when}: {count(total['runs'], 'run')} of {count(total['tasks'], 'task')}")
    if not total["runs"] and not total["parked"] and not total["post_rebase_validator_failures"]["of"]:
        return
    echo("by adapter and model")
    for m in sc["by_model"]:
        echo("\n".join(_block(f"{m['adapter']} {m['model']}", m)))
    echo("by role")
    for m in sc["by_role"]:
        echo("\n".join(_block(m["role"], m)))
    echo("total")
    echo("\n".join(_block("all", total)))
