"""Fork until the system refuses, keeping every child alive; report how many forks succeeded."""

import errno
import json
import os
import sys
import time

children = 0
refused = None
for _ in range(10_000):
    try:
        pid = os.fork()
    except OSError as exc:
        refused = errno.errorcode.get(exc.errno, str(exc.errno))
        break
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    children += 1
print(json.dumps({"act": "fork", "children": children, "refused": refused}), flush=True)
sys.stdin.read()
