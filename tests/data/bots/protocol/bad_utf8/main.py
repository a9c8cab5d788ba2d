"""Says ready, then answers the first request with bytes that are not UTF-8."""

import json
import sys

NAME = "bad_utf8"


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
    send({"type": "ready", "name": "bad_utf8", "version": "1"})


ready()
read()
sys.stdout.buffer.write(b'{"type": "action", "action": "\xff\xfe"}\n')
sys.stdout.flush()
read()
