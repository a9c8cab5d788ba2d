"""The sidecar: tends claimed work while it runs. It beats the work's claim (the sweeper gives
work with a stale heartbeat to another worker) and publishes what a game notes (its moves, for
its live page), so that the work itself never waits for the database.

A worker process has one (:func:`sidecar`, a thread); work run elsewhere (a management
command, the tests) is given :data:`INLINE`, which does the same on the work's own thread.
Services take the sidecar as an argument: the Celery tasks pass the process's.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from django.db import DatabaseError, connections

from arena.jobs.policy import drop_broken_connections

__all__ = ["INLINE", "InlineSidecar", "Sidecar", "Tended", "ThreadSidecar", "sidecar"]

log = logging.getLogger(__name__)


class Tended:
    """What a sidecar does for one claimed piece of work while it runs (a game, a check): beat
    its claim every ``interval`` seconds, and hand what the work notes (a game's moves, as the
    referee plays them) to ``publish``.

    The work's own thread calls :meth:`note`, which only keeps the item; the sidecar calls
    :meth:`tend`. When a beat finds the claim lost (the sweeper gave the work to another
    worker, a tournament was cancelled), :attr:`cancel` is set and the referee aborts the game.
    A beat that fails is tried again at the next turn; a ``publish`` that fails is not called
    again (the watchers lose this game's live view, never the game).
    """

    def __init__(
        self,
        what: str,
        beat: Callable[[], bool],
        interval: float,
        publish: Callable[[list[Any]], object] | None = None,
    ) -> None:
        self.what = what
        self.cancel = threading.Event()
        self._beat = beat
        self._interval = interval
        self._publish = publish
        self._next_beat = time.monotonic() + interval
        self._notes: list[Any] = []
        self._lock = threading.Lock()

    def note(self, item: Any) -> None:
        """Keep ``item`` for the next :meth:`tend` (called by the work's own thread)."""
        with self._lock:
            self._notes.append(item)

    def tend(self) -> bool:
        """Publish what was noted since the last turn, and beat the claim if its turn has come.
        Returns False when the database failed under either."""
        with self._lock:
            notes, self._notes = self._notes, []
        healthy = True
        if notes and self._publish is not None:
            try:
                self._publish(notes)
            except DatabaseError as e:
                log.warning("%s: its live view is no longer written: %s", self.what, e)
                self._publish, healthy = None, False
        now = time.monotonic()
        if now < self._next_beat:
            return healthy
        self._next_beat = now + self._interval
        try:
            owned = self._beat()
        except DatabaseError as e:
            log.warning("%s: heartbeat failed: %s", self.what, e)
            return False
        if not owned and not self.cancel.is_set():
            log.info("%s: this worker lost its claim: the work is cancelled", self.what)
            self.cancel.set()
        return healthy


class Sidecar(Protocol):
    """Tends claimed work while it runs (see :class:`Tended`)."""

    def attach(
        self,
        what: str,
        beat: Callable[[], bool],
        interval: float,
        publish: Callable[[list[Any]], object] | None = None,
    ) -> contextlib.AbstractContextManager[Tended]: ...


class _TendedAtOnce(Tended):
    def note(self, item: Any) -> None:
        super().note(item)
        self.tend()


class InlineSidecar:
    """Tends work on the work's own thread, each time it notes something: a game's moves are
    published at once on the caller's connection (inside its transaction, if it has one), and
    the claim is beaten then when its turn has come. What a check or a match run outside a
    worker (a management command, the tests) uses."""

    @contextlib.contextmanager
    def attach(
        self,
        what: str,
        beat: Callable[[], bool],
        interval: float,
        publish: Callable[[list[Any]], object] | None = None,
    ) -> Iterator[Tended]:
        yield _TendedAtOnce(what, beat, interval, publish)


#: The sidecar of work run outside a worker.
INLINE = InlineSidecar()


class ThreadSidecar:
    """One thread tends every piece of work of its process, every ``TICK_S`` seconds, on a
    database connection of its own: the work never waits for the database, and a watcher is
    at most a tick behind a game. Its writes are expendable (a lost heartbeat is written again,
    live moves are replaced by the record), so on PostgreSQL its connection does not wait for
    the disk (``synchronous_commit`` off). Idle for ``IDLE_CLOSE_S``, it closes its connection:
    a worker with no work holds none."""

    TICK_S = 0.2
    IDLE_CLOSE_S = 10.0

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._work: list[Tended] = []
        self._tending: Tended | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    @contextlib.contextmanager
    def attach(
        self,
        what: str,
        beat: Callable[[], bool],
        interval: float,
        publish: Callable[[list[Any]], object] | None = None,
    ) -> Iterator[Tended]:
        """Tend this work until the block ends; when it has ended, the sidecar is done with it
        (a turn under way is waited for)."""
        tended = Tended(what, beat, interval, publish)
        with self._ready:
            self._work.append(tended)
            if self._thread is None:
                self._stopping = False
                self._thread = threading.Thread(target=self._run, name="sidecar", daemon=True)
                self._thread.start()
            self._ready.notify_all()
        try:
            yield tended
        finally:
            with self._ready:
                self._work.remove(tended)
                while self._tending is tended:
                    self._ready.wait()

    def stop(self, timeout: float = 30.0) -> None:
        """End the thread once it has no work, closing its connection (before a database it
        used is dropped); the next :meth:`attach` starts another."""
        with self._ready:
            thread, self._stopping = self._thread, True
            self._ready.notify_all()
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        try:
            while self._next_turn():
                for tended in self._turn():
                    self._tend(tended)
        finally:
            connections.close_all()

    def _next_turn(self) -> bool:
        """Wait for the next turn; False when the thread is to end."""
        with self._ready:
            while not self._work:
                if self._stopping:
                    self._thread = None
                    return False
                if not self._ready.wait(self.IDLE_CLOSE_S) and not self._work:
                    connections.close_all()
            self._ready.wait(self.TICK_S)
            return True

    def _turn(self) -> list[Tended]:
        with self._ready:
            return list(self._work)

    def _tend(self, tended: Tended) -> None:
        with self._ready:
            if tended not in self._work:
                return
            self._tending = tended
        try:
            _expendable_writes()
            if not tended.tend():
                drop_broken_connections()
        except Exception:  # a defect of ours: logged, and the sidecar goes on
            log.exception("%s: the sidecar failed", tended.what)
        finally:
            with self._ready:
                self._tending = None
                self._ready.notify_all()


def _expendable_writes() -> None:
    """Open this thread's connection if it has none, without waiting for the disk at commit
    (PostgreSQL only)."""
    conn = connections["default"]
    if conn.connection is not None or conn.vendor != "postgresql":
        return
    with conn.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")


@functools.cache
def _sidecar_of(pid: int) -> ThreadSidecar:
    return ThreadSidecar()


def sidecar() -> ThreadSidecar:
    """This process's sidecar (a forked pool process makes its own)."""
    return _sidecar_of(os.getpid())
