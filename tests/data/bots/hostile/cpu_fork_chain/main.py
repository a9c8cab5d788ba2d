"""Burn CPU through a chain of short-lived processes, each well under any per-process limit.

The main process stays idle. A child burns 0.2 s of CPU, forks its successor and exits, so no
single process ever accumulates much CPU time (RLIMIT_CPU is per process).
"""

import json
import os
import sys
import time


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


if os.fork() == 0:
    link = 0
    while True:
        burn(0.2)
        line = {"act": "cpu", "link": link, "own_cpu": round(time.process_time(), 3)}
        print(json.dumps(line), flush=True)
        if os.fork() != 0:
            os._exit(0)
        link += 1
else:
    sys.stdin.read()
    time.sleep(3600)
