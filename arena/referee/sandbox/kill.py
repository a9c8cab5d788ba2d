"""Killing processes by pid and by uid.

Privileged: a root referee kills the processes of the slot uids here (and only here, outside
the cgroup kill-all of :mod:`.cgroups`). Every kill pins its target with a pidfd and checks
again that it is still the process meant, so a reused pid is never hit.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from arena.referee.sandbox.procfs import processes_of_uids, real_uid

__all__ = ["kill_pid", "kill_uid"]


def kill_pid(pid: int, check: Callable[[int], bool]) -> None:
    """SIGKILL ``pid`` if ``check(pid)`` still holds, pinning the process with a pidfd."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if check(pid):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pidfd)


def kill_uid(uid: int, timeout: float) -> bool:
    """Kill every process whose real uid is ``uid``; return whether none is left."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        pids = processes_of_uids(range(uid, uid + 1)).get(uid, [])
        if not pids:
            return True
        if time.monotonic() >= deadline:
            return False
        for pid in pids:
            kill_pid(pid, lambda p: real_uid(p) == uid)
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
