"""Slots: one unprivileged host uid (and cgroup name) per concurrently running bot.

Privileged: a root referee's slot locks are host-wide (:data:`HOST_SLOT_LOCKS`), so that no
two referees on a host ever run bots as the same uid, and a referee only sweeps slots that no
live referee holds.
"""

from __future__ import annotations

import fcntl
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.referee.sandbox.settings import SlotsExhausted

__all__ = ["Slot", "SlotPool"]


@dataclass(frozen=True)
class Slot:
    """One slot: its index in the pool and the host uid its bot runs as."""

    index: int
    uid: int

    @property
    def name(self) -> str:
        """The slot's cgroup name."""
        return f"slot-{self.uid}"


class SlotPool:
    """Slots this sandbox may use. A slot is ours while we hold the flock on its lock file.

    Locks are taken on first use and kept until :meth:`close` (a freed slot stays leased for
    the next bot): closing a lock while another thread is forking would leave the lock held
    by the child for a moment, and another launch would find the slot taken. flock() locks
    belong to the open file, so two sandboxes conflict even within one process, and a
    referee's locks vanish with it, however it dies.
    """

    def __init__(self, directory: Path, first_uid: int, count: int) -> None:
        self._directory = directory
        self._first_uid = first_uid
        self._count = count
        self._lock = threading.Lock()
        self._leases: dict[int, int] = {}  # slot index -> descriptor holding its flock
        self._busy: set[int] = set()
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)

    def try_lock(self, index: int) -> int | None:
        """Lock slot ``index`` if no sandbox holds it; return the lock's descriptor."""
        path = self._directory / f"{self._first_uid + index}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def acquire(self) -> Slot:
        """A free slot, locked for this pool; raises :class:`SlotsExhausted`."""
        with self._lock:
            index = next((i for i in self._leases if i not in self._busy), None)
            if index is None:
                for candidate in range(self._count):
                    if candidate not in self._leases:
                        fd = self.try_lock(candidate)
                        if fd is not None:
                            self._leases[candidate] = fd
                            index = candidate
                            break
            if index is None:
                raise SlotsExhausted(f"all {self._count} sandbox slots are in use")
            self._busy.add(index)
            return Slot(index, self._first_uid + index)

    def release(self, slot: Slot) -> None:
        """The slot is clean again: the next bot may use it."""
        with self._lock:
            self._busy.discard(slot.index)

    def close(self) -> None:
        """Drop every lock of the pool."""
        with self._lock:
            for fd in self._leases.values():
                os.close(fd)
            self._leases.clear()
            self._busy.clear()
