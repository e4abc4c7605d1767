"""dispatch.round.validator: the dispatcher runs the task's validator itself, in the
work dir, and says what it did in a few words."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from control_room import proc
from control_room.dispatch.round import validator
from control_room.room import settings
from control_room.room.layout import Room

PY = sys.executable


def run(room: Room, tmp_path: Path, command: object, **changes: object) -> tuple[proc.Result | None, Path]:
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    s = settings.load(room).replace(**changes)
    val = validator.run(room, s, {"validator": command}, tmp_path, dict(os.environ), results)
    return val, results


def test_a_passing_validator_runs_in_the_work_dir(room: Room, tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("here")
    val, results = run(room, tmp_path, [PY, "-c", "print(open('marker').read())"])
    assert validator.word(val) == "passed"
    assert (results / "validator.stdout.txt").read_text() == "here\n"
    meta = validator.meta(val)
    assert meta is not None and meta["exit_code"] == 0


def test_a_failing_validator_says_its_code_and_its_last_lines(room: Room, tmp_path: Path) -> None:
    code = "import sys; print('one'); print('two', file=sys.stderr); sys.exit(3)"
    val, _ = run(room, tmp_path, [PY, "-c", code])
    s = settings.load(room)
    assert validator.word(val) == "exited 3"
    assert validator.failure(val, s) == "validator exited 3: two"


def test_a_validator_that_cannot_start_is_a_failure_with_its_reason(room: Room, tmp_path: Path) -> None:
    val, results = run(room, tmp_path, "no-such-validator-here --check")
    assert val is None
    assert validator.word(None) == "could not start"
    assert (
        validator.failure(None, settings.load(room)) == "validator could not start (see validator.stderr.txt)"
    )
    assert (
        results / "validator.stderr.txt"
    ).read_text() == "no-such-validator-here: command not found on PATH\n"
    unsplittable, _ = run(room, tmp_path, "python 'unclosed")
    assert unsplittable is None
    assert (results / "validator.stderr.txt").read_text() == (
        "the validator cannot be split into arguments: No closing quotation\n"
    )


def test_a_validator_past_its_time_limit_is_killed(room: Room, tmp_path: Path) -> None:
    val, _ = run(room, tmp_path, [PY, "-c", "import time; time.sleep(30)"], validator_timeout_s=0.5)
    assert validator.word(val) == "timed out"
    failure = validator.failure(val, settings.load(room).replace(validator_timeout_s=0.5))
    assert failure == "validator timed out after 0.5s"


def test_metric_lines_are_the_objectives_numbers(room: Room, tmp_path: Path) -> None:
    out = (
        "METRIC speedup=1.25\\nnot a METRIC x=1\\nMETRIC p95_ms=-3e2\\n"
        "METRIC speedup=1.5\\nMETRIC bad=fast\\n"
    )
    val, _ = run(room, tmp_path, [PY, "-c", f"print('{out}', end='')"])
    assert validator.metrics(val) == {"speedup": 1.5, "p95_ms": -300.0}
    assert validator.metrics(None) == {}
