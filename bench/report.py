"""Bench: the report validator on long and pathological agent outputs (it must stay linear).

Prints the time per input and per megabyte. Usage: python bench/report.py
"""

from __future__ import annotations

import time

import common  # noqa: F401  (puts the repository on sys.path)

from control_room.dispatch.round.report import validate

GOOD = """DECISION: keep the sieve
WHY: it meets the budget
EVIDENCE:
- CONFIRMED: `python bench.py` printed 1.2 ms
- UNKNOWN: other machines
MISSING: none
NEXT COMMAND: control-room status
STOP RULE: stop when the budget is met
"""

CASES = {
    "300k lines of chatter, then a report": "step done\n" * 300_000 + GOOD,
    "1 MB of #": "#" * 1_000_000,
    "1 MB of * then DECISION": "*" * 1_000_000 + "DECISION",
    "500k quote markers": "> " * 500_000,
    "open emphasis, 1 MB": "**DECISION:" + "*" * 1_000_000,
    "one 1 MB evidence item": "DECISION: x\nEVIDENCE:\n- " + "*" * 1_000_000,
    "long label": "DECISION: x\nEVIDENCE:\n- " + "A " * 500_000 + ":",
    "100k evidence items": "DECISION: x\nEVIDENCE:\n" + "- CONFIRMED: y\n  more\n" * 100_000,
}


def main() -> None:
    for name, text in CASES.items():
        t = time.perf_counter()
        validate(text)
        dt = time.perf_counter() - t
        mb = len(text.encode()) / 1e6
        print(f"{name:<40} {mb:6.2f} MB  {dt * 1000:8.1f} ms  ({dt * 1000 / mb:6.1f} ms/MB)")


if __name__ == "__main__":
    main()
