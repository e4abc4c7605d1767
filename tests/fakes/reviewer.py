#!/usr/bin/env python3
"""A scripted reviewer for the `command` adapter: `reviewer.py --model M --script FILE`.

Reads its brief on stdin and keeps a copy in `<FILE dir>/<M>.prompt.md` (so tests can read what
a reviewer or an arbiter was shown), then acts as FILE's entry for its model says:
`{"decision": "accept" | "reject" | "A" | "B" | "escalate", "confirmed": "...", "why": "...",
"edit": "name", "broken": true, "sleep": seconds}`. It prints a report in the room's format
(SPEC §5), or a broken one with `"broken": true`; with `"edit"`, it writes that file in its
work dir first (a reviewer that tries to edit); a reject with no `"confirmed"` gives only an
INFERRED item."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--script", required=True)
    args = ap.parse_args()
    script = pathlib.Path(args.script)
    brief = sys.stdin.read()
    (script.parent / f"{args.model}.prompt.md").write_text(brief)
    plan = json.loads(script.read_text()).get(args.model, {})
    if plan.get("sleep"):
        time.sleep(float(plan["sleep"]))
    if plan.get("edit"):
        pathlib.Path(plan["edit"]).write_text("a reviewer's edit\n")
    if plan.get("broken"):
        print("I looked at it and it seems fine.")
        return 0
    decision = plan.get("decision", "accept")
    evidence = (
        f"- CONFIRMED: {plan['confirmed']}"
        if plan.get("confirmed")
        else "- INFERRED: nothing here looks wrong"
    )
    print(
        f"DECISION: {decision}\n"
        f"WHY: {plan.get('why', f'the {args.model} reviewer decided {decision}')}\n"
        f"EVIDENCE:\n{evidence}\n"
        "MISSING: nothing\n"
        "NEXT COMMAND: control-room status\n"
        "STOP RULE: stop when the verdict is in\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
