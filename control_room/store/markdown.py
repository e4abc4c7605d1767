"""The auto block: the part of a markdown file that control-room owns (CURRENT_CONTEXT.md).

It sits between two marker lines; everything outside them belongs to people and is kept byte
for byte. Front matter is ``store.docs``; tables keyed by id are ``store.tables``.
"""

from __future__ import annotations

AUTO_BEGIN = "<!-- control-room:auto:begin (written by control-room; edits here are replaced) -->"
AUTO_END = "<!-- control-room:auto:end -->"
_BEGIN_KEY = "<!-- control-room:auto:begin"


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
