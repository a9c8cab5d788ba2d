"""Puts NUL characters everywhere it may: its stderr, its info (keys and values), then crashes
with a NUL in its last words. The referee's transcript and reason must still be storable."""

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


read()
send({"type": "ready", "name": "nul_chars", "version": "1"})
sys.stderr.write("log\x00line\n")
sys.stderr.flush()
for n in range(2):
    request = read()
    send({"type": "action", "action": request["actions"][0], "info": {"a\x00": f"b\x00{n}"}})
read()
print("last\x00words", file=sys.stderr, flush=True)
sys.exit(4)
