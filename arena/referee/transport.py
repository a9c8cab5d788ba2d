"""The process transport: a bot's pipes, read and written with deadlines and size caps.

The referee loop talks to a bot through a :class:`PipeTransport`, which wraps a running bot
process (the sandbox's ``BotProcess``, or a :class:`LocalProcess` for tests and tools) and
guarantees that

* every read and write has a deadline (``select.poll`` on non-blocking pipes): a bot that
  stops talking never hangs the referee;
* a line is capped (``line_limit`` bytes): a bot that writes without a newline is cut off at
  the cap, never buffered without end;
* standard error is always drained while the referee waits on the bot, and only its last
  ``stderr_limit`` bytes are kept (the tail shown when a bot fails);
* a waiting read gives up as soon as a ``cancel`` event is set.

Each way a read or write can fail is its own exception (:class:`Timeout`, :class:`Closed`,
:class:`LineTooLong`, :class:`Cancelled`), which the referee maps to a termination.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

__all__ = [
    "BotProcessLike",
    "Cancelled",
    "Closed",
    "LineTooLong",
    "LocalProcess",
    "PipeTransport",
    "Timeout",
    "TransportError",
    "ViolationLike",
    "describe_exit",
]

_READ_CHUNK = 65536
_IN = select.POLLIN | select.POLLPRI
_DONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


class TransportError(Exception):
    """A read or write that could not complete."""


class Timeout(TransportError):
    """The deadline passed before a whole line came (or before the bot took our line)."""


class Closed(TransportError):
    """The bot closed its output (end of file) or its input (broken pipe)."""


class LineTooLong(TransportError):
    """The bot wrote more than the line cap without a newline."""


class Cancelled(TransportError):
    """The caller's cancel event was set while waiting."""


class ViolationLike(Protocol):
    """What the sandbox says it stopped (the sandbox's ``Violation``)."""

    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


class BotProcessLike(Protocol):
    """What the transport needs of a running bot (the sandbox's ``BotProcess`` provides it)."""

    stdin: int
    stdout: int
    stderr: int

    def poll(self) -> int | None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def cpu_seconds(self) -> float: ...
    def violation(self) -> ViolationLike | None: ...
    def kill(self) -> None: ...


def describe_exit(returncode: int | None) -> str:
    """A process's exit in words: ``exit code 3``, ``killed by signal 9 (SIGKILL)``.

    >>> describe_exit(0), describe_exit(-11)
    ('exit code 0', 'killed by signal 11 (SIGSEGV)')
    """
    if returncode is None:
        return "still running"
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        return f"killed by signal {number} ({name})"
    return f"exit code {returncode}"


class PipeTransport:
    """Line-oriented, deadline-bound talk with one bot process.

    ``clock`` is the monotonic clock deadlines are read on (``time.monotonic``). Deadlines are
    absolute times on it.
    """

    def __init__(
        self,
        process: BotProcessLike,
        *,
        line_limit: int = 64 * 1024,
        stderr_limit: int = 16 * 1024,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
        poll_slice_s: float = 0.05,
    ) -> None:
        self.process = process
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self.cancel = cancel
        self.clock = clock
        self._slice_ms = poll_slice_s * 1000.0
        self._in_fd: int | None = process.stdin
        self._out_fd = process.stdout
        # The sandbox drains standard error itself (its BotProcess has stderr == -1 and a
        # stderr_tail() method); a LocalProcess leaves it to us.
        self._err_fd = process.stderr
        self._err_open = self._err_fd >= 0
        for fd in (self._in_fd, self._out_fd, self._err_fd):
            if fd >= 0:
                os.set_blocking(fd, False)
        self._out_open = True
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already known to hold no newline
        self._err_tail = bytearray()
        self._err_bytes = 0
        self._poller = select.poll()
        self._poller.register(self._out_fd, _IN)
        if self._err_open:
            self._poller.register(self._err_fd, _IN)
        self.returncode: int | None = None
        self._killed = False

    # ---------------------------------------------------------------------------- writing

    def send(self, data: bytes, deadline: float) -> None:
        """Write all of ``data`` to the bot's input before ``deadline``.

        Raises :class:`Closed` if the bot no longer reads (broken pipe), :class:`Timeout` if
        it does not take the data in time.
        """
        if self._in_fd is None:
            raise Closed("the bot's input is already closed")
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._in_fd, view)
            except BlockingIOError:
                self._wait_writable(deadline)
                continue
            except BrokenPipeError:
                raise Closed("the bot closed its input") from None
            view = view[n:]

    def _wait_writable(self, deadline: float) -> None:
        assert self._in_fd is not None
        poller = select.poll()
        poller.register(self._in_fd, select.POLLOUT)
        if self._err_open:
            poller.register(self._err_fd, _IN)
        while True:
            timeout = self._timeout_ms(deadline)
            for fd, events in poller.poll(timeout):
                if fd == self._in_fd:
                    if events & select.POLLOUT:
                        return
                    raise Closed("the bot closed its input")
                if fd == self._err_fd and not self._read_stderr():
                    poller.unregister(self._err_fd)

    def close_input(self) -> None:
        """Close the bot's standard input (it reads end of file)."""
        if self._in_fd is None:
            return
        fd, self._in_fd = self._in_fd, None
        closer = getattr(self.process, "close_stdin", None)
        if closer is not None:
            closer()
            return
        # The process object owns the descriptor and closes what is still >= 0 when killed:
        # close it here and mark it closed there.
        if self.process.stdin == fd:
            self.process.stdin = -1
            with contextlib.suppress(OSError):
                os.close(fd)

    # ---------------------------------------------------------------------------- reading

    def receive(self, deadline: float) -> bytes:
        """The bot's next line (without its newline), read before ``deadline``.

        Raises :class:`Timeout`, :class:`Closed` (end of file), :class:`LineTooLong` or
        :class:`Cancelled`. Standard error is drained meanwhile.
        """
        buf = self._buf
        while True:
            i = buf.find(b"\n", self._scan)
            if i >= 0:
                if i > self.line_limit:
                    raise LineTooLong(
                        f"more than {self.line_limit} bytes without a newline (the line limit)"
                    )
                line = bytes(buf[:i])
                del buf[: i + 1]
                self._scan = 0
                return line
            self._scan = len(buf)
            if self._scan > self.line_limit:
                raise LineTooLong(
                    f"more than {self.line_limit} bytes without a newline (the line limit)"
                )
            if not self._out_open:
                if buf:
                    raise Closed(f"end of output in the middle of a line ({len(buf)} bytes)")
                raise Closed("end of output")
            self._wait_readable(deadline)

    def _wait_readable(self, deadline: float) -> None:
        """Wait until stdout has data (or end of file); drains stderr meanwhile.

        A bot whose main process has exited while something else (a detached child) keeps its
        output open is taken as closed at the next poll slice, not at the deadline.
        """
        while True:
            timeout = self._timeout_ms(deadline, final_look=True)
            events = self._poller.poll(timeout)
            for fd, _events in events:
                if fd == self._out_fd:
                    self._read_stdout()
                    return
                if fd == self._err_fd and not self._read_stderr():
                    self._poller.unregister(self._err_fd)
            if timeout == 0 and not any(fd == self._out_fd for fd, _ in events):
                raise Timeout("deadline passed")
            if not events and self.poll() is not None:
                before = len(self._buf)
                if self._out_open and self._read_stdout() and len(self._buf) > before:
                    return
                self._out_open = False
                with contextlib.suppress(KeyError, ValueError):
                    self._poller.unregister(self._out_fd)
                return

    def _timeout_ms(self, deadline: float, *, final_look: bool = False) -> float:
        """Milliseconds to wait in one poll; with ``final_look``, 0 once the deadline has
        passed (what is already in the pipe still counts), else Timeout."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("cancelled")
        left = (deadline - self.clock()) * 1000.0
        if left <= 0:
            if final_look:
                return 0
            raise Timeout("deadline passed")
        return math.ceil(min(left, self._slice_ms))

    def _read_stdout(self) -> bool:
        try:
            chunk = os.read(self._out_fd, _READ_CHUNK)
        except BlockingIOError:
            return True
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            chunk = b""
        if not chunk:
            self._out_open = False
            self._poller.unregister(self._out_fd)
            return False
        self._buf += chunk
        return True

    def _read_stderr(self) -> bool:
        """Read what is there on stderr; False at end of file."""
        try:
            chunk = os.read(self._err_fd, _READ_CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            self._err_open = False
            return False
        self._err_bytes += len(chunk)
        tail = self._err_tail
        tail += chunk
        if len(tail) > self.stderr_limit:
            del tail[: len(tail) - self.stderr_limit]
        return True

    def drain_stderr(self, deadline: float | None = None, *, limit: int = 1 << 20) -> None:
        """Read what the bot wrote to standard error so far (at most ``limit`` bytes more).

        With a ``deadline`` (for a bot that has ended) keep reading until the end of file, which
        comes once every process that held the pipe is gone, or the deadline: then the tail has
        the bot's last words. Where the sandbox drains stderr itself, it is asked to do the same.
        """
        if self._err_fd < 0:
            drain = getattr(self.process, "drain_stderr", None)
            if callable(drain):
                drain(0.0 if deadline is None else max(0.0, deadline - self.clock()))
            return
        start = self._err_bytes
        while self._err_open and self._err_bytes - start < limit:
            before = self._err_bytes
            if not self._read_stderr():
                with contextlib.suppress(KeyError, ValueError):
                    self._poller.unregister(self._err_fd)
                break
            if self._err_bytes == before:
                left = 0.0 if deadline is None else deadline - self.clock()
                if left <= 0:
                    break
                poller = select.poll()
                poller.register(self._err_fd, _IN)
                poller.poll(math.ceil(min(left, 1.0) * 1000))

    @property
    def stderr_bytes(self) -> int:
        """Bytes the bot wrote to standard error in all (only the tail is kept)."""
        if self._err_fd < 0:
            total = getattr(self.process, "stderr_bytes", None)
            return total if isinstance(total, int) else 0
        return self._err_bytes

    def unsolicited(self) -> bytes:
        """Output the bot wrote without being asked (read now, without waiting)."""
        while self._out_open and self._read_stdout():
            if len(self._buf) > self.line_limit:
                break
            events = self._poller.poll(0)
            if not any(fd == self._out_fd for fd, _ in events):
                break
        return bytes(self._buf)

    @property
    def stderr_tail(self) -> str:
        """The last bytes the bot wrote to standard error, decoded leniently."""
        if self._err_fd < 0:
            tail = getattr(self.process, "stderr_tail", None)
            text = tail() if callable(tail) else ""
            return text[-self.stderr_limit :]
        return self._err_tail.decode("utf-8", errors="replace")

    # ---------------------------------------------------------------------------- the process

    def poll(self) -> int | None:
        """The exit status once the bot process has ended, else None."""
        if self.returncode is None:
            self.returncode = self.process.poll()
        return self.returncode

    def wait_exit(self, deadline: float) -> int | None:
        """Wait for the bot to exit until ``deadline``, draining its output; its status or None."""
        while self.poll() is None:
            left = (deadline - self.clock()) * 1000.0
            if left <= 0:
                return None
            poller = select.poll()
            if self._out_open:
                poller.register(self._out_fd, _IN)
            if self._err_open:
                poller.register(self._err_fd, _IN)
            for fd, _events in poller.poll(min(math.ceil(left), 5)):
                if fd == self._out_fd:
                    self._discard_stdout()
                elif fd == self._err_fd:
                    self._read_stderr()
        self.drain_stderr()
        return self.returncode

    def _discard_stdout(self) -> None:
        if self._read_stdout() and len(self._buf) > self.line_limit:
            self._buf.clear()
            self._scan = 0

    def pause(self) -> None:
        self.process.pause()

    def resume(self) -> None:
        self.process.resume()

    def cpu_seconds(self) -> float:
        return float(self.process.cpu_seconds())

    def violation(self) -> ViolationLike | None:
        return self.process.violation()

    def setup_failure(self) -> str | None:
        """Why the sandbox could not start the bot's program at all (None: it started it, or
        there is no sandbox); ask once the bot ended, after :meth:`violation`."""
        check = getattr(self.process, "setup_failure", None)
        return check() if callable(check) else None

    def kill(self) -> None:
        """Stop the bot and everything it started (the process object closes the pipes)."""
        if self._killed:
            return
        self._killed = True
        self._in_fd = None
        for fd, is_open in ((self._out_fd, self._out_open), (self._err_fd, self._err_open)):
            if is_open:
                with contextlib.suppress(KeyError, ValueError):
                    self._poller.unregister(fd)
        self._out_open = self._err_open = False
        self.process.kill()
        self.poll()


class LocalProcess:
    """A bot run as a plain process in its own process group: no sandbox at all.

    It offers the interface of the sandbox's ``BotProcess`` (raw pipe descriptors, poll, pause
    and resume with SIGSTOP/SIGCONT, kill by process group), for tests and trusted tools. It
    does not catch processes that leave the group with ``setsid``. Like ``BotProcess`` it owns
    its pipe descriptors: :meth:`kill` closes them.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self._popen = subprocess.Popen(
                list(argv),
                stdin=in_r,
                stdout=out_w,
                stderr=err_w,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,
                close_fds=True,
            )
        except BaseException:
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        self.stdin, self.stdout, self.stderr = in_w, out_r, err_r
        self.pid = self._popen.pid

    def poll(self) -> int | None:
        return self._popen.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def violation(self) -> None:
        return None

    def close_stdin(self) -> None:
        """Close the bot's standard input."""
        if self.stdin >= 0:
            with contextlib.suppress(OSError):
                os.close(self.stdin)
            self.stdin = -1

    def stderr_tail(self) -> str:
        return ""

    def kill(self) -> None:
        """Kill the process group, reap the bot, close the pipes (idempotent)."""
        self._signal(signal.SIGKILL)
        self._popen.wait()
        for name in ("stdin", "stdout", "stderr"):
            fd = getattr(self, name)
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, -1)
