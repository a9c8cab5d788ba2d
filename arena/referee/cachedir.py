"""A worker's cache folders of bots (unpacked uploads, builds): use, last use, eviction.

Each entry of such a folder is a folder named by a content hash (``<folder>/<key>``); a worker
makes it the first time it runs that bot and may run it for ever after. Without eviction the
caches only grow (a build can be many times the size of its upload, in every worker). Here:

* :func:`lease` marks an entry in use while a game (or a check) runs it: a shared ``flock`` on
  ``<folder>/.<key>.use``, whose modification time is the entry's last use (written when the
  lease is taken and when it ends). A process that dies drops its leases with it. The last
  lease of an entry that was never made (its unpacking or build failed) removes the file.
* :func:`locked` lets one process at a time make an entry (a build): an exclusive ``flock``
  on ``<folder>/.<key>.lock``, a file that exists only while someone holds or awaits it.
* :func:`evict` removes the entries unused for ``idle_s`` seconds, then, while the folders hold
  more than ``max_bytes``, the least recently used ones; never an entry under a lease (it takes
  the lock exclusively, without waiting, and skips the entry when it cannot), and never half of
  one (the entry is renamed away under the lock, then deleted). It also removes the lock
  and use files nobody holds that name no entry (left by processes that died).

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

__all__ = ["EvictReport", "evict", "lease", "locked"]

log = logging.getLogger(__name__)

_USE = ".use"
_LOCK = ".lock"
#: Leftovers of a process that died while writing: an unpacking, a build, an eviction.
_TEMPORARY = (".unpack-", ".build-", ".evict-")


def _use_file(folder: Path, key: str) -> Path:
    return folder / f".{key}{_USE}"


def _lock_file(folder: Path, key: str) -> Path:
    return folder / f".{key}{_LOCK}"


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
    use = _use_file(folder, key)
    fd = _lock(use, fcntl.LOCK_SH)
    try:
        os.utime(fd)
        yield
    finally:
        try:
            with contextlib.suppress(OSError):
                os.utime(fd)
            if not (folder / key).exists():
                _drop_unused(fd, use, folder / key)
        finally:
            os.close(fd)


def _drop_unused(fd: int, use: Path, entry: Path) -> None:
    """The end of a lease on an entry that does not exist: remove its use file, unless
    someone else still holds it (the lock becomes exclusive or nothing; the lease is ending
    anyway)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Not atomic: an eviction may have removed the file between the two locks.
        if os.stat(use).st_ino == os.fstat(fd).st_ino and not entry.exists():
            use.unlink()
    except OSError:  # held by another lease, or gone already
        pass


@contextlib.contextmanager
def locked(folder: Path, key: str) -> Iterator[None]:
    """Hold ``key`` of ``folder`` exclusively until the block ends (one build of an entry at
    a time, between the processes of the machine). The lock file is removed when the block
    ends: a process waiting for it then finds it gone and takes a new one."""
    path = _lock_file(folder, key)
    fd = _lock(path, fcntl.LOCK_EX)
    try:
        yield
    finally:
        try:
            path.unlink(missing_ok=True)
        finally:
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
    grave = folder / f".evict-{key}-{os.getpid()}-{time.monotonic_ns()}"
    removed = False
    try:
        # A lease taken and given back since the entries were listed: used, not idle. (A use
        # file just made by our own lock says nothing.)
        if idle_before is None or _last_use(folder, key, use_file=had_use_file) < idle_before:
            with contextlib.suppress(FileNotFoundError):
                os.rename(folder / key, grave)
                removed = True
        # Its use file goes with it, or when it was our own lock's, or its entry is gone.
        if removed or not had_use_file or not (folder / key).exists():
            use.unlink(missing_ok=True)
    finally:
        os.close(fd)
    if removed:
        shutil.rmtree(grave, ignore_errors=True)
    return removed


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


def _remove_stale_locks(folder: Path) -> None:
    """Lock files nobody holds, and use files nobody holds of entries that do not exist:
    left by processes that died while they held them."""
    try:
        children = list(folder.iterdir())
    except FileNotFoundError:
        return
    for p in children:
        name = p.name
        if not name.startswith(".") or name.startswith(_TEMPORARY):
            continue
        if not _stale(folder, name) or not p.is_file():
            continue
        try:
            fd = _lock(p, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held, or not ours to open
            continue
        try:
            if _stale(folder, name):
                p.unlink(missing_ok=True)
        finally:
            os.close(fd)


def _stale(folder: Path, name: str) -> bool:
    """Whether the file ``name`` of ``folder``, when nobody holds it, is garbage: a lock file,
    or the use file of an entry that does not exist."""
    if name.endswith(_LOCK):
        return len(name) > 1 + len(_LOCK)
    if name.endswith(_USE):
        key = name[1 : -len(_USE)]
        return bool(key) and not (folder / key).exists()
    return False


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
        _remove_stale_locks(folder)
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
