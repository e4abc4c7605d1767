"""The report validator (SPEC §5, skills/report-format.md): find the report, check its shape.

``validate(output)`` never raises and runs in linear time. Where the spec is silent:

- The report starts at the LAST line that starts with ``DECISION:`` once ``>`` quote markers,
  ``#`` heading marks and balanced ``*``/``_`` emphasis are stripped; it runs to the end of the
  output. Header names are uppercase; a miscased one inside the report (``Why:``) counts as that
  header plus a violation. Lines starting with ``` or ~~~ are ignored (a fenced report passes).
- Lines are split on ``\\n`` (CRLF is fine) and numbered from 1 in the whole output. "No report
  found" is on line 0: the output as a whole.
- A missing header is reported on the line of the next header present (where it belongs), else
  on the report's last non-blank line. Out of order are the headers outside the longest in-order
  run, so one misplaced header is one violation.
- Every header needs text. DECISION is one line; the others may span lines, and text after
  STOP RULE belongs to it. MISSING says ``none`` when nothing is missing.
- Evidence items are ``- `` / ``* `` lines under EVIDENCE; other lines continue the previous item,
  text before the first item is a violation, and so is a labelled item with no text. Only
  well-formed items are in ``Report.evidence``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from control_room.plain import Plain

HEADERS = ("DECISION", "WHY", "EVIDENCE", "MISSING", "NEXT COMMAND", "STOP RULE")
LABELS = ("CONFIRMED", "INFERRED", "UNKNOWN")
_EMPH = "*_"
_FENCES = ("```", "~~~")
_LABEL_SPAN = 60  # a label sits within the first characters of an item
# the character classes side by side are disjoint, so matching is linear
# Patterns as text, compiled on first use (``re`` keeps them): a cycle imports this module, and
# only a report read needs them.
_HEADER = r"#*[ \t]*([*_]*)(" + "|".join(HEADERS) + r")([*_]*)[ \t]*:"  # re.IGNORECASE
_WORDS = r"[\s/|,&+]+"
_EXPECTED = "(expected CONFIRMED:, INFERRED: or UNKNOWN:)"
_EMPTY = {
    "WHY": "WHY is empty (expected the reasons for the decision)",
    "MISSING": "MISSING is empty (write none if nothing is missing)",
    "NEXT COMMAND": "NEXT COMMAND is empty (expected one exact command)",
    "STOP RULE": "STOP RULE is empty (expected a condition someone can check)",
}


class Violation(Plain):
    """A rule of the format the report breaks, and where."""

    __slots__ = ("line", "message")

    def __init__(self, line: int, message: str) -> None:
        self.line, self.message = line, message

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Evidence(Plain):
    """One item under EVIDENCE: its label, its text and its line."""

    __slots__ = ("label", "line", "text")

    def __init__(self, label: str, text: str, line: int) -> None:
        self.label, self.text, self.line = label, text, line


class Report(Plain):
    """A report, checked: whether it follows the format, what breaks it, and its sections."""

    __slots__ = (
        "decision", "evidence", "missing", "next_command", "ok", "start_line", "stop_rule", "violations",
        "why",
    )  # fmt: skip

    def __init__(
        self,
        ok: bool,
        violations: list[Violation] | None = None,
        start_line: int | None = None,
        decision: str = "",
        why: str = "",
        evidence: list[Evidence] | None = None,
        missing: str = "",
        next_command: str = "",
        stop_rule: str = "",
    ) -> None:
        self.ok = ok
        self.violations: list[Violation] = [] if violations is None else violations
        self.start_line = start_line
        self.decision = decision
        self.why = why
        self.evidence: list[Evidence] = [] if evidence is None else evidence
        self.missing = missing
        self.next_command = next_command
        self.stop_rule = stop_rule

    @property
    def confirmed(self) -> list[Evidence]:
        return [e for e in self.evidence if e.label == "CONFIRMED"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "violations": [{"line": v.line, "message": v.message} for v in self.violations],
            "start_line": self.start_line,
            "decision": self.decision,
            "why": self.why,
            "evidence": [{"label": e.label, "text": e.text, "line": e.line} for e in self.evidence],
            "missing": self.missing,
            "next_command": self.next_command,
            "stop_rule": self.stop_rule,
        }


class _Section:
    __slots__ = ("body", "line", "name", "text", "written")

    def __init__(self, name: str, written: str, line: int, text: str) -> None:
        self.name = name
        self.written = written  # the header name as written (differs from name when miscased)
        self.line = line
        self.text = text  # after the colon, on the header line
        self.body: list[tuple[int, str]] = []

    def joined(self) -> str:
        return "\n".join([self.text, *(s for _, s in self.body)]).strip()


def _unquote(line: str) -> str:
    """The line without surrounding whitespace and leading ``>`` quote markers."""
    i, n = 0, len(line)
    while i < n and (line[i] == ">" or line[i].isspace()):
        i += 1
    return line[i:].rstrip()


def _header(s: str) -> tuple[str, str, str] | None:
    """(name, name as written, text after the colon) if unquoted line ``s`` is a header."""
    m = re.match(_HEADER, s, re.IGNORECASE)
    if not m or m[2].upper() not in HEADERS:
        return None
    need = len(m[1]) - len(m[3])  # emphasis still to close after the colon
    closing = s[m.end() : m.end() + need]
    if need < 0 or len(closing) < need or closing.strip(_EMPH):
        return None
    return m[2].upper(), m[2], s[m.end() + need :].strip()


def _second_label(rest: str) -> str:
    r = rest[: _LABEL_SPAN + 10].lstrip(" \t" + _EMPH)
    for label in LABELS:
        if r.startswith(label) and r[len(label) :].lstrip(" \t" + _EMPH).startswith(":"):
            return label
    return ""


def _label(t: str) -> tuple[str, str]:
    """(label, text) for an item's first line (bullet removed), or ("", problem)."""
    i = len(t) - len(t.lstrip(_EMPH))
    colon = t.find(":", i, i + _LABEL_SPAN)
    if colon < 0:
        first = t[i : i + _LABEL_SPAN].split(maxsplit=1)
        word = first[0].strip(_EMPH + "[]()`").upper() if first else ""
        if word in LABELS:
            return "", f"evidence label {word} must be followed by ':' ({word}: ...)"
        return "", f"evidence item has no label {_EXPECTED}"
    raw = t[i:colon].rstrip(" \t")
    head = raw.rstrip(_EMPH)
    words = [w for w in (x.strip(_EMPH) for x in re.split(_WORDS, head)) if w]
    known = [w.upper() for w in words if w.upper() in LABELS]
    shouted = all(w.isalpha() and w.isupper() for w in words)
    if not words or not (shouted or len(known) == len(words)):
        return "", f"evidence item has no label {_EXPECTED}"
    if len(known) >= 2:
        return "", f"evidence item has {len(known)} labels ({', '.join(known)}); keep exactly one"
    if len(words) > 1 or not known:
        return "", f"evidence item has unknown label '{head.strip()}' {_EXPECTED}"
    label = known[0]
    if words[0] != label:
        return "", f"evidence label '{words[0]}' must be uppercase ({label}:)"
    rest = t[colon + 1 :]
    need = i - (len(raw) - len(head))
    if need > 0 and len(rest) >= need and not rest[:need].strip(_EMPH):
        rest = rest[need:]
    second = _second_label(rest)
    if second:
        return "", f"evidence item has 2 labels ({label}, {second}); keep exactly one"
    return label, rest.strip()


def _evidence(sec: _Section, out: list[Evidence], bad: list[Violation]) -> None:
    items: list[tuple[int, list[str]]] = []
    if sec.text:
        bad.append(
            Violation(
                sec.line,
                "text on the EVIDENCE line is not an item (put each item on its own line starting with '- ')",
            )
        )
    for ln, s in sec.body:
        if s and s[0] in "-*" and (len(s) == 1 or s[1] in " \t"):
            items.append((ln, [s[1:].strip()]))
        elif s and items:
            items[-1][1].append(s)
        elif s:
            bad.append(Violation(ln, "text under EVIDENCE before the first item (items start with '- ')"))
    if not items:
        bad.append(
            Violation(
                sec.line,
                "EVIDENCE has no items (expected lines starting with "
                "'- CONFIRMED:', '- INFERRED:' or '- UNKNOWN:')",
            )
        )
    for ln, parts in items:
        label, text = _label(parts[0])
        if not label:
            bad.append(Violation(ln, text))
            continue
        text = "\n".join([text, *parts[1:]]).strip()
        if not text:
            bad.append(Violation(ln, f"{label} item has no text"))
        else:
            out.append(Evidence(label, text, ln))


def _out_of_order(order: list[int]) -> set[int]:
    """Positions in ``order`` outside its longest increasing run (earliest headers kept)."""
    best = [1] * len(order)
    prev = [-1] * len(order)
    for a in range(len(order)):
        for b in range(a):
            if order[b] < order[a] and best[b] + 1 > best[a]:
                best[a], prev[a] = best[b] + 1, b
    keep: set[int] = set()
    at = max(range(len(order)), key=lambda p: (best[p], -p), default=-1)
    while at >= 0:
        keep.add(at)
        at = prev[at]
    return set(range(len(order))) - keep


def _decode(output: Any) -> str:
    if isinstance(output, (bytes, bytearray, memoryview)):
        text = bytes(output).decode("utf-8", errors="replace")
    else:
        text = output if isinstance(output, str) else str(output)
    return text[1:] if text.startswith("\ufeff") else text


def validate(output: str | bytes) -> Report:
    """Check the report at the end of an agent's output; never raises."""
    lines = _decode(output).split("\n")
    start, hint = -1, ""
    for idx in range(len(lines) - 1, -1, -1):
        h = _header(_unquote(lines[idx]))
        if h and h[0] == "DECISION":
            if h[1] == "DECISION":
                start = idx
                break
            hint = hint or f" (line {idx + 1} starts with '{h[1]}:'; headers are uppercase)"
    if start < 0:
        message = "no report found: no line starts with DECISION:" + hint
        return Report(ok=False, violations=[Violation(0, message)])

    sections: list[_Section] = []
    last = start + 1
    for idx in range(start, len(lines)):
        s = _unquote(lines[idx])
        if s.startswith(_FENCES):
            continue
        last = idx + 1 if s else last
        h = _header(s)
        if h:
            sections.append(_Section(h[0], h[1], idx + 1, h[2]))
        else:
            sections[-1].body.append((idx + 1, s))

    bad: list[Violation] = []
    first: dict[str, _Section] = {}
    seen: dict[str, int] = {}
    for sec in sections:
        if sec.written != sec.name:
            bad.append(Violation(sec.line, f"header '{sec.written}:' is not uppercase (write {sec.name}:)"))
        seen[sec.name] = seen.get(sec.name, 0) + 1
        if sec.name in first:
            times = "twice" if seen[sec.name] == 2 else f"{seen[sec.name]} times"
            bad.append(
                Violation(sec.line, f"{sec.name} appears {times} (first on line {first[sec.name].line})")
            )
        else:
            first[sec.name] = sec
    present = list(first.values())
    for p in sorted(_out_of_order([HEADERS.index(sec.name) for sec in present])):
        i = HEADERS.index(present[p].name)
        where = f"after {HEADERS[i - 1]}" + (
            f" and before {HEADERS[i + 1]}" if i + 1 < len(HEADERS) else ", last"
        )
        bad.append(Violation(present[p].line, f"{present[p].name} out of order (expected {where})"))
    for i, name in enumerate(HEADERS):
        if name not in first:
            later = [first[n].line for n in HEADERS[i + 1 :] if n in first]
            line = later[0] if later else last
            bad.append(Violation(line, f"{name} missing (expected after {HEADERS[i - 1]})"))

    top = first["DECISION"]
    decision = [(ln, s) for ln, s in [(top.line, top.text), *top.body] if s]
    if not decision:
        bad.append(Violation(start + 1, "DECISION is empty (expected one line)"))
    elif len(decision) > 1:
        bad.append(Violation(decision[1][0], "DECISION continues on a second line (expected one line)"))
    for name, message in _EMPTY.items():
        if name in first and not first[name].joined():
            bad.append(Violation(first[name].line, message))
    evidence: list[Evidence] = []
    for sec in sections:
        if sec.name == "EVIDENCE":
            _evidence(sec, evidence, bad)

    bad.sort(key=lambda v: v.line)
    text = {name: sec.joined() for name, sec in first.items()}
    return Report(
        ok=not bad,
        violations=bad,
        start_line=start + 1,
        decision=text["DECISION"],
        why=text.get("WHY", ""),
        evidence=evidence,
        missing=text.get("MISSING", ""),
        next_command=text.get("NEXT COMMAND", ""),
        stop_rule=text.get("STOP RULE", ""),
    )


_SUCCESS = (  # re.IGNORECASE, as _NEGATION and _EXIT_0
    r"\b(pass(es|ed)?|succeed(s|ed)?|success(ful(ly)?)?|works?|fixed|green|"
    r"all tests|faster|improved|meets?)\b"
)
_NEGATION = r"\b(not?|never|fail\w*|error\w*|broken|regress\w*|slower|unable)\b"
_QUOTED = r'`[^`]*`|"(?:[^"\\]|\\.)*"'


_EXIT_0 = r"\bexit(?:s|ed)?\s+(?:with\s+)?(?:(?:exit\s+)?(?:code|status)\s+)?0\b"
_CHECK_WORDS = frozenset(("validator", "check"))  # "the validator exits 0" names the check too


def claims_success(report: Report, check: Sequence[str] = ()) -> bool:
    """Does the report's CONFIRMED evidence claim success? A word-level heuristic: a CONFIRMED
    item with a success word and no negation, once quoted text (`...` or "...": output and
    commands quoted as observed) is set aside, since quoting is not claiming; or one saying
    that the check itself exits 0 (`check.py exits 0`, `the validator exited with code 0`),
    ``check`` being its argv: a word before "exits 0" is one of its own (a script, not its
    interpreter or a flag)."""
    named = _named(check)
    for e in report.confirmed:
        own = re.sub(_QUOTED, " ", e.text)
        if re.search(_NEGATION, own, re.IGNORECASE):
            continue
        if re.search(_SUCCESS, own, re.IGNORECASE):
            return True
        said = re.search(_EXIT_0, e.text, re.IGNORECASE)
        if said and _names_check(e.text[: said.start()].rstrip(), named):
            return True
    return False


def _names_check(subject: str, named: list[str]) -> bool:
    """Whether what is said to exit 0 is the check: a quoted command, the check's own words in
    order (`python check.py`; not `python check.py --fast`, another run of the script); else any
    word of the check (check.py, the validator)."""
    quoted = re.search(r"`([^`]*)`$", subject)
    if quoted:
        return _named(quoted.group(1).split()) == named
    return bool(set(_words(subject)) & {*named, *_CHECK_WORDS})


def _words(text: str) -> list[str]:
    """The words of ``text`` as file names: quotes and punctuation stripped, the folder dropped."""
    found = (w.strip("`'\"()[],:;.").rsplit("/", 1)[-1].lower() for w in text.split())
    return [w for w in found if w]


_INTERPRETER = r"(python|pypy|sh|bash|zsh|dash|env|node|ruby|perl|uv|npx|npm|bun|deno)[\d.]*"


def _named(check: Sequence[str]) -> list[str]:
    """The words of a check's argv that name it, in order: no interpreter (``python``), no
    inline program (``-c CODE``); flags kept."""
    argv = list(check)
    kept = [
        w for k, w in enumerate(argv)
        if (k == 0 or argv[k - 1] not in ("-c", "-e")) and " " not in w
        and not re.fullmatch(_INTERPRETER, w.rsplit("/", 1)[-1])
    ]  # fmt: skip
    return _words(" ".join(kept))
