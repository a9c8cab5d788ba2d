"""A "host" on this machine: a process tree in a mount namespace of its own, whose files under
one shared path are its own.

Every host mounts a fresh tmpfs over the same folder (``root``) as it starts, so that each sees
only what it wrote there, at the same path, as separate machines would; the arena's processes
it runs keep everything they write under ``root/var``. The namespace is made by ``unshare``
(util-linux; root only) and goes away with the host's last process, its tmpfs with it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools import ToolError

#: What every host writes as it starts: ``root/var/written-by-NAME``.
MARK = "written-by-"


@dataclass
class Command:
    """A program a host runs, its output going to ``log`` (a file outside ``root``)."""

    argv: list[str]
    log: Path


@dataclass
class Host:
    """A host: its name, the shared folder it mounts its tmpfs over, and what it runs in
    turn. ``setup`` commands run first, one after the other, each of which must succeed; then
    ``services`` run side by side until the host is stopped (the last in the host's first
    process itself)."""

    name: str
    root: Path
    env: dict[str, str]
    cwd: Path
    setup: list[Command] = field(default_factory=list)
    services: list[Command] = field(default_factory=list)
    popen: subprocess.Popen[bytes] | None = None

    @property
    def var(self) -> Path:
        return self.root / "var"

    def script(self) -> str:
        """The shell script the host's first process runs inside its namespace."""
        q = shlex.quote
        root, var = q(str(self.root)), q(str(self.var))
        lines = [
            "set -e",
            f"mount -t tmpfs -o mode=0711 {q(self.name)} {root}",
            f"mkdir -m 0711 {var}",
            f"echo {q(self.name)} > {var}/{MARK}{q(self.name)}",
        ]
        for c in self.setup:
            lines.append(f"{shlex.join(c.argv)} >> {q(str(c.log))} 2>&1")
        for i, c in enumerate(self.services):
            run = f"{shlex.join(c.argv)} >> {q(str(c.log))} 2>&1"
            lines.append(f"exec {run}" if i == len(self.services) - 1 else f"{run} &")
        return "\n".join(lines)

    def start(self, log: Path) -> None:
        """Start the host in a session of its own (its processes share one process group; the
        bots its workers run have groups of their own, and the sandbox's reaper removes them)."""
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", self.script()]
        with log.open("ab") as out:
            self.popen = subprocess.Popen(
                argv,
                env=self.env,
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL to every process of the host's process group, as a machine losing power."""
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait()

    def stop(self, grace: float) -> None:
        """SIGTERM to the host's processes, then SIGKILL to whatever is left after ``grace``
        seconds."""
        self.signal(signal.SIGTERM)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace)
        self.kill()

    def inside(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """Run a command in the host's mount namespace (``nsenter``): what the host sees."""
        if not self.running:
            raise ToolError(f"host {self.name} is not running")
        assert self.popen is not None
        return subprocess.run(
            ["nsenter", "--target", str(self.popen.pid), "--mount", "--", *argv],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def marks(self) -> list[str]:
        """The names of the hosts whose start-up mark this host sees in its var folder (none
        until it has mounted its tmpfs and written its own)."""
        listing = self.inside("ls", "-A", str(self.var))
        if listing.returncode != 0:
            return []
        return sorted(n[len(MARK) :] for n in listing.stdout.split() if n.startswith(MARK))

    def wait_started(self, timeout: float, log: Path) -> None:
        """Wait until the host has mounted its tmpfs and written its mark."""
        deadline = time.monotonic() + timeout
        while not self.marks():
            if not self.running:
                raise ToolError(f"host {self.name} exited at start: {tail(log)}")
            if time.monotonic() > deadline:
                raise ToolError(f"host {self.name} did not start in {timeout:.0f} s: {tail(log)}")
            time.sleep(0.2)


def tail(log: Path, chars: int = 2000) -> str:
    try:
        return log.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


def check_unshare(root: Path) -> None:
    """Refuse early, with the reason, where a host cannot be made: not root, or no
    ``unshare`` with a private tmpfs."""
    if os.geteuid() != 0:
        raise ToolError("the hosts are mount namespaces: run as root")
    probe = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            f"mount -t tmpfs probe {shlex.quote(str(root))}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise ToolError(f"cannot make a host's namespace with unshare: {probe.stderr.strip()}")
