"""Says ready, then answers the first request with an action that is not legal there."""

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
    send({"type": "ready", "name": "illegal_move", "version": "1"})


ready()
read()
send({"type": "action", "action": "a2-a5"})
read()
