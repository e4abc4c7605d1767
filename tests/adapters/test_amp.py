"""The amp adapter against tests/fakes/amp (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.amp import Amp

SPEC = Spec(Amp(), extra_args=["-m", "high"], input_tokens=2100, output_tokens=340)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    # inv.model is not passed: Amp's -m is a mode, not a model
    assert SPEC.adapter.command(inv) == ["amp", "-x", "--stream-json", "-m", "high"]
