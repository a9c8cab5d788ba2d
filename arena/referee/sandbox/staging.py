"""Staged copies: read-only copies of bot folders the slot uids cannot read where they are.

A root referee's bot folders may sit under a ``0700`` parent or hold ``0600`` files; the slot
uids could not read them through the bind mount. Such a folder is copied once per content into
the sandbox's staging folder, readable by all, and bound instead. So is a folder that holds a
special file (a unix socket, a FIFO, a device): the copy leaves it out, since a bot may connect
to a socket or open a FIFO through a read-only bind, and talk to whoever listens on the host.
A root referee stages *every* folder it binds, on a tmpfs of its own (:mod:`.mounts`): a bind
mount shows the bot, in ``/proc/self/mountinfo``, the path of its source within the source's
file system, which for a folder bound as it is names the host's folders (the bot cache, the
repository), and for a copy on this tmpfs only a random name.
Also here: the state folder and its fallback for a referee that is not root.

Not privileged: it copies files with the referee's own rights and changes no owner.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import secrets
import shutil
import stat
import threading
from pathlib import Path

from arena.referee.sandbox.settings import DEFAULT_STATE_DIR, IDLE_STAGED_COPIES

__all__ = ["StagingArea", "remove", "stage_copy", "state_dir", "traversable_by_others"]


def traversable_by_others(path: Path) -> bool:
    """Whether another uid may pass through ``path`` and every parent (the x bit)."""
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in (path, *path.parents))


def tree_state(path: Path) -> tuple[bool, str]:
    """Whether ``path`` can be bound as is (another uid can read all of it and it holds no
    special file), and a signature of its contents."""
    readable = all(os.stat(p).st_mode & stat.S_IXOTH for p in path.parents)
    entries: list[str] = []

    def note(p: Path, st: os.stat_result) -> None:
        nonlocal readable
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            readable &= bool(mode & stat.S_IROTH and mode & stat.S_IXOTH)
        elif stat.S_ISREG(mode):
            readable &= bool(mode & stat.S_IROTH)
        elif not stat.S_ISLNK(mode):
            readable = False  # a socket, FIFO or device: only a copy without it is bound
        entries.append(f"{p.relative_to(path)}\0{mode:o}\0{st.st_size}\0{st.st_mtime_ns}")

    note(path, os.lstat(path))
    if path.is_dir():
        for directory, dirnames, filenames in os.walk(path):
            for name in sorted(dirnames) + sorted(filenames):
                p = Path(directory, name)
                note(p, os.lstat(p))
    return bool(readable), "\n".join(entries)


def stage_copy(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` readable by all: dirs 0755, files 0644 (0755 if executable).

    Symlinks are copied as links (never followed, so nothing outside the folder is read),
    special files are skipped, and so are files not owned by the folder's owner (a hard link
    to someone else's file must not be published).
    """
    owner = os.lstat(source).st_uid

    def copy_file(src: Path, dst: Path, st: os.stat_result) -> None:
        if st.st_uid != owner:
            return
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fin, open(dst, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        os.chmod(dst, 0o755 if st.st_mode & 0o111 else 0o644)

    st = os.lstat(source)
    if stat.S_ISREG(st.st_mode):
        copy_file(source, target, st)
        return
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    for directory, dirnames, filenames in os.walk(source):
        relative = Path(directory).relative_to(source)
        for name in dirnames + filenames:
            src = Path(directory, name)
            dst = target / relative / name
            st = os.lstat(src)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(src), dst)
            elif stat.S_ISDIR(st.st_mode):
                dst.mkdir(mode=0o755)
                os.chmod(dst, 0o755)
            elif stat.S_ISREG(st.st_mode):
                copy_file(src, dst, st)
        dirnames[:] = [d for d in dirnames if not os.path.islink(Path(directory, d))]


class StagingArea:
    """Read-only copies of folders: one per content, shared by the bots that use it, kept a
    while after the last one ends (:data:`IDLE_STAGED_COPIES`). Each has a random name.

    With ``always`` every folder is copied (the area is a tmpfs of its own, see the module's
    docstring); otherwise only those the slot uids cannot read or that hold special files.
    ``bound_as`` is where bubblewrap finds ``directory`` (its mount namespace may differ from
    ours); the copies :meth:`acquire` returns are named under it.
    """

    def __init__(
        self, directory: Path, *, always: bool = False, bound_as: Path | None = None
    ) -> None:
        self.directory = directory
        self.bound_as = directory if bound_as is None else bound_as
        self.always = always
        self._lock = threading.Lock()
        self._copies: dict[str, Path] = {}
        self._keys: dict[Path, str] = {}
        self._users: dict[Path, int] = {}
        self._idle: collections.OrderedDict[Path, None] = collections.OrderedDict()

    def acquire(self, host: Path) -> Path | None:
        """A copy of ``host`` to bind instead of it, or None when it can be bound as is."""
        readable, signature = tree_state(host)
        if readable and not self.always:
            return None
        key = hashlib.sha256(f"{host}\0{signature}".encode()).hexdigest()
        with self._lock:
            known = self._copies.get(key)
            if known is not None and self._take(known):
                return known
        target = self.bound_as / secrets.token_hex(16)
        partial = self.directory / f".{target.name}"
        try:
            stage_copy(host, partial)
            with self._lock:
                known = self._copies.get(key)
                if known is not None and self._take(known):
                    return known
                os.rename(partial, self.directory / target.name)
                self._copies[key] = target
                self._keys[target] = key
                self._users[target] = 1
        finally:
            remove(partial)
        return target

    def _take(self, target: Path) -> bool:
        if target in self._users or target in self._idle:
            self._idle.pop(target, None)
            self._users[target] = self._users.get(target, 0) + 1
            return True
        return False

    def release(self, target: Path) -> None:
        """One bot no longer uses ``target``; evict the oldest unused copies."""
        evicted: list[Path] = []
        with self._lock:
            self._users[target] -= 1
            if self._users[target] == 0:
                del self._users[target]
                self._idle[target] = None
            while len(self._idle) > IDLE_STAGED_COPIES:
                victim, _ = self._idle.popitem(last=False)
                self._copies.pop(self._keys.pop(victim), None)
                trash = self.directory / f".trash-{secrets.token_hex(4)}"
                os.rename(self.directory / victim.name, trash)
                evicted.append(trash)
        for trash in evicted:
            remove(trash)


def remove(path: Path) -> None:
    """Remove a file or a folder tree if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def state_dir(configured: str) -> Path:
    """The state directory, or a private fallback for a non-root referee (see DEFAULT_STATE_DIR)."""
    path = Path(configured)
    try:
        path.mkdir(mode=0o711, parents=True, exist_ok=True)
        return path
    except PermissionError:
        if os.geteuid() == 0 or configured != DEFAULT_STATE_DIR:
            raise
    base = os.environ.get("XDG_RUNTIME_DIR")
    fallback = Path(base) / "yinsh-arena" if base else Path(f"/tmp/yinsh-arena-{os.getuid()}")
    fallback.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(fallback)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PermissionError(f"{fallback} is not a folder of uid {os.getuid()}")
    return fallback
