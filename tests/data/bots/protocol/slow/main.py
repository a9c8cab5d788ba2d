"""Says ready, then thinks for a minute before each answer: it loses on time."""

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
    send({"type": "ready", "name": "slow", "version": "1"})


ready()
while True:
    request = read()
    if request["type"] != "request":
        break
    time.sleep(60)
    send({"type": "action", "action": request["actions"][0]})
