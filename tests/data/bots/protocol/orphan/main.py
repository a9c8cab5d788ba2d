"""Starts a detached grandchild (double fork + setsid) that sleeps, then plays until it exits.

The grandchild closes its standard streams like a daemon and becomes ``sleep 86399`` (an
unusual number, so that a test can look for it); it must not survive the game.
"""

import json
import os
import sys

ORPHAN_SECONDS = "86399"


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
    send({"type": "ready", "name": "orphan", "version": "1"})


ready()
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    print("orphan: grandchild detached", file=sys.stderr, flush=True)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.execv("/bin/sleep", ["sleep", ORPHAN_SECONDS])
os.waitpid(pid, 0)
for _ in range(3):
    request = read()
    send({"type": "action", "action": request["actions"][0]})
read()
sys.exit(0)
