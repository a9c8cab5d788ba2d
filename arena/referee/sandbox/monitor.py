"""The monitor thread: drains every bot's standard error and enforces whole-tree CPU time.

Not privileged: it reads pipes and ``/proc``; the bots it watches do their own killing.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from typing import Protocol

from arena.referee.sandbox.procfs import ProcEntry, proc_table

__all__ = ["Monitor", "StderrPipe", "Watched"]


class StderrPipe:
    """The read end of a bot's standard error: the tail kept of it, and how much came in all.

    The monitor thread reads it while the bot runs; another thread may read it too
    (:meth:`read_available`), under the same lock, so the tail keeps the bot's order. Only the
    monitor closes it (the descriptor is registered in its selector).
    """

    def __init__(self, fd: int, keep: int) -> None:
        self._fd = fd
        self._keep = keep
        self._lock = threading.Lock()
        self._tail = bytearray()
        self._total = 0
        self.closed = threading.Event()
        """Set once the descriptor is closed."""
        self.eof = threading.Event()
        """Set once every writer has closed the pipe and all it held was read (or it was
        closed)."""

    @property
    def fd(self) -> int:
        """The descriptor, or -1 once closed."""
        return self._fd

    @property
    def total(self) -> int:
        """Bytes read from the pipe so far."""
        with self._lock:
            return self._total

    def read_available(self, chunks: int = 16) -> bool:
        """Read up to ``chunks`` reads' worth of what the pipe holds now, without waiting.

        Returns False at end of file (or once closed), True otherwise.
        """
        for _ in range(chunks):
            with self._lock:
                if self._fd < 0:
                    return False
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    return True
                except OSError:
                    data = b""
                if not data:
                    self.eof.set()
                    return False
                self._append(data)
        return True

    def drain(self, timeout: float = 0.0) -> bool:
        """Read what the pipe holds now; with a ``timeout``, wait until end of file too.

        What the bot wrote before this call is in :meth:`tail` afterwards. With a timeout (for
        a bot that has ended), it waits for the end of file, which comes once every process
        that held the pipe is gone: then nothing the bot wrote is missing. Waiting is on an
        event set by whichever thread reads the end of file, never a sleep. Returns whether
        the end of file was reached.
        """
        deadline = time.monotonic() + timeout
        while True:
            if not self.read_available(chunks=64):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            # The monitor thread reads as data comes; wake at least now and then to read
            # ourselves, in case it no longer runs.
            if self.eof.wait(min(left, 0.05)):
                return True

    def _append(self, data: bytes) -> None:
        self._total += len(data)
        self._tail += data
        if len(self._tail) > 2 * self._keep:
            del self._tail[: -self._keep]

    def tail(self) -> str:
        """The last ``keep`` bytes, decoded leniently."""
        with self._lock:
            return bytes(self._tail[-self._keep :]).decode(errors="replace")

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = -1
        self.eof.set()
        self.closed.set()


class Watched(Protocol):
    """What the monitor needs of a bot."""

    @property
    def stderr_pipe(self) -> StderrPipe: ...
    @property
    def terminated(self) -> bool: ...
    @property
    def needs_proc_table(self) -> bool: ...
    def watchdog(self, table: dict[int, ProcEntry] | None) -> None: ...


class Monitor:
    """One thread per sandbox: drains the bots' stderr and enforces whole-tree CPU time."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._pending: list[tuple[str, Watched]] = []
        self._bots: set[Watched] = set()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="sandbox-monitor", daemon=True)
        self._thread.start()

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_write, b"x")

    def add(self, bot: Watched) -> None:
        """Start watching ``bot``."""
        with self._lock:
            self._pending.append(("add", bot))
        self._wake()

    def release_stderr(self, bot: Watched) -> None:
        """Have the monitor drain and close the bot's stderr; wait until it has."""
        pipe = bot.stderr_pipe
        if not self._thread.is_alive():
            pipe.close()
            return
        with self._lock:
            self._pending.append(("close", bot))
        self._wake()
        if not pipe.closed.wait(timeout=5):
            raise RuntimeError("the sandbox monitor did not release a bot's stderr")

    def stop(self) -> None:
        """End the thread; the pipes still open are closed."""
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
                        fd = bot.stderr_pipe.fd
                        if fd >= 0:
                            self._selector.register(fd, selectors.EVENT_READ, bot)
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

    def _drain(self, bot: Watched) -> None:
        # A bounded amount per call, so that a bot flooding stderr cannot hold this thread
        # (the selector reports the descriptor again on the next turn).
        if not bot.stderr_pipe.read_available():
            self._unregister(bot)

    def _unregister(self, bot: Watched) -> None:
        pipe = bot.stderr_pipe
        if pipe.fd >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(pipe.fd)
        pipe.close()

    def _check_cpu(self) -> None:
        running = [b for b in self._bots if not b.terminated]
        if not running:
            return
        # One /proc scan per tick for every bot without cgroup accounting.
        table = proc_table() if any(b.needs_proc_table for b in running) else None
        for bot in running:
            with contextlib.suppress(Exception):
                bot.watchdog(table)
