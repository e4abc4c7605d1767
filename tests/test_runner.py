"""The unsupported-claim heuristic of the runner: what counts as a CONFIRMED success claim."""

from __future__ import annotations

import pytest

from control_room.dispatch.report import validate
from control_room.dispatch.runner import claims_success


def report_with(*items: str) -> str:
    evidence = "\n".join(f"- {i}" for i in items)
    return (f"DECISION: d\nWHY: w\nEVIDENCE:\n{evidence}\nMISSING: none\nNEXT COMMAND: ls\n"
            "STOP RULE: s\n")  # fmt: skip


@pytest.mark.parametrize(
    ("items", "claims"),
    [
        (["CONFIRMED: all tests pass (pytest -q)"], True),
        (["CONFIRMED: the benchmark is 2x faster (bench.py)"], True),
        (["CONFIRMED: it works"], True),
        (["CONFIRMED: tests fail with KeyError"], False),
        (["CONFIRMED: not faster than before"], False),
        (['CONFIRMED: stdout line: "all tests pass"'], False),  # quoted output is not a claim
        (["CONFIRMED: `make it-work` exited 2"], False),
        (["INFERRED: all tests pass"], False),  # only CONFIRMED items claim
        (["UNKNOWN: whether it works", "CONFIRMED: the file was written"], False),
    ],
)
def test_claims_success(items: list[str], claims: bool) -> None:
    report = validate(report_with(*items))
    assert report.ok
    assert claims_success(report) is claims
