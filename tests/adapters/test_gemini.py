"""The gemini adapter against tests/fakes/gemini (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.gemini import Gemini

SPEC = Spec(Gemini(), extra_args=["--approval-mode", "auto_edit"], input_tokens=3100, output_tokens=425,
            extra={"models": ["gemini-2.5-flash-lite", "gemini-2.5-pro"]}, error_exit=41)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "gemini", "-o", "json", "--skip-trust", "-m", "test-model", "--approval-mode", "auto_edit"]
