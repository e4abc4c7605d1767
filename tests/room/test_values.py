"""control_room.room.values: which ids are valid (and that the task schema refuses the others), and
the one wording for an id that is taken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import VALID_TASK

from control_room.room import tasks, values


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", "/etc", "..", ".hidden", "Upper", "has space", "-dash", "", "x" * 65,
            "a\\b", "é"],
)  # fmt: skip
def test_bad_ids_are_rejected(bad: str) -> None:
    assert values.is_id(bad) is False
    if bad:
        assert tasks.validate({**VALID_TASK, "id": bad})[1] == ["id must match [a-z0-9][a-z0-9._-]{0,63}"]


@pytest.mark.parametrize("good", ["a", "0", "fast-parse.v2_1", "x" * 64])
def test_good_ids_are_accepted(good: str) -> None:
    assert values.is_id(good) is True


def test_one_wording_for_an_id_that_is_taken() -> None:
    assert values.exists_already("route", "fast", "control-room/ROUTES.md:9") == (
        "route fast exists already (control-room/ROUTES.md:9)"
    )


def test_no_module_words_a_taken_id_its_own_way() -> None:
    """Every "exists already" of the package comes from ``values.exists_already``: no other
    module spells it, nor "already there" or "already exists"."""
    package = Path(values.__file__).resolve().parents[1]
    own_way = re.compile(r"exists already|already there|already exists|exists, kept")
    found = [
        f"{path.relative_to(package)}:{n}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "values.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if own_way.search(line)
    ]
    assert found == []
