"""The parts of docs/ that are generated from the code, so the two cannot drift apart.

A generated part sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->`` in a
docs page. ``test_docs.py`` fails when a page differs from what this renders; to rewrite them:

    python tests/house/docs.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _commands(group: click.Group, ctx: click.Context, path: list[str]) -> Iterator[list[str]]:
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        yield [*path, name]
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, click.Context(cmd, info_name=name, parent=ctx), [*path, name])


def cli_reference() -> str:
    """``--help`` of every command, in the order ``control-room --help`` lists them."""
    from control_room.cli import cli

    runner = CliRunner()
    ctx = click.Context(cli, info_name="control-room")
    out = []
    for path in [[], *_commands(cli, ctx, [])]:
        result = runner.invoke(cli, [*path, "--help"], prog_name="control-room", terminal_width=100)
        assert result.exit_code == 0, result.output
        title = " ".join(["control-room", *path])
        out.append(f"### `{title}`\n\n```\n{result.output.rstrip()}\n```\n")
    return "\n".join(out)


def person_only_list() -> str:
    """The commands marked ``cli.common.person_only``, in the order ``--help`` lists them."""
    from control_room.cli import cli

    ctx = click.Context(cli, info_name="control-room")
    found = []
    for path in _commands(cli, ctx, []):
        cmd: click.Command | None = cli
        for name in path:
            assert isinstance(cmd, click.Group)
            cmd = cmd.get_command(ctx, name)
        if cmd is not None and getattr(cmd.callback, "person_only", False):
            found.append(f"`{' '.join(path)}`")
    return ", ".join(found) + "\n"


def settings_table() -> str:
    """The keys of CONTROL.md, from ``room.keys.KEYS``."""
    from control_room.room.keys import KEYS

    def shown(v: object) -> str:
        if v is None:
            return "(none)"
        if v == ():
            return "`[]`"
        if isinstance(v, bool):
            return f"`{str(v).lower()}`"
        return f"`{v}`"

    rows = ["| key | default | meaning |", "|---|---|---|"]
    rows += [f"| `{name}` | {shown(default)} | {doc} |" for name, (default, _, doc) in KEYS.items()]
    return "\n".join(rows) + "\n"


def tasks_table() -> str:
    """The fields of a task file, from ``room.tasks.FIELDS``."""
    from control_room.room.tasks import FIELDS, PERSON

    def absent(v: object) -> str:
        if v is None:
            return "-"
        if v == []:
            return "`[]`"
        return f"`{v}`"

    rows = ["| field | required | kind | written by | absent | meaning |", "|---|---|---|---|---|---|"]
    for f in FIELDS:
        who = "its author" if f.writer == PERSON else "control-room"
        need = "yes" if f.required else "no"
        rows.append(f"| `{f.name}` | {need} | {f.kind} | {who} | {absent(f.default)} | {f.help} |")
    return "\n".join(rows) + "\n"


def events_table() -> str:
    """Every ledger event, from ``ledger.events.EVENTS``."""
    from control_room.ledger.events import EVENTS

    rows = ["| event | written when | outcome | columns it fills |", "|---|---|---|---|"]
    for e in EVENTS:
        outcomes = ", ".join(f"`{o}`" for o in e.outcomes) or "(any)"
        columns = ", ".join(f"`{c}`" for c in e.columns) or "-"
        rows.append(f"| `{e.name}` | {e.when} | {outcomes} | {columns} |")
    return "\n".join(rows) + "\n"


def exit_codes_table() -> str:
    """Every exit code, from ``errors.EXIT_CODES``."""
    from control_room.errors import EXIT_CODES

    rows = ["| code | name | meaning |", "|---:|---|---|"]
    rows += [f"| {code} | {name} | {meaning} |" for code, name, meaning in EXIT_CODES]
    return "\n".join(rows) + "\n"


def mcp_caps_table() -> str:
    """The caps on MCP tools' arguments, from ``views.mcp_args.CAPS``."""
    from control_room.views.mcp_args import CAPS

    rows = ["| argument | cap | why |", "|---|---:|---|"]
    rows += [f"| `{name}` | {cap:,} {unit} | {why} |" for name, (cap, unit, why) in CAPS.items()]
    return "\n".join(rows) + "\n"


def adapter_env_table() -> str:
    """What each built-in adapter's CLI sees of the dispatcher's environment, from its
    ``env_allow`` and ``vendor_keys`` (``adapters/base.py``)."""
    from control_room.adapters import ADAPTERS, adapter_class
    from control_room.adapters.base import CLI_ENV, MINIMAL_ENV

    def names(patterns: tuple[str, ...]) -> str:
        return ", ".join(f"`{p}`" for p in patterns) or "-"

    rows = ["| adapter | sees (besides CONTROL.md `env_allow`) | withheld with a `base_url` |"]
    rows.append("|---|---|---|")
    for name in ADAPTERS:
        cls = adapter_class(name)
        allow = cls.env_allow
        if allow == MINIMAL_ENV:
            sees = "the minimal set"
        else:
            own = tuple(p for p in allow if p not in CLI_ENV)
            sees = "the CLI set" + (f", {names(own)}" if own else "")
        rows.append(f"| `{name}` | {sees} | {names(cls.vendor_keys)} |")
    rows.append("")
    rows.append(
        f"The minimal set: {names(MINIMAL_ENV)}. The CLI set: the minimal set, "
        f"{names(tuple(p for p in CLI_ENV if p not in MINIMAL_ENV))}."
    )
    return "\n".join(rows) + "\n"


BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "adapter-env": ("adapters.md", adapter_env_table),
    "cli-reference": ("cli.md", cli_reference),
    "settings": ("gates.md", settings_table),
    "task-fields": ("tasks.md", tasks_table),
    "events": ("ledger.md", events_table),
    "exit-codes": ("exit-codes.md", exit_codes_table),
    "person-only": ("security.md", person_only_list),
    "mcp-caps": ("mcp.md", mcp_caps_table),
}


def render(text: str, name: str, body: str) -> str:
    """``text`` with the generated part ``name`` replaced by ``body``."""
    pattern = re.compile(rf"(<!-- generated: {name} -->\n).*?(<!-- end: {name} -->)", re.DOTALL)
    if not pattern.search(text):
        raise AssertionError(f"no `<!-- generated: {name} -->` ... `<!-- end: {name} -->` block")
    return pattern.sub(lambda m: m.group(1) + "\n" + body + "\n" + m.group(2), text)


def expected() -> dict[Path, str]:
    """Each generated page as it should read."""
    pages: dict[Path, str] = {}
    for name, (page, make) in BLOCKS.items():
        path = DOCS / page
        pages[path] = render(pages.get(path, path.read_text(encoding="utf-8")), name, make())
    return pages


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for path, text in expected().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
