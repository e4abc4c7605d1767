"""control_room.room.roles: agents/<role>.md read and cached, bad or missing roles, broken YAML, name_of."""

from __future__ import annotations

import pytest

from control_room.errors import InvalidError
from control_room.room import roles
from control_room.room.layout import Room
from control_room.store import cache


def test_read_returns_front_matter_and_body(room: Room) -> None:
    path = room.root / "agents" / "engineer.md"
    meta, body = roles.read(room, "engineer")
    assert meta == {
        "role": "engineer",
        "adapter": None,
        "model": None,
        "may_edit": ["{owns}"],
        "writes_tasks": False,
    }
    assert body.startswith("# Role: engineer\n\n")
    assert body == path.read_text(encoding="utf-8").split("\n---\n", 1)[1].strip()


def test_read_is_cached_against_the_role_file(room: Room) -> None:
    path = room.root / "agents" / "scout.md"
    path.write_text("---\nrole: scout\nmodel: small\n---\nLook around.\n", encoding="utf-8")
    assert roles.read(room, "scout") == ({"role": "scout", "model": "small"}, "Look around.")
    assert cache.load(room.cache / "role-scout") == {
        "source": cache.fingerprint(path), "value": [{"role": "scout", "model": "small"}, "Look around."],
    }  # fmt: skip
    path.write_text("---\nrole: scout\nmodel: a-bigger-one\n---\nLook further.\n", encoding="utf-8")
    assert roles.read(room, "scout") == ({"role": "scout", "model": "a-bigger-one"}, "Look further.")


def test_a_missing_role(room: Room) -> None:
    with pytest.raises(InvalidError) as err:
        roles.read(room, "wizard")
    assert str(err.value) == f"role 'wizard' has no prompt: {room.root / 'agents' / 'wizard.md'} is missing"


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "Engineer", "/etc/passwd"])
def test_a_bad_role_name(room: Room, bad: str) -> None:
    with pytest.raises(InvalidError) as err:
        roles.read(room, bad)
    assert str(err.value) == f"role {bad!r} is not a valid role name"


def test_broken_yaml_in_a_role_file_names_the_file(room: Room) -> None:
    path = room.root / "agents" / "engineer.md"
    path.write_text('---\nrole: "engineer\n---\n# Role\n', encoding="utf-8")
    with pytest.raises(InvalidError) as err:
        roles.read(room, "engineer")
    assert str(err.value) == f"{path}: line 2: front matter is not valid YAML: found unexpected end of stream"


def test_a_role_file_that_is_not_a_mapping(room: Room) -> None:
    path = room.root / "agents" / "engineer.md"
    path.write_text("---\n- engineer\n---\n# Role\n", encoding="utf-8")
    with pytest.raises(InvalidError) as err:
        roles.read(room, "engineer")
    assert str(err.value) == f"{path}: front matter must be a mapping of keys to values"


def test_name_of() -> None:
    assert roles.name_of({}) == "engineer"
    assert roles.name_of({"role": "scout"}) == "scout"
    assert roles.name_of({"role": ""}) == "engineer"
    assert roles.name_of({"role": None}) == "engineer"
