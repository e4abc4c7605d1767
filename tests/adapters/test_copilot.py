"""The copilot adapter against tests/fakes/copilot (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.copilot import Copilot

SPEC = Spec(Copilot(), extra_args=["--add-dir", "/tmp"], extra={"premium_requests": 1.0})


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "copilot", "-C", str(inv.workdir), "--output-format", "json", "-p", SPEC.adapter.pointer(inv),
        "--model", "test-model", "--add-dir", "/tmp"]
