"""Shell completion through the installed command (click's protocol): commands, the subcommands
of a group loaded lazily, options."""

from __future__ import annotations

import subprocess


def complete(cr, words: str, cword: int) -> list[str]:  # type: ignore[no-untyped-def]
    env = {**cr.env, "_CONTROL_ROOM_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = subprocess.run([cr.exe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.split(",", 1)[1] for line in done.stdout.splitlines()]


def test_commands_subcommands_and_options_complete(cr) -> None:  # type: ignore[no-untyped-def]
    assert complete(cr, "control-room sta", 1) == ["status"]
    assert "fanout" in complete(cr, "control-room task ", 2)
    assert "--log" in complete(cr, "control-room cycle --", 2)


def test_the_bash_script_is_generated(cr) -> None:  # type: ignore[no-untyped-def]
    env = {**cr.env, "_CONTROL_ROOM_COMPLETE": "bash_source"}
    done = subprocess.run([cr.exe], env=env, capture_output=True, text=True, timeout=60)
    assert "_control_room_completion()" in done.stdout and "complete -o nosort -F" in done.stdout
