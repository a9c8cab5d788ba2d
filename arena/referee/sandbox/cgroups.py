"""Control groups for sandboxed bots: one group per slot, for memory, processes, CPU and freezing.

:mod:`.cgrouplayout` finds where groups may be made (v1 hierarchies, or the referee's home
group on v2). Groups are created under ``<that directory>/<base name>/<slot name>``. Only
root can create them; the sandbox joins a bot's first process to its group *before* dropping
privileges, so every process the bot starts is accounted and limited there. On v2, CPU
accounting (``cpu.stat``), freezing (``cgroup.freeze``) and kill-all (``cgroup.kill``) are
core features.

Privileged: every write to the cgroup filesystems, and the kill-all of a group, is here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from arena.referee.errors import InfrastructureError
from arena.referee.sandbox.cgrouplayout import (
    REFEREE_GROUP,
    V1_CONTROLLERS,
    V2_CONTROLLERS,
    CgroupLayout,
    detect,
)

__all__ = [
    "V1_CONTROLLERS",
    "V2_CONTROLLERS",
    "CgroupError",
    "CgroupLayout",
    "SlotCgroup",
    "detect",
    "prepare_base",
]


class CgroupError(OSError, InfrastructureError):
    """A cgroup operation failed (the message says which file). An OSError first, so that its
    errno is kept and callers that catch OSError still do."""


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path, text: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot write {text!r} to {path}: {exc.strerror}") from exc


def _keyed(path: Path, key: str) -> int:
    """The value of ``key`` in a flat keyed file (``memory.events``, ``pids.events`` ...)."""
    try:
        text = _read(path)
    except OSError:
        return 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def prepare_base(layout: CgroupLayout, base: str) -> None:
    """Create ``<directory>/<base>`` everywhere (and, on v2, delegate the controllers to it)."""
    wanted = " ".join(f"+{c}" for c in V2_CONTROLLERS)
    for hierarchy in layout.hierarchies():
        if layout.version == 2:
            _delegate(hierarchy, wanted)
        path = hierarchy / base
        try:
            path.mkdir(exist_ok=True)
        except OSError as exc:
            raise CgroupError(exc.errno, f"cannot create {path}: {exc.strerror}") from exc
        if layout.version == 2:
            _write(path / "cgroup.subtree_control", wanted)


def _delegate(home: Path, wanted: str) -> None:
    """Enable ``wanted`` for the children of ``home`` (v2).

    v2 refuses (EBUSY) while processes sit in a non-root group: the worker's own processes
    (this one, its pool, a container's init) move into the leaf ``home/arena-referees`` first.
    Processes started meanwhile join ``home`` after the move, so move until none is left.
    """
    try:
        _write(home / "cgroup.subtree_control", wanted)
        return
    except CgroupError as exc:
        if exc.errno != errno.EBUSY:
            raise
    leaf = home / REFEREE_GROUP
    try:
        leaf.mkdir(exist_ok=True)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot create {leaf}: {exc.strerror}") from exc
    for _ in range(20):
        pids = _read(home / "cgroup.procs").split()
        for pid in pids:
            with contextlib.suppress(CgroupError):  # it exited meanwhile
                _write(leaf / "cgroup.procs", pid)
        try:
            _write(home / "cgroup.subtree_control", wanted)
            return
        except CgroupError as exc:
            if exc.errno != errno.EBUSY:
                raise
    _write(home / "cgroup.subtree_control", wanted)


class SlotCgroup:
    """The control group(s) of one sandbox slot.

    Create it with :meth:`create`, join the bot's first process with :meth:`join`, read the
    counters while it runs, and :meth:`destroy` it (kills what is left, then removes it).
    """

    def __init__(self, layout: CgroupLayout, base: str, name: str) -> None:
        self.layout = layout
        self.base = base
        self.name = name
        if layout.version == 1:
            self._dirs = {c: layout.mount(c) / base / name for c in V1_CONTROLLERS}
        else:
            directory = layout.mount("memory") / base / name
            self._dirs = {c: directory for c in (*V2_CONTROLLERS, "cpuacct", "freezer")}

    @property
    def directories(self) -> tuple[Path, ...]:
        """Every directory of this group (one on v2, four on v1)."""
        return tuple(dict.fromkeys(self._dirs.values()))

    def exists(self) -> bool:
        """Whether any directory of the group is present."""
        return any(d.exists() for d in self.directories)

    def create(self, *, memory_bytes: int, max_tasks: int) -> None:
        """Create the group with its limits; a leftover group of the same name is destroyed."""
        if self.exists():
            self.destroy()
        created: list[Path] = []
        try:
            for directory in self.directories:
                try:
                    directory.mkdir()
                except FileNotFoundError:
                    # The parent group was removed meanwhile (an idle sandbox's teardown).
                    prepare_base(self.layout, self.base)
                    directory.mkdir()
                created.append(directory)
            memory = self._dirs["memory"]
            if self.layout.version == 1:
                _write(memory / "memory.limit_in_bytes", str(memory_bytes))
                if (memory / "memory.memsw.limit_in_bytes").exists():
                    # No swapping around the limit: memory+swap gets the same bound.
                    _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
            else:
                _write(memory / "memory.max", str(memory_bytes))
                if (memory / "memory.swap.max").exists():
                    _write(memory / "memory.swap.max", "0")
                # One out-of-memory kill takes the whole bot, not a random process of it.
                _write(memory / "memory.oom.group", "1")
            _write(self._dirs["pids"] / "pids.max", str(max_tasks))
        except OSError as exc:
            for directory in reversed(created):
                with contextlib.suppress(OSError):
                    directory.rmdir()
            if isinstance(exc, CgroupError):
                raise
            raise CgroupError(exc.errno, f"cannot create cgroup {self.name}: {exc}") from exc

    def procs_files(self) -> tuple[Path, ...]:
        """The ``cgroup.procs`` files a process must be written to, to join the group."""
        return tuple(d / "cgroup.procs" for d in self.directories)

    def join(self, pid: int) -> None:
        """Move process ``pid`` into the group (every hierarchy)."""
        for procs in self.procs_files():
            _write(procs, str(pid))

    def pids(self) -> set[int]:
        """Every process currently in the group."""
        found: set[int] = set()
        for procs in self.procs_files():
            try:
                found.update(int(p) for p in _read(procs).split())
            except (OSError, ValueError):
                continue
        return found

    def cpu_ns(self) -> int:
        """CPU time used by every process ever in the group, in nanoseconds."""
        if self.layout.version == 1:
            try:
                return int(_read(self._dirs["cpuacct"] / "cpuacct.usage"))
            except (OSError, ValueError):
                return 0
        return _keyed(self._dirs["cpuacct"] / "cpu.stat", "usage_usec") * 1000

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the memory limit."""
        if self.layout.version == 1:
            return _keyed(self._dirs["memory"] / "memory.oom_control", "oom_kill")
        return _keyed(self._dirs["memory"] / "memory.events", "oom_kill")

    def pids_limit_hits(self) -> int:
        """How many fork/clone calls the pids limit refused."""
        return _keyed(self._dirs["pids"] / "pids.events", "max")

    def freeze(self, timeout: float = 1.0) -> bool:
        """Stop every process of the group; return whether they were all stopped in time."""
        if self.layout.version == 1:
            state = self._dirs["freezer"] / "freezer.state"
            _write(state, "FROZEN")
            return self._wait(lambda: _read(state).strip() == "FROZEN", timeout)
        _write(self._dirs["freezer"] / "cgroup.freeze", "1")
        events = self._dirs["freezer"] / "cgroup.events"
        return self._wait(lambda: _keyed(events, "frozen") == 1, timeout)

    def thaw(self) -> None:
        """Let the group's processes run again."""
        if self.layout.version == 1:
            _write(self._dirs["freezer"] / "freezer.state", "THAWED")
        else:
            _write(self._dirs["freezer"] / "cgroup.freeze", "0")

    @staticmethod
    def _wait(condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        delay = 0.0002
        while True:
            try:
                if condition():
                    return True
            except OSError:
                return False
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.01)

    def kill_all(self) -> None:
        """Send SIGKILL to every process in the group (and let frozen ones die)."""
        if self.layout.version == 2:
            kill_file = self._dirs["memory"] / "cgroup.kill"
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    _write(kill_file, "1")
        for pid in self.pids():
            _kill_if_in(pid, self.procs_files())
        with contextlib.suppress(OSError):
            self.thaw()

    def empty(self) -> bool:
        """Whether no process is left in the group."""
        return not self.pids()

    def destroy(self, timeout: float = 5.0) -> bool:
        """Kill what is left and remove the group; return whether it is entirely gone."""
        if not self.exists():
            return True
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while True:
            if self.exists():
                self.kill_all()
            remaining = False
            for directory in self.directories:
                try:
                    directory.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    # EBUSY while the last processes are still exiting.
                    if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY):
                        raise CgroupError(exc.errno, f"cannot remove {directory}: {exc}") from exc
                    remaining = True
            if not remaining:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.02)


def _kill_if_in(pid: int, procs_files: tuple[Path, ...]) -> None:
    """SIGKILL ``pid`` if it is still in the group (a pidfd pins it against pid reuse)."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        still_member = any(str(pid) in _read(p).split() for p in procs_files)
        if still_member:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pidfd)
