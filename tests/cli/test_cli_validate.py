"""control-room validate FILE|-: exact exit codes, stdout and stderr."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result
from support import probe_task

from control_room.cli import cli
from control_room.room.layout import Room

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reports"
GOOD = (FIXTURES / "skill_good.md").read_bytes()
UNLABELED = (FIXTURES / "skill_bad_unlabeled_item.md").read_bytes()
NO_LABEL = "evidence item has no label (expected CONFIRMED:, INFERRED: or UNKNOWN:)"


def validate_cli(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["validate", *args], input=input, catch_exceptions=False)


def test_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_bytes(GOOD)
    result = validate_cli(str(path))
    assert result.exit_code == 0
    assert result.stdout == "ok: report valid (4 evidence items: 2 CONFIRMED, 1 INFERRED, 1 UNKNOWN)\n"
    assert result.stderr == ""


def test_one_item_is_singular(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_bytes((FIXTURES / "skill_bad_claim_shape_ok.md").read_bytes())
    result = validate_cli(str(path))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "ok: report valid (1 evidence item: 1 CONFIRMED, 0 INFERRED, 0 UNKNOWN)\n"


def test_invalid_file(tmp_path: Path) -> None:
    path = tmp_path / "out.md"
    path.write_bytes(b"chatter\n" + UNLABELED.replace(b"WHY:", b"why:"))
    result = validate_cli(str(path))
    assert result.exit_code == 4
    assert result.stdout == ""
    assert result.stderr == (f"{path}:3: header 'why:' is not uppercase (write WHY:)\n{path}:5: {NO_LABEL}\n")


def test_no_report(tmp_path: Path) -> None:
    path = tmp_path / "out.md"
    path.write_bytes(b"")
    result = validate_cli(str(path))
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == f"{path}:0: no report found: no line starts with DECISION:\n"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.md"
    result = validate_cli(str(path))
    assert result.exit_code == 7
    assert result.stdout == ""
    assert result.stderr == f"Error: {path}: no such file\n"


def test_stdin_valid() -> None:
    result = validate_cli("-", input=GOOD)
    assert result.exit_code == 0
    assert result.stdout == "ok: report valid (4 evidence items: 2 CONFIRMED, 1 INFERRED, 1 UNKNOWN)\n"
    assert result.stderr == ""


def test_stdin_invalid_bytes() -> None:
    result = validate_cli("-", input=b"\xff\xfe\n" + UNLABELED)
    assert result.exit_code == 4
    assert result.stdout == ""
    assert result.stderr == f"<stdin>:5: {NO_LABEL}\n"


def test_json_valid_and_invalid(tmp_path: Path) -> None:
    result = validate_cli("--json", "-", input=GOOD)
    assert (result.exit_code, result.stderr) == (0, "")
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["start_line"] == 1
    assert [e["label"] for e in data["evidence"]] == ["CONFIRMED", "CONFIRMED", "INFERRED", "UNKNOWN"]

    result = validate_cli("--json", "-", input=UNLABELED)
    assert (result.exit_code, result.stderr) == (4, "")
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert data["violations"] == [{"line": 4, "message": NO_LABEL}]


def test_help() -> None:
    result = validate_cli("-h")
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: cli validate [OPTIONS] FILE|-\n")


def test_proposals_may_depend_on_a_task_or_an_earlier_proposal(
    run: Callable[..., Result], inside: Room
) -> None:
    """`validate --proposals` says what the dispatcher will do: proposals are queued in order, so
    one may depend on an existing task or on a proposal before it, never on nothing."""
    (inside.state_dir("done") / "base.json").write_text(json.dumps(probe_task("base")))
    proposals = [probe_task("p-1", deps=["base"]), probe_task("p-2", deps=["p-1"]),
                 probe_task("p-3", deps=["p-9"]), probe_task("p-9")]  # fmt: skip
    answer = inside.root / "answer.md"
    answer.write_text("".join(f"```json\n{json.dumps(p)}\n```\n" for p in proposals))
    result = run("validate", "--proposals", str(answer))
    assert (result.exit_code, result.stdout) == (0, "ok: 3 valid proposals\n")
    assert result.stderr == (
        f"{answer}:7: task refused: deps names p-9, which is not a task in any swarm folder: it could "
        "never be ready\n"
    )
    assert os.listdir(inside.state_dir("queue")) == []  # validating writes nothing


def test_proposals_may_fan_out_as_the_cycle_queues_them(run: Callable[..., Result], inside: Room) -> None:
    """`validate --proposals` (an orchestrator's validator) reads a fan-out's `slices` as the
    cycle does: it refused every one as `unknown field: slices` before, and a slice of the wrong
    kind (`"owns": 1`) crashed the cycle's reading of it."""
    good = [{"title": "docs", "objective": "write the README"}, {"title": "code", "objective": "write it"}]
    bad = [{"title": "a", "objective": "do a", "owns": 1}, {"title": "b", "objective": "do b"}]
    answer = inside.root / "answer.md"
    answer.write_text("".join(f"```json\n{json.dumps({**probe_task(t), 'slices': s})}\n```\n"
                              for t, s in (("p-1", good), ("p-2", bad))))  # fmt: skip
    result = run("validate", "--proposals", str(answer))
    assert (result.exit_code, result.stdout) == (0, "ok: 1 valid proposal\n")
    assert result.stderr == f"{answer}:4: a slice's owns must be a list of paths\n"
    assert os.listdir(inside.state_dir("queue")) == []
