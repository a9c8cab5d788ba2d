"""The command line that starts a bot: the preamble, the privilege drop, bubblewrap's arguments.

Every bot starts as ``sh -c PREAMBLE sh [setpriv ...] bwrap ... -- COMMAND``. The shell, still
running as the referee, joins its own pid to the slot's cgroups and lowers its rlimits
(builtins: no fork), then execs setpriv, which drops to the slot uid, then bwrap. Everything the
bot starts later is born inside the cgroups and under the limits. This replaces preexec_fn,
which is unsafe in a threaded parent; Popen(user=...) would drop privileges too early to join a
root-owned cgroup, and this host's root may lack CAP_SYS_RESOURCE, which prlimit() on another
uid's process needs.

Pure: this module builds argument lists and the descriptors handed to bwrap (pipes holding the
seccomp program and generated ``/etc`` files); it starts nothing (see :mod:`.spawn`).
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.referee.sandbox import seccomp
from arena.referee.sandbox.settings import (
    BOT_PATH,
    OPEN_FILES,
    SYSTEM_DIRS,
    SandboxSettings,
)

__all__ = [
    "LaunchFds",
    "bot_env",
    "bwrap_argv",
    "drop_privileges",
    "preamble",
    "rlimits",
    "system_bind_args",
]

# Host /etc entries a dynamically linked runtime needs (loader cache, time zone, Debian's
# alternatives symlinks, the JDK's and Python's configuration). Everything else of /etc,
# including the real passwd and group files, stays hidden.
_ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives")
_ETC_GLOBS = ("java-*", "python3*")
_DEVICES = ("null", "zero", "full", "random", "urandom")
_NSCD_FREE_NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"


def _system_binds() -> list[str]:
    """bwrap arguments for the read-only system runtime, mirroring the host's /usr layout."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
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


def system_bind_args() -> list[str]:
    """:func:`_system_binds`, found once per process."""
    global _SYSTEM_BINDS
    if _SYSTEM_BINDS is None:
        _SYSTEM_BINDS = _system_binds()
    return _SYSTEM_BINDS


@dataclass
class LaunchFds:
    """Descriptors handed to bwrap: the seccomp program and generated /etc files."""

    seccomp: int
    etc: dict[str, int]

    @classmethod
    def open(cls, uid: int, kill_unix_sockets: bool) -> LaunchFds:
        """Make the pipes for a bot running as ``uid`` (its ``/etc/passwd`` names it)."""
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
        """The descriptors the child must inherit."""
        return (self.seccomp, *self.etc.values())

    def close_child_ends(self) -> None:
        """Close our copies once the child holds them (or the launch failed)."""
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


def bwrap_argv(
    bwrap: str,
    *,
    bot_source: str | None,
    readonly: Sequence[tuple[str, str]],
    env: Sequence[tuple[str, str]],
    scratch_bytes: int,
    fds: LaunchFds,
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
    argv += system_bind_args()
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


def bot_env(settings: SandboxSettings, home: str) -> list[tuple[str, str]]:
    """The bot's whole environment: ``HOME``, ``PATH``, ``LANG`` and the configured extras."""
    env = {"HOME": home, "PATH": BOT_PATH, "LANG": "C.UTF-8"}
    env.update(settings.env)
    return list(env.items())


def rlimits(settings: SandboxSettings, *, cgroup: bool, per_uid: bool) -> list[tuple[str, int]]:
    """``ulimit`` flags and values (dash units: -f in 512-byte blocks, -v in KiB).

    ``cgroup``: the bot has its own cgroups (memory is bounded there, not per process);
    ``per_uid``: the bot has a host uid of its own, so RLIMIT_NPROC means something.
    """
    wanted = [
        ("c", resource.RLIMIT_CORE, 0, 1),  # no core dumps (SIGSYS and SIGXFSZ make them)
        ("f", resource.RLIMIT_FSIZE, settings.scratch_mb << 20, 512),
        ("n", resource.RLIMIT_NOFILE, OPEN_FILES, 1),
        # Per process only (a fork chain evades it); the watchdog bounds the tree.
        ("t", resource.RLIMIT_CPU, math.ceil(settings.cpu_seconds) + 1, 1),
    ]
    if not cgroup:
        wanted.append(("v", resource.RLIMIT_AS, settings.memory_mb << 20, 1024))
    if per_uid and not cgroup:
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


def preamble(
    command: Sequence[str],
    *,
    procs_files: Sequence[Path],
    limits: Sequence[tuple[str, int]],
) -> list[str]:
    """``sh -c`` that joins the cgroups (``procs_files``), sets ``limits``, execs ``command``."""
    steps = [f"echo $$ > {shlex.quote(str(p))}" for p in procs_files]
    steps += [f"ulimit -{flag} {value}" for flag, value in limits]
    steps.append('exec "$@"')
    return ["/bin/sh", "-c", " && ".join(steps), "sh", *command]


def drop_privileges(setpriv: str, uid: int) -> list[str]:
    """The ``setpriv`` prefix that runs the rest as ``uid`` (its own group, no others)."""
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--",
    ]
