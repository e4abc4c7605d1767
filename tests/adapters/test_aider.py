"""The aider adapter against tests/fakes/aider (numbers documented in the fake). Its error
mode exits 0, as the real aider does with the API down: the output decides."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.aider import Aider

SPEC = Spec(Aider(), extra_args=["--map-tokens", "0"], input_tokens=4200, output_tokens=512, cost_usd=0.0042,
            error_exit=0)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "aider", "--message-file", str(inv.brief), "--yes-always", "--no-auto-commits", "--no-check-update",
        "--analytics-disable", "--no-show-model-warnings", "--no-show-release-notes", "--no-gitignore",
        "--no-pretty", "--no-fancy-input", "--model", "test-model", "--map-tokens", "0"]
