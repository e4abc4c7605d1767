"""The auto block: the part of a markdown file that control-room owns (CURRENT_CONTEXT.md).

It sits between two marker lines; everything outside them belongs to people and is kept byte
for byte. Front matter is ``store.docs``; tables keyed by id are ``store.tables``.
"""

from __future__ import annotations

AUTO_BEGIN = "<!-- control-room:auto:begin (written by control-room; edits here are replaced) -->"
AUTO_END = "<!-- control-room:auto:end -->"
_BEGIN_KEY = "<!-- control-room:auto:begin"
_MARKER = "<!-- control-room:auto"


def replace_auto_block(text: str, body: str) -> str:
    """Return ``text`` with the auto block's body replaced by ``body``.

    Everything outside the two marker lines is kept byte for byte. A file whose markers were
    removed gets the block appended at its end, so the human part is never touched.
    """
    block = f"{AUTO_BEGIN}\n{_unmarked(body.rstrip())}\n{AUTO_END}\n"
    lines = text.splitlines(keepends=True)
    span = auto_block_span(lines)
    if span is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + block
    return "".join(lines[: span[0]]) + block + "".join(lines[span[1] + 1 :])


def _unmarked(body: str) -> str:
    """``body`` with no line a marker could be read from: a marker's text inside the body (an
    agent's words, say) is kept readable but broken (``&lt;!--``), so the block ends only at
    its own end marker, and nothing after it is taken for the people's part."""
    return body.replace(_MARKER, "&lt;!-- control-room:auto")


def auto_block_span(lines: list[str]) -> tuple[int, int] | None:
    """(index of the begin marker's line, index of the end marker's line) in ``lines``; None
    when the file has no whole block."""
    # The block is the first end marker and the last begin marker above it; an orphan begin
    # marker (its end was deleted) is then left alone with the human text after it.
    end = next((i for i, ln in enumerate(lines) if ln.strip() == AUTO_END), None)
    if end is None:
        return None
    begin = next((i for i in range(end - 1, -1, -1) if lines[i].startswith(_BEGIN_KEY)), None)
    return None if begin is None else (begin, end)
