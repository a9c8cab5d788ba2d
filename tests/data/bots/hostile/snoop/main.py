"""Try to read host files (another bot's, server secrets) and the referee's environment.

TARGETS (a JSON list of host paths) comes from the test.
"""

import errno
import json
import os


def attempt(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return "read:" + f.read(200).decode(errors="replace")
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


results = {path: attempt(path) for path in json.loads(os.environ.get("TARGETS", "[]"))}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        results[f"/proc/{pid}/environ"] = attempt(f"/proc/{pid}/environ")
processes = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(
    json.dumps(
        {
            "act": "snoop",
            "files": results,
            "environ": sorted(os.environ),
            "processes": processes,
            "root": sorted(os.listdir("/")),
        }
    ),
    flush=True,
)
