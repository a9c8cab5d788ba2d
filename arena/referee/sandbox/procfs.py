"""Reading the process table from ``/proc``: parents, CPU ticks, descendants, real uids.

Pure: it only reads ``/proc`` and changes nothing (the killing is in :mod:`.kill`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "CLOCK_TICKS",
    "ProcEntry",
    "children",
    "descendants",
    "exiting",
    "parent_pid",
    "proc_table",
    "processes_of_uids",
    "real_uid",
]

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
"""Kernel clock ticks per second (the unit of CPU times in ``/proc/PID/stat``)."""


@dataclass(frozen=True)
class ProcEntry:
    """One process of the table: its parent and the CPU ticks it and its reaped children used."""

    ppid: int
    ticks: int  # utime + stime + cutime + cstime


def proc_table() -> dict[int, ProcEntry]:
    """Every process's parent and CPU ticks (including reaped children)."""
    table: dict[int, ProcEntry] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(b")") + 2 :].split()
        try:
            table[int(name)] = ProcEntry(int(fields[1]), sum(int(x) for x in fields[11:15]))
        except (IndexError, ValueError):
            continue
    return table


def descendants(table: dict[int, ProcEntry], root: int) -> set[int]:
    """Every process below ``root`` in ``table`` (``root`` itself excluded)."""
    kids: dict[int, list[int]] = {}
    for pid, entry in table.items():
        kids.setdefault(entry.ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in kids.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


#: ``PF_EXITING`` in a process's flags (``/proc/PID/stat``): it is past its last instruction and
#: on its way out (the kernel releases its memory and leaves its cgroups before it becomes a
#: zombie, and that takes a while for a large process on a busy machine).
PF_EXITING = 0x4


def exiting(stat: bytes) -> bool:
    """Whether a ``/proc/PID/stat`` line is a dying process's (:data:`PF_EXITING`).

    >>> exiting(b"42 (py thon) R 1 42 42 0 -1 4194564 0 0")
    True
    >>> exiting(b"42 (python) S 1 42 42 0 -1 4194560 0 0")
    False
    """
    try:
        return bool(int(stat[stat.rfind(b")") + 2 :].split()[6]) & PF_EXITING)
    except (IndexError, ValueError):
        return False


def real_uid(pid: int) -> int | None:
    """Real uid of a live process; None if it is gone, a zombie or dying (nothing left to
    kill: a dying process has had its fatal signal)."""
    uid = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                    return None
                if line.startswith("Uid:"):
                    uid = int(line.split()[1])
                    break
        if uid is None:
            return None
        with open(f"/proc/{pid}/stat", "rb") as f:
            return None if exiting(f.read()) else uid
    except (OSError, ValueError, IndexError):
        return None


def processes_of_uids(uids: range) -> dict[int, list[int]]:
    """Map each uid in ``uids`` that owns live processes (by real uid) to their pids.

    Zombies are left out: they run nothing and hold no resources but a pid, and the one a
    bubblewrap sandbox leaves when its command exits by itself belongs to PID 1 to reap.
    """
    found: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            uid = real_uid(int(name))
            if uid is not None and uid in uids:
                found.setdefault(uid, []).append(int(name))
    return found


def parent_pid(pid: int) -> int | None:
    """The parent of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
        return int(text[text.rfind(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int]:
    """The children of ``pid`` (from the kernel's list, else from a scan of the table)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return sorted(p for p, e in proc_table().items() if e.ppid == pid)
    except (OSError, ValueError):
        return []
