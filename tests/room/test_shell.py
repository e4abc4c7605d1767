"""control_room.room.shell: which command strings only a shell could run, and the form that works."""

from __future__ import annotations

import re
import shlex

import pytest
from support import task

from control_room.errors import InvalidError
from control_room.room import shell


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("sleep 1; echo x", ";"),
        ("make && ./bench", "&&"),
        ("test -f x || exit 1", "||"),
        ("./bench | tail -1", "|"),
        ("./bench > out.txt", ">"),
        ("./bench 2>&1", ">"),
        ("wc -l < data", "<"),
        ("echo `date`", "`"),
        ("echo $(date)", "$("),
        ("cd src", "cd"),
        ("  cd src && make", "cd"),
        ("cd", "cd"),
        ("python -c 'x'; true", ";"),  # after a closed quote
        ('echo "a"|wc', "|"),
    ],
)
def test_shell_syntax_outside_quotes_is_found(command: str, found: str) -> None:
    assert shell.syntax(command) == found


@pytest.mark.parametrize(
    "command",
    [
        "python bench.py --check",
        "python -c 'print(1 | 2); x = 3 > 2'",  # quoted: one plain word
        'grep -E "a|b" file.txt',
        "echo 'it''s' \"$(not run)\"",
        r"echo a\;b a\|b",  # escaped: plain characters
        "curl http://x/?a=1&b=2",  # a lone & is no operator here
        "echo $HOME",  # a plain word without a shell (documented)
        "cdrom --eject",
        "sh -c 'make && ./bench | tail -1'",
    ],
)
def test_plain_words_are_not_shell_syntax(command: str) -> None:
    assert shell.syntax(command) is None


@pytest.mark.parametrize(
    "command", ["sleep 1; echo x", "cd src && make", 'echo "it\'s" | wc -l', r"a\ b > 'c d'"]
)
def test_the_form_shown_runs_the_same_words_in_sh(command: str) -> None:
    why = shell.problem("validator", command)
    assert why is not None
    found = re.search(r"write `(sh -c .*)` to use a shell on purpose$", why)
    assert found is not None, why
    assert shell.syntax(found.group(1)) is None
    assert shlex.split(found.group(1)) == ["sh", "-c", command]


def test_a_long_command_is_cut_in_the_message() -> None:
    command = "make " + "x" * 200 + " && ./bench"
    assert shell.problem("command", command) == (
        f"command `make {'x' * 92}...` needs a shell (&&), and commands run without one: "
        "write `sh -c '...'` to use a shell on purpose"
    )


def test_lists_and_other_fields_are_not_looked_at() -> None:
    assert shell.problems(task("t", validator=["make", "&&", "./bench"], objective="a && b")) == []
    assert shell.problems(task("t", validator="a; b", command="c | d")) == [
        "validator `a; b` needs a shell (;), and commands run without one: "
        "write `sh -c 'a; b'` to use a shell on purpose",
        "command `c | d` needs a shell (|), and commands run without one: "
        "write `sh -c 'c | d'` to use a shell on purpose",
    ]


def test_argv_of_splits_a_string_as_a_shell_would_and_keeps_a_list() -> None:
    assert shell.argv_of("python3 bench.py --n '2 3'", "x") == ["python3", "bench.py", "--n", "2 3"]
    assert shell.argv_of(["a b", 3], "x") == ["a b", "3"]
    with pytest.raises(InvalidError) as unsplit:
        shell.argv_of("echo 'oops", "the validator")
    assert str(unsplit.value) == "the validator cannot be split into arguments: No closing quotation"
    with pytest.raises(InvalidError) as missing:
        shell.argv_of(None, "CONTROL.md notify")
    assert str(missing.value) == "CONTROL.md notify is missing"
