"""Plays its first legal action three times, then writes to stderr and exits with status 3."""

import json
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
    send({"type": "ready", "name": "exits_midgame", "version": "1"})


ready()
for _ in range(3):
    request = read()
    send({"type": "action", "action": request["actions"][0]})
read()
print("exits_midgame: giving up after three actions", file=sys.stderr, flush=True)
sys.exit(3)
