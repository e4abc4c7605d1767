"""The codex adapter against tests/fakes/codex (numbers documented in the fake)."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.codex import Codex

SPEC = Spec(Codex(), extra_args=["-s", "workspace-write"], input_tokens=2400, output_tokens=410,
            extra={"cached_input_tokens": 1000, "reasoning_output_tokens": 64})


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == [
        "codex", "exec", "--skip-git-repo-check", "--json", "-C", str(inv.workdir), "-m", "test-model",
        "-", "-s", "workspace-write"]
