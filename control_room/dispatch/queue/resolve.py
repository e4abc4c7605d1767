"""How a task will run (``Plan``): its role, then its adapter, the model and the adapter's setup
(``resolve``: the task's own choice, else its role's, else CONTROL.md's; a fallback's adapter
while the task's own cools down), and the ``Invocation`` the adapter gets. Admission
(``admit``) resolves a task at NEW and RUN; the cycle, ``adapters --check``, doctor and the
review's independence check resolve through here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_room.errors import RoomInvalidError
from control_room.plain import Plain
from control_room.room import shell
from control_room.room.layout import Room
from control_room.room.tasks import Task

if TYPE_CHECKING:  # loaded when a task is resolved, never by the queue scan
    from control_room.adapters import Adapter, Invocation
    from control_room.adapters.base import Setup
    from control_room.room.settings import Settings


class Plan(Plain):
    """How a task will run: its role, the adapter, the model and what the adapter sees."""

    __slots__ = (
        "adapter", "adapter_settings", "instead_of", "max_turns", "model", "role", "role_meta", "setup",
        "setup_where", "state",
    )  # fmt: skip

    def __init__(
        self,
        role: str,
        role_meta: dict[str, Any],
        adapter: Adapter,
        model: str | None,
        adapter_settings: dict[str, Any],
        setup: Setup,
        setup_where: str = "CONTROL.md",
        state: Path | None = None,
        instead_of: str = "",
        max_turns: int = 0,
    ) -> None:
        self.role = role
        self.role_meta = role_meta
        self.adapter = adapter
        self.model = model
        self.adapter_settings = adapter_settings  # CONTROL.md's values, overridden by the role's
        self.setup = setup  # CONTROL.md ``adapters.<adapter>``, overridden key by key by the role's
        self.setup_where = setup_where  # where the setup was written, for messages
        self.state = state  # its state folder, control-room/.adapters/NAME; None: no setup
        self.instead_of = instead_of  # a fallback's: the adapter it stands in for while that one cools down
        self.max_turns = max_turns  # the task's max_turns, else CONTROL.md's: 0, none

    def invocation(
        self,
        task: Task,
        prompt: str,
        brief: Path,
        workdir: Path,
        *,
        results: Path | None = None,
    ) -> Invocation:
        from control_room.adapters import Invocation  # loaded with the adapter, in resolve

        command = task.get("command")
        return Invocation(
            task,
            prompt,
            brief,
            workdir,
            model=self.model,
            extra_args=list(task.get("extra_args", [])),
            settings=self.adapter_settings,
            setup=self.setup,
            state=self.state,
            results=results,
            command=None if command is None else shell.argv_of(command, f"task {task['id']}: `command`"),
            max_turns=self.max_turns,
        )


def resolve(
    room: Room, settings: Settings, task: Task, runs_on: tuple[str, str | None] | None = None
) -> Plan:
    """Role -> adapter -> model: the task's own choice, else its role's, else CONTROL.md's;
    ``runs_on`` (a fallback's adapter and model, while the task's own cools down) instead."""
    from control_room import adapters  # see admit: not for the queue scan
    from control_room.room import roles  # likewise

    role = roles.name_of(task)
    meta, _ = roles.read(room, role)
    if task.get("adapter"):
        adapter = adapters.get(str(task["adapter"]))  # the task's own choice: its fault if unknown
    else:
        name, where = (
            (str(meta["adapter"]), f"agents/{role}.md")
            if meta.get("adapter")
            else (settings.default_adapter, "CONTROL.md")
        )
        if not adapters.known(name):  # the room's fault, never the task's: it is not rejected
            raise RoomInvalidError(
                f"room invalid: {where} names adapter {name!r}, which is not an adapter "
                f"(known: {', '.join(adapters.names())}); fix {where}"
            )
        adapter = adapters.get(name)
    instead_of = ""
    if runs_on is not None and runs_on[0] != adapter.name:
        instead_of, adapter = adapter.name, adapters.get(runs_on[0])
    setup, where, state = _setup(settings, meta, role, adapter)
    if instead_of:
        model = runs_on[1] if runs_on is not None else None
    else:
        model = task.get("model") or meta.get("model") or setup.model or settings.default_model
    overrides = {k: v for k, v in meta.items() if v not in (None, "", [])}
    return Plan(
        role,
        meta,
        adapter,
        str(model) if model else None,
        {**settings.as_dict(), **overrides},
        setup,
        where,
        room.adapter_states / state if state else None,
        instead_of,
        task.get("max_turns") or settings.max_turns,
    )


def _setup(
    settings: Settings, meta: dict[str, Any], role: str, adapter: Adapter
) -> tuple[Setup, str, str | None]:
    """The adapter's setup: CONTROL.md ``adapters.<name>``, the role's front matter overriding
    it key by key; where it was written; the name of its state folder (per role when the role
    overrides it, so that two roles never rewrite each other's config files). A setting the
    adapter does not act on is the room's fault: refused, never ignored."""
    from control_room import adapters  # loaded with the adapter, in resolve
    from control_room.adapters.base import Setup  # likewise
    from control_room.room.keys import adapters_problem  # likewise: not for the queue scan

    name = adapter.name
    own = meta.get("adapters")
    if own is not None:
        where = f"agents/{role}.md"
        problem = adapters_problem(own)
        unknown = [n for n in own if not adapters.known(n)] if problem is None else []
        if unknown:
            problem = f"{unknown[0]!r} is not an adapter (known: {', '.join(adapters.names())})"
        if problem is not None:
            raise RoomInvalidError(f"room invalid: {where}: adapters: {problem}; fix {where}")
    base = settings.adapters.get(name)
    mine = own.get(name) if own is not None else None
    if base is None and mine is None:
        return Setup(), "CONTROL.md", None
    merged = {**(base or {}), **(mine or {})}
    where = "CONTROL.md" if mine is None else f"agents/{role}.md"
    setup = Setup(**{k: v for k, v in merged.items() if v is not None})
    problem = adapter.check(setup)
    if problem is not None:
        raise RoomInvalidError(f"room invalid: {where}: adapters.{name}: {problem}; fix {where}")
    return setup, where, name if mine is None else f"{name}@{role}"
