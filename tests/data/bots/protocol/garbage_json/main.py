"""Says ready, then answers the first request with a line that is not JSON."""

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
    send({"type": "ready", "name": "garbage_json", "version": "1"})


ready()
read()
sys.stdout.write("{this is not json\n")
sys.stdout.flush()
read()
