"""Launch one bot process inside a sandbox and report what the sandbox stopped it doing.

Bots are uploaded programs and are treated as hostile. :class:`Sandbox` starts each one in
layers (see ``docs/sandbox.md`` for the full account and the tests that prove each promise):

* its own unprivileged host uid per concurrently running bot (a *slot*), joined to its own
  cgroups (memory, pids, cpuacct, freezer) before privileges are dropped;
* bubblewrap with new user, pid, network, IPC, UTS, mount and cgroup namespaces, a read-only
  view of the system runtime and of the bot's folder (at ``/bot``), a sized private ``/tmp``,
  ``--die-with-parent``;
* a seccomp filter (:mod:`.seccomp`) and rlimits;
* a watchdog thread that kills a bot whose whole process tree used too much CPU time, and
  drains its standard error.

Three protection levels exist (:class:`ProtectionLevel`); :func:`probe` finds the best one
this host offers (``python -m arena.referee.sandbox probe`` prints it). What starting, stopping
and freezing a bot costs is measured beside the arena (``./dev bench sandbox``).

The modules, split along the seams (each one's docstring says whether it is privileged):

========================  =========================================================  ==========
module                    what                                                        privileged
========================  =========================================================  ==========
:mod:`.settings`          ``SandboxSettings``, ``ProtectionLevel``, errors, constants
:mod:`.host`              ``probe()`` and ``HostReport``: what the host offers
:mod:`.launch`            the preamble, the privilege drop and bubblewrap's arguments
:mod:`.procfs`            the process table from ``/proc``: descendants, uids
:mod:`.staging`           staged copies of folders the slot uids cannot read
:mod:`.monitor`           the thread that drains stderr and enforces CPU time
:mod:`.process`           ``BotProcess`` and its ``Lease``
:mod:`.core`              ``Sandbox``, and ``reap()`` of leftovers
:mod:`.seccomp`           the system-call filter (classic BPF, built in Python)
:mod:`.cgrouplayout`      where the cgroups are; where the bots' groups may go (v1, v2)
:mod:`.spawn`             starting bots as root behind the preamble; runs as a uid    yes
:mod:`.kill`              killing by pid and by uid                                   yes
:mod:`.slots`             host-wide slot locks                                        yes
:mod:`.cgroups`           cgroup creation, limits, freezing, kill-all                 yes
========================  =========================================================  ==========
"""

from arena.referee.sandbox.core import Sandbox, reap
from arena.referee.sandbox.host import HostReport, probe
from arena.referee.sandbox.process import BotProcess, Lease, Violation, ViolationKind
from arena.referee.sandbox.procfs import processes_of_uids
from arena.referee.sandbox.settings import (
    BOT_PATH,
    DEFAULT_STATE_DIR,
    HOST_SLOT_LOCKS,
    IDLE_STAGED_COPIES,
    OPEN_FILES,
    ProtectionLevel,
    SandboxSettings,
    SandboxUnavailable,
    SlotsExhausted,
)

__all__ = [
    "BOT_PATH",
    "DEFAULT_STATE_DIR",
    "HOST_SLOT_LOCKS",
    "IDLE_STAGED_COPIES",
    "OPEN_FILES",
    "BotProcess",
    "HostReport",
    "Lease",
    "ProtectionLevel",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "SlotsExhausted",
    "Violation",
    "ViolationKind",
    "probe",
    "processes_of_uids",
    "reap",
]
