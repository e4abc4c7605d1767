"""Dependencies between tasks (SPEC §3 ``deps``): the checks admission and readiness share.

A dep must be a task that can still get done: one in ``rejected/`` or in no state folder never
will, and a task waiting for it would wait for ever (``refusal``). Deps must not form a cycle
(t1 -> t2 -> t1): at ``task add`` the new task's deps are followed through the files of tasks
not done (``cycle_through``); the queue scan looks for cycles among all queued tasks on the
deps its index keeps (``cycles``: groups of tasks that wait for each other, then a cycle
through each member, so that each refusal names its cycle). Light on purpose: ``status`` and
``task list`` load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from control_room.room import swarm
from control_room.room.layout import Room
from control_room.room.tasks import Task


def refusal(dep: str, state: str | None) -> str | None:
    """Why a dep held in ``state`` (None: in no folder) means its task could never be ready."""
    if state is None:
        return f"deps names {dep}, which is not a task in any swarm folder: it could never be ready"
    if state == "rejected":
        return f"deps names {dep}, which is in swarm/rejected/: it could never be ready"
    return None


def cycle_refusal(loop: list[str], at: int = 0) -> str:
    """The one wording for a dependency cycle: ``loop`` lists its tasks in order (each waits
    for the next, the last for the first), named from ``loop[at]``; a long one is shortened."""
    m = len(loop)
    ks = range(m) if m <= 8 else [0, 1, 2, 3, -1, m - 2, m - 1]
    names = [loop[(at + k) % m] if k >= 0 else "..." for k in ks]
    size = f" of {m} tasks" if m > 8 else ""
    return f"deps form a cycle{size}: {' -> '.join([*names, loop[at]])} (no task in it could ever be ready)"


_WAITING = ("queue", "running", "passed", "parked", "cancelled")  # a task here may wait for its deps again


def cycle_through(room: Room, task: Task) -> list[str] | None:
    """The cycle a new task would close, ``[id, dep, ...]`` (the last waits for ``id``): a path
    from its deps back to it through tasks that are not done, read from their files (a few;
    only at NEW)."""
    start = task["id"]
    stack = [[start, d] for d in reversed(task.get("deps", []))]
    seen: set[str] = set()
    while stack:
        path = stack.pop()
        node = path[-1]
        if node == start:
            return path[:-1]
        if node in seen:
            continue
        seen.add(node)
        held = next((f for s in _WAITING if (f := swarm.task_file(room, s, node)).exists()), None)
        if held is not None:
            found, problems = swarm.read_task(held)
            if not problems:
                stack += [[*path, d] for d in reversed(found.get("deps", []))]
    return None


def cycles(deps: Mapping[str, Iterable[str]]) -> dict[str, tuple[list[str], int]]:
    """Every task on a dependency cycle among ``deps`` (id -> the ids it waits for; ids not in
    the mapping are outside it), with a cycle through it: ``(loop, at)`` as ``cycle_refusal``
    takes it. The cycles are shortest ones through the first member (sorted) of each group of
    tasks that wait for each other, then through the first member no cycle found so far passes;
    linear in the tasks and deps for a ring of any length (no recursion)."""
    graph = {t: [d for d in ds if d in deps and d != t] for t, ds in deps.items()}
    out: dict[str, tuple[list[str], int]] = {}
    for comp in _components(graph):
        if len(comp) < 2:
            continue  # alone: no cycle (a task naming itself is refused on its own)
        members = set(comp)
        edges = {t: [d for d in graph[t] if d in members] for t in comp}
        closes = {t: set(edges[t]) for t in comp}
        for start in sorted(comp):
            if start not in out:
                loop = _shortest_loop(start, edges, closes)
                for i, t in enumerate(loop):
                    out.setdefault(t, (loop, i))
    return out


def _shortest_loop(start: str, edges: dict[str, list[str]], closes: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through ``start`` (breadth first, stopping at the first task that
    waits for ``start``), ``[start, ...]``; ``start`` is in a group that has one."""
    back: dict[str, str] = {}
    seen, frontier = {start}, [start]
    while frontier:
        nxt = []
        for node in frontier:
            if start in closes[node]:
                path = [node]
                while path[-1] != start:
                    path.append(back[path[-1]])
                return path[::-1]
            for d in edges[node]:
                if d not in seen:
                    seen.add(d)
                    back[d] = node
                    nxt.append(d)
        frontier = nxt
    raise AssertionError(f"{start} is on no cycle")  # the caller passes a member of a cycle


def _components(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on.add(node)
            edges = graph[node]
            if i < len(edges):
                work.append((node, i + 1))
                d = edges[i]
                if d not in index:
                    work.append((d, 0))
                elif d in on:
                    low[node] = min(low[node], index[d])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out
