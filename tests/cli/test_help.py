"""Every command and subcommand (lazily loaded ones included) has help, and -h shows it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import click
from click.testing import Result

from control_room.cli import cli

Run = Callable[..., Result]


def walk(
    cmd: click.Command, path: tuple[str, ...], ctx: click.Context
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, f"control-room {' '.join((*path, name))}: cannot be loaded"
            yield from walk(sub, (*path, name), click.Context(sub, parent=ctx, info_name=name))


def all_commands() -> list[tuple[tuple[str, ...], click.Command]]:
    return list(walk(cli, (), click.Context(cli, info_name="control-room")))


def test_the_walk_finds_the_known_commands() -> None:
    paths = {" ".join(p) for p, _ in all_commands()}
    expected = {"", "init", "status", "stop", "resume", "task", "task add", "task list",
                "task show", "ledger", "ledger verify", "ledger tail", "ledger stats"}  # fmt: skip
    assert expected <= paths


def test_every_command_has_help_text() -> None:
    missing = [" ".join(("control-room", *p)) for p, cmd in all_commands()
               if not (cmd.help or "").strip()]  # fmt: skip
    assert missing == []


def test_every_option_has_help_text() -> None:
    missing = [
        f"control-room {' '.join(p)} {param.opts[0]}"
        for p, cmd in all_commands()
        for param in cmd.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert missing == []


def test_dash_h_shows_the_help_of_every_command(run: Run) -> None:
    for path, cmd in all_commands():
        result = run(*path, "-h")
        usage = " ".join(("Usage: control-room", *path))
        assert (result.exit_code, result.stderr) == (0, ""), path
        assert result.stdout.startswith(usage + " "), path
        first_line = (cmd.help or "").strip().split("\n")[0]
        assert " ".join(first_line.split()) in " ".join(result.stdout.split()), path
        assert result.stdout == run(*path, "--help").stdout


def test_version(run: Run) -> None:
    from control_room import __version__

    result = run("--version")
    assert (result.exit_code, result.stdout) == (0, f"control-room, version {__version__}\n")
