"""The cursor-agent adapter against tests/fakes/cursor-agent (documented JSON: no tokens, no cost)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.cursor_agent import CursorAgent

SPEC = Spec(CursorAgent(), extra_args=["--mode", "ask"])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "cursor-agent",
        "--print",
        "--output-format",
        "json",
        "--trust",
        "--workspace",
        str(inv.workdir),
        "--model",
        "test-model",
        SPEC.adapter.pointer(inv),
        "--mode",
        "ask",
    ]
