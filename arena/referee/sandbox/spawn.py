"""Starting processes: the spawner thread, a bot's pipes, and the probe's run as another uid.

Privileged: a root referee starts every bot here, as root, behind the preamble of
:mod:`.launch` that joins the slot's cgroups and drops to the slot uid before bubblewrap runs;
and :func:`run_as` runs the probe's test sandbox as another uid. No other module starts a
process that changes uid.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["Spawner", "run_as", "start"]

_T = TypeVar("_T")


class Spawner:
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

    @property
    def native_id(self) -> int:
        """The thread's id (``/proc/self/task/ID``)."""
        assert self._thread.native_id is not None
        return self._thread.native_id

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            function, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function())
                except BaseException as exc:
                    future.set_exception(exc)

    def call(self, function: Callable[[], _T]) -> _T:
        """Run ``function`` on the spawner thread; return its result or raise its error."""
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            if self._stopped or not self._thread.is_alive():
                raise RuntimeError("the sandbox is closed")
            self._queue.put((function, future))
        return future.result()

    def stop(self) -> None:
        """Let the thread end (after what was already asked of it)."""
        with self._lock:
            self._stopped = True
            self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)


def start(
    spawner: Spawner,
    argv: Sequence[str],
    *,
    cwd: str,
    env: dict[str, str],
    pass_fds: tuple[int, ...],
) -> tuple[subprocess.Popen[bytes], int, int, int]:
    """Start ``argv`` in a new session with fresh pipes; return it and the parent's ends
    (stdin to write, stdout and stderr to read; stderr non-blocking)."""
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
                list(argv),
                stdin=stdin_read,
                stdout=stdout_write,
                stderr=stderr_write,
                pass_fds=pass_fds,
                close_fds=True,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )

        popen = spawner.call(spawn)
    except BaseException:
        for fd in pipes:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    for fd in (stdin_read, stdout_write, stderr_write):
        os.close(fd)
    return popen, stdin_write, stdout_read, stderr_read


def run_as(
    uid: int | None, argv: Sequence[str], *, pass_fds: tuple[int, ...], timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` to its end as ``uid`` (its own group, no others; None: as ourselves),
    with an empty environment, capturing its output."""
    kwargs: dict[str, Any] = {}
    if uid is not None:
        kwargs = {"user": uid, "group": uid, "extra_groups": []}
    return subprocess.run(
        list(argv),
        pass_fds=pass_fds,
        capture_output=True,
        timeout=timeout,
        env={},
        cwd="/",
        check=False,
        **kwargs,
    )
