"""The :class:`Sandbox`: launches bots in slots, sweeps what a dead referee left behind.

It puts the other modules together: the host's facts (:mod:`.host`), a slot and a staged copy
per bot (:mod:`.slots`, :mod:`.staging`) taken through the bot's :class:`~.process.Lease`, the
command line (:mod:`.launch`), the start (:mod:`.spawn`) and the monitor thread
(:mod:`.monitor`). Its own privileged step is the sweep at construction, which goes through
:mod:`.kill` and :mod:`.cgroups`; :func:`reap` runs the same sweep without making a sandbox
(a worker at its start, and the arena's periodic sweeper).
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from arena.referee.sandbox import cgroups, mounts
from arena.referee.sandbox.host import HostFacts, facts
from arena.referee.sandbox.kill import kill_uid
from arena.referee.sandbox.launch import (
    EXEC_SHIM,
    LaunchFds,
    SetupReport,
    bot_env,
    bwrap_argv,
    drop_privileges,
    preamble,
    rlimits,
)
from arena.referee.sandbox.monitor import Monitor
from arena.referee.sandbox.process import BotProcess, Lease
from arena.referee.sandbox.procfs import processes_of_uids
from arena.referee.sandbox.settings import (
    HOST_SLOT_LOCKS,
    ProtectionLevel,
    SandboxSettings,
    SandboxUnavailable,
)
from arena.referee.sandbox.slots import SlotPool
from arena.referee.sandbox.spawn import Spawner, start
from arena.referee.sandbox.staging import StagingArea, state_dir, traversable_by_others

__all__ = ["Sandbox", "reap"]

log = logging.getLogger(__name__)

_COPIES = "copies"
"""The folder of a sandbox's staging folder that holds the staged copies (a tmpfs, as root)."""

_DEFAULT_SETTINGS = SandboxSettings()


class Sandbox:
    """Launches bots in slots; one per referee process is enough (it is thread-safe).

    ``level=None`` uses the best level :func:`probe` finds; asking for more than the host
    offers raises :class:`SandboxUnavailable`. FULL is adequate for untrusted bots; below it
    :meth:`launch` refuses untrusted bots unless ``allow_unsandboxed`` (the development switch)
    is set. Construction sweeps what a previous referee killed with SIGKILL left behind.
    """

    def __init__(
        self,
        settings: SandboxSettings = _DEFAULT_SETTINGS,
        *,
        level: ProtectionLevel | None = None,
        allow_unsandboxed: bool = False,
    ) -> None:
        self.settings = settings
        host = facts(settings)
        self.report = host.report
        if level is None:
            level = host.report.level
        elif level.rank > host.report.level.rank:
            raise SandboxUnavailable(
                f"protection level {level.value} is not available on this host. "
                + host.report.describe()
            )
        self.level = ProtectionLevel(level)
        self.allow_unsandboxed = allow_unsandboxed
        self._facts = host
        self._root = host.root
        self._bwrap = host.bwrap
        self._layout = host.cgroups if self.level is ProtectionLevel.FULL else None
        self._closed = False
        self._lock = threading.Lock()
        self._bots: dict[Lease, BotProcess] = {}

        self.state_dir = state_dir(settings.state_dir)
        if self._root:
            os.chmod(self.state_dir, os.stat(self.state_dir).st_mode | 0o011)
            if not traversable_by_others(self.state_dir):
                raise SandboxUnavailable(
                    f"{self.state_dir} must be reachable by other users (its parents need "
                    "the x permission): staged bot folders live there"
                )
        lock_dir = Path(HOST_SLOT_LOCKS) if self._root else self.state_dir / "slots"
        self._slots = SlotPool(lock_dir, settings.first_uid, settings.slots)
        staging_root = self.state_dir / "staging"
        staging_root.mkdir(mode=0o711, exist_ok=True)
        _sweep(settings, host, self._slots, staging_root)
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
        try:
            if self._layout is not None:
                cgroups.prepare_base(self._layout, settings.cgroup_name)
            self._spawner = Spawner()
            self._staged = self._staging_area()
            self._monitor = Monitor(settings.watchdog_interval)
        except BaseException:
            if hasattr(self, "_spawner"):
                self._spawner.stop()
            shutil.rmtree(self._staging, ignore_errors=True)
            os.close(self._staging_lock)
            raise

    def _staging_area(self) -> StagingArea:
        """Where the folders bound into sandboxes are staged.

        A root referee stages every one of them on a tmpfs of its own, so that the mount table
        a bot reads names none of the host's folders (see staging.py and mounts.py). The tmpfs
        is mounted on ``copies`` in the spawner thread's own mount namespace, where every
        bubblewrap starts; this process reaches it through the thread's ``/proc`` entry. Where
        the referee may not mount (a container without CAP_SYS_ADMIN) folders are bound where
        they are.
        """
        copies = self._staging / _COPIES
        copies.mkdir(mode=0o711)
        os.chmod(copies, 0o711)
        self.private_staging = False
        """Whether every bound folder is staged on the sandbox's own tmpfs (a root referee that
        may mount), so that a bot's mount table names no host folder."""
        if self._root and self.level is not ProtectionLevel.NONE:
            try:
                self._spawner.call(lambda: mounts.private_tmpfs(copies))
            except OSError as exc:
                log.warning("bot folders are bound where they are on the host: %s", exc)
                # It may have left the host's mount namespace: start from the host's again.
                self._spawner.stop()
                self._spawner = Spawner()
            else:
                self.private_staging = True
                seen = Path(f"/proc/self/task/{self._spawner.native_id}/root")
                return StagingArea(seen / copies.relative_to("/"), always=True, bound_as=copies)
        return StagingArea(copies)

    def __repr__(self) -> str:
        return f"<Sandbox level={self.level.value} state_dir={str(self.state_dir)!r}>"

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def staging_dir(self) -> Path:
        """This sandbox's own folder under ``state_dir/staging`` (removed by :meth:`close`)."""
        return self._staging

    # -- launching ----------------------------------------------------------------------------

    def launch(
        self,
        bot_dir: Path | str,
        argv: Sequence[str],
        *,
        trusted: bool = False,
        limits: SandboxSettings | None = None,
        workspace_mb: int | None = None,
    ) -> BotProcess:
        """Start ``argv`` in the bot folder ``bot_dir`` (at ``/bot``, the working directory).

        ``limits`` replaces the sandbox's settings for this bot only (a build's larger memory,
        processes and time; its places and slots are ignored). ``workspace_mb`` (a build) binds
        the folder read-only at ``/src`` and makes ``/bot`` an empty writable tmpfs of that
        size (charged to the bot's memory); at level NONE the program simply runs in
        ``bot_dir``, which the caller made for it.

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
        settings = self.settings if limits is None else limits
        if workspace_mb is not None and workspace_mb <= 0:
            raise ValueError("workspace_mb must be positive")
        if self.level is ProtectionLevel.NONE:
            bot = self._launch_plain(directory, list(argv), settings)
        else:
            bot = self._launch_sandboxed(directory, list(argv), settings, workspace_mb)
        self._monitor.add(bot)
        return bot

    def _started(
        self,
        lease: Lease,
        started: tuple[subprocess.Popen[bytes], int, int, int],
        settings: SandboxSettings,
        *,
        setup: SetupReport | None = None,
    ) -> BotProcess:
        popen, stdin, stdout, stderr = started
        bot = BotProcess(
            popen=popen,
            setup=setup,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            level=self.level,
            settings=settings,
            lease=lease,
            monitor=self._monitor,
        )
        with self._lock:
            self._bots[lease] = bot
        return bot

    def _launch_sandboxed(
        self,
        directory: Path,
        argv: list[str],
        settings: SandboxSettings,
        workspace_mb: int | None,
    ) -> BotProcess:
        assert self._bwrap is not None
        slot = self._slots.acquire()
        lease = Lease(
            uid=slot.uid if self._root else os.getuid(),
            slot=slot,
            slots=self._slots,
            staging=self._staged if self._root else None,
            sweep_uid=self._root,
            on_return=self._forget,
        )
        fds: LaunchFds | None = None
        try:
            for host, _ in settings.readonly_paths:
                if not (os.path.isfile(host) or os.path.isdir(host)):
                    raise SandboxUnavailable(
                        f"readonly path {host} is not a regular file or a folder: a unix "
                        "socket or a FIFO would let the bot talk to the host"
                    )
            source = lease.stage(directory)
            readonly = [
                (str(lease.stage(Path(host))), inside)
                for host, inside in self.settings.readonly_paths
            ]
            if self._layout is not None:
                lease.make_cgroup(
                    self._layout,
                    self.settings.cgroup_name,
                    memory_bytes=settings.memory_mb << 20,
                    max_tasks=settings.max_processes,
                )
            fds = LaunchFds.open(lease.uid)
            command = bwrap_argv(
                self._bwrap,
                bot_source=str(source),
                readonly=readonly,
                env=bot_env(settings, "/tmp"),
                scratch_bytes=settings.scratch_mb << 20,
                fds=fds,
                workspace_bytes=None if workspace_mb is None else workspace_mb << 20,
            )
            drop: list[str] = []
            if self._root:
                assert self._facts.setpriv is not None
                drop = drop_privileges(self._facts.setpriv, lease.uid)
            cgroup = lease.cgroup
            started = start(
                self._spawner,
                preamble(
                    [*drop, *command, "--", *EXEC_SHIM, *argv],
                    procs_files=cgroup.procs_files() if cgroup is not None else (),
                    limits=rlimits(
                        settings,
                        cgroup=cgroup is not None,
                        per_uid=self._root,
                    ),
                    move_stdio=True,
                ),
                cwd="/",
                env={"PATH": "/usr/bin:/bin"},
                pass_fds=fds.passed(),
            )
        except BaseException:
            lease.abandon()
            if fds is not None:
                fds.close()
            raise
        finally:
            if fds is not None:
                fds.close_child_ends()
        return self._started(lease, started, settings, setup=SetupReport(fds.take_status_reader()))

    def _launch_plain(
        self, directory: Path, argv: list[str], settings: SandboxSettings
    ) -> BotProcess:
        lease = Lease(uid=os.getuid(), on_return=self._forget)
        lease.scratch = Path(tempfile.mkdtemp(prefix=".scratch-", dir=self._staging))
        env = dict(bot_env(settings, str(lease.scratch)))
        env["TMPDIR"] = str(lease.scratch)
        setpriv = self._facts.setpriv
        command = [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else argv
        try:
            started = start(
                self._spawner,
                preamble(
                    command,
                    procs_files=(),
                    limits=rlimits(settings, cgroup=False, per_uid=False),
                ),
                cwd=str(directory),
                env=env,
                pass_fds=(),
            )
        except BaseException:
            lease.abandon()
            raise
        return self._started(lease, started, settings)

    # -- closing ------------------------------------------------------------------------------

    def _forget(self, lease: Lease) -> None:
        with self._lock:
            self._bots.pop(lease, None)

    def running(self) -> list[BotProcess]:
        """Bots launched and not yet killed."""
        with self._lock:
            return list(self._bots.values())

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


# -- sweeping ---------------------------------------------------------------------------------


def reap(settings: SandboxSettings = _DEFAULT_SETTINGS) -> None:
    """Remove what referees that died on this host left behind: their staged folders and, as
    root, the processes and cgroups of the slots no live referee holds (the bots of a killed
    worker, often frozen between two turns). Every :class:`Sandbox` does this when it is made;
    a worker calls it when it starts and the sweeper on each run, so that nothing waits for
    the next sandbox. Safe while other referees run: it touches nothing that they lock.

    Raises :class:`SandboxUnavailable` when a leftover cannot be removed.
    """
    host = facts(settings)
    directory = state_dir(settings.state_dir)
    lock_dir = Path(HOST_SLOT_LOCKS) if host.root else directory / "slots"
    staging_root = directory / "staging"
    staging_root.mkdir(mode=0o711, exist_ok=True)
    slots = SlotPool(lock_dir, settings.first_uid, settings.slots)
    _sweep(settings, host, slots, staging_root)


def _sweep(settings: SandboxSettings, host: HostFacts, slots: SlotPool, staging_root: Path) -> None:
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
    if not host.root:
        return  # without per-slot uids there is nothing we may kill by uid
    uids = range(settings.first_uid, settings.first_uid + settings.slots)
    owners = processes_of_uids(uids)
    layout = host.cgroups
    for index in range(settings.slots):
        uid = settings.first_uid + index
        fd = slots.try_lock(index)
        if fd is None:
            continue  # a live referee holds this slot
        try:
            if layout is not None:
                stale = cgroups.SlotCgroup(layout, settings.cgroup_name, f"slot-{uid}")
                if stale.exists() and not stale.destroy():
                    raise SandboxUnavailable(f"stale cgroup {stale.name} cannot be removed")
            if uid in owners and not kill_uid(uid, timeout=5):
                raise SandboxUnavailable(f"stale processes of uid {uid} cannot be killed")
        finally:
            os.close(fd)
