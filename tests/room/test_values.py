"""control_room.room.values: which ids are valid (and that the task schema refuses the others)."""

from __future__ import annotations

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
        assert tasks.validate({**VALID_TASK, "id": bad})[1] == [
            "id must match [a-z0-9][a-z0-9._-]{0,63}"
        ]


@pytest.mark.parametrize("good", ["a", "0", "fast-parse.v2_1", "x" * 64])
def test_good_ids_are_accepted(good: str) -> None:
    assert values.is_id(good) is True
