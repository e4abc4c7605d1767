"""dispatch.queue.resolve: how a task will run: role, adapter, model, setup, max_turns."""

from __future__ import annotations

import pytest
from support import task

from control_room import errors
from control_room.dispatch.queue import admission
from control_room.dispatch.queue.resolve import resolve
from control_room.room import settings
from control_room.room.layout import Room


def test_the_plan_takes_the_tasks_choice_then_the_roles_then_the_settings(room: Room) -> None:
    role = room.root / "agents" / "engineer.md"
    role.write_text(
        "---\nadapter: command\nmodel: role-model\ncommand_argv: [my-agent, '{brief}']\n---\nbody\n"
    )
    s = settings.load(room).replace(default_model="room-model")
    t = {k: v for k, v in task("t1").items() if k != "command"}
    plan = admission.admit(room, t, admission.Stage.RUN, s)
    assert plan is not None
    assert (plan.adapter.name, plan.model, plan.role) == ("command", "role-model", "engineer")
    assert plan.adapter_settings["command_argv"] == ["my-agent", "{brief}"]  # the role's, over CONTROL.md's
    plan = resolve(room, s, {**t, "adapter": "probe", "model": "task-model"})
    assert (plan.adapter.name, plan.model) == ("probe", "task-model")
    role.write_text("---\n---\nbody\n")
    assert resolve(room, s, t).model == "room-model"


URL = "http://127.0.0.1:9/v1"


def test_a_setup_is_control_mds_overridden_key_by_key_by_the_role(room: Room) -> None:
    s = settings.load(room).replace(
        default_model="room-model",
        adapters={
            "codex": {"base_url": URL, "api_key_env": "GATEWAY_KEY", "model": "qwen", "isolated": True}
        },
    )
    t = {k: v for k, v in task("t1", adapter="codex").items() if k != "command"}
    plan = resolve(room, s, t)
    assert (plan.setup.base_url, plan.setup.api_key_env, plan.setup.model, plan.setup.isolated) == (
        URL, "GATEWAY_KEY", "qwen", True)  # fmt: skip
    assert (plan.model, plan.setup_where, plan.state) == (
        "qwen",
        "CONTROL.md",
        room.cr / ".adapters" / "codex",
    )
    assert resolve(room, s, {**t, "model": "task-model"}).model == "task-model"  # the task's wins
    (room.root / "agents" / "reviewer.md").write_text(
        "---\nadapters: {codex: {base_url: 'http://10.0.0.2/v1', isolated: false}}\n---\nReview.\n"
    )
    plan = resolve(room, s, {**t, "role": "reviewer"})
    assert (plan.setup.base_url, plan.setup.api_key_env, plan.setup.isolated) == (
        "http://10.0.0.2/v1",
        "GATEWAY_KEY",
        False,
    )
    assert (plan.setup_where, plan.state) == ("agents/reviewer.md", room.cr / ".adapters" / "codex@reviewer")
    plan = resolve(room, s, {**t, "adapter": "claude"})  # no setup: the user's own login
    assert (plan.setup.given(), plan.state, plan.model) == ([], None, "room-model")


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("adapters: {codex: {base_ur: x}}",
         "agents/engineer.md: adapters: codex: unknown setting 'base_ur' "
         "(known: base_url, api_key_env, model, isolated); fix agents/engineer.md"),
        ("adapters: {codex: {api_key_env: GATEWAY_KEY}}",
         "agents/engineer.md: adapters.codex: api_key_env needs a base_url: codex takes it as the key "
         "of that endpoint; fix agents/engineer.md"),
        ("adapters: {probe: {isolated: true}}",
         "agents/engineer.md: adapters.probe: the probe adapter does not act on isolated (it takes: none); "
         "fix agents/engineer.md"),
    ],
)  # fmt: skip
def test_a_roles_setup_that_cannot_work_is_the_rooms_fault(room: Room, front: str, message: str) -> None:
    (room.root / "agents" / "engineer.md").write_text(f"---\n{front}\n---\nbody\n")
    adapter = "probe" if "probe" in front else "codex"
    with pytest.raises(errors.RoomInvalidError) as err:
        resolve(room, settings.load(room), task("t1", adapter=adapter))
    assert str(err.value) == f"room invalid: {message}"


def test_a_roles_setup_for_no_adapter_is_named(room: Room) -> None:
    (room.root / "agents" / "engineer.md").write_text("---\nadapters: {claud: {isolated: true}}\n---\nbody\n")
    with pytest.raises(errors.RoomInvalidError) as err:
        resolve(room, settings.load(room), task("t1"))
    assert str(err.value).startswith(
        "room invalid: agents/engineer.md: adapters: 'claud' is not an adapter (known: aider, "
    )


def test_max_turns_is_the_tasks_else_control_mds(room: Room) -> None:
    t = {k: v for k, v in task("t1").items() if k != "command"}
    s = settings.load(room)
    assert resolve(room, s, t).max_turns == 0  # none
    s = s.replace(max_turns=40)
    plan = resolve(room, s, t)
    assert plan.max_turns == 40
    inv = plan.invocation(t, "the brief", room.root / "b.md", room.root)
    assert inv.max_turns == 40 and len(inv.session) == 36
    assert resolve(room, s, {**t, "max_turns": 5}).max_turns == 5
