"""One running bot (:class:`BotProcess`) and what it holds of its sandbox (:class:`Lease`).

A bot holds a lease from the moment its launch begins: its slot, its cgroup, the staged copies
it binds, its scratch folder. Ending the bot gives all of it back through the lease, once.

Not privileged itself: killing and cgroup writes go through :mod:`.kill` and :mod:`.cgroups`.
"""

from __future__ import annotations

import contextlib
import enum
import os
import select
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.referee.sandbox import cgroups
from arena.referee.sandbox.kill import kill_pid, kill_uid
from arena.referee.sandbox.launch import SetupReport
from arena.referee.sandbox.monitor import Monitor, StderrPipe
from arena.referee.sandbox.procfs import (
    CLOCK_TICKS,
    ProcEntry,
    children,
    descendants,
    parent_pid,
    proc_table,
)
from arena.referee.sandbox.settings import ProtectionLevel, SandboxSettings
from arena.referee.sandbox.slots import Slot, SlotPool
from arena.referee.sandbox.staging import StagingArea

__all__ = ["BotProcess", "Lease", "Violation", "ViolationKind"]


class ViolationKind(enum.StrEnum):
    """What the sandbox itself stopped."""

    MEMORY = "memory"
    PROCESSES = "processes"
    CPU = "cpu"
    FILE_SIZE = "file_size"
    FORBIDDEN_SYSCALL = "forbidden_syscall"


@dataclass(frozen=True)
class Violation:
    """A limit the bot hit, with a message for the game record."""

    kind: ViolationKind
    message: str


class Lease:
    """What one bot holds of its sandbox, taken while it is launched and given back once.

    The sandbox makes it with the bot's slot and fills it during the launch (:meth:`stage`,
    :meth:`make_cgroup`, ``scratch``); :meth:`clear` makes sure no process of the bot is left
    (its cgroup's kill-all and removal, or a kill by uid), and :meth:`give_back` returns the
    rest: the slot and the staged copies only when the bot is known to be gone, the scratch
    folder always. ``on_return`` tells the sandbox the bot is gone.
    """

    def __init__(
        self,
        *,
        uid: int,
        slot: Slot | None = None,
        slots: SlotPool | None = None,
        staging: StagingArea | None = None,
        sweep_uid: bool = False,
        on_return: Callable[[Lease], None] | None = None,
    ) -> None:
        self.uid = uid
        """The host uid the bot runs as."""
        self.slot = slot
        self.cgroup: cgroups.SlotCgroup | None = None
        self.staged: list[Path] = []
        self.scratch: Path | None = None
        self._slots = slots
        self._staging = staging
        self._sweep_uid = sweep_uid
        self._on_return = on_return
        self._returned = False

    def stage(self, host: Path) -> Path:
        """``host``, or a staged copy of it when the slot uids cannot read it there."""
        if self._staging is None:
            return host
        copy = self._staging.acquire(host)
        if copy is None:
            return host
        self.staged.append(copy)
        return copy

    def make_cgroup(
        self, layout: cgroups.CgroupLayout, base: str, *, memory_bytes: int, max_tasks: int
    ) -> cgroups.SlotCgroup:
        """Create the slot's cgroup with its limits."""
        assert self.slot is not None and self.cgroup is None
        group = cgroups.SlotCgroup(layout, base, self.slot.name)
        group.create(memory_bytes=memory_bytes, max_tasks=max_tasks)
        self.cgroup = group
        return group

    def clear(self, timeout: float = 5.0) -> None:
        """Kill whatever the bot left (cgroup kill-all or, as root without one, its uid) and
        remove its cgroup. Raises RuntimeError when something survives."""
        if self.cgroup is not None:
            if not self.cgroup.destroy(timeout):
                raise RuntimeError(f"cgroup {self.cgroup.name} could not be removed")
        elif self._sweep_uid and not kill_uid(self.uid, timeout=timeout):
            raise RuntimeError(f"processes of uid {self.uid} survived")

    def give_back(self, *, clean: bool) -> None:
        """Return what the bot held. The slot and staged copies go back only when ``clean``
        (no process of the bot is left); otherwise they stay taken, never to be reused."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        if clean:
            if self.slot is not None and self._slots is not None:
                self._slots.release(self.slot)
                self.slot = None
            if self._staging is not None:
                for copy in self.staged:
                    self._staging.release(copy)
            self.staged = []
        if not self._returned:
            self._returned = True
            if self._on_return is not None:
                self._on_return(self)

    def abandon(self) -> None:
        """The launch failed before the bot started: remove its cgroup, give everything back."""
        if self.cgroup is not None:
            self.cgroup.destroy()
        self.give_back(clean=True)


def signal_status(returncode: int, *, bwrap: bool) -> int:
    """Popen-style status of the bot's main process.

    bwrap exits with 128 + N when the command died of signal N; report that as -N.
    """
    if bwrap and 128 < returncode <= 128 + 64:
        return -(returncode - 128)
    return returncode


class BotProcess:
    """One running bot. Always :meth:`kill` it (or close the sandbox) when done with it.

    ``stdin`` and ``stdout`` are raw pipe descriptors owned by this object: read and write
    them (non-blocking if you like) but never close them or wrap them in objects that close
    them; :meth:`kill` closes them and sets the attributes to -1. Standard error is drained
    by the sandbox itself (``stderr`` is -1): read it with :meth:`stderr_tail`.
    """

    pid: int
    """Host pid of the bot's sandbox (the bubblewrap process; the bot itself is inside)."""
    stdin: int
    stdout: int
    stderr: int
    level: ProtectionLevel
    uid: int
    """Host uid the bot runs as."""

    def __init__(
        self,
        *,
        popen: subprocess.Popen[bytes],
        setup: SetupReport | None,
        stdin: int,
        stdout: int,
        stderr: int,
        level: ProtectionLevel,
        settings: SandboxSettings,
        lease: Lease,
        monitor: Monitor,
    ) -> None:
        self._popen = popen
        self._setup = setup
        self.pid = popen.pid
        # Waiting on a pidfd wakes up the moment the process exits (Popen.wait(timeout) polls
        # with sleeps of up to 50 ms). Our unreaped child cannot be confused with another.
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except OSError:
            self._pidfd = -1
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = -1
        self._stderr = StderrPipe(stderr, settings.stderr_bytes)
        self.level = level
        self.uid = lease.uid
        self._lease = lease
        self._cgroup = lease.cgroup
        self._monitor = monitor
        self._settings = settings
        self._lock = threading.RLock()
        self._terminated = False  # processes killed (by kill() or the watchdog)
        self._finished = False  # kill() completed: lease given back, descriptors closed
        self._cpu_exceeded = False
        self._cpu_ns = 0
        self._max_ticks = 0
        self._oom_kills = 0
        self._pids_hits = 0
        self._paused = False

    def __repr__(self) -> str:
        return f"<BotProcess pid={self.pid} uid={self.uid} level={self.level.value}>"

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()

    @property
    def cgroup_directories(self) -> tuple[Path, ...]:
        """The bot's cgroup directories (empty below FULL)."""
        return self._cgroup.directories if self._cgroup else ()

    # -- what the monitor watches -------------------------------------------------------------

    @property
    def stderr_pipe(self) -> StderrPipe:
        """The bot's standard error, drained by the sandbox's monitor."""
        return self._stderr

    @property
    def terminated(self) -> bool:
        """Whether the bot's processes were killed (by :meth:`kill` or the watchdog)."""
        return self._terminated

    @property
    def needs_proc_table(self) -> bool:
        """Whether CPU time is estimated from ``/proc`` (no cgroup accounting)."""
        return self._cgroup is None

    # -- status -------------------------------------------------------------------------------

    def poll(self) -> int | None:
        """Exit status of the bot's main process (negative: killed by that signal), or None."""
        returncode = self._popen.poll()
        if returncode is None:
            return None
        return signal_status(returncode, bwrap=self.level is not ProtectionLevel.NONE)

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the main process; return :meth:`poll`."""
        self._wait_exit(timeout)
        return self.poll()

    def _wait_exit(self, timeout: float) -> bool:
        if self._popen.poll() is not None:
            return True
        pidfd = self._pidfd
        if pidfd >= 0:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            with contextlib.suppress(OSError):
                poller.poll(max(0.0, timeout) * 1000)
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._popen.wait(timeout)
        return self._popen.poll() is not None

    def cpu_seconds(self) -> float:
        """CPU time of the bot's whole process tree so far.

        Exact at FULL (cgroup accounting); at the other levels an estimate from /proc that
        includes every process still running and every child reaped inside the tree.
        """
        if self._cgroup is not None:
            if not self._finished:
                self._cpu_ns = max(self._cpu_ns, self._cgroup.cpu_ns())
            return self._cpu_ns / 1e9
        if not self._finished:
            self._update_ticks(proc_table())
        return self._max_ticks / CLOCK_TICKS

    def _update_ticks(self, table: dict[int, ProcEntry]) -> None:
        if self.pid not in table or self._popen.poll() is not None:
            return  # reaped: the pid may already belong to another process
        tree = descendants(table, self.pid) | {self.pid}
        self._max_ticks = max(self._max_ticks, sum(table[p].ticks for p in tree if p in table))

    def violation(self) -> Violation | None:
        """What the sandbox itself stopped, if anything (check it after any failure)."""
        settings = self._settings
        status = self.poll()
        if status == -signal.SIGSYS:
            return Violation(
                ViolationKind.FORBIDDEN_SYSCALL,
                "forbidden system call: the sandbox killed the bot for a system call of "
                "another ABI (32-bit x86 or ARM, or x32); bots run as 64-bit programs",
            )
        if status == -signal.SIGXFSZ:
            return Violation(
                ViolationKind.FILE_SIZE,
                f"file size limit of {settings.scratch_mb} MiB exceeded",
            )
        if self._cpu_exceeded or status == -signal.SIGXCPU:
            return Violation(
                ViolationKind.CPU, f"CPU time limit of {settings.cpu_seconds:g} s exceeded"
            )
        if self._cgroup is not None:
            if not self._finished:
                self._oom_kills = max(self._oom_kills, self._cgroup.oom_kills())
                self._pids_hits = max(self._pids_hits, self._cgroup.pids_limit_hits())
            if self._oom_kills:
                return Violation(
                    ViolationKind.MEMORY, f"memory limit of {settings.memory_mb} MiB exceeded"
                )
            if self._pids_hits:
                return Violation(
                    ViolationKind.PROCESSES,
                    f"process limit of {settings.max_processes} processes and threads exceeded",
                )
        return None

    def setup_failure(self, stderr_timeout: float = 1.0) -> str | None:
        """Why the sandbox could not start the bot's program at all, else None.

        Ask it once the bot's main process has ended (:meth:`poll` is not None) and after
        :meth:`violation`: while the bot runs, after the referee killed it, and at level NONE
        (no sandbox to set up) the answer is None. The evidence is bubblewrap's own status
        report, which the bot cannot forge (:class:`~.launch.SetupReport` says why); the words
        are bubblewrap's last line on the standard error (no code of the bot ran), read to its
        end for at most ``stderr_timeout`` seconds.
        """
        if self._setup is None or self._terminated:
            return None
        status = self._popen.poll()
        if status is None or self._setup.reached_exec():
            return None
        self._stderr.drain(stderr_timeout)
        said = [line.strip() for line in self._stderr.tail().splitlines() if line.strip()]
        why = f"bubblewrap ended with exit status {status} before starting the program"
        return f"{why}: {said[-1][:300]}" if said else why

    def close_stdin(self) -> None:
        """Close the bot's standard input (it reads end of file); ``stdin`` becomes -1."""
        with self._lock:
            if self.stdin >= 0:
                with contextlib.suppress(OSError):
                    os.close(self.stdin)
                self.stdin = -1

    # -- stderr -------------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        """The last ``stderr_bytes`` of the bot's standard error (decoded leniently)."""
        return self._stderr.tail()

    @property
    def stderr_bytes(self) -> int:
        """How many bytes the bot wrote to its standard error in all (only the tail is kept)."""
        return self._stderr.total

    def drain_stderr(self, timeout: float = 0.0) -> bool:
        """Read into :meth:`stderr_tail` what the bot wrote to its standard error so far, in
        this thread (the monitor thread may not have got to it yet); with a ``timeout``, for a
        bot that has ended, wait until the pipe's end of file (every process of the bot gone)
        for at most that long. Returns whether the end of file was reached."""
        return self._stderr.drain(timeout)

    # -- freezing -----------------------------------------------------------------------------

    def pause(self) -> None:
        """Stop every process of the bot (cgroup freezer); a no-op below FULL."""
        with self._lock:
            if self._cgroup is None or self._terminated:
                return
            self._cgroup.freeze()
            self._paused = True

    def resume(self) -> None:
        """Let a paused bot run again; a no-op below FULL."""
        with self._lock:
            if self._cgroup is None or self._terminated or not self._paused:
                return
            self._cgroup.thaw()
            self._paused = False

    # -- ending -------------------------------------------------------------------------------

    def watchdog(self, table: dict[int, ProcEntry] | None) -> None:
        """Kill the bot if its whole tree used more CPU time than allowed (monitor thread)."""
        if self._cgroup is None and table is not None:
            self._update_ticks(table)
            used = self._max_ticks / CLOCK_TICKS
        else:
            used = self.cpu_seconds()
        # Never block here: kill() holds the lock while it waits for this thread.
        if used > self._settings.cpu_seconds and self._lock.acquire(blocking=False):
            try:
                if not self._terminated:
                    self._cpu_exceeded = True
                    self._terminate()
            finally:
                self._lock.release()

    def _terminate(self) -> None:
        """SIGKILL every process of the bot. Descriptors, cgroups and the slot stay."""
        with self._lock:
            self._terminated = True
            if self.level is ProtectionLevel.NONE:
                self._terminate_plain()
                return
            # Kill the pid namespace's init (bwrap's child): the kernel then kills everything
            # in the namespace, and bwrap reaps it and exits, so no orphan is left to PID 1.
            # (Only while bwrap is unreaped: its pid cannot have been reused.)
            if self._popen.poll() is None:
                kids = children(self.pid)
                for child in kids:
                    kill_pid(child, lambda p: parent_pid(p) == self.pid)
                if not kids:
                    # bwrap has not forked yet: kill bwrap (or the shell before it) itself.
                    with contextlib.suppress(OSError):
                        self._popen.send_signal(signal.SIGKILL)
            if self._cgroup is not None:
                with contextlib.suppress(OSError):
                    self._cgroup.thaw()  # frozen processes die only once thawed

    def _terminate_plain(self) -> None:
        # The tree only while the main process is unreaped (its pid cannot be reused yet).
        tree = descendants(proc_table(), self.pid) if self._popen.poll() is None else set()
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        for pid in tree:
            kill_pid(pid, lambda p: True)
        with contextlib.suppress(OSError):
            self._popen.send_signal(signal.SIGKILL)

    def kill(self) -> None:
        """Kill the bot and everything it started, remove its cgroups and scratch, free its slot.

        Idempotent. Afterwards no process of the bot is left, even ones it detached with
        ``setsid`` or double forks, and ``stdin``/``stdout`` are closed (set to -1).
        """
        with self._lock:
            if self._finished:
                return
            try:
                self._terminate()
                if not self._wait_exit(5):
                    with contextlib.suppress(OSError):
                        self._popen.send_signal(signal.SIGKILL)
                    self._popen.wait(timeout=5)
                if self._cgroup is not None:
                    self._cpu_ns = max(self._cpu_ns, self._cgroup.cpu_ns())
                    self._oom_kills = max(self._oom_kills, self._cgroup.oom_kills())
                    self._pids_hits = max(self._pids_hits, self._cgroup.pids_limit_hits())
                self._lease.clear()
                self._finished = True
            finally:
                if self._finished and self._pidfd >= 0:
                    os.close(self._pidfd)
                    self._pidfd = -1
                for name in ("stdin", "stdout"):
                    fd = getattr(self, name)
                    if fd >= 0:
                        with contextlib.suppress(OSError):
                            os.close(fd)
                        setattr(self, name, -1)
                with contextlib.suppress(RuntimeError):  # never seen: the descriptor leaks
                    self._monitor.release_stderr(self)
                if self._setup is not None:
                    self._setup.close()
                self._lease.give_back(clean=self._finished)
