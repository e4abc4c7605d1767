"""dispatch.round.report: golden fixtures (tests/fixtures/reports/NAME.md + NAME.expected.json),
properties (never raises; a generated valid report is ok and round-trips), a few API checks, and
claims_success (the runner's unsupported-claim heuristic: what counts as a CONFIRMED success claim).

To add a case, write NAME.md and NAME.expected.json side by side:
``{"ok": bool, "violations": [[line, "message"], ...], "evidence": [["LABEL", line], ...]}``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from control_room.dispatch.round.report import (
    HEADERS,
    LABELS,
    Evidence,
    Report,
    Violation,
    claims_success,
    validate,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"
CASES = sorted(FIXTURES.glob("*.md"))


def verdict(report: Report) -> dict[str, object]:
    return {
        "ok": report.ok,
        "violations": [[v.line, v.message] for v in report.violations],
        "evidence": [[e.label, e.line] for e in report.evidence],
    }


def test_fixture_set_is_complete() -> None:
    assert len(CASES) >= 25
    expected = {p.name.removesuffix(".expected.json") for p in FIXTURES.glob("*.expected.json")}
    assert expected == {p.stem for p in CASES}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
    data = path.read_bytes()
    report = validate(data)
    assert verdict(report) == expected
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert verdict(validate(text)) == expected  # str and bytes agree


def test_fields_of_the_good_example() -> None:
    report = validate((FIXTURES / "skill_good.md").read_bytes())
    assert report.ok and report.start_line == 1
    assert report.decision.startswith("keep route parse-cache alive: ")
    assert report.missing == "the 50 MB input set, which is not present in this work dir"
    assert report.next_command == "python3 bench/run.py --runs 5 --input data/large/"
    assert [e.line for e in report.confirmed] == [4, 5]
    assert report.evidence[-1] == Evidence("UNKNOWN", "peak memory with the cache enabled; not measured", 7)
    as_dict = report.as_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["evidence"][0]["label"] == "CONFIRMED"
    assert as_dict["violations"] == []


def test_multiline_fields_and_crlf() -> None:
    report = validate((FIXTURES / "multiline_why_missing_stop_rule.md").read_bytes())
    assert report.why == (
        "The falsifier was a gain under 3%.\n\nThe median gain is 12%, four times the noise floor."
    )
    assert report.stop_rule.splitlines()[-1] == "- peak memory exceeds 2 GB"
    crlf = validate((FIXTURES / "crlf_line_endings_ok.md").read_bytes())
    assert "\r" not in json.dumps(crlf.as_dict())


def test_violation_str_and_no_report() -> None:
    assert str(Violation(7, "x")) == "line 7: x"
    report = validate(b"")
    assert (report.ok, report.start_line, report.evidence, report.decision) == (False, None, [], "")


@pytest.mark.parametrize(
    "text",
    [
        "#" * 1_000_000,
        "*" * 1_000_000 + "DECISION",
        "> " * 500_000,
        "**DECISION:" + "*" * 1_000_000,
        "DECISION: x\nEVIDENCE:\n- " + "*" * 1_000_000,
        "DECISION: x\nEVIDENCE:\n- " + "A " * 500_000 + ":",
        "step done\n" * 300_000,
        "DECISION: x\nEVIDENCE:\n" + "- CONFIRMED: y\n  more\n" * 100_000,
    ],
    ids=["hashes", "stars", "quotes", "open-emphasis", "star-item", "long-label", "lines", "items"],
)
def test_pathological_inputs_are_reports_not_crashes(text: str) -> None:
    # Speed on these inputs is measured in bench/report.py, not asserted here.
    report = validate(text)
    assert report.ok is False
    check_invariants(report, text)


def check_invariants(report: Report, text: str) -> None:
    n = text.count("\n") + 1
    assert report.ok == (not report.violations)
    assert [v.line for v in report.violations] == sorted(v.line for v in report.violations)
    for v in report.violations:
        assert 0 <= v.line <= n
        assert v.message and "\n" not in v.message
    for e in report.evidence:
        assert e.label in LABELS and e.text and 1 <= e.line <= n


# Fragments that reach the validator's corners far more often than uniform text does.
FRAGMENTS = st.sampled_from(
    [
        *(f"{h}:" for h in HEADERS),
        *(f"{h.lower()}:" for h in HEADERS),
        *(f"{x}:" for x in LABELS),
        "\n",
        "\r\n",
        "- ",
        "* ",
        "  ",
        "**",
        "__",
        "*",
        "_",
        "> ",
        "## ",
        "```",
        "~~~",
        ":",
        "/",
        "x",
        "VERIFIED:",
        "\ufeff",
        "\x00",
        "é",
        "\u2028",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.lists(FRAGMENTS, max_size=60).map("".join)))
def test_never_raises_on_text(text: str) -> None:
    check_invariants(validate(text), text)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(), st.lists(FRAGMENTS, max_size=60).map(lambda f: "".join(f).encode())))
def test_never_raises_on_bytes(data: bytes) -> None:
    check_invariants(validate(data), data.decode("utf-8", errors="replace"))


ONE_LINE = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), min_size=1, max_size=40
).filter(lambda s: s.strip() != "")
NOT_A_LABEL = re.compile(r"[\s*_]*(CONFIRMED|INFERRED|UNKNOWN)[\s*_]*:")


@settings(max_examples=300, deadline=None)
@given(
    preamble=st.lists(st.text(max_size=30).map(lambda s: s.replace("\n", " ")), max_size=5),
    fields=st.fixed_dictionaries({h: ONE_LINE for h in HEADERS if h != "EVIDENCE"}),
    items=st.lists(st.tuples(st.sampled_from(LABELS), ONE_LINE), min_size=1, max_size=6),
)
def test_generated_valid_report_is_ok_and_round_trips(
    preamble: list[str], fields: dict[str, str], items: list[tuple[str, str]]
) -> None:
    for _label, text in items:
        assume(not NOT_A_LABEL.match(text))
    lines = [*preamble, f"DECISION: {fields['DECISION']}", f"WHY: {fields['WHY']}", "EVIDENCE:"]
    lines += [f"- {label}: {text}" for label, text in items]
    lines += [f"{h}: {fields[h]}" for h in ("MISSING", "NEXT COMMAND", "STOP RULE")]
    report = validate("\n".join(lines) + "\n")
    assert report.violations == []
    assert report.ok and report.start_line == len(preamble) + 1
    first_item = len(preamble) + 4
    assert report.evidence == [
        Evidence(label, text.strip(), first_item + i) for i, (label, text) in enumerate(items)
    ]
    assert (report.decision, report.why, report.missing) == (
        fields["DECISION"].strip(),
        fields["WHY"].strip(),
        fields["MISSING"].strip(),
    )
    assert (report.next_command, report.stop_rule) == (
        fields["NEXT COMMAND"].strip(),
        fields["STOP RULE"].strip(),
    )


# claims_success: what counts as a CONFIRMED success claim (the runner logs an unsupported claim
# when such a report meets a failing validator) ---------------------------------------------------


def report_with(*items: str) -> str:
    evidence = "\n".join(f"- {i}" for i in items)
    return (f"DECISION: d\nWHY: w\nEVIDENCE:\n{evidence}\nMISSING: none\nNEXT COMMAND: ls\n"
            "STOP RULE: s\n")  # fmt: skip


@pytest.mark.parametrize(
    ("items", "claims"),
    [
        (["CONFIRMED: all tests pass (pytest -q)"], True),
        (["CONFIRMED: the benchmark is 2x faster (bench.py)"], True),
        (["CONFIRMED: it works"], True),
        (["CONFIRMED: tests fail with KeyError"], False),
        (["CONFIRMED: not faster than before"], False),
        (['CONFIRMED: stdout line: "all tests pass"'], False),  # quoted output is not a claim
        (["CONFIRMED: `make it-work` exited 2"], False),
        (["INFERRED: all tests pass"], False),  # only CONFIRMED items claim
        (["UNKNOWN: whether it works", "CONFIRMED: the file was written"], False),
    ],
)
def test_claims_success(items: list[str], claims: bool) -> None:
    report = validate(report_with(*items))
    assert report.ok
    assert claims_success(report) is claims


@pytest.mark.parametrize(
    ("item", "check", "claims"),
    [
        ("check.py exits 0", ["python3", "check.py"], True),
        ("`python check.py` exits 0", ["/usr/bin/python3", "check.py"], True),
        ("tests/check.py exited with code 0", ["python", "tests/check.py"], True),
        ("the validator exits 0", ["make", "test"], True),
        ("`pytest -q` exits 0", ["pytest", "-q"], True),
        ("check.py exits 1", ["python3", "check.py"], False),
        ("`python work.py` exits 0", ["python3", "check.py"], False),  # another program
        ("`python bench.py` exited 0 after 1.2s", ["python", "bench.py", "--check"], False),  # another run
        ("`sh -c 'exit 1'` exited 0", ["python3", "-c", "import sys; sys.exit(1)"], False),  # the probe's
        ("check.py exits 0", [], False),  # no check named: only its words `validator`, `check`
    ],
)
def test_a_claim_that_the_check_exits_0_claims_success(item: str, check: list[str], claims: bool) -> None:
    """`check.py exits 0` is a success claim about the check itself (a reviewer's, an executor's):
    one of the check's own words (not its interpreter) before `exits 0`, or the quoted command
    whole."""
    report = validate(report_with(f"CONFIRMED: {item}"))
    assert report.ok
    assert claims_success(report, check) is claims
