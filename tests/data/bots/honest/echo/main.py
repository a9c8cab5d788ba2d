"""An honest bot: reads its own file, uses scratch, then echoes every line it is sent."""

import json
import os
import pwd
import sys

with open("data.txt") as f:
    data = f.read().strip()
# The scratch folder is HOME: /tmp inside the sandbox, a private folder for a plain process.
scratch_file = os.path.join(os.environ["HOME"], "scratch.txt")
with open(scratch_file, "w") as f:
    f.write("scratch works")
with open(scratch_file) as f:
    scratch = f.read()
ready = {
    "ready": True,
    "data": data,
    "scratch": scratch,
    "cwd": os.getcwd(),
    "uid": os.getuid(),
    "user": pwd.getpwuid(os.getuid()).pw_name,  # glibc asks nscd over a unix socket first
    "environ": dict(os.environ),
}
print(json.dumps(ready), flush=True)
for line in sys.stdin:
    print(json.dumps({"echo": line.rstrip("\n")}), flush=True)
