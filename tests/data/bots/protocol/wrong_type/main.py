"""Says ready, then answers the first request with another ready message."""

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
    send({"type": "ready", "name": "wrong_type", "version": "1"})


ready()
read()
send({"type": "ready", "name": "wrong_type", "version": "1"})
read()
