"""The opencode adapter against tests/fakes/opencode (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.opencode import Opencode

SPEC = Spec(Opencode(), extra_args=["--agent", "build"], input_tokens=2500, output_tokens=350, cost_usd=0.375,
            extra={"cache_read_tokens": 30})


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "opencode", "run", "--dir", str(inv.workdir), "--format", "json", "-m", "test-model",
        "--agent", "build"]
