"""Leave a grandchild behind in its own session (double fork + setsid), then idle."""

import json
import os
import sys
import time

read_end, write_end = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(write_end, str(os.getpid()).encode())
        os.close(write_end)
        sys.stdout.close()
        time.sleep(3600)
    os._exit(0)
os.close(write_end)
grandchild = int(os.read(read_end, 32))
print(json.dumps({"act": "orphan", "grandchild": grandchild}), flush=True)
sys.stdin.read()
