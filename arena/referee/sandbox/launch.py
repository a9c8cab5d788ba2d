"""The command line that starts a bot: the preamble, the privilege drop, bubblewrap's arguments.

Every bot starts as ``sh -c PREAMBLE sh [setpriv ...] bwrap ... -- COMMAND``. The shell, still
running as the referee, joins its own pid to the slot's cgroups and lowers its rlimits
(builtins: no fork), then execs setpriv, which drops to the slot uid, then bwrap. Everything the
bot starts later is born inside the cgroups and under the limits. This replaces preexec_fn,
which is unsafe in a threaded parent; Popen(user=...) would drop privileges too early to join a
root-owned cgroup, and this host's root may lack CAP_SYS_RESOURCE, which prlimit() on another
uid's process needs.

Inside the sandbox, bwrap execs :data:`EXEC_SHIM`, a fixed shell that execs the bot's command:
see :class:`SetupReport` for how the referee tells "the sandbox could not start the program"
from "the bot's program failed".

Two things a bot could read of bwrap, which runs as pid 1 of the bot's pid namespace, are kept
free of the host: its command line (``/proc/1/cmdline``) holds only ``--args FD`` and the bot's
command, the options (and the host paths of the binds among them) coming through a pipe; and
its descriptors 0 and 1 are ``/dev/null``. The bot's own standard input and output reach bwrap
as descriptors :data:`BOT_STDIN_FD` and :data:`BOT_STDOUT_FD` (:func:`preamble` moves them
there), which bwrap closes in its monitor and in its pid 1 and passes to the program only: the
shim makes them the bot's 0 and 1. So the bot is the only process that holds its output, and a
bot that closes it is seen at once (end of file), not when its clock runs out.

Pure: this module builds argument lists and the pipes handed to bwrap (the seccomp program,
generated ``/etc`` files, bwrap's status report); it starts nothing (see :mod:`.spawn`).
"""

from __future__ import annotations

import contextlib
import fcntl
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
    "BOT_STDIN_FD",
    "BOT_STDOUT_FD",
    "EXEC_SHIM",
    "LaunchFds",
    "SetupReport",
    "bot_env",
    "bwrap_argv",
    "bwrap_options",
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
# The bot's network namespace has a loopback interface only: its names, and the hostname's.
_HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tbot\n"

BOT_STDIN_FD = 3
"""The descriptor bwrap gets the bot's standard input on (single digit: ``sh`` redirects no
other)."""
BOT_STDOUT_FD = 4
"""The descriptor bwrap gets the bot's standard output on."""
_FIRST_PASSED_FD = 10
"""Descriptors passed to bwrap are numbered from here, clear of 0-9."""

EXEC_SHIM = (
    "/bin/sh",
    "-c",
    f'exec "$@" <&{BOT_STDIN_FD} >&{BOT_STDOUT_FD} {BOT_STDIN_FD}<&- {BOT_STDOUT_FD}>&-',
    "sh",
)
"""What bwrap execs in the sandbox, the bot's command after it: it makes descriptors
:data:`BOT_STDIN_FD` and :data:`BOT_STDOUT_FD` the bot's standard input and output. bwrap's own
exec of it always succeeds, so bwrap's status report (:class:`SetupReport`) says whether the
sandbox was set up; if the bot's command is missing or not executable, the shim exits 127 or
126 after that point, which is the bot's failure, not the sandbox's."""


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
    """Descriptors handed to bwrap: the seccomp program, generated /etc files (``passwd``,
    ``group``, ``nsswitch.conf``, ``hosts``), the write end of the pipe bwrap reports its
    status on (``status``; ``status_reader`` is ours) and, once :func:`bwrap_argv` made it, the
    pipe of bwrap's options (``args``). All are numbered from 10 up, so that descriptors 3 and
    4 of the child are free for the bot's standard input and output (:func:`preamble`)."""

    seccomp: int
    etc: dict[str, int]
    status: int = -1
    status_reader: int = -1
    args: int = -1

    @classmethod
    def open(cls, uid: int) -> LaunchFds:
        """Make the pipes for a bot running as ``uid`` (its ``/etc/passwd`` names it)."""
        fds = cls(_above_stdio(seccomp.filter_pipe()), {})
        try:
            fds.status_reader, status = os.pipe()
            fds.status = _above_stdio(status)
            os.set_blocking(fds.status_reader, False)
            gid = uid
            files = {
                "/etc/passwd": (
                    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                    f"bot:x:{uid}:{gid}:bot:/tmp:/usr/sbin/nologin\n"
                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                ),
                "/etc/group": f"root:x:0:\nbot:x:{gid}:\nnogroup:x:65534:\n",
                "/etc/nsswitch.conf": _NSCD_FREE_NSSWITCH,
                "/etc/hosts": _HOSTS,
            }
            for path, text in files.items():
                fds.etc[path] = _data_pipe(text.encode())
        except BaseException:
            fds.close()
            raise
        return fds

    def passed(self) -> tuple[int, ...]:
        """The descriptors the child must inherit."""
        fds = (self.seccomp, *self.etc.values(), self.status, self.args)
        return tuple(fd for fd in fds if fd >= 0)

    def close_child_ends(self) -> None:
        """Close our copies of the child's descriptors once it holds them (idempotent)."""
        for fd in self.passed():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.seccomp = self.status = self.args = -1
        self.etc = {}

    def take_status_reader(self) -> int:
        """Our end of the status pipe, now the caller's to close."""
        fd, self.status_reader = self.status_reader, -1
        return fd

    def close(self) -> None:
        """Close every descriptor still ours (the launch failed)."""
        self.close_child_ends()
        if self.status_reader >= 0:
            with contextlib.suppress(OSError):
                os.close(self.status_reader)
            self.status_reader = -1


class SetupReport:
    """Whether bubblewrap got as far as starting the program it runs, from its status pipe.

    bubblewrap's ``--json-status-fd`` writes ``{ "exit-code": N }`` when the sandboxed command
    ends, but only if the sandbox was set up and the command exec'd: the sandboxed child writes
    one byte to a close-on-exec pipe just before ``execvp``, and bwrap's monitor, outside the
    sandbox, reports the exit code only if exactly that byte is there (none: the set-up failed;
    two: the exec failed). The program bwrap execs is :data:`EXEC_SHIM`, whose exec never fails,
    so after a bot's sandbox ended:

    * a report with ``exit-code``: the sandbox started the shim, and whatever happened next was
      the bot's doing (a missing bot command makes the shim exit 127);
    * no such report: the sandbox never started the program (a bind source the slot uid cannot
      reach, a broken host): an infrastructure failure.

    A bot cannot forge the second case. The report is written by bwrap's monitor, a process in
    the parent pid namespace that the bot can neither see nor signal (and seccomp denies
    ptrace); the status pipe is closed in the sandbox before the bot's code runs; the
    confirming byte was written before the bot's code ran. The one way to take the monitor
    down with the bot, an out-of-memory kill of the whole cgroup, is reported as a memory
    violation first, and the referee checks violations before this.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._data = bytearray()

    def _read(self) -> None:
        while self._fd >= 0:
            try:
                chunk = os.read(self._fd, 4096)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.close()
                return
            self._data += chunk

    def reached_exec(self) -> bool:
        """Whether bwrap reported the exit of the program it exec'd (read it once it ended)."""
        self._read()
        return b'"exit-code"' in self._data

    def close(self) -> None:
        """Close our end of the pipe (idempotent)."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def _above_stdio(fd: int) -> int:
    """``fd`` renumbered from :data:`_FIRST_PASSED_FD` up (close-on-exec, as pipes are made);
    the original is closed. ``F_DUPFD`` takes the lowest free number: no other thread's
    descriptor is touched."""
    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _FIRST_PASSED_FD)
    finally:
        os.close(fd)


def _data_pipe(data: bytes) -> int:
    """The read end of a pipe holding ``data`` (then end of file)."""
    read_end, write_end = os.pipe()
    try:
        if len(data) > 65536:  # a pipe holds 64 KiB unless told otherwise
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, len(data))
        os.write(write_end, data)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return _above_stdio(read_end)


def bwrap_argv(
    bwrap: str,
    *,
    bot_source: str | None,
    readonly: Sequence[tuple[str, str]],
    env: Sequence[tuple[str, str]],
    scratch_bytes: int,
    fds: LaunchFds,
    workspace_bytes: int | None = None,
) -> list[str]:
    """The bwrap command line (without ``--`` and the bot's command): ``bwrap --args FD``.

    The options are in a pipe (``fds.args``), not on the command line: bwrap runs as pid 1 of
    the bot's pid namespace, where the bot could read its command line, and the options name
    the host folders bound in.

    With ``workspace_bytes`` (a build) the bot's folder is bound read-only at ``/src`` and
    ``/bot`` is an empty private tmpfs of that size, writable: the build copies the folder
    there, works in it and hands the result back through its standard output.
    """
    options = bwrap_options(
        bot_source=bot_source,
        readonly=readonly,
        env=env,
        scratch_bytes=scratch_bytes,
        fds=fds,
        workspace_bytes=workspace_bytes,
    )
    if fds.args >= 0:
        raise ValueError("bwrap's options were already made for these descriptors")
    fds.args = _data_pipe(b"".join(option.encode() + b"\0" for option in options))
    return [bwrap, "--args", str(fds.args)]


def bwrap_options(
    *,
    bot_source: str | None,
    readonly: Sequence[tuple[str, str]],
    env: Sequence[tuple[str, str]],
    scratch_bytes: int,
    fds: LaunchFds,
    workspace_bytes: int | None = None,
) -> list[str]:
    """bwrap's options for a bot (see :func:`bwrap_argv`)."""
    argv = [
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
        "--json-status-fd",
        str(fds.status),
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
    if workspace_bytes is not None:
        if bot_source is not None:
            argv += ["--ro-bind", bot_source, "/src"]
        argv += ["--size", str(workspace_bytes), "--tmpfs", "/bot"]
    elif bot_source is None:
        argv += ["--dir", "/bot"]
    else:
        argv += ["--ro-bind", bot_source, "/bot"]
    for host, inside in readonly:
        argv += ["--ro-bind", host, inside]
    argv += ["--remount-ro", "/", "--chdir", "/bot", "--seccomp", str(fds.seccomp)]
    return argv


def bot_env(settings: SandboxSettings, home: str) -> list[tuple[str, str]]:
    """The bot's whole environment: ``HOME``, ``PATH``, ``LANG``, ``JAVA_TOOL_OPTIONS`` and the
    configured extras.

    ``JAVA_TOOL_OPTIONS`` gives a JVM the bot's memory bound (``-XX:MaxRAM``), which it cannot
    see for itself without ``/sys``: it would size its heap from the host's memory and be
    killed at the bound instead of collecting garbage. Options on the bot's own command line
    (``-Xmx``) come after it and win.
    """
    env = {
        "HOME": home,
        "PATH": BOT_PATH,
        "LANG": "C.UTF-8",
        "JAVA_TOOL_OPTIONS": f"-XX:MaxRAM={settings.memory_mb}m",
    }
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
    move_stdio: bool = False,
) -> list[str]:
    """``sh -c`` that joins the cgroups (``procs_files``), sets ``limits``, execs ``command``.

    With ``move_stdio`` (bwrap's command) the standard input and output are moved to
    :data:`BOT_STDIN_FD` and :data:`BOT_STDOUT_FD`, and ``/dev/null`` takes their place.
    """
    steps = []
    if move_stdio:
        steps.append(f"exec {BOT_STDIN_FD}<&0 {BOT_STDOUT_FD}>&1 </dev/null >/dev/null")
    steps += [f"echo $$ > {shlex.quote(str(p))}" for p in procs_files]
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
