"""``control-room demo``: a whole room working on a small real objective, with ``probe``.

The objective: make ``count_primes(10000)`` run within 50 ms. Routes: a sieve (works), caching
results (does not help a cold call: fails twice and is parked), and a rewrite in C, killed
before the demo starts (its tombstone is in the graveyard, and a task dropped on it is refused).
A task that depends on the sieve runs after it; a hand-dropped task without a falsifier is
rejected. Every "agent" here is the probe adapter
running a small script that stands in for an agent's change, and every validator is a real
benchmark.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from control_room import errors
from control_room.cli.common import echo, person_only, refresh_views, watch
from control_room.dispatch.queue import admission
from control_room.dispatch.run.cycle import cycle
from control_room.errors import InvalidError
from control_room.knowledge import graveyard, routes
from control_room.room import settings as settings_file
from control_room.room.layout import Room
from control_room.room.scaffold import init
from control_room.store.files import atomic_write, update
from control_room.views.status import gather, render

SLOW = '''"""The code under attack: count the primes below n."""


def count_primes(n):
    count = 0
    for k in range(2, n):
        if all(k % d for d in range(2, k)):
            count += 1
    return count
'''

SIEVE = '''"""Count the primes below n with a sieve of Eratosthenes."""


def count_primes(n):
    if n < 3:
        return 0
    sieve = bytearray([1]) * n
    sieve[0] = sieve[1] = 0
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytes(len(range(i * i, n, i)))
    return sum(sieve)
'''

BENCH = '''"""Validator: count_primes(N) must be right and take at most --budget-ms in a fresh process."""
import argparse
import importlib
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--module", default="primes")
p.add_argument("--n", type=int, default=10000)
p.add_argument("--budget-ms", type=float, default=50.0)
a = p.parse_args()
mod = importlib.import_module(a.module)
t = time.perf_counter()
got = mod.count_primes(a.n)
ms = (time.perf_counter() - t) * 1000
print(f"count_primes({a.n}) = {got} in {ms:.1f} ms (budget {a.budget_ms:g} ms)")
if got != 1229 and a.n == 10000:
    print("wrong answer: expected 1229")
    sys.exit(2)
sys.exit(0 if ms <= a.budget_ms else 1)
'''

APPLY = '''"""Stands in for an agent: writes {target} with the {what} version of count_primes."""
import pathlib
pathlib.Path("{target}").write_text({code!r})
print("wrote {target}: {what} version of count_primes")
'''

OBJECTIVE = """## Objective

Make `count_primes(10000)` in `work/primes.py` return 1229 within 50 ms, measured in a fresh
process by `python work/bench.py` (the validator of every task here).
"""


def _task(tid: str, py: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": tid,
        "max_cost_usd": 0.0,
        "wall_clock_s": 60,
        "adapter": "probe",
        "validator": [py, "bench.py"],
    }
    base.update(fields)
    return base


def build(root: Path) -> Room:
    """Lay out the demo room in ``root`` (which must be new or empty)."""
    if root.exists() and any(root.iterdir()):
        raise InvalidError(f"{root} exists and is not empty; the demo needs a new folder")
    init(root)
    room = Room(root)
    work = root / "work"
    (work / "patches").mkdir(parents=True)
    py = sys.executable
    (work / "primes.py").write_text(SLOW)
    (work / "bench.py").write_text(BENCH)
    (work / "patches" / "sieve.py").write_text(APPLY.format(target="primes.py", what="sieve", code=SIEVE))
    memo = "import functools\n" + SLOW.replace(
        "def count_primes", "@functools.lru_cache(maxsize=None)\ndef count_primes"
    )
    (work / "patches" / "memo.py").write_text(
        APPLY.format(target="primes_memo.py", what="memoized", code=memo)
    )
    update(room.control, lambda t: settings_file.set_value(t, "workdir", "work"))
    update(
        room.context,
        lambda t: t.replace(
            "## Objective\n\n(A person or the orchestrator writes the "
            "objective here: what the swarm is attacking, how\nsuccess "
            "is measured, and the number to beat.)\n",
            OBJECTIVE,
        ),
    )
    routes.add(
        room,
        "sieve",
        "count primes with a sieve instead of trial division",
        "still over 50 ms after the rewrite",
    )
    routes.add(room, "cache-results", "memoize count_primes", "a cold call is no faster")
    routes.add(room, "rewrite-in-c", "move the hot loop into a C extension", "no gain over the sieve")
    graveyard.kill(
        room,
        "rewrite-in-c",
        "a C extension is a build dependency for a 2 ms gain over the sieve, "
        "measured before this room existed",
        "the sieve stops meeting the budget",
        [],
        what="Rewrite count_primes as a C extension.",
    )
    tasks = [
        _task(
            "sieve-1",
            py,
            route="sieve",
            priority=2,
            command=[py, "patches/sieve.py"],
            owns=["primes.py"],
            objective="Replace trial division in count_primes with a sieve of Eratosthenes.",
            falsifier="count_primes(10000) still takes over 50 ms, or returns anything but 1229.",
            kill_condition="Two rounds over budget: the sieve is not the bottleneck's answer.",
        ),
        _task(
            "confirm-after-sieve",
            py,
            route="sieve",
            priority=3,
            deps=["sieve-1"],
            command=[py, "bench.py", "--budget-ms", "50"],
            objective="Measure count_primes again now that the sieve is in, as the new baseline.",
            falsifier="The measured time is over 50 ms in a fresh process.",
            kill_condition="The gain does not reproduce in two fresh runs.",
        ),
        _task(
            "memo-1",
            py,
            route="cache-results",
            priority=1,
            command=[py, "patches/memo.py"],
            owns=["primes_memo.py"],
            validator=[py, "bench.py", "--module", "primes_memo"],
            objective="Memoize count_primes so that repeated calls cost nothing.",
            falsifier="A cold call in a fresh process is no faster than before.",
            kill_condition="Cold calls stay over budget after two rounds: caching is the wrong lever.",
        ),
    ]
    settings = settings_file.load(room)
    for t in tasks:
        admission.add(room, settings, t)
    # A task dropped by hand on the killed route: the cycle refuses it, pointing at the tombstone.
    atomic_write(
        room.state_dir("queue") / "c-ext-1.json",
        json.dumps(
            {
                "id": "c-ext-1",
                "route": "rewrite-in-c",
                "objective": "try the C extension once more",
                "falsifier": "no gain",
                "validator": [py, "bench.py"],
                "max_cost_usd": 0.0,
                "wall_clock_s": 60,
                "kill_condition": "no gain",
                "adapter": "probe",
                "command": [py, "bench.py"],
            },
            indent=2,
        )
        + "\n",
    )
    # A hand-dropped task with no falsifier: it is a vibe, and the next queue scan rejects it.
    atomic_write(
        room.state_dir("queue") / "vibe.json",
        json.dumps(
            {
                "id": "vibe",
                "objective": "make it faster somehow",
                "validator": [py, "bench.py"],
                "max_cost_usd": 0.0,
                "wall_clock_s": 60,
                "kill_condition": "none",
            },
            indent=2,
        )
        + "\n",
    )
    return room


def run(root: Path, echo: Callable[[str], None]) -> Room:
    """Build the demo room and run cycles until nothing is left to do. The demo is an edge like
    any command (``common.watch``): the views are refreshed after building the room and after
    each cycle, as ``run`` does, and once more when the command ends, however it ends, if
    anything changed since (the last cycle's rejections, a cycle that raised)."""
    watch(Room(root))
    room = build(root)
    refresh_views()
    echo(f"demo room: {root}")
    for n in range(1, 21):
        result = cycle(room)
        refresh_views()  # the next cycle's prompt reads CURRENT_CONTEXT.md and DIGEST.md
        echo(f"cycle {n}: {result.message}")
        if result.code in (errors.OK, errors.STOPPED, errors.BUSY, errors.ADAPTER_MISSING):
            break
    return room


@click.command()
@click.argument("directory", default="control-room-demo", type=click.Path(file_okay=False, path_type=Path))
@person_only
def demo(directory: Path) -> None:
    """Build a demo room in DIRECTORY (default ./control-room-demo) and run it to the end.

    Needs no login and no network: every agent is the built-in probe adapter, every validator
    a real benchmark. At the end it prints the status and the files worth reading.
    """
    room = run(directory.absolute(), click.echo)
    echo("")
    echo(render(gather(room)))
    d = directory
    echo(f"""
Now read the files, they are the whole state:
  cat {d}/control-room/CURRENT_CONTEXT.md     what is happening now
  cat {d}/control-room/LEDGER.md              every event, hash-chained
  cat {d}/control-room/ROUTES.md              the board
  cat {d}/swarm/parked/memo-1.reason          why a task waits for a person
  cat {d}/swarm/rejected/vibe.json.reason     why a task was refused (no falsifier)
  cat {d}/graveyard/rewrite-in-c.md           a killed route's tombstone
  cat {d}/swarm/rejected/c-ext-1.json.reason  a task on it, refused
  cat {d}/control-room/DIGEST.md              what a fresh agent reads first
  cat {d}/swarm/outbox/sieve-1.md             the exact prompt a run was given
  cat {d}/swarm/results/sieve-1/report.md     the report, in the DECISION/EVIDENCE format
  control-room --room {d} ledger verify""")
