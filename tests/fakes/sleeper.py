#!/usr/bin/env python3
"""A stand-in agent for cycle tests: starts a grandchild, says it is ready, then sleeps.

    sleeper.py --pidfile P [--ready R] [--sleep S] [--skip-if F]

--pidfile  write the grandchild's pid (tests check it dies with the group) and this
           agent's start time (time.time()) on the next line
--ready    create this file once the grandchild runs
--skip-if  if this file exists, print "quick" and exit 0 at once
--ignore-term  ignore SIGTERM (this agent and its grandchild), so only SIGKILL ends them
"""

import argparse
import os
import signal
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--pidfile", required=True)
p.add_argument("--ready")
p.add_argument("--sleep", type=float, default=600)
p.add_argument("--skip-if")
p.add_argument("--ignore-term", action="store_true")
a = p.parse_args()
if a.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
started = time.time()
if a.skip_if and os.path.exists(a.skip_if):
    print("quick")
    sys.exit(0)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
with open(a.pidfile, "w") as f:
    f.write(f"{child.pid}\n{started}\n")  # the grandchild's pid, and when this agent started
print("started grandchild", child.pid, flush=True)
if a.ready:
    open(a.ready, "w").close()
time.sleep(a.sleep)
print("slept", flush=True)
