"""dispatch.run.preflight, and a fault after the claim, injected at the store layer
(``ENOSPC`` from the results writes) so it runs wherever mount namespaces are not allowed."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from support import events, queue, where

from control_room import errors
from control_room.dispatch.run import cycle, preflight, runner
from control_room.errors import ControlRoomError, RoomInvalidError
from control_room.room import settings
from control_room.room.layout import Room


def test_a_healthy_room_passes(room: Room) -> None:
    preflight.check(room, settings.load(room))


def test_the_work_dir_is_relative_to_the_room(room: Room) -> None:
    s = settings.load(room).replace(workdir="sub/dir")
    assert preflight.workdir(room, s) == (room.root / "sub" / "dir").resolve()
    with pytest.raises(RoomInvalidError) as err:
        preflight.check(room, s)
    assert str(err.value) == (
        f"room invalid: {room.control}: workdir {room.root / 'sub' / 'dir'} does not exist; create it or fix "
        "workdir in CONTROL.md; nothing was claimed"
    )


def test_a_ledger_that_is_a_folder_is_named(room: Room) -> None:
    room.ledger.unlink()
    room.ledger.mkdir()
    with pytest.raises(RoomInvalidError) as err:
        preflight.check(room, settings.load(room))
    assert str(err.value) == (
        f"room invalid: {room.ledger} cannot be read (Is a directory); "
        "fix its permissions; nothing was claimed"
    )


def test_a_missing_ledger_is_named_with_its_fix(room: Room) -> None:
    room.ledger.unlink()
    with pytest.raises(RoomInvalidError) as err:
        cycle.cycle(room)
    assert str(err.value) == (
        f"room invalid: {room.ledger} is missing; restore it (git checkout) "
        "or `control-room init` starts a new one; nothing was claimed"
    )


def test_a_full_disk_after_the_claim_unclaims_without_a_round(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "t")
    real = runner.atomic_write

    def full(path: Path, text: str, **kw: bool) -> None:
        if path.name == "report.md":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, text, **kw)

    monkeypatch.setattr(runner, "atomic_write", full)
    with pytest.raises(ControlRoomError) as err:
        cycle.cycle(room)
    report = room.swarm / "results" / "t" / "report.md"
    assert (err.value.exit_code, str(err.value)) == (
        errors.IO_ERROR,
        f"room fault while t ran: {report}: No space left on device; t is back in the queue, no round used",
    )
    assert where(room, "t") == ["queue"]
    assert "rounds" not in json.loads((room.state_dir("queue") / "t.json").read_text())
    assert events(room.ledger)[-2:] == ["claim", "requeue"]
    assert (
        room.ledger.read_text()
        .splitlines()[-1]
        .count(f"room fault after the claim: {report}: No space left on device")
        == 1
    )


def test_when_even_the_ledger_line_fails_the_message_says_so(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(room, "t")
    from control_room.dispatch.round import outcome

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(room.ledger))

    def full(path: Path, text: str, **kw: bool) -> None:
        monkeypatch.setattr(outcome.ledger, "append", no_space)  # from now on, nothing more fits
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(runner, "atomic_write", full)
    with pytest.raises(ControlRoomError) as err:
        cycle.cycle(room)
    assert str(err.value).endswith(
        "; t is in swarm/queue/, no round used; its ledger line could not be written "
        f"({room.ledger}: No space left on device)"
    )
    assert where(room, "t") == ["queue"]


@pytest.mark.parametrize(
    ("adapters", "message"),
    [
        ({"claud": {"isolated": True}}, "adapters names 'claud', which is not an adapter (known: aider, "),
        ({"amp": {"model": "m"}}, "adapters.amp: the amp adapter does not act on model (it takes: base_url, "
                                  "api_key_env); fix it in CONTROL.md"),
    ],
)  # fmt: skip
def test_a_setup_for_no_adapter_or_that_it_cannot_use_is_named(
    room: Room, adapters: dict, message: str
) -> None:
    with pytest.raises(RoomInvalidError) as err:
        preflight.check(room, settings.load(room).replace(adapters=adapters))
    assert str(err.value).startswith(f"room invalid: {room.control}: {message}")


@pytest.mark.parametrize("review", [("corectness",), {"r1": ["security"], "*": ["corectness"]}])
def test_a_lens_control_md_names_that_has_no_file_is_the_rooms_fault(room: Room, review: object) -> None:
    with pytest.raises(RoomInvalidError) as err:
        preflight.check(room, settings.load(room).replace(review=review))
    assert str(err.value) == (
        f"room invalid: {room.control}: review: lens 'corectness' has no file: "
        f"{room.root}/agents/lenses/corectness.md is missing (lenses here: arbiter, claims, correctness, "
        "falsifier, security); fix review in CONTROL.md or the lens's file; nothing was claimed"
    )
    preflight.check(room, settings.load(room).replace(review={"r1": ["security", "claims"], "*": ["claims"]}))
    assert preflight.review_lenses(settings.load(room).replace(review={"a": ["x", "y"], "*": ["y"]})) == [
        "x",
        "y",
    ]
