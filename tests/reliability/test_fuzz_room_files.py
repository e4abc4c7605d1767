"""Bad input, fuzzed (#23 item 5), in-process: the room's hand-edited files, as a person's
editor or an agent leaves them: CONTROL.md's front matter, ROUTES.md, tombstones in
graveyard/, lenses in agents/lenses/. Each is read by the library (accepted, or refused with
one line naming the file) and by the commands that read it (the click app in-process: never
exit code 1, an error on one line of stderr); nothing is written outside the room."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import Result
from fuzzing import JSON, NASTY, TEXT, bounded, outside, refused_or
from hypothesis import event, example, given
from hypothesis import strategies as st

from control_room.errors import BUG
from control_room.knowledge import graveyard, routes
from control_room.room import lenses
from control_room.room import settings as settings_file
from control_room.room.keys import KEYS
from control_room.room.layout import Room

Run = Callable[..., Result]


def answered(result: Result, *, report: bool = False) -> None:
    """What a command must do with any room: answer, or refuse in one line (never a traceback,
    which the in-process runner raises). ``report``: a command whose exit code is a verdict
    on the room (``doctor``), its findings on stdout."""
    assert result.exit_code != BUG, result.output
    if result.exit_code != 0 and not report:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr


def yaml_of(meta: dict[str, Any]) -> str:
    try:
        return yaml.safe_dump(meta, allow_unicode=True, default_flow_style=None)
    except yaml.YAMLError:
        return "x: 1\n"


# Lines a front matter may hold that no dump writes: anchors, tags, tabs, half lists, markers.
YAML_LINES = st.sampled_from(
    [
        "---", "...", "  - a", "- b", "adapters:", "  claude: {model: x}", "  probe: [1]", "x: &a [1, 2]",
        "y: *a", "z: *nope", "!!python/object/apply:os.system ['id']", "t: !!binary aGk=", "? k", "\tk: v",
        "k: 'unclosed", 'k: "\\u"', "k: [", "k: {", "%YAML 1.1", "<<: {a: 1}", "n: 0x1f", "n: 1_000",
        "d: 2026-01-01", "b: yes", "e: ~", "big: 1e999", "k:", "  # c", "k: v # c", "é: ü", ":", "- - -",
    ]
) | TEXT  # fmt: skip


@st.composite
def front_matter(draw: st.DrawFn, keys: list[str]) -> str:
    """A front matter: known keys with hostile values (dumped as YAML), raw lines no dump
    writes, sometimes no closing marker or no block at all."""
    meta = draw(st.dictionaries(st.sampled_from(keys) | TEXT, JSON | NASTY, max_size=4))
    raw = draw(st.lists(YAML_LINES, max_size=4))
    close = draw(st.sampled_from(["---\n", "...\n", "", "--- \n"]))
    opening = draw(st.sampled_from(["---\n", "\ufeff---\n", "", " ---\n"]))
    return opening + yaml_of(meta) + "".join(f"{ln}\n" for ln in raw) + close + draw(TEXT)


@st.composite
def control_text(draw: st.DrawFn, template: str) -> str:
    """CONTROL.md: the template with one key's value replaced, lines inserted, or all new."""
    lines = template.splitlines()
    how = draw(st.sampled_from(["value", "insert", "whole"]))
    if how == "whole":
        return draw(front_matter(list(KEYS)))
    end = lines.index("---", 1)
    if how == "value":
        key = draw(st.sampled_from(list(KEYS)))
        value = draw(JSON | NASTY)
        at = next(i for i, ln in enumerate(lines) if ln.startswith(f"{key}:"))
        lines[at] = (
            f"{key}: {json.dumps(value, ensure_ascii=False)}" if draw(st.booleans()) else f"{key}: {value}"
        )
    else:
        lines[draw(st.integers(1, end)) : draw(st.integers(1, end))] = draw(st.lists(YAML_LINES, max_size=3))
    return "\n".join(lines) + "\n"


@bounded(80)
@given(data=st.data())
def test_control_md_is_read_or_refused_in_one_line(room: Room, tmp_path: Path, run: Run, data: Any) -> None:
    template = (Path(settings_file.__file__).parent.parent / "templates" / "CONTROL.md").read_text()
    text = data.draw(control_text(template))
    before = outside(tmp_path, room)
    room.control.write_text(text, encoding="utf-8", errors="surrogatepass")
    got, refusal = refused_or(lambda: settings_file.parse(text, "CONTROL.md"))
    event("refused" if got is None else "read")
    if refusal is not None:
        assert refusal.startswith("CONTROL.md"), refusal
    for argv in (["status"], ["task", "list"]):
        answered(run("--room", str(room.root), *argv))
    answered(run("--room", str(room.root), "doctor"), report=True)
    assert outside(tmp_path, room) == before


ROW_CELLS = NASTY | st.sampled_from(["r1", "alive", "killed", "KILLED", "untested", "3", "-1", "x\\|y", ""])


@st.composite
def routes_text(draw: st.DrawFn) -> str:
    head = draw(
        st.sampled_from(
            [
                "| route | verdict | title | attempts | spend_usd | last_result | falsifier |",
                "| route | verdict |", "| verdict | route |", "| route |", "route | verdict", "",
            ]
        )
    )  # fmt: skip
    sep = draw(st.sampled_from(["|---|---|---|---|---|---|---|", "|---|", "| - |", ""]))
    rows = draw(
        st.lists(
            st.lists(ROW_CELLS, max_size=9).map(
                lambda cs: "| " + " | ".join(c.replace("\n", " ") for c in cs) + " |"
            )
            | TEXT,
            max_size=6,
        )
    )
    return "# ROUTES\n\n" + "\n".join([head, sep, *rows]) + draw(st.sampled_from(["\n", "", "\n\n| r9 |"]))


@bounded(150)
@given(text=routes_text(), route=st.sampled_from(["r1", "r2", "new-route"]))
def test_routes_md_is_read_with_its_problems_named(
    room: Room, tmp_path: Path, run: Run, text: str, route: str
) -> None:
    before = outside(tmp_path, room)
    room.routes.write_text(text, encoding="utf-8", errors="surrogatepass")
    for problem in routes.problems(room):
        assert "\n" not in problem and problem.startswith(routes.WHERE), problem
    json.dumps(routes.rows(room))
    _, refusal = refused_or(lambda: routes.record_run(room, route, "t1", "failed", 0.25))
    event("refused" if refusal else "recorded")
    for argv in (["route", "list"], ["route", "show", route], ["status"], ["findings"]):
        answered(run("--room", str(room.root), *argv))
    assert outside(tmp_path, room) == before


TOMB_KEYS = ["candidate", "state", "killed_at", "verdict", "reopen_if", "evidence", "reopened_at"]


@bounded(150)
@given(text=front_matter(TOMB_KEYS), name=st.sampled_from(["r1", "README", "Bad Name", "r1.md"]))
@example(text="---\n{candidate: null}\n---\n", name="r1")  # `graveyard` died on a format, before
@example(text="---\nevidence: [2026-01-01]\n---\n", name="r1")  # `--json` died on a date, before
@example(text='---\n{"\\uD800": 1}\n---\n', name="r1")  # libyaml's ScannerError escaped, before
@example(text='---\nverdict: "a\\nb"\n---\n', name="r1")  # its refusal on two lines, before
def test_a_tombstone_is_read_or_named_unreadable(
    room: Room, tmp_path: Path, run: Run, text: str, name: str
) -> None:
    before = outside(tmp_path, room)
    (room.root / "graveyard" / f"{name}.md").write_text(text, encoding="utf-8", errors="surrogatepass")
    why = graveyard.refusal(room, "r1")
    assert why is None or "\n" not in why, why
    json.dumps(graveyard.tombstones(room))
    for argv in (
        ["graveyard"],
        ["graveyard", "list", "--json"],
        ["digest"],
        ["status"],
        ["route", "show", "r1"],
        ["route", "reopen", "r1", "--because", "x"],
    ):
        answered(run("--room", str(room.root), *argv))
    (room.root / "graveyard" / f"{name}.md").unlink(missing_ok=True)
    assert outside(tmp_path, room) == before


LENS_KEYS = ["sees", "adapter", "model", "max_cost_usd", "wall_clock_s", "check"]


@bounded(150)
@given(text=front_matter(LENS_KEYS), name=st.sampled_from(["security", "mine", "arbiter"]))
@example(text='---\n{"\\uD800": 1}\n---\n', name="mine")  # libyaml's ScannerError escaped, before
def test_a_lens_is_read_or_refused_in_one_line(room: Room, tmp_path: Path, text: str, name: str) -> None:
    before = outside(tmp_path, room)
    (lenses.folder(room) / f"{name}.md").write_text(text, encoding="utf-8", errors="surrogatepass")
    lens, _ = refused_or(lambda: lenses.read(room, name))
    event("read" if lens is not None else "refused")
    if lens is not None:
        assert lens.sees and set(lens.sees) <= set(lenses.SEES)
        assert lens.max_cost_usd > 0 and lens.wall_clock_s > 0
    assert outside(tmp_path, room) == before
