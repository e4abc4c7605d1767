"""Text that came from outside (an agent's answer, a task's objective, a file dropped by hand)
made safe to show: on a terminal, in a view, in a prompt.

- ``printable``: no control characters: terminal escape sequences (colours, cursor moves, OSC
  titles and hyperlinks) and the other C0 and C1 controls are removed, and so are the
  characters that reorder text (bidirectional overrides), which can make a line read other
  than it is. Line breaks and tabs stay.
- ``one_line``: ``printable``, and every run of whitespace, line breaks included, one space:
  for a value shown inside a line of our own (a cell, a list item), so that it can never start
  a line of its own.
- ``escaped``: every control character written out (``\\n``, ``\\x1b``, ``\\u202e``), the rest
  kept: for a log line or an error that must say exactly what it was given (a request line, a
  path), on one line; ``has_control`` says whether there is any to write out.

Only what is shown is cleaned: the raw capture files (``swarm/results/ID/stdout.txt``) and the
ledger keep every byte.
"""

from __future__ import annotations

import re

# Patterns as text, compiled on first use (``re`` keeps them): every command imports this module.
# ESC [ ... final (CSI), ESC ] ... BEL or ESC \ (OSC), ESC P/X/^/_ ... ESC \ (DCS and the
# like), then any other ESC with the character after it.
_SEQUENCE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b.?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_SPACE = r"\s+"
_SURROGATE = "[\ud800-\udfff]"  # no UTF-8 has them (a ledger cell's "\\ud800"): shown as U+FFFD


def printable(text: str) -> str:
    """``text`` without terminal escape sequences and other control characters; line breaks
    (``\\n``; ``\\r\\n`` and a lone ``\\r`` become ``\\n``) and tabs kept."""
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text  # the common case (a view's lines), at the cost of a scan or two: no regex to compile
    text = re.sub(_SEQUENCE, "", text.replace("\r\n", "\n").replace("\r", "\n"))
    return re.sub(_SURROGATE, "\ufffd", re.sub(_CONTROL, "", text))


def one_line(text: str) -> str:
    """``text`` printable, on one line: every run of whitespace one space, no edge spaces."""
    return re.sub(_SPACE, " ", printable(text)).strip()


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
_CONTROLS = "\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ANY_CONTROL = f"[{_CONTROLS}]"
_TO_ESCAPE = f"[\\\\{_CONTROLS}]"


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _ESCAPES.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (a line break or a tab included)."""
    return re.search(_ANY_CONTROL, text) is not None


def escaped(text: str) -> str:
    """``text`` on one line with every control character written out (``\\n``, ``\\x1b``) and
    each backslash doubled, so what was given can be read back from it; the rest kept."""
    if text.isprintable() and "\\" not in text:
        return text
    return re.sub(_TO_ESCAPE, _escape, text)
