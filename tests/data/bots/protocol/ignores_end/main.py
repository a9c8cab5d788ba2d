"""Plays its first legal action; after end (and end of input) it does not exit."""

import json
import sys
import time


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
    send({"type": "ready", "name": "ignores_end", "version": "1"})


ready()
while True:
    message = json.loads(sys.stdin.readline() or '{"type": "eof"}')
    if message["type"] != "request":
        break
    send({"type": "action", "action": message["actions"][0]})
print("ignores_end: staying", file=sys.stderr, flush=True)
while True:
    time.sleep(60)
