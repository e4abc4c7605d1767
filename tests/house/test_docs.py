"""Docs and code kept in step by tests, never by hand: the CLI reference, the table of
CONTROL.md keys, the table of ledger events, and the CONTROL.md template."""

from __future__ import annotations

import ast
import re

import click

import docs
from control_room.cli import cli
from control_room.ledger import events
from control_room.room import keys, settings
from control_room.room.layout import templates_root


def test_the_generated_docs_match_the_code() -> None:
    stale = [str(p.relative_to(docs.ROOT)) for p, text in docs.expected().items() if p.read_text() != text]
    assert stale == [], "run `python tests/house/docs.py` and commit the result"


def test_every_command_has_help_text() -> None:
    ctx = click.Context(cli, info_name="control-room")
    silent = []
    for path in docs._commands(cli, ctx, []):
        cmd: click.Command | None = cli
        for name in path:
            assert isinstance(cmd, click.Group)
            cmd = cmd.get_command(ctx, name)
        assert cmd is not None
        if not (cmd.help or "").strip():
            silent.append(" ".join(path))
    assert silent == []


def test_the_settings_table_and_the_settings_type_hold_the_same_keys() -> None:
    assert tuple(settings.Settings.__annotations__) == tuple(keys.KEYS)
    for name, (_, kind, doc) in keys.KEYS.items():
        assert kind in keys.KINDS, name
        assert doc and "\n" not in doc, name


def test_the_control_template_holds_every_key_at_its_default() -> None:
    text = (templates_root() / "CONTROL.md").read_text(encoding="utf-8")
    front = text.split("---\n")[1]
    named = [line.split(":", 1)[0] for line in front.splitlines() if re.match(r"[a-z_]+:", line)]
    assert sorted(named) == sorted(keys.NAMES)
    assert settings.parse(text, "CONTROL.md template") == settings.DEFAULTS


def test_every_event_is_written_or_read_by_the_code() -> None:
    """An event in the table that no module names would be a doc of nothing: each is named as
    ``events.NAME`` by another module, or by a helper of events.py (``approval_needed``)."""
    package = docs.ROOT / "control_room"
    source = "\n".join(p.read_text() for p in package.rglob("*.py") if p.name != "events.py")
    helpers = ast.parse((package / "ledger" / "events.py").read_text())
    in_helpers = {
        node.id
        for fn in helpers.body
        if isinstance(fn, ast.FunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Name)
    }
    names = {name for name, value in vars(events).items() if isinstance(value, events.Event)}
    unused = sorted(n for n in names if f"events.{n}" not in source and n not in in_helpers)
    assert unused == []
    assert {e.name for e in events.EVENTS} == {getattr(events, n).name for n in names}
