"""One run of an agent CLI through its adapter: its state folder and environment, the run
itself, and reading it back. The runner does this for a claimed task; ``adapters --check``
(``dispatch/run/hello.py``) for a one-turn hello. The prompt reaches the CLI through stdin or
the brief file the CLI reads itself, never as an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from control_room import errors, proc
from control_room.adapters.faults import CONTEXT
from control_room.dispatch.queue.environment import agent_env
from control_room.dispatch.queue.resolve import Plan
from control_room.ledger.result import TOO_BIG
from control_room.room import results as results_folder
from control_room.room.layout import Room
from control_room.room.settings import Settings
from control_room.room.tasks import Task
from control_room.store.files import atomic_write, read_optional

if TYPE_CHECKING:
    from control_room.adapters import Adapter, Invocation, Outcome

OUTPUT_READ_MAX = 1_000_000  # bytes of a file the CLI wrote (``Adapter.outputs``) read back
STATE_GITIGNORE = "# the adapters' state folders (config files, isolated CLI homes): never state\n*\n"


def prepare(
    room: Room,
    settings: Settings,
    plan: Plan,
    task: Task,
    text: str,
    workdir: Path,
    results: Path,
) -> tuple[Invocation, dict[str, str]]:
    """The invocation and the agent's environment; writes the adapter's state files and the
    brief (``<work dir>/.brief-<id>.md``)."""
    brief = workdir / f".brief-{task['id']}.md"
    inv = plan.invocation(task, text, brief, workdir, results=results)
    write_state(room, plan.adapter, inv)
    atomic_write(brief, text, durable=False)  # deleted when the run ends
    key = (plan.setup.api_key_env,) if plan.setup.api_key_env else ()
    env = agent_env(room, settings, task, keep=key, names=plan.adapter.env_allow)
    return inv, plan.adapter.environment(inv, env)


def execute(
    room: Room,
    settings: Settings,
    adapter: Adapter,
    inv: Invocation,
    env: dict[str, str],
    timeout_s: float,
    *,
    on_tick: Callable[[float, int], None] | None = None,
    watch: Callable[[], str] | None = None,
) -> proc.Result:
    """Run the CLI in the work dir, its streams into the results folder. Raises
    ``proc.ExecutableNotFound`` when the CLI is not installed."""
    assert inv.results is not None
    return proc.run(
        adapter.command(inv),
        cwd=inv.workdir,
        env=env,
        stdin=adapter.stdin(inv),
        stdout_path=inv.results / "stdout.txt",
        stderr_path=inv.results / "stderr.txt",
        timeout_s=timeout_s,
        cap_bytes=settings.capture_max_bytes,
        stop_file=room.stop,
        on_tick=on_tick,
        watch=watch,
    )


SPLIT = (
    "the brief is too big for one run; split the task (`control-room task fanout`) or narrow its "
    "objective, owns and brief"
)


def read(adapter: Adapter, inv: Invocation, res: proc.Result) -> Outcome:
    """What the run said, through the adapter: its streams (bytes that are not UTF-8 read as
    Latin-1, and noted), and the files it declares (copilot's usage file); and whether it
    failed for its provider's fault (``Adapter.fault``)."""
    assert inv.results is not None
    stdout = results_folder.read_capture(res.stdout.path, res.notes, "stdout")
    stderr = results_folder.read_capture(res.stderr.path, res.notes, "stderr")
    named = adapter.outputs(inv)
    if not named:
        outcome = adapter.read(res, stdout, stderr)
    else:
        for n in named:  # in the room: never a secret (the captures were scrubbed by proc.run)
            proc.scrub_file(inv.results / n)
        files = {n: t for n in named if (t := read_optional(inv.results / n, OUTPUT_READ_MAX)) is not None}
        outcome = adapter.read(res, stdout, stderr, files)
    if res.ended:  # its live spend cap (spend.py): the task's own failure, whatever the CLI said
        outcome.ok, outcome.error = False, res.ended
        return outcome
    outcome.fault = fault = adapter.fault(res, stdout, stderr, outcome)
    if fault is not None and fault.kind == CONTEXT:  # the task's: too big for one brief
        outcome.error = f"{TOO_BIG} ({adapter.name}): {SPLIT}. The CLI said: {fault.detail}"
    return outcome


def write_state(room: Room, adapter: Adapter, inv: Invocation) -> None:
    """Write the files the adapter's setup needs into its state folder (created when the CLI
    takes it as its home, or has files there). The folder ignores itself for git."""
    if inv.state is None:
        return
    files = adapter.prepare(inv)
    if not files and not inv.setup.isolated:
        return
    ignore = room.adapter_states / ".gitignore"
    if not ignore.exists():
        room.adapter_states.mkdir(exist_ok=True)
        atomic_write(ignore, STATE_GITIGNORE, durable=False)
    inv.state.mkdir(parents=True, exist_ok=True)
    top = inv.state.resolve()
    for rel, text in files.items():
        path = (inv.state / rel).resolve()
        if top not in path.parents:  # a bug of the adapter, never a path outside its folder
            raise errors.ControlRoomError(
                f"adapter {adapter.name}: prepare() named {rel!r}, outside its folder"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text, durable=False)
