"""A worker pool process's writer: a child process that writes the results of the pool
process's games while its next game runs (:class:`arena.worker.WriteBehind` feeds it).

A result's transaction costs the process that makes it 10 to 15 ms of interpreter time (the
ORM's statements, the counts, the ratings' update). Made by a thread of the pool process, it
held the interpreter lock against the next game's referee; made here, it runs on a core of its
own.

The pool process starts it (``python -m arena.writer``) and speaks to it over pipes: each
message on its standard input is a pickle preceded by its length in four bytes; the first is
the parent's ``DATABASES`` setting (a test's database has a name of its own), every other a
job ``(function, arguments, what)``: a function of a module, which it calls. For each job it
answers one byte on its standard output: ``+`` done, ``-`` failed (the error logged here, on
the standard error it shares with the worker). At the end of its input it closes its
connection and exits; idle for ``IDLE_CLOSE_S`` it closes its connection (a worker with no
games holds none).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import IO, Any

from django.conf import settings

__all__ = ["IDLE_CLOSE_S", "WriterGone", "WriterProcess", "main"]

log = logging.getLogger(__name__)

IDLE_CLOSE_S = 10.0
DONE, FAILED = b"+", b"-"
_LENGTH = struct.Struct(">I")


class WriterGone(Exception):
    """The writer process ended before it answered (killed, or it could not start)."""


class WriterProcess:
    """The parent's side: starts the child on first use, and again after it died."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None

    def call(self, fn: Callable[..., object], args: tuple[Any, ...], what: str) -> bool:
        """Have the child call ``fn(*args)``: True when it returned, False when it raised (the
        child logs the error, naming ``what``). Raises :class:`WriterGone` when the child died
        first (it is started again next time)."""
        job = pickle.dumps((fn, args, what))
        proc = self._started()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            _send(proc.stdin, job)
            answer = proc.stdout.read(1)
        except (BrokenPipeError, OSError) as e:
            answer = b""
            error: Exception | None = e
        else:
            error = None
        if answer not in (DONE, FAILED):
            self.close(timeout=5)
            raise WriterGone(f"the writer process ended ({error or 'no answer'})")
        return answer == DONE

    def close(self, timeout: float = 60.0) -> None:
        """End the child after what it was given (its input closes); kill it after ``timeout``."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):  # a pipe to a dead child
                proc.stdin.close()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.error("the writer process did not end within %.0f s: killed", timeout)
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._proc is not None:
            self.close(timeout=0)
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(settings.BASE_DIR), env.get("PYTHONPATH", "")) if p
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.writer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=settings.BASE_DIR,
            env=env,
        )
        assert proc.stdin is not None
        try:
            _send(proc.stdin, pickle.dumps(settings.DATABASES))
        except OSError as e:
            proc.kill()
            proc.wait()
            raise WriterGone(f"the writer process did not start: {e}") from e
        self._proc = proc
        return proc


def _send(pipe: IO[bytes], message: bytes) -> None:
    pipe.write(_LENGTH.pack(len(message)) + message)
    pipe.flush()


def _read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``; None at the end of the input."""
    parts, left = [], n
    while left:
        part = os.read(fd, left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _receive(fd: int) -> Any:
    """The next message; None at the end of the input."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read_exactly(fd, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)  # from our own parent


def main() -> None:
    """The child's loop (``python -m arena.writer``)."""
    # Its input decides when it ends: a Ctrl-C meant for the worker (its whole process group)
    # must not cut a result's write short.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The answers go out on a copy of the standard output; whatever else prints goes to the
    # standard error, never into the answers.
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    fd = sys.stdin.fileno()
    databases = _receive(fd)
    if databases is None:
        return
    settings.DATABASES = databases
    import django

    django.setup()
    from django.db import close_old_connections, connections

    while True:
        ready, _, _ = select.select([fd], [], [], IDLE_CLOSE_S)
        if not ready:
            connections.close_all()
            continue
        job = _receive(fd)
        if job is None:
            break
        fn, args, what = job
        try:
            close_old_connections()  # as before a task: a broken connection is replaced
            fn(*args)
        except Exception:
            log.exception("%s: the result was not written", what)
            answers.write(FAILED)
        else:
            answers.write(DONE)
    connections.close_all()


if __name__ == "__main__":
    main()
