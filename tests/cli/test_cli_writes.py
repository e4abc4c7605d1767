"""A write the system refuses (a read-only disk, as ``os.open`` reports it), through the
command line: one line naming the file the command meant to write, exit 9; never the hidden
temp or lock file the write goes through."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from support import ADD_ARGS, error, events, refuse_new_files

from control_room import errors
from control_room.room.layout import Room

Run = Callable[..., Result]


def test_task_add_names_the_task_file(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    queue = inside.state_dir("queue")
    refuse_new_files(monkeypatch, queue)
    error(run("task", "add", "--id", "t1", *ADD_ARGS), errors.IO_ERROR,
          f"cannot write {queue / 't1.json'}: Read-only file system")  # fmt: skip
    assert list(queue.iterdir()) == []
    assert events(inside.ledger) == ["init"]


def test_route_add_names_routes_md(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    before = inside.routes.read_bytes()
    refuse_new_files(monkeypatch, inside.cr)
    error(run("route", "add", "faster", "--title", "Make it faster"), errors.IO_ERROR,
          f"{inside.routes}: Read-only file system")  # fmt: skip
    assert inside.routes.read_bytes() == before
    assert events(inside.ledger) == ["init"]


def test_stop_names_the_stop_file(run: Run, inside: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_new_files(monkeypatch, inside.root)
    error(run("stop", "--reason", "x"), errors.IO_ERROR, f"cannot write {inside.stop}: Read-only file system")
    assert not inside.stop.exists()
    assert sorted(p.name for p in inside.root.iterdir() if p.name.startswith(".")) == []
