"""Dump everything a bot can read that might name a host path, as one JSON line.

The mount table (``/proc/*/mountinfo``, ``mounts``, ``mountstats``), the command line,
environment, memory maps, working directory, root and descriptors of every process it can
see (bubblewrap's own among them), its own environment and working directory, and the names
of every file it can list outside ``/proc``, ``/sys`` and ``/usr``. A bot that found a host
path there could publish it (say, encoded in its ``ready`` name).
"""

import json
import os

PER_PROCESS = ("cmdline", "environ", "mountinfo", "mounts", "mountstats", "maps", "cgroup")
LINKS = ("cwd", "root", "exe")
SKIP = {"/proc", "/sys", "/usr", "/dev"}


def read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20).decode(errors="replace")
    except OSError as exc:
        return f"error: {exc.strerror}"


def link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError as exc:
        return f"error: {exc.strerror}"


seen: dict[str, object] = {}
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()) + ["self", "thread-self"]:
    base = f"/proc/{pid}"
    for name in PER_PROCESS:
        seen[f"{base}/{name}"] = read(f"{base}/{name}")
    for name in LINKS:
        seen[f"{base}/{name}"] = link(f"{base}/{name}")
    try:
        fds = os.listdir(f"{base}/fd")
    except OSError as exc:
        fds = []
        seen[f"{base}/fd"] = f"error: {exc.strerror}"
    for fd in fds:
        seen[f"{base}/fd/{fd}"] = link(f"{base}/fd/{fd}")
for name in ("/proc/mounts", "/proc/cmdline", "/proc/self/mountinfo"):
    seen[name] = read(name)
seen["environment"] = dict(os.environ)
seen["cwd"] = os.getcwd()
seen["realpath /bot"] = os.path.realpath("/bot")
names = []
for top, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
    for name in dirs + files:
        path = os.path.join(top, name)
        names.append(path)
        if os.path.islink(path):
            seen[f"link {path}"] = link(path)
seen["files"] = names
print(json.dumps({"seen": seen, "act": "host_paths"}), flush=True)
