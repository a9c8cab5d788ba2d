"""Plays its first legal action twice, then dies of a signal (SIGABRT)."""

import json
import os
import signal
import sys


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ready():
    read()
    send({"type": "ready", "name": "killed_by_signal", "version": "1"})


ready()
for _ in range(2):
    request = read()
    send({"type": "action", "action": request["actions"][0]})
read()
print("killed_by_signal: aborting", file=sys.stderr, flush=True)
os.kill(os.getpid(), signal.SIGABRT)
