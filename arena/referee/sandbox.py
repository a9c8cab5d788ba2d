"""Launch one bot process inside a sandbox and report what the sandbox stopped it doing.

Bots are uploaded programs and are treated as hostile. :class:`Sandbox` starts each one in
layers (see ``docs/sandbox.md`` for the full account and the tests that prove each promise):

* its own unprivileged host uid per concurrently running bot (a *slot*), joined to its own
  cgroups (memory, pids, cpuacct, freezer) before privileges are dropped;
* bubblewrap with new user, pid, network, IPC, UTS, mount and cgroup namespaces, a read-only
  view of the system runtime and of the bot's folder (at ``/bot``), a sized private ``/tmp``,
  ``--die-with-parent``;
* a seccomp filter (:mod:`arena.referee.seccomp`) and rlimits;
* a watchdog thread that kills a bot whose whole process tree used too much CPU time, and
  drains its standard error.

Three protection levels exist (:class:`ProtectionLevel`); :func:`probe` finds the best one
this host offers. Start-up cost and the rest are measured by
``python -m arena.referee.sandbox bench``.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import ctypes
import enum
import fcntl
import functools
import hashlib
import math
import os
import pwd
import queue
import re
import resource
import secrets
import select
import selectors
import shlex
import shutil
import signal
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arena.referee import cgroups, seccomp

__all__ = [
    "HOST_SLOT_LOCKS",
    "BotProcess",
    "HostReport",
    "ProtectionLevel",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "SlotsExhausted",
    "Violation",
    "ViolationKind",
    "probe",
    "processes_of_uids",
]

_T = TypeVar("_T")

BOT_PATH = "/usr/local/bin:/usr/bin:/bin"
"""``PATH`` inside the sandbox."""

OPEN_FILES = 1024
"""RLIMIT_NOFILE of every bot."""

DEFAULT_STATE_DIR = "/var/lib/yinsh-arena/sandbox"
"""The default ``state_dir``. A referee that is not root and cannot create it falls back to a
private folder of its own (``$XDG_RUNTIME_DIR/yinsh-arena`` or ``/tmp/yinsh-arena-UID``)."""

IDLE_STAGED_COPIES = 8
"""Staged copies of bot folders kept after their last bot ended, for the next game."""

HOST_SLOT_LOCKS = "/run/yinsh-arena/slots"
"""Where a root referee locks its slots. Slot uids and cgroups are host-wide, so the locks
are too: referees with different ``state_dir`` settings never take the same slot, and a
referee only ever sweeps slots no live referee holds."""

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Host /etc entries a dynamically linked runtime needs (loader cache, time zone, Debian's
# alternatives symlinks, the JDK's and Python's configuration). Everything else of /etc,
# including the real passwd and group files, stays hidden.
_ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives")
_ETC_GLOBS = ("java-*", "python3*")
_DEVICES = ("null", "zero", "full", "random", "urandom")
_RESERVED_INSIDE = ("/bot", "/tmp", "/proc", "/dev", "/etc", *_SYSTEM_DIRS)
_NSCD_FREE_NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"

# Every bot starts as `sh -c PREAMBLE sh [setpriv ...] bwrap ...`. The shell, still running
# as the referee, joins its own pid to the slot's cgroups and lowers its rlimits (builtins:
# no fork), then execs setpriv, which drops to the slot uid, then bwrap. Everything the bot
# starts later is born inside the cgroups and under the limits. This replaces preexec_fn,
# which is unsafe in a threaded parent; Popen(user=...) would drop privileges too early to
# join a root-owned cgroup, and this host's root may lack CAP_SYS_RESOURCE, which prlimit()
# on another uid's process needs.


class ProtectionLevel(enum.StrEnum):
    """How strongly bots are isolated; see ``docs/sandbox.md``."""

    FULL = "full"
    """Root: per-slot unprivileged uid, bubblewrap namespaces, seccomp, rlimits, cgroups."""
    NAMESPACE = "namespace"
    """Bubblewrap namespaces, seccomp and rlimits, but no cgroups."""
    NONE = "none"
    """A plain subprocess in its own process group: for trusted bots only."""

    @property
    def rank(self) -> int:
        """Order of strength: NONE < NAMESPACE < FULL."""
        return {"none": 0, "namespace": 1, "full": 2}[self.value]


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


class SandboxUnavailable(RuntimeError):
    """The requested protection is not available, or is inadequate for an untrusted bot."""


class SlotsExhausted(RuntimeError):
    """Every slot (per-bot uid and cgroup) is in use."""


@dataclass(frozen=True)
class SandboxSettings:
    """Limits and places. The defaults suit a worker running one or a few games at a time."""

    memory_mb: int = 512
    """Memory of the whole bot process tree (cgroup); RLIMIT_AS per process without cgroups."""
    max_processes: int = 32
    """Processes *and threads* of the bot, bubblewrap's two included (pids cgroup)."""
    scratch_mb: int = 64
    """Size of the private writable ``/tmp`` (a tmpfs) and RLIMIT_FSIZE."""
    cpu_seconds: float = 600.0
    """CPU time of the whole tree per bot process (a game), enforced by the watchdog."""
    stderr_bytes: int = 64 * 1024
    """How much of the end of the bot's standard error is kept."""
    readonly_paths: tuple[tuple[str, str], ...] = ()
    """Extra host paths bound read-only, as (host path, path inside) pairs."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables (name, value); nothing of the referee's environment leaks."""
    state_dir: str = DEFAULT_STATE_DIR
    """Staged copies of bot folders, scratch folders of NONE-level bots (and, without root,
    slot locks)."""
    first_uid: int = 64000
    """Host uid of slot 0; slot ``i`` runs as ``first_uid + i`` (root only)."""
    slots: int = 64
    """How many bots this sandbox may run at once (one uid and cgroup each)."""
    cgroup_name: str = "yinsh-arena"
    """Name of the parent cgroup created at the top of each hierarchy."""
    kill_unix_sockets: bool = False
    """Kill a bot that calls ``socket(AF_UNIX)`` instead of failing the call (EACCES)."""
    watchdog_interval: float = 0.05
    """Seconds between two CPU-time checks of each running bot."""

    def __post_init__(self) -> None:
        for name in ("memory_mb", "max_processes", "scratch_mb", "stderr_bytes", "slots"):
            if getattr(self, name) <= 0:
                raise ValueError(f"SandboxSettings.{name} must be positive")
        if not self.cpu_seconds > 0 or not self.watchdog_interval > 0:
            raise ValueError("SandboxSettings.cpu_seconds and watchdog_interval must be positive")
        if self.max_processes < 3:
            raise ValueError("SandboxSettings.max_processes must be at least 3 (bwrap uses 2)")
        if not 1000 <= self.first_uid <= 0xFFFFFFFF - self.slots:
            raise ValueError("SandboxSettings.first_uid must be an unprivileged uid")
        if not os.path.isabs(self.state_dir):
            raise ValueError("SandboxSettings.state_dir must be absolute")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.cgroup_name):
            raise ValueError("SandboxSettings.cgroup_name must be a plain name")
        paths = []
        for pair in self.readonly_paths:
            host, inside = (os.fspath(p) for p in pair)
            inside = os.path.normpath(inside)
            if not (os.path.isabs(host) and os.path.isabs(inside)):
                raise ValueError(f"readonly path {pair!r}: both paths must be absolute")
            if inside == "/" or any(
                inside == r or inside.startswith(r + "/") for r in _RESERVED_INSIDE
            ):
                raise ValueError(f"readonly path {pair!r}: {inside} is reserved in the sandbox")
            paths.append((host, inside))
        object.__setattr__(self, "readonly_paths", tuple(paths))
        for name, value in self.env:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or "\0" in value:
                raise ValueError(f"bad environment variable {name!r}")


@dataclass(frozen=True)
class HostReport:
    """What :func:`probe` found: the best protection level and one line per mechanism."""

    level: ProtectionLevel
    details: tuple[str, ...]

    def describe(self) -> str:
        """A paragraph for the referee's start-up log and ``checkbot``."""
        intro = {
            ProtectionLevel.FULL: (
                "Bots run at protection level FULL: each bot gets its own unprivileged host uid, "
                "bubblewrap namespaces (user, pid, network, IPC, UTS, mount, cgroup) with a "
                "read-only system view and a sized private /tmp, a seccomp filter, rlimits, and "
                "its own cgroups bounding memory, processes and whole-tree CPU time, with "
                "pause/resume by freezing. Untrusted bots are accepted."
            ),
            ProtectionLevel.NAMESPACE: (
                "Bots run at protection level NAMESPACE: bubblewrap namespaces, the seccomp filter "
                "and rlimits, but no cgroups. Missing: memory is bounded per process (RLIMIT_AS) "
                "rather than for the whole tree, and an out-of-memory kill cannot be reported; "
                "processes are bounded by RLIMIT_NPROC only when the referee runs as root (own "
                "uid per bot), otherwise not at all; whole-tree CPU time is estimated from /proc "
                "instead of being accounted by the kernel; pause() and resume() do nothing, so "
                "bots can think on the opponent's time. Untrusted bots are refused unless the "
                "development switch allows them."
            ),
            ProtectionLevel.NONE: (
                "Bots run at protection level NONE: a plain subprocess in its own process group, "
                "with rlimits only. The bot sees the whole filesystem and network as the "
                "referee's user, and processes it detaches from its group survive it. Only "
                "trusted bots run, unless the development switch allows others."
            ),
        }[self.level]
        return intro + " Found: " + "; ".join(self.details) + "."


# --------------------------------------------------------------------------------------------
# Host probing


@dataclass(frozen=True)
class _HostFacts:
    root: bool
    bwrap: str | None
    bwrap_works: bool
    cgroups: cgroups.CgroupLayout | None
    cgroups_usable: bool
    uid_conflicts: tuple[int, ...]
    setpriv: str | None
    report: HostReport


def _find_program(name: str) -> str | None:
    return shutil.which(name, path="/usr/bin:/bin:/usr/local/bin:/usr/sbin:/sbin")


def _landlock_abi() -> int:
    """Landlock ABI version, or 0 (reported for information; the levels do not use it)."""
    numbers = {"x86_64": 444, "aarch64": 444}
    number = numbers.get(os.uname().machine)
    if number is None:
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(number, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _system_binds() -> list[str]:
    """bwrap arguments for the read-only system runtime, mirroring the host's /usr layout."""
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    etc = Path("/etc")
    entries = [etc / name for name in _ETC_ENTRIES]
    for pattern in _ETC_GLOBS:
        entries += sorted(etc.glob(pattern))
    for entry in entries:
        if entry.exists():
            args += ["--ro-bind", str(entry), str(entry)]
    return args


_SYSTEM_BINDS: list[str] | None = None


def _system_bind_args() -> list[str]:
    global _SYSTEM_BINDS
    if _SYSTEM_BINDS is None:
        _SYSTEM_BINDS = _system_binds()
    return _SYSTEM_BINDS


def _probe_bwrap(bwrap: str, root: bool, kill_unix_sockets: bool) -> tuple[bool, str]:
    """Run a tiny sandbox for real; return whether it worked and a line saying how."""
    uid = 65534 if root else os.getuid()
    fds = _LaunchFds.open(uid, kill_unix_sockets)
    try:
        argv = _bwrap_argv(
            bwrap,
            bot_source=None,
            readonly=(),
            env=(("PATH", BOT_PATH),),
            scratch_bytes=1 << 20,
            fds=fds,
        )
        kwargs: dict[str, Any] = {}
        if root:
            kwargs = {"user": uid, "group": uid, "extra_groups": []}
        started = time.perf_counter()
        done = subprocess.run(
            [*argv, "--", "/bin/cat", "/proc/self/status"],
            pass_fds=fds.passed(),
            capture_output=True,
            timeout=10,
            env={},
            cwd="/",
            check=False,
            **kwargs,
        )
        elapsed = time.perf_counter() - started
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bubblewrap at {bwrap} could not run: {exc}"
    finally:
        fds.close_child_ends()
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        return False, (
            f"bubblewrap at {bwrap} failed (exit {done.returncode}: "
            f"{message[-1] if message else 'no message'}); unprivileged user namespaces may be "
            "disabled (sysctl, AppArmor, or a container's default seccomp profile)"
        )
    status = done.stdout.decode(errors="replace")
    if "\nSeccomp:\t2" not in status or "\nNoNewPrivs:\t1" not in status:
        return False, f"bubblewrap at {bwrap} ran, but the seccomp filter was not in force"
    return True, (
        f"bubblewrap at {bwrap} works unprivileged (user, pid, net, ipc, uts, mount, cgroup "
        f"namespaces; seccomp filter in force; {elapsed * 1000:.1f} ms)"
    )


def _probe_cgroups(layout: cgroups.CgroupLayout, base: str) -> tuple[bool, str]:
    probe_group = cgroups.SlotCgroup(layout, base, f"probe-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        cgroups.prepare_base(layout, base)
        probe_group.create(memory_bytes=64 << 20, max_tasks=8)
    except OSError as exc:
        return False, f"{layout.describe()}, but not writable: {exc}"
    finally:
        with contextlib.suppress(OSError):
            probe_group.destroy()
    return True, f"{layout.describe()}, writable (groups under {base}/)"


@functools.lru_cache(maxsize=8)
def _probe_host(first_uid: int, slots: int, cgroup_name: str, kill_unix: bool) -> _HostFacts:
    details: list[str] = []
    root = os.geteuid() == 0
    details.append(
        f"running as root: one host uid per slot ({first_uid}-{first_uid + slots - 1})"
        if root
        else f"running as uid {os.getuid()}, not root: no per-bot uids, no cgroups"
    )
    bwrap = _find_program("bwrap")
    bwrap_works = False
    if bwrap is None:
        details.append("bubblewrap (bwrap) is not installed")
    else:
        bwrap_works, line = _probe_bwrap(bwrap, root, kill_unix)
        try:
            version = subprocess.run(
                [bwrap, "--version"], capture_output=True, timeout=5, check=False
            ).stdout.decode()
        except (OSError, subprocess.SubprocessError):
            version = ""
        details.append(line + (f" [{version.strip()}]" if version.strip() else ""))
    layout, line = cgroups.detect()
    cgroups_usable = False
    if layout is not None and root:
        cgroups_usable, line = _probe_cgroups(layout, cgroup_name)
    elif layout is not None:
        line += ", but creating groups needs root"
    details.append(line)
    conflicts: tuple[int, ...] = ()
    if root:
        taken = []
        for uid in range(first_uid, first_uid + slots):
            with contextlib.suppress(KeyError):
                taken.append(f"{uid} ({pwd.getpwuid(uid).pw_name})")
                conflicts += (uid,)
        details.append(
            f"slot uids {first_uid}-{first_uid + slots - 1} belong to accounts: {', '.join(taken)}"
            if taken
            else f"slot uids {first_uid}-{first_uid + slots - 1} are unused by accounts"
        )
    setpriv = _find_program("setpriv")
    abi = _landlock_abi()
    details.append(f"Landlock ABI {abi} (not used)" if abi else "no Landlock (not used)")
    if os.getpid() == 1:
        details.append(
            "this process is PID 1: it must reap orphans (run the worker under an init, "
            "e.g. compose `init: true`)"
        )
    if root and setpriv is None:
        details.append("setpriv (util-linux) is missing: cannot drop to the slot uids")
    if root and bwrap_works and cgroups_usable and not conflicts and setpriv is not None:
        level = ProtectionLevel.FULL
    elif bwrap_works:
        level = ProtectionLevel.NAMESPACE
    else:
        level = ProtectionLevel.NONE
    return _HostFacts(
        root=root,
        bwrap=bwrap,
        bwrap_works=bwrap_works,
        cgroups=layout if cgroups_usable else None,
        cgroups_usable=cgroups_usable,
        uid_conflicts=conflicts,
        setpriv=setpriv,
        report=HostReport(level, tuple(details)),
    )


def _facts(settings: SandboxSettings) -> _HostFacts:
    return _probe_host(
        settings.first_uid, settings.slots, settings.cgroup_name, settings.kill_unix_sockets
    )


def probe(settings: SandboxSettings | None = None) -> HostReport:
    """Find the best protection level this host supports (cached per process).

    It runs a tiny bubblewrap sandbox with the seccomp filter, creates and removes a probe
    cgroup, and checks that the slot uids belong to no account.
    """
    return _facts(settings or SandboxSettings()).report


# --------------------------------------------------------------------------------------------
# Building a launch


@dataclass
class _LaunchFds:
    """Descriptors handed to bwrap: the seccomp program and generated /etc files."""

    seccomp: int
    etc: dict[str, int]

    @classmethod
    def open(cls, uid: int, kill_unix_sockets: bool) -> _LaunchFds:
        fds = cls(seccomp.filter_pipe(kill_unix_sockets=kill_unix_sockets), {})
        try:
            gid = uid
            files = {
                "/etc/passwd": (
                    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                    f"bot:x:{uid}:{gid}:bot:/tmp:/usr/sbin/nologin\n"
                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                ),
                "/etc/group": f"root:x:0:\nbot:x:{gid}:\nnogroup:x:65534:\n",
                "/etc/nsswitch.conf": _NSCD_FREE_NSSWITCH,
            }
            for path, text in files.items():
                fds.etc[path] = _data_pipe(text.encode())
        except BaseException:
            fds.close_child_ends()
            raise
        return fds

    def passed(self) -> tuple[int, ...]:
        return (self.seccomp, *self.etc.values())

    def close_child_ends(self) -> None:
        for fd in self.passed():
            with contextlib.suppress(OSError):
                os.close(fd)


def _data_pipe(data: bytes) -> int:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return read_end


def _bwrap_argv(
    bwrap: str,
    *,
    bot_source: str | None,
    readonly: Sequence[tuple[str, str]],
    env: Sequence[tuple[str, str]],
    scratch_bytes: int,
    fds: _LaunchFds,
) -> list[str]:
    """The bwrap command line (without ``--`` and the bot's command)."""
    argv = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "bot",
        "--clearenv",
    ]
    for name, value in env:
        argv += ["--setenv", name, value]
    argv += _system_bind_args()
    for path, fd in fds.etc.items():
        argv += ["--ro-bind-data", str(fd), path]
    argv += ["--proc", "/proc", "--size", "65536", "--tmpfs", "/dev"]
    for device in _DEVICES:
        argv += ["--dev-bind", f"/dev/{device}", f"/dev/{device}"]
    argv += [
        "--symlink", "/proc/self/fd", "/dev/fd",
        "--symlink", "/proc/self/fd/0", "/dev/stdin",
        "--symlink", "/proc/self/fd/1", "/dev/stdout",
        "--symlink", "/proc/self/fd/2", "/dev/stderr",
        # POSIX shared memory and semaphores live in the scratch tmpfs: sized, private, and
        # accounted with the bot's memory.
        "--symlink", "/tmp", "/dev/shm",
        "--remount-ro", "/dev",
        "--size", str(scratch_bytes), "--tmpfs", "/tmp",
    ]  # fmt: skip
    if bot_source is None:
        argv += ["--dir", "/bot"]
    else:
        argv += ["--ro-bind", bot_source, "/bot"]
    for host, inside in readonly:
        argv += ["--ro-bind", host, inside]
    argv += ["--remount-ro", "/", "--chdir", "/bot", "--seccomp", str(fds.seccomp)]
    return argv


# --------------------------------------------------------------------------------------------
# /proc helpers


@dataclass(frozen=True)
class _ProcEntry:
    ppid: int
    ticks: int  # utime + stime + cutime + cstime


def _proc_table() -> dict[int, _ProcEntry]:
    """Every process's parent and CPU ticks (including reaped children)."""
    table: dict[int, _ProcEntry] = {}
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
            table[int(name)] = _ProcEntry(int(fields[1]), sum(int(x) for x in fields[11:15]))
        except (IndexError, ValueError):
            continue
    return table


def _descendants(table: dict[int, _ProcEntry], root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, entry in table.items():
        children.setdefault(entry.ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _real_uid(pid: int) -> int | None:
    """Real uid of a live process; None if it is gone or a zombie (nothing left to kill)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                    return None
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def processes_of_uids(uids: range) -> dict[int, list[int]]:
    """Map each uid in ``uids`` that owns live processes (by real uid) to their pids.

    Zombies are left out: they run nothing and hold no resources but a pid, and the one a
    bubblewrap sandbox leaves when its command exits by itself belongs to PID 1 to reap.
    """
    found: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            uid = _real_uid(int(name))
            if uid is not None and uid in uids:
                found.setdefault(uid, []).append(int(name))
    return found


def _kill_pid(pid: int, check: Callable[[int], bool]) -> None:
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


def _kill_uid(uid: int, timeout: float) -> bool:
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
            _kill_pid(pid, lambda p: _real_uid(p) == uid)
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
        return int(text[text.rfind(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return sorted(p for p, e in _proc_table().items() if e.ppid == pid)
    except (OSError, ValueError):
        return []


# --------------------------------------------------------------------------------------------
# Slots


@dataclass(frozen=True)
class _Slot:
    index: int
    uid: int

    @property
    def name(self) -> str:
        return f"slot-{self.uid}"


class _SlotPool:
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

    def acquire(self) -> _Slot:
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
            return _Slot(index, self._first_uid + index)

    def release(self, slot: _Slot) -> None:
        """The slot is clean again: the next bot may use it."""
        with self._lock:
            self._busy.discard(slot.index)

    def close(self) -> None:
        with self._lock:
            for fd in self._leases.values():
                os.close(fd)
            self._leases.clear()
            self._busy.clear()


# --------------------------------------------------------------------------------------------
# Background threads


class _Spawner:
    """Runs every Popen of a sandbox on one long-lived thread.

    bubblewrap's ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked
    it exits, not the process: a bot launched from a short-lived game thread would be killed
    when that thread ends. Forking from this thread ties bots to the sandbox's lifetime.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[
            tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None
        ] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="sandbox-spawner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            function, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function())
                except BaseException as exc:
                    future.set_exception(exc)

    def call(self, function: Callable[[], _T]) -> _T:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            if self._stopped or not self._thread.is_alive():
                raise RuntimeError("the sandbox is closed")
            self._queue.put((function, future))
        return future.result()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)


class _Monitor:
    """One thread per sandbox: drains the bots' stderr and enforces whole-tree CPU time."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._pending: list[tuple[str, BotProcess]] = []
        self._bots: set[BotProcess] = set()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="sandbox-monitor", daemon=True)
        self._thread.start()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_write, b"x")

    def add(self, bot: BotProcess) -> None:
        with self._lock:
            self._pending.append(("add", bot))
        self._wake()

    def release_stderr(self, bot: BotProcess) -> None:
        """Have the monitor drain and close the bot's stderr; wait until it has."""
        if not self._thread.is_alive():
            bot._close_stderr()
            return
        with self._lock:
            self._pending.append(("close", bot))
        self._wake()
        if not bot._stderr_closed.wait(timeout=5):
            raise RuntimeError("the sandbox monitor did not release a bot's stderr")

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
        self._wake()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        next_check = time.monotonic()
        try:
            while True:
                timeout = max(0.0, next_check - time.monotonic())
                for key, _ in self._selector.select(timeout):
                    if key.data is None:
                        with contextlib.suppress(BlockingIOError):
                            os.read(self._wake_read, 4096)
                    else:
                        self._drain(key.data)
                with self._lock:
                    pending, self._pending = self._pending, []
                    stopping = self._stopping
                for action, bot in pending:
                    if action == "add":
                        self._bots.add(bot)
                        if bot._stderr_fd >= 0:
                            self._selector.register(bot._stderr_fd, selectors.EVENT_READ, bot)
                    else:
                        self._drain(bot)
                        self._unregister(bot)
                        self._bots.discard(bot)
                if stopping:
                    break
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + self._interval
                    self._check_cpu()
        finally:
            for bot in list(self._bots):
                self._unregister(bot)
            self._selector.close()
            os.close(self._wake_read)
            os.close(self._wake_write)

    def _drain(self, bot: BotProcess) -> None:
        # A bounded amount per call, so that a bot flooding stderr cannot hold this thread
        # (the selector reports the descriptor again on the next turn).
        for _ in range(16):
            if bot._stderr_fd < 0:
                return
            try:
                data = os.read(bot._stderr_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._unregister(bot)
                return
            bot._append_stderr(data)

    def _unregister(self, bot: BotProcess) -> None:
        if bot._stderr_fd >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(bot._stderr_fd)
        bot._close_stderr()

    def _check_cpu(self) -> None:
        running = [b for b in self._bots if not b._terminated]
        if not running:
            return
        table = (
            _proc_table() if any(b._cgroup is None for b in running) else None
        )  # one /proc scan per tick for every bot without cgroup accounting
        for bot in running:
            with contextlib.suppress(Exception):
                bot._watchdog(table)


# --------------------------------------------------------------------------------------------
# The bot process


def _signal_status(returncode: int, *, bwrap: bool) -> int:
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
        sandbox: Sandbox,
        popen: subprocess.Popen[bytes],
        stdin: int,
        stdout: int,
        stderr: int,
        level: ProtectionLevel,
        uid: int,
        slot: _Slot | None,
        cgroup: cgroups.SlotCgroup | None,
        scratch: Path | None,
        staged: list[Path],
    ) -> None:
        self._sandbox = sandbox
        self._popen = popen
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
        self._stderr_fd = stderr
        self.level = level
        self.uid = uid
        self._slot = slot
        self._cgroup = cgroup
        self._scratch = scratch
        self._staged = staged
        self._settings = sandbox.settings
        self._lock = threading.RLock()
        self._stderr_lock = threading.Lock()
        self._stderr = bytearray()
        self._stderr_closed = threading.Event()
        self._terminated = False  # processes killed (by kill() or the watchdog)
        self._finished = False  # kill() completed: slot released, descriptors closed
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

    # -- status -------------------------------------------------------------------------------

    def poll(self) -> int | None:
        """Exit status of the bot's main process (negative: killed by that signal), or None."""
        returncode = self._popen.poll()
        if returncode is None:
            return None
        return _signal_status(returncode, bwrap=self.level is not ProtectionLevel.NONE)

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
            self._update_ticks(_proc_table())
        return self._max_ticks / _CLOCK_TICKS

    def _update_ticks(self, table: dict[int, _ProcEntry]) -> None:
        if self.pid not in table or self._popen.poll() is not None:
            return  # reaped: the pid may already belong to another process
        tree = _descendants(table, self.pid) | {self.pid}
        self._max_ticks = max(self._max_ticks, sum(table[p].ticks for p in tree if p in table))

    def violation(self) -> Violation | None:
        """What the sandbox itself stopped, if anything (check it after any failure)."""
        settings = self._settings
        status = self.poll()
        if status == -signal.SIGSYS:
            return Violation(
                ViolationKind.FORBIDDEN_SYSCALL,
                "forbidden system call: the sandbox killed the bot for trying to open a "
                "socket (bots may talk only through their standard input and output)",
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

    def close_stdin(self) -> None:
        """Close the bot's standard input (it reads end of file); ``stdin`` becomes -1."""
        with self._lock:
            if self.stdin >= 0:
                with contextlib.suppress(OSError):
                    os.close(self.stdin)
                self.stdin = -1

    # -- stderr -------------------------------------------------------------------------------

    def _append_stderr(self, data: bytes) -> None:
        limit = self._settings.stderr_bytes
        with self._stderr_lock:
            self._stderr += data
            if len(self._stderr) > 2 * limit:
                del self._stderr[:-limit]

    def _close_stderr(self) -> None:
        with self._stderr_lock:
            if self._stderr_fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._stderr_fd)
                self._stderr_fd = -1
        self._stderr_closed.set()

    def stderr_tail(self) -> str:
        """The last ``stderr_bytes`` of the bot's standard error (decoded leniently)."""
        with self._stderr_lock:
            return bytes(self._stderr[-self._settings.stderr_bytes :]).decode(errors="replace")

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

    def _watchdog(self, table: dict[int, _ProcEntry] | None) -> None:
        if self._cgroup is None and table is not None:
            self._update_ticks(table)
            used = self._max_ticks / _CLOCK_TICKS
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
                children = _children(self.pid)
                for child in children:
                    _kill_pid(child, lambda p: _ppid(p) == self.pid)
                if not children:
                    # bwrap has not forked yet: kill bwrap (or the shell before it) itself.
                    with contextlib.suppress(OSError):
                        self._popen.send_signal(signal.SIGKILL)
            if self._cgroup is not None:
                with contextlib.suppress(OSError):
                    self._cgroup.thaw()  # frozen processes die only once thawed

    def _terminate_plain(self) -> None:
        # The tree only while the main process is unreaped (its pid cannot be reused yet).
        tree = _descendants(_proc_table(), self.pid) if self._popen.poll() is None else set()
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        for pid in tree:
            _kill_pid(pid, lambda p: True)
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
                    if not self._cgroup.destroy():
                        raise RuntimeError(f"cgroup {self._cgroup.name} could not be removed")
                elif (
                    self.level is not ProtectionLevel.NONE
                    and self._sandbox._root
                    and not _kill_uid(self.uid, timeout=5)
                ):
                    raise RuntimeError(f"processes of uid {self.uid} survived")
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
                    self._sandbox._monitor.release_stderr(self)
                if self._scratch is not None:
                    shutil.rmtree(self._scratch, ignore_errors=True)
                    self._scratch = None
                if self._finished and self._slot is not None:
                    self._sandbox._slots.release(self._slot)
                    self._slot = None
                if self._finished:
                    for copy in self._staged:
                        self._sandbox._staged.release(copy)
                    self._staged = []
                self._sandbox._forget(self)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------
# The sandbox


def _traversable_by_others(path: Path) -> bool:
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in (path, *path.parents))


def _tree_state(path: Path) -> tuple[bool, str]:
    """Whether another uid can read all of ``path`` as is, and a signature of its contents."""
    readable = all(os.stat(p).st_mode & stat.S_IXOTH for p in path.parents)
    entries: list[str] = []

    def note(p: Path, st: os.stat_result) -> None:
        nonlocal readable
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            readable &= bool(mode & stat.S_IROTH and mode & stat.S_IXOTH)
        elif stat.S_ISREG(mode):
            readable &= bool(mode & stat.S_IROTH)
        entries.append(f"{p.relative_to(path)}\0{mode:o}\0{st.st_size}\0{st.st_mtime_ns}")

    note(path, os.lstat(path))
    if path.is_dir():
        for directory, dirnames, filenames in os.walk(path):
            for name in sorted(dirnames) + sorted(filenames):
                p = Path(directory, name)
                note(p, os.lstat(p))
    return bool(readable), "\n".join(entries)


def _stage_copy(source: Path, target: Path) -> None:
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


class _StagingArea:
    """Read-only copies of folders the slot uids cannot read: one per content, shared by the
    bots that use it, kept a while after the last one ends (:data:`IDLE_STAGED_COPIES`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._users: dict[Path, int] = {}
        self._idle: collections.OrderedDict[Path, None] = collections.OrderedDict()

    def acquire(self, host: Path) -> Path | None:
        """A copy of ``host`` to bind instead of it, or None when the slot uids can read it."""
        readable, signature = _tree_state(host)
        if readable:
            return None
        name = hashlib.sha256(f"{host}\0{signature}".encode()).hexdigest()[:32]
        target = self.directory / name
        with self._lock:
            if self._take(target):
                return target
        partial = self.directory / f".{name}.{secrets.token_hex(4)}"
        try:
            _stage_copy(host, partial)
            with self._lock:
                if not self._take(target):
                    os.rename(partial, target)
                    self._users[target] = 1
        finally:
            _remove(partial)
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
                trash = victim.with_name(f".trash-{secrets.token_hex(4)}")
                os.rename(victim, trash)
                evicted.append(trash)
        for trash in evicted:
            _remove(trash)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _state_dir(configured: str) -> Path:
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


class Sandbox:
    """Launches bots in slots; one per referee process is enough (it is thread-safe).

    ``level=None`` uses the best level :func:`probe` finds; asking for more than the host
    offers raises :class:`SandboxUnavailable`. FULL is adequate for untrusted bots; below it
    :meth:`launch` refuses untrusted bots unless ``allow_unsandboxed`` (the development switch)
    is set. Construction sweeps what a previous referee killed with SIGKILL left behind.
    """

    def __init__(
        self,
        settings: SandboxSettings = SandboxSettings(),
        *,
        level: ProtectionLevel | None = None,
        allow_unsandboxed: bool = False,
    ) -> None:
        self.settings = settings
        facts = _facts(settings)
        self.report = facts.report
        if level is None:
            level = facts.report.level
        elif level.rank > facts.report.level.rank:
            raise SandboxUnavailable(
                f"protection level {level.value} is not available on this host. "
                + facts.report.describe()
            )
        self.level = ProtectionLevel(level)
        self.allow_unsandboxed = allow_unsandboxed
        self._facts = facts
        self._root = facts.root
        self._bwrap = facts.bwrap
        self._layout = facts.cgroups if self.level is ProtectionLevel.FULL else None
        self._closed = False
        self._lock = threading.Lock()
        self._bots: set[BotProcess] = set()

        self.state_dir = _state_dir(settings.state_dir)
        if self._root:
            os.chmod(self.state_dir, os.stat(self.state_dir).st_mode | 0o011)
            if not _traversable_by_others(self.state_dir):
                raise SandboxUnavailable(
                    f"{self.state_dir} must be reachable by other users (its parents need "
                    "the x permission): staged bot folders live there"
                )
        lock_dir = Path(HOST_SLOT_LOCKS) if self._root else self.state_dir / "slots"
        self._slots = _SlotPool(lock_dir, settings.first_uid, settings.slots)
        staging_root = self.state_dir / "staging"
        staging_root.mkdir(mode=0o711, exist_ok=True)
        self._sweep(staging_root)
        # This sandbox's own folder (staged copies, scratch of NONE-level bots), flocked while
        # it lives so that a later sweep knows whether it is stale. It gets its final name
        # only once locked: sweeps skip names starting with a dot.
        partial = Path(tempfile.mkdtemp(prefix=".new-", dir=staging_root))
        self._staging_lock = os.open(
            partial / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        fcntl.flock(self._staging_lock, fcntl.LOCK_EX)
        self._staging = partial.with_name(f"{os.getpid()}-{partial.name[5:]}")
        os.rename(partial, self._staging)
        os.chmod(self._staging, 0o711)
        self._staged = _StagingArea(self._staging)
        try:
            if self._layout is not None:
                cgroups.prepare_base(self._layout, settings.cgroup_name)
            self._spawner = _Spawner()
            self._monitor = _Monitor(settings.watchdog_interval)
        except BaseException:
            shutil.rmtree(self._staging, ignore_errors=True)
            os.close(self._staging_lock)
            raise

    def __repr__(self) -> str:
        return f"<Sandbox level={self.level.value} state_dir={str(self.state_dir)!r}>"

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- sweeping -----------------------------------------------------------------------------

    def _sweep(self, staging_root: Path) -> None:
        """Remove what a referee that died without closing its sandbox left behind."""
        for instance in staging_root.iterdir():
            if instance.name.startswith("."):
                continue  # a sandbox being created
            try:
                fd = os.open(instance / ".lock", os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                fd = None
            except OSError:
                continue
            try:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(instance, ignore_errors=True)
            except BlockingIOError:
                pass  # a live sandbox's staging area
            finally:
                if fd is not None:
                    os.close(fd)
        if not self._root:
            return  # without per-slot uids there is nothing we may kill by uid
        settings = self.settings
        uids = range(settings.first_uid, settings.first_uid + settings.slots)
        owners = processes_of_uids(uids)
        layout = self._facts.cgroups
        for index in range(settings.slots):
            uid = settings.first_uid + index
            fd = self._slots.try_lock(index)
            if fd is None:
                continue  # a live referee holds this slot
            try:
                if layout is not None:
                    stale = cgroups.SlotCgroup(layout, settings.cgroup_name, f"slot-{uid}")
                    if stale.exists() and not stale.destroy():
                        raise SandboxUnavailable(f"stale cgroup {stale.name} cannot be removed")
                if uid in owners and not _kill_uid(uid, timeout=5):
                    raise SandboxUnavailable(f"stale processes of uid {uid} cannot be killed")
            finally:
                os.close(fd)

    # -- launching ----------------------------------------------------------------------------

    def launch(
        self, bot_dir: Path | str, argv: Sequence[str], *, trusted: bool = False
    ) -> BotProcess:
        """Start ``argv`` in the bot folder ``bot_dir`` (at ``/bot``, the working directory).

        Raises :class:`SandboxUnavailable` for an untrusted bot below FULL without the
        development switch, and :class:`SlotsExhausted` when every slot is busy.
        """
        if self._closed:
            raise RuntimeError("the sandbox is closed")
        if not argv:
            raise ValueError("empty command")
        if self.level is not ProtectionLevel.FULL and not trusted and not self.allow_unsandboxed:
            raise SandboxUnavailable(
                f"refusing to run an untrusted bot at protection level {self.level.value} "
                "(pass allow_unsandboxed=True only for development). " + self.report.describe()
            )
        directory = Path(bot_dir).resolve(strict=True)
        if not directory.is_dir():
            raise NotADirectoryError(str(directory))
        if self.level is ProtectionLevel.NONE:
            bot = self._launch_plain(directory, list(argv))
        else:
            bot = self._launch_sandboxed(directory, list(argv))
        with self._lock:
            self._bots.add(bot)
        self._monitor.add(bot)
        return bot

    def _visible(self, host: Path, staged: list[Path]) -> Path:
        """``host`` if the slot uids can read it, else a read-only staged copy (noted in
        ``staged``, to be released when the bot ends)."""
        if not self._root:
            return host
        copy = self._staged.acquire(host)
        if copy is None:
            return host
        staged.append(copy)
        return copy

    def _limits(self, *, cgroup: bool) -> list[tuple[str, int]]:
        """``ulimit`` flags and values (dash units: -f in 512-byte blocks, -v in KiB)."""
        settings = self.settings
        wanted = [
            ("c", resource.RLIMIT_CORE, 0, 1),  # no core dumps (SIGSYS and SIGXFSZ make them)
            ("f", resource.RLIMIT_FSIZE, settings.scratch_mb << 20, 512),
            ("n", resource.RLIMIT_NOFILE, OPEN_FILES, 1),
            # Per process only (a fork chain evades it); the watchdog bounds the tree.
            ("t", resource.RLIMIT_CPU, math.ceil(settings.cpu_seconds) + 1, 1),
        ]
        if not cgroup:
            wanted.append(("v", resource.RLIMIT_AS, settings.memory_mb << 20, 1024))
        if self._root and not cgroup and self.level is not ProtectionLevel.NONE:
            # Counted per uid, so only meaningful with a uid per slot, and only needed without
            # the pids cgroup. (It also counts zombies awaiting PID 1, see docs/sandbox.md.)
            wanted.append(("p", resource.RLIMIT_NPROC, settings.max_processes, 1))
        limits = []
        for flag, limit, value, unit in wanted:
            # Never above the referee's own hard limit: raising it needs CAP_SYS_RESOURCE.
            hard = resource.getrlimit(limit)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            limits.append((flag, value // unit))
        return limits

    def _start(
        self,
        command: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        pass_fds: tuple[int, ...],
        cgroup: cgroups.SlotCgroup | None,
        limits: list[tuple[str, int]],
    ) -> tuple[subprocess.Popen[bytes], int, int, int]:
        """Start ``command`` behind the preamble shell; return it and the parent's pipe ends."""
        steps = []
        if cgroup is not None:
            steps += [f"echo $$ > {shlex.quote(str(p))}" for p in cgroup.procs_files()]
        steps += [f"ulimit -{flag} {value}" for flag, value in limits]
        steps.append('exec "$@"')
        argv = ["/bin/sh", "-c", " && ".join(steps), "sh", *command]
        pipes: list[int] = []
        try:
            stdin_read, stdin_write = os.pipe()
            pipes += [stdin_read, stdin_write]
            stdout_read, stdout_write = os.pipe()
            pipes += [stdout_read, stdout_write]
            stderr_read, stderr_write = os.pipe()
            pipes += [stderr_read, stderr_write]
            os.set_blocking(stderr_read, False)

            def spawn() -> subprocess.Popen[bytes]:
                return subprocess.Popen(
                    argv,
                    stdin=stdin_read,
                    stdout=stdout_write,
                    stderr=stderr_write,
                    pass_fds=pass_fds,
                    close_fds=True,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )

            popen = self._spawner.call(spawn)
        except BaseException:
            for fd in pipes:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise
        for fd in (stdin_read, stdout_write, stderr_write):
            os.close(fd)
        return popen, stdin_write, stdout_read, stderr_read

    def _bot_env(self, home: str) -> list[tuple[str, str]]:
        env = {"HOME": home, "PATH": BOT_PATH, "LANG": "C.UTF-8"}
        env.update(self.settings.env)
        return list(env.items())

    def _launch_sandboxed(self, directory: Path, argv: list[str]) -> BotProcess:
        assert self._bwrap is not None
        settings = self.settings
        slot = self._slots.acquire()
        uid = slot.uid if self._root else os.getuid()
        cgroup: cgroups.SlotCgroup | None = None
        fds: _LaunchFds | None = None
        staged: list[Path] = []
        try:
            source = self._visible(directory, staged)
            readonly = [
                (str(self._visible(Path(host), staged)), inside)
                for host, inside in settings.readonly_paths
            ]
            if self._layout is not None:
                cgroup = cgroups.SlotCgroup(self._layout, settings.cgroup_name, slot.name)
                cgroup.create(
                    memory_bytes=settings.memory_mb << 20, max_tasks=settings.max_processes
                )
            fds = _LaunchFds.open(uid, settings.kill_unix_sockets)
            command = _bwrap_argv(
                self._bwrap,
                bot_source=str(source),
                readonly=readonly,
                env=self._bot_env("/tmp"),
                scratch_bytes=settings.scratch_mb << 20,
                fds=fds,
            )
            drop: list[str] = []
            if self._root:
                assert self._facts.setpriv is not None
                drop = [
                    self._facts.setpriv,
                    f"--reuid={uid}",
                    f"--regid={uid}",
                    "--clear-groups",
                    "--no-new-privs",
                    "--",
                ]
            popen, stdin, stdout, stderr = self._start(
                [*drop, *command, "--", *argv],
                cwd="/",
                env={"PATH": "/usr/bin:/bin"},
                pass_fds=fds.passed(),
                cgroup=cgroup,
                limits=self._limits(cgroup=cgroup is not None),
            )
        except BaseException:
            if cgroup is not None:
                cgroup.destroy()
            self._slots.release(slot)
            for copy in staged:
                self._staged.release(copy)
            raise
        finally:
            if fds is not None:
                fds.close_child_ends()
        return BotProcess(
            sandbox=self,
            popen=popen,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            level=self.level,
            uid=uid,
            slot=slot,
            cgroup=cgroup,
            scratch=None,
            staged=staged,
        )

    def _launch_plain(self, directory: Path, argv: list[str]) -> BotProcess:
        scratch = Path(tempfile.mkdtemp(prefix=".scratch-", dir=self._staging))
        env = dict(self._bot_env(str(scratch)))
        env["TMPDIR"] = str(scratch)
        setpriv = self._facts.setpriv
        command = [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else argv
        try:
            popen, stdin, stdout, stderr = self._start(
                command,
                cwd=str(directory),
                env=env,
                pass_fds=(),
                cgroup=None,
                limits=self._limits(cgroup=False),
            )
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        return BotProcess(
            sandbox=self,
            popen=popen,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            level=self.level,
            uid=os.getuid(),
            slot=None,
            cgroup=None,
            scratch=scratch,
            staged=[],
        )

    # -- closing ------------------------------------------------------------------------------

    def _forget(self, bot: BotProcess) -> None:
        with self._lock:
            self._bots.discard(bot)

    def running(self) -> list[BotProcess]:
        """Bots launched and not yet killed."""
        with self._lock:
            return list(self._bots)

    def close(self) -> None:
        """Kill every bot still running, remove their cgroups and the staged copies."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        for bot in self.running():
            try:
                bot.kill()
            except Exception as exc:  # keep closing the others
                errors.append(exc)
        self._monitor.stop()
        self._spawner.stop()
        self._slots.close()
        shutil.rmtree(self._staging, ignore_errors=True)
        os.close(self._staging_lock)
        if errors:
            raise errors[0]


# --------------------------------------------------------------------------------------------
# Command line: probe and bench


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f} ms"


def _median_and_best_ms(samples: list[float]) -> str:
    return f"{_median_ms(samples)} median, {min(samples) * 1000:.1f} ms best"


def _bench(runs: int, state_dir: str | None) -> None:
    with contextlib.ExitStack() as stack:
        if state_dir is None:
            state_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="yinsh-bench-"))
            os.chmod(state_dir, 0o711)
        bot_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="yinsh-bench-bot-"))
        os.chmod(bot_dir, 0o755)
        sandbox = stack.enter_context(Sandbox(SandboxSettings(state_dir=state_dir)))
        print(f"protection level: {sandbox.level.value}")
        trusted = sandbox.level is not ProtectionLevel.FULL

        def measure(argv: list[str]) -> tuple[list[float], list[float], list[float]]:
            launch, total, cleanup = [], [], []
            for _ in range(runs):
                started = time.perf_counter()
                bot = sandbox.launch(bot_dir, argv, trusted=trusted)
                launched = time.perf_counter()
                status = bot.wait(10)  # wakes on the pidfd the moment bwrap exits
                ended = time.perf_counter()
                bot.kill()
                cleaned = time.perf_counter()
                if status != 0:
                    raise RuntimeError(f"{argv} exited with {status}: {bot.stderr_tail()}")
                launch.append(launched - started)
                total.append(ended - started)
                cleanup.append(cleaned - ended)
            return launch, total, cleanup

        def plain(argv: list[str]) -> list[float]:
            samples = []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(argv, check=True, env={"PATH": BOT_PATH})
                samples.append(time.perf_counter() - started)
            return samples

        for argv in (["/bin/true"], ["python3", "-c", "pass"]):
            measure(argv[:1] if argv[0] == "/bin/true" else argv)  # warm caches
            launch, total, cleanup = measure(argv)
            print(
                f"{' '.join(argv)}: start-to-exit {_median_and_best_ms(total)} "
                f"(launch() returns after {_median_ms(launch)}; kill() and clean-up "
                f"{_median_ms(cleanup)}); unsandboxed {_median_ms(plain(argv))}"
            )
        bot = sandbox.launch(bot_dir, ["/bin/sh", "-c", "while :; do :; done"], trusted=trusted)
        try:
            pauses, resumes = [], []
            for _ in range(max(runs, 20)):
                started = time.perf_counter()
                bot.pause()
                paused = time.perf_counter()
                bot.resume()
                resumed = time.perf_counter()
                pauses.append(paused - started)
                resumes.append(resumed - paused)
            print(f"pause(): {_median_ms(pauses)}; resume(): {_median_ms(resumes)}")
        finally:
            bot.kill()


def main(args: Sequence[str] | None = None) -> int:
    """``python -m arena.referee.sandbox probe|bench``."""
    parser = argparse.ArgumentParser(prog="python -m arena.referee.sandbox")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("probe", help="print what protection this host offers")
    bench = commands.add_parser("bench", help="measure start-up and pause/resume costs")
    bench.add_argument("--runs", type=int, default=30)
    bench.add_argument("--state-dir", default=None, help="default: a temporary directory")
    options = parser.parse_args(args)
    if options.command == "probe":
        report = probe()
        print(f"level: {report.level.value}")
        for line in report.details:
            print(f"  - {line}")
        print()
        print(report.describe())
        return 0
    _bench(options.runs, options.state_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
