"""Reading and editing the structured parts of markdown files.

Front matter goes through python-frontmatter; tables through markdown-it-py; the auto block
(the part of a file that control-room owns) is found by its two marker lines. Heavy imports
are done inside the functions so that commands that do not need them start fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from control_room.errors import InvalidError

AUTO_BEGIN = "<!-- control-room:auto:begin (written by control-room; edits here are replaced) -->"
AUTO_END = "<!-- control-room:auto:end -->"
_BEGIN_KEY = "<!-- control-room:auto:begin"


def front_matter(text: str, where: Path | str) -> tuple[dict[str, Any], str]:
    """Split ``text`` into (front matter, body). Strict, because a gate read wrong must fail
    closed: an opened but unclosed block, broken YAML, or YAML that is not a mapping is an
    error naming the file, never "no front matter"."""
    import frontmatter
    import yaml

    lines = text.lstrip("\ufeff").splitlines()
    if lines and lines[0].strip() == "---":
        close = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if close is None:
            raise InvalidError(f"{where}: the front matter opened on line 1 is never closed with ---")
        try:
            raw = yaml.safe_load("\n".join(lines[1:close]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" line {mark.line + 2}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise InvalidError(f"{where}:{at}: front matter is not valid YAML: {problem}") from None
        if raw is not None and not isinstance(raw, dict):
            raise InvalidError(f"{where}: front matter must be a mapping of keys to values")
    post = frontmatter.loads(text)
    return dict(post.metadata), post.content


def replace_auto_block(text: str, body: str) -> str:
    """Return ``text`` with the auto block's body replaced by ``body``.

    Everything outside the two marker lines is kept byte for byte. A file whose markers were
    removed gets the block appended at its end, so the human part is never touched.
    """
    block = f"{AUTO_BEGIN}\n{body.rstrip()}\n{AUTO_END}\n"
    lines = text.splitlines(keepends=True)
    # The block is the first end marker and the last begin marker above it; an orphan begin
    # marker (its end was deleted) is then left alone with the human text after it.
    end = next((i for i, ln in enumerate(lines) if ln.strip() == AUTO_END), None)
    begin = None
    if end is not None:
        begin = next((i for i in range(end - 1, -1, -1) if lines[i].startswith(_BEGIN_KEY)), None)
    if begin is None or end is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + block
    return "".join(lines[:begin]) + block + "".join(lines[end + 1 :])


@dataclass
class Row:
    line: int  # 1-based line number in the file
    cells: list[str]


@dataclass
class Table:
    header: list[str]
    header_line: int  # 1-based
    rows: list[Row] = field(default_factory=list)

    def records(self) -> list[dict[str, str]]:
        keys = [h.strip().lower() for h in self.header]
        return [dict(zip(keys, r.cells)) for r in self.rows]


def tables(text: str) -> list[Table]:
    """Every table in ``text``, with the line number of each row."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    found: list[Table] = []
    current: Table | None = None
    row: list[str] | None = None
    row_line = 0
    in_head = False
    for tok in tokens:
        if tok.type == "table_open":
            current = Table(header=[], header_line=(tok.map[0] + 1) if tok.map else 0)
            found.append(current)
        elif tok.type == "thead_open":
            in_head = True
        elif tok.type == "thead_close":
            in_head = False
        elif tok.type == "tr_open":
            row = []
            row_line = (tok.map[0] + 1) if tok.map else 0
        elif tok.type == "inline" and row is not None:
            row.append(tok.content.replace("\\|", "|").strip())
        elif tok.type == "tr_close" and current is not None and row is not None:
            if in_head:
                current.header = row
            else:
                current.rows.append(Row(row_line, row))
            row = None
    return found


def table_with(text: str, first_column: str) -> Table | None:
    """The first table whose first header cell is ``first_column`` (case-insensitive)."""
    for t in tables(text):
        if t.header and t.header[0].strip().lower() == first_column.lower():
            return t
    return None


_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)


def row_cells(line: str) -> list[str]:
    """The cells of one table line, split as markdown-it splits them (``\\|`` is a pipe)."""
    s = line.strip(_SPACE)
    cells: list[str] = []
    current = ""
    escaped = False
    for ch in s:
        if ch == "|" and not escaped:
            cells.append(current)
            current = ""
        elif ch == "|":
            current = current[:-1] + "|"
        else:
            current += ch
        escaped = ch == "\\"
    cells.append(current)
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return [c.strip(_SPACE) for c in cells]


def table_cell(value: object) -> str:
    """Format one value for a markdown table cell: one line, pipes escaped."""
    s = "" if value is None else str(value)
    return " ".join(s.split()).replace("|", "\\|")


def table_row(cells: list[object]) -> str:
    return "| " + " | ".join(table_cell(c) for c in cells) + " |"
