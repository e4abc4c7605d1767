"""control_room.text: text from outside, shown without its control characters, on one line."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from control_room.text import escaped, has_control, one_line, printable

ESC = "\x1b"


def test_escape_sequences_and_controls_go_and_the_words_stay() -> None:
    assert printable("\x1b[31mred\x1b[0m and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "red and link"
    assert printable("title\x1b]0;pwned\x07 bell\x07 nul\x00 del\x7f c1\x9b2J") == "title bell nul del c1"
    assert printable("evil\u202egnp.exe") == "evilgnp.exe"  # no reordering
    assert printable("a\r\nb\rc\td\n") == "a\nb\nc\td\n"
    assert printable("plain text, é, 漢字") == "plain text, é, 漢字"
    assert printable("a view\n\tof lines\n") == "a view\n\tof lines\n"  # lines and tabs: kept as they are
    assert printable("a view\n\tof lines\x1b[2J\n") == "a view\n\tof lines\n"  # a sequence after them goes


def test_one_line_puts_anything_on_one_line() -> None:
    assert one_line("x\n<!-- control-room:auto:end -->\n  PLANTED\t\tline ") == (
        "x <!-- control-room:auto:end --> PLANTED line"
    )


@given(st.text())
def test_nothing_printable_keeps_can_move_a_terminal_or_start_a_line(text: str) -> None:
    shown = printable(text)
    assert ESC not in shown and "\r" not in shown and "\x07" not in shown
    assert [c for c in shown if unicodedata.category(c) == "Cc" and c not in "\n\t"] == []
    assert not set(shown) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    line = one_line(text)
    assert "\n" not in line and ESC not in line and line == line.strip()


def test_escaped_writes_every_control_out_on_one_line_and_keeps_the_rest() -> None:
    assert escaped('GET /a\rforged\x1b[2J\u202e\u2028 é "x" HTTP/1.1\n') == (
        'GET /a\\rforged\\x1b[2J\\u202e\\u2028 é "x" HTTP/1.1\\n'
    )
    assert escaped("a\\nb") == "a\\\\nb"  # a backslash given is told from one written out
    assert escaped("plain /index.html") == "plain /index.html"
    assert has_control("a\tb") and has_control("x\u202e") and not has_control("plain é")


@given(st.text())
def test_escaped_is_always_one_printable_line(text: str) -> None:
    out = escaped(text)
    assert "\n" not in out and "\r" not in out and not has_control(out)


def test_a_lone_surrogate_is_shown_as_the_replacement_character() -> None:
    """Found by the fuzz tests: a ledger cell holding `\\udcff` (a byte that was not UTF-8 on a
    command line) unescaped to a lone surrogate, and printing it killed `status` with a
    UnicodeEncodeError."""
    assert printable("a\udcffb\ud800") == "a\ufffdb\ufffd"
    printable("a\udcffb").encode("utf-8")
