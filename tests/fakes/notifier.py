#!/usr/bin/env python3
"""A notifier for CONTROL.md `notify:`: `notifier.py FILE [--fail]` appends the JSON event it
reads on stdin to FILE, one line each; with --fail it then exits 3 saying why on stderr."""

import sys

event = sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(event.strip() + "\n")
if "--fail" in sys.argv:
    print("the webhook answered 500", file=sys.stderr)
    sys.exit(3)
