"""A worker's cache folders of bots (unpacked uploads, builds): use, last use, eviction.

Each entry of such a folder is a folder named by a content hash (``<folder>/<key>``); a worker
makes it the first time it runs that bot and may run it for ever after. Without eviction the
caches only grow (a build can be many times the size of its upload, in every worker). Here:

* :func:`lease` marks an entry in use while a game (or a check) runs it: a shared ``flock`` on
  ``<folder>/.<key>.use``, whose modification time is the entry's last use (written when the
  lease is taken and when it ends). A process that dies drops its leases with it.
* :func:`evict` removes the entries unused for ``idle_s`` seconds, then, while the folders hold
  more than ``max_bytes``, the least recently used ones; never an entry under a lease (it takes
  the lock exclusively, without waiting, and skips the entry when it cannot), and never half of
  one (the entry is renamed away under the lock, then deleted).

Plain Python, safe between the processes of one machine that share the folders.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EvictReport", "evict", "lease"]

log = logging.getLogger(__name__)

_USE = ".use"
#: Leftovers of a process that died while writing: an unpacking, a build, an eviction.
_TEMPORARY = (".unpack-", ".build-", ".evict-")


def _use_file(folder: Path, key: str) -> Path:
    return folder / f".{key}{_USE}"


def _lock(path: Path, how: int) -> int:
    """An open descriptor of ``path`` locked with ``how`` (``flock``). Raises BlockingIOError
    with ``LOCK_NB`` when someone else holds it. The file may be deleted by an eviction while
    we wait for it: then the lock is on a file nobody else will see, so try again."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, how)
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)


@contextlib.contextmanager
def lease(folder: Path, key: str) -> Iterator[None]:
    """Hold the entry ``key`` of ``folder`` in use (it need not exist yet): :func:`evict`
    leaves it alone until the block ends. Records its last use when the block starts and
    ends."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = _lock(_use_file(folder, key), fcntl.LOCK_SH)
    try:
        os.utime(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.utime(fd)
        os.close(fd)


@dataclass
class EvictReport:
    """What one eviction did: the entries removed (``folder/key``), the bytes they held, the
    entries it had to keep because a game was running them, and the bytes left."""

    removed: list[str] = field(default_factory=list)
    freed_bytes: int = 0
    in_use: list[str] = field(default_factory=list)
    left_bytes: int = 0


@dataclass
class _Entry:
    folder: Path
    key: str
    last_use: float
    size: int

    @property
    def name(self) -> str:
        return f"{self.folder.name}/{self.key}"


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return None


def _last_use(folder: Path, key: str, *, use_file: bool = True) -> float:
    times = [_mtime(folder / key), _mtime(_use_file(folder, key)) if use_file else None]
    return max((t for t in times if t is not None), default=0.0)


def _size(path: Path) -> int:
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(directory, name)).st_size
    return total


def _entries(folder: Path) -> list[_Entry]:
    try:
        children = list(folder.iterdir())
    except FileNotFoundError:
        return []
    return [
        _Entry(folder, p.name, _last_use(folder, p.name), _size(p))
        for p in children
        if not p.name.startswith(".") and p.is_dir() and not p.is_symlink()
    ]


def _remove(entry: _Entry, *, idle_before: float | None) -> bool:
    """Remove the entry unless it is leased (or, with ``idle_before``, used since then)."""
    folder, key = entry.folder, entry.key
    use = _use_file(folder, key)
    had_use_file = use.exists()
    try:
        fd = _lock(use, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    try:
        # A lease taken and given back since the entries were listed: used, not idle. (A use
        # file just made by our own lock says nothing.)
        if idle_before is not None and _last_use(folder, key, use_file=had_use_file) >= (
            idle_before
        ):
            return False
        grave = folder / f".evict-{key}-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(folder / key, grave)
        except FileNotFoundError:
            return False
        use.unlink(missing_ok=True)
    finally:
        os.close(fd)
    shutil.rmtree(grave, ignore_errors=True)
    return True


def _remove_leftovers(folder: Path, before: float) -> None:
    """Entries an eviction renamed away but did not finish deleting, and unpackings and builds
    left half-done before ``before`` by processes that died."""
    try:
        children = list(folder.iterdir())
    except FileNotFoundError:
        return
    for p in children:
        if not p.name.startswith(_TEMPORARY) or not p.is_dir():
            continue
        if p.name.startswith(".evict-") or (_mtime(p) or before) < before:
            shutil.rmtree(p, ignore_errors=True)


def evict(
    folders: Sequence[Path],
    *,
    idle_s: float,
    max_bytes: int = 0,
    now: float | None = None,
) -> EvictReport:
    """Remove the entries of ``folders`` unused for ``idle_s`` seconds (0: none for that),
    then the least recently used until they hold at most ``max_bytes`` in all (0: no cap).
    Leased entries stay, whatever their age or size."""
    now = time.time() if now is None else now
    report = EvictReport()
    entries = [e for folder in folders for e in _entries(folder)]
    kept: list[_Entry] = []
    for folder in folders:
        _remove_leftovers(folder, now - idle_s if idle_s > 0 else -float("inf"))
    for entry in sorted(entries, key=lambda e: e.last_use):
        idle = idle_s > 0 and entry.last_use < now - idle_s
        if idle and _remove(entry, idle_before=now - idle_s):
            report.removed.append(entry.name)
            report.freed_bytes += entry.size
        else:
            if idle:
                report.in_use.append(entry.name)
            kept.append(entry)
    total = sum(e.size for e in kept)
    if max_bytes > 0 and total > max_bytes:
        for entry in list(kept):  # least recently used first
            if total <= max_bytes:
                break
            if _remove(entry, idle_before=None):
                report.removed.append(entry.name)
                report.freed_bytes += entry.size
                total -= entry.size
                kept.remove(entry)
            elif entry.name not in report.in_use:
                report.in_use.append(entry.name)
    report.left_bytes = total
    return report
