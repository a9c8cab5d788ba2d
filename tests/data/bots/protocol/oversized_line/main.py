"""Says ready, then answers the first request with one 200 kB line (newline included)."""

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
    send({"type": "ready", "name": "oversized_line", "version": "1"})


ready()
request = read()
send({"type": "action", "action": request["actions"][0], "info": {"pad": "x" * 200_000}})
read()
