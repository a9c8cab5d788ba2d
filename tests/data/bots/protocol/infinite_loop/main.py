"""Says ready, then computes forever on its first request: it loses on time."""

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
    send({"type": "ready", "name": "infinite_loop", "version": "1"})


ready()
read()
n = 0
while True:
    n += 1
