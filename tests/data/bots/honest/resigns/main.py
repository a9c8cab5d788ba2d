"""Places its rings (the first legal action), then resigns when asked to do anything else; on
``end``, writes what it was told to its standard error and exits 0."""

import json
import sys


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(4)  # the input was closed without an end
    return json.loads(line)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


read()
send({"type": "ready", "name": "resigns", "version": "1"})
while True:
    message = read()
    if message["type"] == "end":
        break
    if message["position"]["next"] == "place":
        send({"type": "action", "action": message["actions"][0]})
    else:
        print("resigns: nothing left to hope for", file=sys.stderr, flush=True)
        send({"type": "resign", "info": {"eval": -100}})
print(f"resigns: told {message['result']} ({message['reason']})", file=sys.stderr, flush=True)
