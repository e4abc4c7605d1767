"""The kimi adapter against tests/fakes/kimi (text output: no tokens, no cost)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.kimi import Kimi

SPEC = Spec(Kimi(), extra_args=["--max-steps-per-turn", "20"], error_exit=75)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "kimi", "--quiet", "-w", str(inv.workdir), "-m", "test-model", "--max-steps-per-turn", "20"]
