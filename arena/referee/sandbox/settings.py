"""The sandbox's settings, protection levels, errors and fixed values.

Pure: nothing here touches the host.
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass

from arena.referee.errors import InfrastructureError

__all__ = [
    "BOT_PATH",
    "DEFAULT_STATE_DIR",
    "HOST_SLOT_LOCKS",
    "IDLE_STAGED_COPIES",
    "OPEN_FILES",
    "ProtectionLevel",
    "SandboxSettings",
    "SandboxUnavailable",
    "SlotsExhausted",
]

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

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Host folders of the system runtime, bound read-only (or re-created as symlinks)."""

RESERVED_INSIDE = ("/bot", "/tmp", "/proc", "/dev", "/etc", *SYSTEM_DIRS)
"""Paths inside the sandbox that ``readonly_paths`` may not cover."""


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


class SandboxUnavailable(InfrastructureError):
    """The requested protection is not available, or is inadequate for an untrusted bot."""


class SlotsExhausted(InfrastructureError):
    """Every slot (per-bot uid and cgroup) is in use."""


@dataclass(frozen=True)
class SandboxSettings:
    """Limits and places. The defaults suit a worker running one or a few games at a time."""

    memory_mb: int = 512
    """Memory of the whole bot process tree (cgroup); RLIMIT_AS per process without cgroups."""
    max_processes: int = 256
    """Processes *and threads* of the bot, bubblewrap's two included (pids cgroup). A JVM
    running a pool of 64 threads has 84 tasks on 2 CPUs, 166 on 128 (its own threads grow
    with the host's CPUs); memory is the real bound. 64 slots of 256 stay within the
    classic ``kernel.pid_max`` of 32768."""
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
                inside == r or inside.startswith(r + "/") for r in RESERVED_INSIDE
            ):
                raise ValueError(f"readonly path {pair!r}: {inside} is reserved in the sandbox")
            paths.append((host, inside))
        object.__setattr__(self, "readonly_paths", tuple(paths))
        for name, value in self.env:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or "\0" in value:
                raise ValueError(f"bad environment variable {name!r}")
