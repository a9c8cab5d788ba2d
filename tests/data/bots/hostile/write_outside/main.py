"""Try to write files everywhere; MARK (from the test) names them so the host can be checked."""

import errno
import json
import os

mark = os.environ["MARK"]
targets = ["/bot", "/usr", "/var/tmp", "/dev/shm", "/dev", "/etc", "/", "/proc", "/tmp"]
results = {}
for directory in targets:
    path = os.path.join(directory, mark)
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w") as f:
            f.write("pwned")
        results[directory] = "written"
    except OSError as exc:
        results[directory] = errno.errorcode.get(exc.errno, str(exc.errno))
shm = os.path.realpath("/dev/shm")
print(json.dumps({"act": "write", "results": results, "shm_is": shm}), flush=True)
