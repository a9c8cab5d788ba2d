"""Says ready, then answers the first request with output that never ends (no newline)."""

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
    send({"type": "ready", "name": "endless_output", "version": "1"})


ready()
read()
chunk = "x" * 65536
while True:
    sys.stdout.write(chunk)
