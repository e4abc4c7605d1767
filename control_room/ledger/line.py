"""One ledger line: its columns, its escaping, formatting and parsing.

A line is a markdown table row::

    | time | id | writer | event | task | route | adapter | outcome | cost_usd | detail | prev | hash |

``hash`` is the first 12 hex digits of the SHA-256 of the line up to and including the ``prev``
cell, and ``prev`` is the ``hash`` of the previous line written by the same writer (``-`` for a
writer's first line). So each writer's lines form a chain that survives interleaving with other
writers' lines (a merge of ledgers from several machines).

Cells escape backslash, ``|``, newlines and every other control character, so no text an agent
produces can end a cell or a line early: a cell is always one physical line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

COLUMNS = (
    "time",
    "id",
    "writer",
    "event",
    "task",
    "route",
    "adapter",
    "outcome",
    "cost_usd",
    "detail",
    "prev",
    "hash",
)


class Col:
    """The position of each column in a line's cells, by name (readers that fold raw cells)."""

    TIME, ID, WRITER, EVENT, TASK, ROUTE, ADAPTER, OUTCOME, COST_USD, DETAIL, PREV, HASH = range(12)


HEADER = "| " + " | ".join(COLUMNS) + " |"
SEPARATOR = "|" + "---|" * len(COLUMNS)
GENESIS = "-"
HASH_LEN = 12
DETAIL_MAX = 1000  # characters kept of a detail cell; the rest is cut with a note

PREAMBLE = f"""# LEDGER

Append-only: one line per event, written by control-room. Do not edit it by hand. Each line is
chained by hash to the previous line of the same writer, so `control-room ledger verify` names
any line that was edited, deleted, reordered or torn. Read it with `control-room ledger tail`
and `control-room ledger stats`, or with `cat` and `grep`.

{HEADER}
{SEPARATOR}
"""


def _escape_table() -> dict[int, str]:
    table = {ord("\\"): "\\\\", ord("|"): "\\|", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}
    specials = [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000)]
    for cp in specials:
        table.setdefault(cp, f"\\u{cp:04x}")
    return table


_ESCAPES: dict[int, str] = {}
_UNESCAPE = r"(?s)\\(u[0-9a-f]{4}|.)"  # compiled on first use, like every pattern here
_SIMPLE = {"\\": "\\", "|": "|", "n": "\n", "r": "\r", "t": "\t"}
_CELLS = r"((?:[^\\|]|\\.)*)\|"


def join_cells(values: tuple[str, ...]) -> str:
    """The cells ``values``, escaped, joined as a line joins them (``" | "``); joined first and
    tested as one string, as most are plain text: ASCII, and once the joins' own ``|`` are taken
    out, with no ``|``, ``\\`` or control character left (bytes' translate: a quarter of the time
    ``isprintable`` takes)."""
    try:
        text = " | ".join(values)
    except TypeError:  # a value that is not a string: escape makes it one
        return " | ".join(map(escape, values))
    if text.isascii() and len(text.encode().translate(None, _UNPLAIN)) == len(text) - len(values) + 1:
        return text
    return " | ".join(map(escape, values))


_UNPLAIN = bytes(range(0x20)) + b"\x7f|\\"  # what no plain ASCII cell holds


def escape(value: object) -> str:
    """One cell's text: a single physical line in which ``|`` can never end the cell."""
    text = "" if value is None else str(value)
    if text.isascii() and text.isprintable() and "|" not in text and "\\" not in text:
        return text  # most cells: no look-ups in the table
    if not _ESCAPES:
        _ESCAPES.update(_escape_table())
    return text.translate(_ESCAPES)


def unescape(cell: str) -> str:
    def sub(m: re.Match[str]) -> str:
        code = m.group(1)
        if len(code) == 5:
            return chr(int(code[1:], 16))
        return _SIMPLE.get(code, code)

    return re.sub(_UNESCAPE, sub, cell) if "\\" in cell else cell


class Entry(NamedTuple):
    time: str
    id: str
    writer: str
    event: str
    task: str = ""
    route: str = ""
    adapter: str = ""
    outcome: str = ""
    cost_usd: str = "0"
    detail: str = ""
    prev: str = GENESIS
    hash: str = ""

    def as_dict(self) -> dict[str, str]:
        return self._asdict()

    @property
    def cost(self) -> float:
        try:
            return float(self.cost_usd)
        except ValueError:
            return 0.0


def line_hash(body: str) -> str:
    return short_hash(body.encode("utf-8"))


def short_hash(body: bytes) -> str:
    """The first ``HASH_LEN`` hex digits of the SHA-256 of ``body``."""
    digest: str = (_sha256 or _sha())(body).hexdigest()
    return digest[:HASH_LEN]


def _sha() -> Callable[[bytes], Any]:
    global _sha256
    import hashlib  # ~3 ms: only writers and `verify` hash, readers never do

    _sha256 = hashlib.sha256
    return _sha256


_sha256: Callable[[bytes], Any] | None = None  # hashlib.sha256, once a line is hashed


def format_cost(cost: float) -> str:
    text = f"{cost:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def cut_detail(detail: str) -> str:
    if len(detail) <= DETAIL_MAX:
        return detail
    return detail[:DETAIL_MAX] + f" [cut: {len(detail) - DETAIL_MAX} more chars]"


def render(entry: Entry) -> tuple[str, str]:
    """Return (line without newline, its hash) for ``entry`` (whose ``hash`` is ignored)."""
    return seal("| " + join_cells(entry[:-1]) + " |")


def seal(body: str) -> tuple[str, str]:
    """(the line, its hash) of a line's ``body``: its escaped cells up to and including ``prev``."""
    h = line_hash(body)
    return f"{body} {h} |", h


def split_cells(line: str) -> list[str] | None:
    """The raw (still escaped) cells of a table row, or None if ``line`` is not one."""
    if not line.startswith("| ") or not line.endswith(" |"):
        return None
    if "\\" not in line:
        return line[2:-2].split(" | ")
    rest = line[1:]
    cells = re.findall(_CELLS, rest)
    if sum(len(c) + 1 for c in cells) != len(rest):
        return None
    if any(len(c) < 2 or c[0] != " " or c[-1] != " " for c in cells):
        return None
    return [c[1:-1] for c in cells]


def parse(line: str) -> Entry | None:
    """Parse one physical line (no newline) into an Entry; None if it is not a ledger row."""
    cells = split_cells(line)
    if cells is None or len(cells) != len(COLUMNS):
        return None
    return Entry(*(unescape(c) for c in cells))


def body_and_hash(line: str) -> tuple[str, str] | None:
    """Split a raw line into the hashed part and its stored hash."""
    tail = HASH_LEN + 3  # " " + hash + " |"
    if len(line) <= tail or not line.endswith(" |") or line[-tail] != " ":
        return None
    return line[:-tail], line[-tail + 1 : -2]
