"""``ledger verify``: stream the ledger and name every line that breaks its writer's chain; and
the same check kept current incrementally for ``status`` (``check``).

First pass: check each line's own hash (edited?) and that it links to the last line seen from
the same writer (deleted or reordered?). Memory is one hash per writer. When a link is broken, a
second pass looks for the line the broken one claims to follow, to tell a deletion (that line is
nowhere) from a reordering (it is elsewhere in the file).

``check`` runs the first pass over the lines appended since it last ran (``ledger.follow``), so a
big ledger is hashed once, not on every ``status``. It sees what is appended, any rewrite that
moves the bytes it stopped at, and a file replaced by another (a rename over it: most editors'
save, ``sed -i``, a checkout), which it checks again from the start. An edit written into the
same file in place that keeps every byte offset of lines it has checked already is for
``ledger verify``, which reads everything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_room.ledger.follow import big, follow_lines
from control_room.ledger.line import (
    COLUMNS,
    GENESIS,
    HEADER,
    Col,
    body_and_hash,
    line_hash,
    parse,
    split_cells,
    unescape,
)
from control_room.ledger.read import last_hash, numbered_lines, table_lines
from control_room.store.files import open_fd

MAX_LINE = 1 << 16  # no ledger line is longer (details are cut): where the last whole line ends


class _Record:
    """A plain record: its ``_fields`` in order, compared and shown by value. (Not a dataclass
    nor a NamedTuple: ``status`` imports this module, and defining those costs it 1.5 to 3 ms.)"""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()  # in order

    def __init__(self, *values: Any) -> None:
        for name, value in zip(self._fields, values, strict=True):
            setattr(self, name, value)

    def _asdict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._asdict() == other._asdict()

    __hash__ = None  # type: ignore[assignment]  # compared by value, mutable: not hashable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._asdict().items())})"


class Problem(_Record):
    __slots__ = _fields = ("line", "kind", "why")
    line: int
    kind: str  # torn | edited | deleted | reordered; `check` says unlinked for the last two
    why: str

    def __init__(self, line: int, kind: str, why: str) -> None:
        super().__init__(line, kind, why)


class Report:
    """What ``verify`` found. (Plain classes here: ``status`` imports this module.)"""

    def __init__(self) -> None:
        self.lines = 0
        self.writers: set[str] = set()
        self.problems: list[Problem] = []
        self.header_found = False

    @property
    def ok(self) -> bool:
        return self.header_found and not self.problems


class _Link(_Record):
    __slots__ = _fields = ("line", "writer", "prev", "head", "head_line")
    line: int
    writer: str
    prev: str
    head: str  # hash of the writer's last line before this one
    head_line: int

    def __init__(self, line: int, writer: str, prev: str, head: str, head_line: int) -> None:
        super().__init__(line, writer, prev, head, head_line)


Found = Callable[[dict[str, Any], "Problem | _Link"], None]  # (the pass's state, what is wrong)


def _new() -> dict[str, Any]:
    """The first pass's state: lines seen, the header, each writer's last hash and line."""
    return {"number": 0, "header": False, "separator": False, "rows": 0, "heads": {}}


def _step(st: dict[str, Any], line: str, whole: bool, found: Found) -> None:
    """The first pass over one physical line (``whole``: it ended with a newline)."""
    st["number"] += 1
    number = st["number"]
    if not st["header"]:
        st["header"] = line == HEADER
        return
    if not st["separator"]:
        st["separator"] = True
        if line.startswith("|---"):
            return
    st["rows"] += 1
    cells = split_cells(line) if whole else None  # three cells are read: no full parse
    split = body_and_hash(line) if cells is not None and len(cells) == len(COLUMNS) else None
    if cells is None or split is None:
        why = "the last line has no newline" if not whole else "not a whole ledger line"
        found(st, Problem(number, "torn", why))
        return
    body, stored = split
    if line_hash(body) != stored:
        found(st, Problem(number, "edited", f"its content does not match its hash {stored}"))
    writer, prev = unescape(cells[Col.WRITER]), unescape(cells[Col.PREV])
    heads: dict[str, tuple[str, int]] = st["heads"]
    head, head_line = heads.get(writer, (GENESIS, 0))
    if prev != head:
        found(st, _Link(number, writer, prev, head, head_line))
    heads[writer] = (stored, number)


def verify(path: Path) -> Report:
    report = Report()
    st = _new()
    problems: list[Problem] = []
    links: list[_Link] = []

    def found(_st: dict[str, Any], p: Problem | _Link) -> None:
        if isinstance(p, Problem):
            problems.append(p)
        else:
            links.append(p)

    for _, line, whole in numbered_lines(path):
        _step(st, line, whole, found)
    report.header_found, report.lines, report.writers = st["header"], st["rows"], set(st["heads"])
    report.problems = problems
    if links:
        report.problems.extend(_explain(path, links))
    report.problems.sort(key=lambda p: p.line)
    return report


# the incremental check, for status -------------------------------------------------------------

KIND = "chain-1"
KEEP = 3  # problems kept for status; `ledger verify` lists them all


class Check(_Record):
    """What ``status`` says about the ledger: whether it has its header, and its first bad lines."""

    __slots__ = _fields = ("empty", "header", "bad", "first", "torn_tail")
    empty: bool
    header: bool
    bad: int  # how many bad lines
    first: list[Problem]  # the first few, in file order
    torn_tail: bool  # the last line has no newline (yet)

    def __init__(self, empty: bool, header: bool, bad: int, first: list[Problem], torn_tail: bool) -> None:
        super().__init__(empty, header, bad, first, torn_tail)

    @property
    def ok(self) -> bool:
        return self.header and not self.bad and not self.torn_tail


def _record(st: dict[str, Any], p: Problem | _Link) -> None:
    """Count a bad line; keep the first few (a broken link is named, not yet explained)."""
    if isinstance(p, _Link):
        p = Problem(
            p.line,
            "unlinked",
            f"it does not follow the line of writer {p.writer} before it: a line was deleted or moved",
        )
    st["bad"] += 1
    if len(st["first"]) < KEEP:
        st["first"].append((p.line, p.kind, p.why))


def check(path: Path, checkpoint: Path) -> Check:
    """The chain check of ``path``, brought up to date by reading only what was appended.

    A first check of a big ledger (no checkpoint: a fresh clone, a deleted cache) starts at its
    end and checks what is appended from then on: hashing every line is ``ledger verify``'s
    (and doctor's) job, never a command's. A writer's head before that point is looked up the
    first time one of its new lines is checked (``read.last_hash``)."""
    lookup: list[int] = []  # a descriptor for head look-ups, opened when one is needed

    def init() -> dict[str, Any]:
        return {**_new(), "bad": 0, "first": []}

    def fold(st: dict[str, Any], line: str) -> None:
        if st.get("from"):
            st["header"] = st["separator"] = True  # started past them
            writer = _writer(line)
            if writer is not None and writer not in st["heads"]:
                if not lookup:
                    lookup.append(open_fd(path))
                st["heads"][writer] = (last_hash(lookup[0], st["from"], writer) or GENESIS, 0)
        _step(st, line, True, _record)

    try:
        st, _ = follow_lines(path, checkpoint, KIND, init, fold, same_inode=True, first=end_of_lines)
    finally:
        for fd in lookup:
            os.close(fd)
    if st.get("from"):
        st["header"] = True  # a check starts past the header only when it is near the top
    size = os.stat(path).st_size
    first = [Problem(*p) for p in st["first"]]
    if first and st.get("from"):  # numbered from where the check started: from the top, now
        base = _lines_before(path, st["from"])
        first = [Problem(p.line + base, p.kind, p.why) for p in first]
    torn = size > st["size"]
    return Check(empty=size == 0, header=st["header"], bad=st["bad"], first=first, torn_tail=torn)


def end_of_lines(fd: int, size: int) -> int:
    """Where a first check starts: 0 for a small ledger (all of it checked), else the end of its
    last whole line."""
    if not big(fd, size):
        return 0
    return size - len(os.pread(fd, MAX_LINE, max(0, size - MAX_LINE)).rsplit(b"\n", 1)[-1])


def _writer(line: str) -> str | None:
    cells = split_cells(line)
    return unescape(cells[Col.WRITER]) if cells is not None and len(cells) == len(COLUMNS) else None


def _lines_before(path: Path, offset: int) -> int:
    """How many physical lines end before byte ``offset``: a problem's line number (rare)."""
    fd = open_fd(path)
    try:
        step = 1 << 22
        return sum(os.pread(fd, min(step, offset - pos), pos).count(b"\n") for pos in range(0, offset, step))
    finally:
        os.close(fd)


def _explain(path: Path, links: list[_Link]) -> list[Problem]:
    wanted = {(k.writer, k.prev) for k in links if k.prev != GENESIS}
    where: dict[tuple[str, str], int] = {}
    for number, line, _ in table_lines(path):
        entry = parse(line)
        if entry is not None and (entry.writer, entry.hash) in wanted:
            where.setdefault((entry.writer, entry.hash), number)
    out = []
    for k in links:
        between = f"line {k.head_line}" if k.head_line else "nothing"
        if k.prev == GENESIS:
            out.append(
                Problem(
                    k.line,
                    "reordered",
                    f"it claims to be the first line of writer "
                    f"{k.writer}, but line {k.head_line} of that writer comes before it",
                )
            )
            continue
        found = where.get((k.writer, k.prev))
        if found is None:
            out.append(
                Problem(
                    k.line,
                    "deleted",
                    f"the line of writer {k.writer} it follows (hash {k.prev}) is missing from the ledger",
                )
            )
        elif found > k.line:
            out.append(Problem(k.line, "reordered", f"it follows line {found}, which comes after it"))
        else:
            out.append(
                Problem(
                    k.line,
                    "reordered",
                    f"it follows line {found}, but {between} "
                    f"of writer {k.writer} came between (moved or duplicated)",
                )
            )
    return out
