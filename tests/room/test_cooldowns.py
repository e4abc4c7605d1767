"""room/cooldowns: a fault cools an adapter down until the provider's reset time, else for a
back-off that doubles with each fault in a row; a run that works starts it again."""

from __future__ import annotations

import json

from control_room.room import cooldowns
from control_room.room.layout import Room

NOW = 1_800_000_000.0


def test_the_providers_reset_time_is_taken(room: Room) -> None:
    cool = cooldowns.record(room, "claude", None, "rate-limit", "usage limit reached", NOW + 600, now=NOW)
    assert (cool.key, cool.until, cool.given, cool.faults) == ("claude", NOW + 600, True, 1)
    assert (
        cool.says() == "claude cools down until 2027-01-15T08:10:00Z (rate-limit, the provider's reset time)"
    )
    assert list(cooldowns.active(room, NOW)) == ["claude"]
    assert cooldowns.active(room, NOW + 601) == {}


def test_without_one_the_back_off_doubles_and_is_capped(room: Room) -> None:
    untils = [cooldowns.record(room, "codex", "gpt-x", "overloaded", "529", None, now=NOW).until - NOW
              for _ in range(9)]  # fmt: skip
    assert untils == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
    far = cooldowns.record(
        room, "codex", "gpt-x", "rate-limit", "resets in 30 days", NOW + 30 * 86400, now=NOW
    )
    assert (far.until, far.given) == (NOW + 3600, False)  # a reset time that far off is not believed


def test_a_model_cools_on_its_own_and_the_whole_adapter_holds_every_model(room: Room) -> None:
    cooldowns.record(room, "gemini", "pro", "rate-limit", "429", None, now=NOW)
    table = cooldowns.active(room, NOW)
    assert cooldowns.cooling(table, "gemini", "pro") is not None
    assert cooldowns.cooling(table, "gemini", "flash") is None
    assert cooldowns.cooling(table, "gemini", None) is None
    cooldowns.record(room, "gemini", None, "auth", "401", None, now=NOW)
    table = cooldowns.active(room, NOW)
    assert cooldowns.cooling(table, "gemini", "flash") is not None


def test_a_run_that_works_clears_a_past_entry_but_never_an_active_one(room: Room) -> None:
    cooldowns.record(room, "claude", None, "overloaded", "529", None, now=NOW)
    cooldowns.clear(room, "claude", None)  # still cooling (real time is long before NOW + 60)
    assert "claude" in cooldowns.load(room)
    path = cooldowns.path(room)
    data = json.loads(path.read_text())
    data["claude"]["until_epoch"] = 1.0
    path.write_text(json.dumps(data))
    cooldowns.clear(room, "claude", None)
    assert cooldowns.load(room) == {}


def test_a_broken_file_is_no_cooldown_and_no_crash(room: Room) -> None:
    room.cache.mkdir(exist_ok=True)
    cooldowns.path(room).write_text("{not json")
    assert cooldowns.load(room) == {}
    cooldowns.path(room).write_text('{"claude": {"until_epoch": "soon"}, "x": 3}')
    assert cooldowns.load(room) == {}
