"""control_room.ledger.result: the JSON result detail, cuts, read (and pre-0.2 lines), for_people, cause."""

from __future__ import annotations

import json

from control_room.ledger import result
from control_room.ledger.result import RunResult


def fields(r: RunResult) -> tuple[object, ...]:
    """Every field a detail carries back (``seconds`` is written but not read)."""
    return (r.round, r.exit, r.report, r.validator, r.unsupported, r.decision, r.failed)


def test_detail_is_one_json_object_with_keys_in_order() -> None:
    r = RunResult(decision="made it faster", failed="validator exited 1", unsupported=True,
                  round=2, exit=1, seconds=12.345, report="ok", validator="exited 1")  # fmt: skip
    detail = r.detail()
    assert detail == (
        '{"round": 2, "exit": 1, "seconds": 12.3, "report": "ok", "validator": "exited 1", '
        '"unsupported": true, "decision": "made it faster", "failed": "validator exited 1"}'
    )
    assert list(json.loads(detail)) == [
        "round", "exit", "seconds", "report", "validator", "unsupported", "decision", "failed",
    ]  # fmt: skip


def test_detail_of_a_passing_run_leaves_out_unsupported_and_failed() -> None:
    r = RunResult(
        decision="the command exited 0", round=1, exit=0, seconds=0.1, report="ok", validator="passed"
    )
    assert r.detail() == (
        '{"round": 1, "exit": 0, "seconds": 0.1, "report": "ok", "validator": "passed", '
        '"decision": "the command exited 0"}'
    )


def test_detail_without_a_decision_or_an_exit() -> None:
    assert RunResult().detail() == (
        '{"round": 0, "exit": null, "seconds": 0.0, "report": "", "validator": "", "decision": "(none)"}'
    )


def test_detail_keeps_non_ascii_text() -> None:
    assert '"decision": "café ✓"' in RunResult(decision="café ✓").detail()


def test_decision_is_cut_at_160_and_failed_at_240() -> None:
    r = RunResult(decision="d" * 500, failed="f" * 500)
    data = json.loads(r.detail())
    assert data["decision"] == "d" * 157 + "..."
    assert len(data["decision"]) == 160
    assert data["failed"] == "f" * 237 + "..."
    assert len(data["failed"]) == 240


def test_texts_at_the_limit_are_kept_whole_and_whitespace_is_collapsed() -> None:
    data = json.loads(RunResult(decision="d" * 160, failed="f" * 240).detail())
    assert (data["decision"], data["failed"]) == ("d" * 160, "f" * 240)
    data = json.loads(RunResult(decision="  two\n\nlines\t here ", failed="a\nb").detail())
    assert (data["decision"], data["failed"]) == ("two lines here", "a b")


def test_read_gives_the_fields_back() -> None:
    r = RunResult(decision="made it faster", failed="validator exited 1", unsupported=True,
                  round=3, exit=2, seconds=4.5, report="broken", validator="exited 1")  # fmt: skip
    assert fields(result.read(r.detail())) == (
        3,
        2,
        "broken",
        "exited 1",
        True,
        "made it faster",
        "validator exited 1",
    )
    passing = RunResult(decision="ok", round=1, exit=0, report="ok", validator="passed")
    assert fields(result.read(passing.detail())) == (1, 0, "ok", "passed", False, "ok", "")


def test_a_decision_that_looks_like_a_failure_stays_a_decision() -> None:
    # The bug the JSON detail fixes: in the old free-text form, an agent's decision containing
    # "; failed: " was read as what failed, on a run that passed.
    passing = RunResult(decision="tried x; failed: not really", round=1, exit=0, seconds=0.1,
                        report="ok", validator="passed")  # fmt: skip
    back = result.read(passing.detail())
    assert back.failed == ""
    assert back.decision == "tried x; failed: not really"
    old = result.read("round 1; agent exit 0 in 0.1s; decision: tried x; failed: not really")
    assert (old.decision, old.failed) == ("tried x", "not really")  # what the old form made of it


def test_read_legacy_lines() -> None:
    r = result.read("round 1; agent exit 0 in 0.1s; decision: made it faster; failed: validator exited 1")
    assert (r.decision, r.failed) == ("made it faster", "validator exited 1")
    r = result.read("round 2; decision: kept the cache")
    assert (r.decision, r.failed) == ("kept the cache", "")
    r = result.read("failed: boom")
    assert (r.decision, r.failed) == ("", "boom")
    r = result.read("round 1; agent exit 3; failed: agent exited 3")
    assert (r.decision, r.failed) == ("", "agent exited 3")


def test_read_of_unknown_shapes_is_empty() -> None:
    for detail in ["{not json", "[1, 2]", '{"round": "x"', "", "just some text", "{" * 100_000]:
        assert fields(result.read(detail)) == (0, None, "", "", False, "", ""), detail


def test_read_ignores_fields_of_the_wrong_type() -> None:
    r = result.read('{"round": "1", "exit": "0", "unsupported": "yes", "decision": null, "failed": 7}')
    assert fields(r) == (0, None, "", "", False, "", "7")


def test_for_people_drops_the_json_punctuation() -> None:
    r = RunResult(decision='said "hi"', round=1, exit=0, seconds=0.1, report="ok", validator="passed")
    assert result.for_people(r.detail()) == (
        "round: 1, exit: 0, seconds: 0.1, report: ok, validator: passed, decision: said 'hi'"
    )


def test_for_people_leaves_other_text_alone() -> None:
    legacy = "round 1; decision: made it faster"
    assert result.for_people(legacy) == legacy
    assert result.for_people('{"unclosed": 1') == '{"unclosed": 1'


def test_cause_reduces_text_to_its_shape() -> None:
    assert result.cause("took 407 ms, 3 runs") == "took N ms, N runs"
    assert result.cause("took 1.25 s\n  then   2 s") == "took N s then N s"
    assert result.cause("x" * 500) == "x" * 160


def test_seconds_round_and_exit_read_back_and_a_boolean_is_not_a_number() -> None:
    run = result.read(result.RunResult(round=3, exit=1, seconds=2.25).detail())
    assert (run.round, run.exit, run.seconds) == (3, 1, 2.2)  # written to a tenth of a second
    odd = result.read('{"round": true, "exit": false, "seconds": true}')
    assert (odd.round, odd.exit, odd.seconds) == (0, None, 0.0)


def test_model_role_and_tokens_are_written_and_read_back() -> None:
    r = RunResult(decision="ok", round=1, exit=0, report="ok", validator="passed",
                  model="sonnet", role="engineer", input_tokens=1200, output_tokens=0)  # fmt: skip
    assert r.detail() == (
        '{"round": 1, "exit": 0, "seconds": 0.0, "report": "ok", "validator": "passed", '
        '"model": "sonnet", "role": "engineer", "input_tokens": 1200, "output_tokens": 0, "decision": "ok"}'
    )
    back = result.read(r.detail())
    assert (back.model, back.role, back.input_tokens, back.output_tokens) == ("sonnet", "engineer", 1200, 0)


def test_a_line_without_model_role_or_tokens_reads_them_as_unknown() -> None:
    old = '{"round": 2, "exit": 1, "seconds": 3.0, "report": "ok", "validator": "exited 1", "decision": "d"}'
    r = result.read(old)
    assert (r.round, r.model, r.role, r.input_tokens, r.output_tokens) == (2, "", "", None, None)
    legacy = result.read("round 1; agent exit 0; decision: did it")
    assert (legacy.decision, legacy.model, legacy.role, legacy.input_tokens) == ("did it", "", "", None)
    odd = result.read('{"model": 5, "role": null, "input_tokens": -3, "output_tokens": true}')
    assert (odd.model, odd.role, odd.input_tokens, odd.output_tokens) == ("5", "", None, None)


def test_a_result_line_names_the_task_a_run_serves() -> None:
    line = result.RunResult(decision="accept", serves="t1").detail()
    assert '"serves": "t1"' in line and result.read(line).serves == "t1"
    assert "serves" not in result.RunResult(decision="d").detail() and result.read("{}").serves == ""


def test_a_fingerprint_is_the_change_and_the_failures_shape() -> None:
    from control_room.ledger.result import fingerprint  # the function under test

    a = fingerprint("FAIL: got 41 in /tmp/run-1/t.py line 3", "diff A")
    assert a == fingerprint("FAIL: got 40 in /tmp/run-2/t.py line 9", "diff A")  # numbers, paths aside
    assert a != fingerprint("FAIL: got 41 in /tmp/run-1/t.py line 3", "diff B")  # another change
    assert a != fingerprint("TypeError in /tmp/run-1/t.py", "diff A")  # another failure
    assert len(a) == 16 and int(a, 16) >= 0


def test_read_never_raises_on_a_number_no_float_holds() -> None:
    """Found by the fuzz tests: a hand-edited line's 400-digit `seconds` or metric raised
    OverflowError out of `read` (and every view folding results with it)."""
    huge = "1" + "0" * 400
    got = result.read(f'{{"seconds": {huge}, "metrics": {{"a": {huge}, "b": 2.5, "c": NaN, "d": true}}}}')
    assert (got.seconds, got.metrics) == (0.0, {"b": 2.5})
