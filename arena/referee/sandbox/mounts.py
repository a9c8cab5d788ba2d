"""A tmpfs for the staged copies, in a mount namespace of the spawner thread's own.

Privileged: a root referee's spawner thread (:mod:`.spawn`) leaves the host's mount namespace
for one of its own and mounts a tmpfs there; every bubblewrap it starts inherits that view, and
the referee's other threads reach the tmpfs through ``/proc/self/task/TID/root``. What a bot
can read of a bind mount in ``/proc/self/mountinfo`` is the path of its source within the
source's file system: for a folder of this tmpfs, ``/`` and a random name, nothing of the host's
folders. The namespace, and the tmpfs with it, ends with the thread and the processes started
from it: nothing is left mounted on the host, whatever happens to the referee.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

__all__ = ["private_tmpfs"]

_CLONE_NEWNS = 0x00020000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def private_tmpfs(path: Path, *, mode: int = 0o711) -> None:
    """Move the calling thread to a mount namespace of its own, where nothing propagates to or
    from the host, and mount an empty tmpfs on the folder ``path`` there (no devices, no
    set-uid programs).

    Raises OSError where the referee may not (no ``CAP_SYS_ADMIN``, as in a container).
    """
    _check(_libc.unshare(_CLONE_NEWNS), "unshare the mount namespace")
    _check(_libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make mounts private")
    options = f"mode={mode:o}".encode()
    _check(
        _libc.mount(b"yinsh-staging", os.fsencode(path), b"tmpfs", _MS_NOSUID | _MS_NODEV, options),
        f"mount a tmpfs on {path}",
    )
