"""Builds from source: a bot's ``build`` command, run once per content in the sandbox.

A bot folder may name a shell command in its manifest (``build = "cargo build --release"``).
:class:`Builder` runs it inside the sandbox, with the network off and limits of its own
(:class:`BuildLimits`: time, memory, processes, disk), in a writable copy of the folder, and
keeps the result in a cache folder named by the bot's content hash, so a version is built once
per machine. The built bot is the same :class:`~arena.referee.bots.BotSpec` with ``path`` in the
cache and ``built`` set; its ``command`` then runs there.

How the result leaves the sandbox: ``/bot`` is an empty tmpfs of ``disk_mb`` (the only place
the build may fill, besides ``/tmp``); :data:`BUILD_SCRIPT` copies the folder from ``/src`` into
it, runs the command with its standard output sent to its standard error (the build log), and
then writes ``/bot`` as a tar stream on a descriptor the command never had. The referee reads at
most ``disk_mb`` (and a margin) of it and unpacks it with tarfile's ``data`` filter: the stream is
the bot's output, as untrusted as any. What the build leaves is kept in every worker's cache, so
it has a limit of its own, ``output_mb``, below the room it may use while it runs. A hard link
in the result becomes a plain copy of the file it names, which must come before it in the same
stream (as tar writes them): ``/bot`` is a file system of its own, so a build can only link
files it made or copied there, and a forged stream cannot name anything else.

What went wrong is said in two kinds, as everywhere in the referee: :class:`BuildFailed` when
the bot's build failed (its exit status, a limit, its log), an
:class:`~arena.referee.errors.InfrastructureError` when the machine did.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import posixpath
import select
import shutil
import stat
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.referee import cachedir
from arena.referee.bots import BotSpec
from arena.referee.errors import InfrastructureError
from arena.referee.reasons import storable
from arena.referee.sandbox import BotProcess, ProtectionLevel, Sandbox
from arena.referee.transport import describe_exit

__all__ = [
    "BUILD_ENV",
    "BUILD_SCRIPT",
    "BuildFailed",
    "BuildLimits",
    "Builder",
    "Built",
]

BUILD_SCRIPT = (
    "/bin/sh",
    "-c",
    'cp -R -- "$1"/. "$2"/ || exit 125\n'
    'cd -- "$2" || exit 125\n'
    # The command's standard output joins its log; descriptor 3 (the tar stream) is not its.
    "exec 3>&1 1>&2\n"
    '/bin/sh -c "$3" 3>&- || exit\n'
    "exec tar -cf - . >&3\n",
    "build",
)
"""The program a build runs: ``BUILD_SCRIPT + (SOURCE, WORKSPACE, COMMAND)``."""

BUILD_ENV = (
    ("CARGO_NET_OFFLINE", "true"),
    ("GOPROXY", "off"),
    ("GOTOOLCHAIN", "local"),
    ("GOFLAGS", "-mod=mod"),
)
"""Set for every build: the network is off, and these make the usual tools know it rather than
try it (cargo, go)."""

_COPY_FAILED = 125
_TAR_MARGIN = 1 << 20  # headers and padding of the tar stream, beyond the files themselves
_MAX_MEMBERS = 100_000


class BuildFailed(Exception):
    """The bot's build failed: ``reason`` is one line, ``log`` the end of its output."""

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = str(storable(log))


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use. The defaults suit compilers (a JVM, rustc, go)."""

    seconds: float = 300.0
    """Wall time of the whole build, copying and packing included."""
    memory_mb: int = 2048
    """Memory of the whole build, its workspace and ``/tmp`` included (cgroup)."""
    max_processes: int = 512
    """Processes and threads (pids cgroup)."""
    disk_mb: int = 512
    """Size of the workspace: the bot's folder, and everything the build writes in it."""
    output_mb: int = 200
    """The most the files the build leaves in the bot's folder may hold (the built bot, kept
    in each worker's cache); as much as an upload may unpack to."""
    scratch_mb: int = 512
    """Size of ``/tmp`` (the home folder: compiler caches)."""
    log_bytes: int = 64 * 1024
    """How much of the end of the build's output is kept."""

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError("BuildLimits.seconds must be positive")
        for name in (
            "memory_mb",
            "max_processes",
            "disk_mb",
            "output_mb",
            "scratch_mb",
            "log_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"BuildLimits.{name} must be positive")


@dataclass(frozen=True)
class Built:
    """A bot ready to run, and how it came to be."""

    spec: BotSpec
    log: str = ""
    """The end of the build's output (empty for a bot without a build, or one from the cache
    whose log was not kept)."""
    seconds: float = 0.0
    cached: bool = False

    @functools.cached_property
    def size(self) -> int:
        """Bytes of the files of the built folder (0 for a bot without a build): what the
        build keeps on each worker that runs the bot."""
        return _files_size(self.spec.path) if self.spec.built else 0


class Builder:
    """Builds bots in ``sandbox`` into ``cache_dir``, once per content hash (thread-safe, and
    safe between processes sharing the folder)."""

    def __init__(
        self, sandbox: Sandbox, cache_dir: Path | str, limits: BuildLimits | None = None
    ) -> None:
        self.sandbox = sandbox
        self.cache_dir = Path(cache_dir)
        self.limits = limits or BuildLimits()

    def build(self, spec: BotSpec) -> Built:
        """The bot ready to run: ``spec`` itself when it needs no build, else its built copy.

        Raises :class:`BuildFailed` when the build fails (the bot's doing), an
        :class:`InfrastructureError` when the machine fails (no sandbox, a full disk).
        """
        if not spec.needs_build:
            return Built(spec, cached=True)
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            target = self.cache_dir / spec.digest
            with cachedir.locked(self.cache_dir, spec.digest):
                if (target / "bot").is_dir():
                    return Built(self._built(spec, target), _read_log(target), cached=True)
                started = time.monotonic()
                work = Path(tempfile.mkdtemp(prefix=".build-", dir=self.cache_dir))
                try:
                    log = self._run(spec, work)
                    (work / "build.log").write_text(log, encoding="utf-8")
                    work.chmod(0o755)
                    os.rename(work, target)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                return Built(self._built(spec, target), log, time.monotonic() - started)
        except OSError as e:
            raise InfrastructureError(f"the build of {spec.name} could not be stored: {e}") from e

    @staticmethod
    def _built(spec: BotSpec, target: Path) -> BotSpec:
        return dataclasses.replace(spec, path=target / "bot", built=True)

    def _run(self, spec: BotSpec, work: Path) -> str:
        """Run the build; unpack its result into ``work / "bot"``; return its log."""
        limits = self.limits
        settings = dataclasses.replace(
            self.sandbox.settings,
            memory_mb=limits.memory_mb,
            max_processes=limits.max_processes,
            scratch_mb=max(limits.scratch_mb, limits.disk_mb),
            cpu_seconds=limits.seconds * max(1, os.cpu_count() or 1),
            stderr_bytes=limits.log_bytes,
            env=(*self.sandbox.settings.env, *BUILD_ENV),
        )
        if self.sandbox.level is ProtectionLevel.NONE:
            workspace = work / "workspace"
            workspace.mkdir()
            argv = [*BUILD_SCRIPT, str(spec.folder), ".", spec.build]
            process = self.sandbox.launch(workspace, argv, trusted=spec.trusted, limits=settings)
        else:
            argv = [*BUILD_SCRIPT, "/src", "/bot", spec.build]
            process = self.sandbox.launch(
                spec.folder,
                argv,
                trusted=spec.trusted,
                limits=settings,
                workspace_mb=limits.disk_mb,
            )
        stream = work / "result.tar"
        try:
            finished = _collect(process, stream, limits)
            status = process.wait(1.0) if finished else None
            if status is None:
                process.kill()
            violation = process.violation()
            process.drain_stderr(1.0)
            log = process.stderr_tail()
            if violation is not None:
                raise BuildFailed(f"the build was stopped by the sandbox: {violation.message}", log)
            if not finished or status is None:
                raise BuildFailed(f"the build took longer than {limits.seconds:g} s", log)
            if status != 0:
                problem = process.setup_failure()
                if problem is not None:
                    raise InfrastructureError(f"the sandbox could not run the build: {problem}")
                if status == _COPY_FAILED:
                    raise BuildFailed("the bot's folder could not be copied for its build", log)
                raise BuildFailed(f"the build command failed ({describe_exit(status)})", log)
        finally:
            process.kill()
        try:
            _unpack(stream, work / "bot", limits)
        except BuildFailed as e:
            raise BuildFailed(e.reason, log) from None
        stream.unlink()
        shutil.rmtree(work / "workspace", ignore_errors=True)
        return str(storable(log))


def _collect(process: BotProcess, stream: Path, limits: BuildLimits) -> bool:
    """Copy the build's tar stream to ``stream`` until its end, the deadline or the size cap.

    Returns whether the stream ended (False: the deadline passed).
    """
    deadline = time.monotonic() + limits.seconds
    cap = (limits.disk_mb << 20) + _TAR_MARGIN
    fd = process.stdout
    written = 0
    with open(stream, "wb") as out:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return True
            written += len(chunk)
            if written > cap:
                raise BuildFailed(
                    f"the build left more than {limits.disk_mb} MiB in the bot's folder",
                    process.stderr_tail(),
                )
            out.write(chunk)


def _unpack(stream: Path, target: Path, limits: BuildLimits) -> None:
    """Unpack the build's result: files, folders and symbolic links (kept inside the folder by
    the ``data`` filter); a hard link as a copy of the file it names, which must come before
    it in the stream. Refuses a result over ``output_mb``."""
    target.mkdir(mode=0o755)
    limit = limits.output_mb << 20
    try:
        with tarfile.open(stream, "r:") as tar:
            members = []
            files: dict[str, tarfile.TarInfo] = {}  # by name: what a hard link may name
            size = 0
            for count, member in enumerate(tar, 1):
                if count > _MAX_MEMBERS:
                    raise BuildFailed(f"the build left more than {_MAX_MEMBERS} files")
                if member.islnk():
                    source = files.get(posixpath.normpath(member.linkname))
                    if source is None:
                        raise BuildFailed(
                            "the build's result could not be read: the hard link "
                            f"{_shown(member.name)} names {_shown(member.linkname)}, which is "
                            "not a file before it in the result"
                        )
                    # The same data again, under the link's name: a file of its own.
                    member = source.replace(name=member.name, deep=False)
                elif not (member.isfile() or member.isdir() or member.issym()):
                    continue  # pipes, devices: never part of a bot
                name = posixpath.normpath(member.name)
                if member.isfile():
                    files[name] = member
                    size += member.size
                    if size > limit:
                        raise BuildFailed(
                            f"the build left more than {limits.output_mb} MiB in the bot's "
                            "folder, the most a built bot may hold"
                        )
                else:
                    files.pop(name, None)
                members.append(member)
            tar.extractall(target, members=members, filter="data")
    except (tarfile.TarError, ValueError) as e:
        raise BuildFailed(f"the build's result could not be read: {e}") from None
    for directory, dirnames, filenames in os.walk(target):
        for name in dirnames:
            os.chmod(os.path.join(directory, name), 0o755)
        for name in filenames:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                executable = os.stat(path).st_mode & 0o111
                os.chmod(path, 0o755 if executable else 0o644)


def _shown(name: str) -> str:
    """A name from the result, quoted and cut short for a reason.

    >>> _shown("./leak"), _shown("a\\nb")
    ("'leak'", "'a\\\\nb'")
    """
    name = posixpath.normpath(name)
    return repr(name if len(name) <= 100 else name[:100] + "...")


def _files_size(folder: Path) -> int:
    """Bytes of the plain files under ``folder``."""
    total = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            info = os.lstat(os.path.join(directory, name))
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total


def _read_log(target: Path) -> str:
    try:
        return (target / "build.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
