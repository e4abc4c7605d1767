"""The claude adapter against tests/fakes/claude (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.claude import Claude

SPEC = Spec(Claude(), extra_args=["--max-turns", "3"], input_tokens=1200, output_tokens=345, cost_usd=0.0123)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "claude", "-p", "--output-format", "json", "--model", "test-model", "--max-turns", "3"]
