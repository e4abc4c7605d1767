"""The import graph of control_room, in-function imports included, read from the source."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "control_room"

# The wings of dispatch/, lowest first (each wing's __init__ says what it owns and may import).
DISPATCH_WINGS = (
    "round",  # one round's pieces: claims, how a round ends, the prompt, the report, the validator
    "person",  # what only a person decides, STOP, what a person is told
    "schedule",  # cron, launchd and systemd entries, installed
    "shared",  # many machines: sync, claim refs, claiming, lost claims, the repo's remote
    "worktrees",  # a git worktree per route, and where it is
    "queue",  # admission, deps, the index, readiness, the pick, fan-out, the orchestrator
    "plan",  # plan import and export
    "review",  # lenses, review tasks, verdicts, arbitration
    "merge",  # the merge queue, cleanup's sweep
    "run",  # one cycle: preflight, the claim, the run, where it goes
    "doctor",  # the room's checks and repairs
)

# Lowest first. A module may import its own layer and the layers below it, never above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "control_room",
            "control_room.errors",
            "control_room.crashpoint",
            "control_room.timeutil",
            "control_room.lineage",
            "control_room.reaper",
            "control_room.proc",
            "control_room.words",
            "control_room.git",
            "control_room.text",
            "control_room.redact",
            "control_room.plain",
            "control_room.capture",
        ),
    ),
    ("store", ("control_room.store",)),
    ("ledger", ("control_room.ledger",)),
    ("room", ("control_room.room",)),
    ("knowledge", ("control_room.knowledge",)),
    ("adapters", ("control_room.adapters",)),
    # dispatch/ in wings, lowest first: a wing may import the wings above it in this list
    ("dispatch", ("control_room.dispatch",)),
    *((f"dispatch.{wing}", (f"control_room.dispatch.{wing}",)) for wing in DISPATCH_WINGS),
    ("views", ("control_room.views",)),
    ("cli", ("control_room.cli", "control_room.__main__")),
)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    best, found = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), i
    if found < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import of a control_room module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = package.split(".")
                    parent = parent[: len(parent) - (child.level - 1)]
                    base = ".".join([*parent, base] if base else parent)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in child.names]
            for t in targets:
                if t == "control_room" or t.startswith("control_room."):
                    while t not in known and "." in t:
                        t = t.rpartition(".")[0]
                    out.append((t, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return out


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    mods = modules()
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


# Layers that may import less than everything below them.
NARROW: dict[str, set[str]] = {"adapters": {"base", "adapters"}}


def allowed(name: str, dep: str) -> bool:
    mine, theirs = LAYERS[layer(name)][0], LAYERS[layer(dep)][0]
    if mine in NARROW:
        return theirs in NARROW[mine]
    return layer(dep) <= layer(name)


def upward(g: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    out = []
    for name, deps in g.items():
        for dep, line, _ in deps:
            if not allowed(name, dep):
                out.append(
                    f"{name}:{line} imports {dep} ({LAYERS[layer(name)][0]} -> {LAYERS[layer(dep)][0]})"
                )
    return out


def cycles(g: dict[str, list[tuple[str, int, bool]]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    edges = {n: sorted({d for d, _, _ in deps if d != n and not _is_parent(d, n)}) for n, deps in g.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            strong(v)
    return out


def _is_parent(dep: str, name: str) -> bool:
    """Importing a submodule implies its package's ``__init__``: not an edge back."""
    return name.startswith(dep + ".")


if __name__ == "__main__":
    g = graph()
    for line in upward(g):
        print("UP", line)
    for c in cycles(g):
        print("CYCLE", " ".join(c))


_LOADED = """
import importlib, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    for m in [m for m in sys.modules if m == "control_room" or m.startswith("control_room.")]:
        del sys.modules[m]
    importlib.import_module(name)
    out[name] = sorted(m for m in sys.modules if m.startswith("control_room"))
print(json.dumps(out))
"""


def loaded_by(names: list[str]) -> dict[str, set[str]]:
    """The package's modules that importing each of ``names`` loads, each counted from none of
    ours loaded (one interpreter: the package's modules are dropped before each import)."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _LOADED, json.dumps(names)],
        capture_output=True, text=True, check=True, cwd=PACKAGE.parent,
    )  # fmt: skip
    return {k: set(v) for k, v in json.loads(done.stdout).items()}


def needless_lazy(g: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    """Imports inside a function of a module that the module's own import loads already: the
    laziness buys nothing and misleads the reader."""
    lazy = [(n, d, line) for n, deps in g.items() for d, line, inside in deps if inside]
    loaded = loaded_by(sorted({n for n, _, _ in lazy}))
    return [
        f"{n}:{line} imports {d}, which importing {n} loads already" for n, d, line in lazy if d in loaded[n]
    ]
