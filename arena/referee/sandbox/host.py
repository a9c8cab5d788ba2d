"""Probing the host: which protection level it offers, and why (:func:`probe`).

:func:`probe` runs a tiny bubblewrap sandbox for real (as ``nobody`` when root, through
:func:`.spawn.run_as`), creates and removes a probe cgroup (through :mod:`.cgroups`), and checks
that the slot uids belong to no account. It holds no privileged code of its own.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import pwd
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass

from arena.referee.sandbox import cgroups
from arena.referee.sandbox.launch import LaunchFds, SetupReport, bwrap_argv
from arena.referee.sandbox.settings import BOT_PATH, ProtectionLevel, SandboxSettings
from arena.referee.sandbox.spawn import run_as

__all__ = ["HostFacts", "HostReport", "facts", "probe"]


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


@dataclass(frozen=True)
class HostFacts:
    """What the probe learnt, for the sandbox to use: the programs, cgroups and the report."""

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


def _probe_bwrap(bwrap: str, root: bool) -> tuple[bool, str]:
    """Run a tiny sandbox for real; return whether it worked and a line saying how."""
    uid = 65534 if root else os.getuid()
    fds = LaunchFds.open(uid)
    try:
        argv = bwrap_argv(
            bwrap,
            bot_source=None,
            readonly=(),
            env=(("PATH", BOT_PATH),),
            scratch_bytes=1 << 20,
            fds=fds,
        )
        started = time.perf_counter()
        done = run_as(
            uid if root else None,
            [*argv, "--", "/bin/cat", "/proc/self/status"],
            pass_fds=fds.passed(),
            timeout=10,
        )
        elapsed = time.perf_counter() - started
        fds.close_child_ends()
        report = SetupReport(fds.take_status_reader())
        reached_exec = report.reached_exec()
        report.close()
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bubblewrap at {bwrap} could not run: {exc}"
    finally:
        fds.close()
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        return False, (
            f"bubblewrap at {bwrap} failed (exit {done.returncode}: "
            f"{message[-1] if message else 'no message'}); unprivileged user namespaces may be "
            "disabled (sysctl, AppArmor, or a container's default seccomp profile), or "
            "bubblewrap is older than 0.5 (no --json-status-fd)"
        )
    status = done.stdout.decode(errors="replace")
    if "\nSeccomp:\t2" not in status or "\nNoNewPrivs:\t1" not in status:
        return False, f"bubblewrap at {bwrap} ran, but the seccomp filter was not in force"
    if not reached_exec:
        return False, (
            f"bubblewrap at {bwrap} ran, but did not report its status on --json-status-fd "
            "(the referee could not tell a sandbox that failed to start from a bot that failed)"
        )
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
def _probe_host(first_uid: int, slots: int, cgroup_name: str) -> HostFacts:
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
        bwrap_works, line = _probe_bwrap(bwrap, root)
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
    return HostFacts(
        root=root,
        bwrap=bwrap,
        bwrap_works=bwrap_works,
        cgroups=layout if cgroups_usable else None,
        cgroups_usable=cgroups_usable,
        uid_conflicts=conflicts,
        setpriv=setpriv,
        report=HostReport(level, tuple(details)),
    )


def facts(settings: SandboxSettings) -> HostFacts:
    """What the host offers for these settings (probed once per process)."""
    return _probe_host(settings.first_uid, settings.slots, settings.cgroup_name)


def probe(settings: SandboxSettings | None = None) -> HostReport:
    """Find the best protection level this host supports (cached per process).

    It runs a tiny bubblewrap sandbox with the seccomp filter, creates and removes a probe
    cgroup, and checks that the slot uids belong to no account.
    """
    return facts(settings or SandboxSettings()).report
