"""``ledger verify``: stream the ledger and name every line that breaks its writer's chain.

First pass: check each line's own hash (edited?) and that it links to the last line seen from
the same writer (deleted or reordered?). Memory is one hash per writer. When a link is broken, a
second pass looks for the line the broken one claims to follow, to tell a deletion (that line is
nowhere) from a reordering (it is elsewhere in the file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from control_room.ledger.line import GENESIS, HEADER, body_and_hash, line_hash, parse
from control_room.ledger.read import numbered_lines, table_lines


@dataclass
class Problem:
    line: int
    kind: str  # torn | edited | deleted | reordered
    why: str


@dataclass
class Report:
    lines: int = 0
    writers: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    header_found: bool = False

    @property
    def ok(self) -> bool:
        return self.header_found and not self.problems


@dataclass
class _Link:
    line: int
    writer: str
    prev: str
    head: str  # hash of the writer's last line before this one
    head_line: int


def verify(path: Path) -> Report:
    report = Report()
    heads: dict[str, tuple[str, int]] = {}  # writer -> (hash, line number)
    links: list[_Link] = []
    report.header_found = any(line == HEADER for _, line, _ in numbered_lines(path))  # stops there
    separator_seen = False
    for number, line, whole in table_lines(path):
        if not separator_seen:
            separator_seen = True
            if line.startswith("|---"):
                continue
        report.lines += 1
        entry = parse(line) if whole else None
        split = body_and_hash(line) if entry is not None else None
        if entry is None or split is None:
            why = "the last line has no newline" if not whole else "not a whole ledger line"
            report.problems.append(Problem(number, "torn", why))
            continue
        report.writers.add(entry.writer)
        body, stored = split
        if line_hash(body) != stored:
            report.problems.append(Problem(number, "edited", f"its content does not match its hash {stored}"))
        head, head_line = heads.get(entry.writer, (GENESIS, 0))
        if entry.prev != head:
            links.append(_Link(number, entry.writer, entry.prev, head, head_line))
        heads[entry.writer] = (stored, number)
    if links:
        report.problems.extend(_explain(path, links))
        report.problems.sort(key=lambda p: p.line)
    return report


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
