"""The command adapter through the same harness: its argv template runs the fake kimi, which
reads the prompt from stdin and prints its answer as text."""

import pytest
from harness import SCENARIOS, Spec, check, invocation

from control_room.adapters.command import Command
from control_room.errors import InvalidError

SPEC = Spec(Command(), settings={"command_argv": ["kimi", "--quiet", "-w", "{workdir}"]}, error_exit=75)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contract(scenario, tmp_path):
    check(SPEC, scenario, tmp_path)


def test_template_fills_placeholders_and_needs_command_argv(tmp_path):
    inv = invocation(tmp_path, SPEC)
    assert SPEC.adapter.command(inv) == ["kimi", "--quiet", "-w", str(inv.workdir)]
    inv.settings = {}
    with pytest.raises(InvalidError, match="command_argv"):
        SPEC.adapter.command(inv)
