"""Write a 10 GB file into scratch.

Python ignores SIGXFSZ at start-up; most native programs do not. Restore the default action so
this bot behaves like them and dies of the signal when it crosses the file size limit.
"""

import json
import signal

signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
chunk = b"\0" * (1 << 20)
written = 0
with open("/tmp/big", "wb", buffering=0) as f:
    while written < 10 * 1024 << 20:
        f.write(chunk)
        written += 1
        if written % 16 == 0:
            print(json.dumps({"act": "write", "mib": written}), flush=True)
print(json.dumps({"act": "write", "mib": written, "done": True}), flush=True)
