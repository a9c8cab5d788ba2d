"""Speaks the protocol until the first request, then closes its standard output and sleeps.

A referee that waits for an answer until the clock runs out records a loss on time; the end of
the bot's output is there at once, and the protocol calls it a crash ("closed its output").
"""

import json
import os
import sys
import threading

sys.stdin.readline()  # hello
sys.stdout.write(json.dumps({"type": "ready", "name": "close_stdout"}) + "\n")
sys.stdout.flush()
sys.stdin.readline()  # the first request
print("close_stdout: closing standard output", file=sys.stderr, flush=True)
os.close(1)
threading.Event().wait()  # for ever: the referee must not need the bot to exit
