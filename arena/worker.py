"""What every worker task needs, in one leaf module: the failure policy, database-write retries,
the sidecar that beats a claim and publishes a game's moves while it runs, time limits, and
sending a task by name after the transaction commits.

It imports nothing of the apps (only Django, Celery and the referee), so every app may use it
and services never import their tasks.

The failure policy, in one place:

* What a bot did (crash, timeout, illegal move, sandbox violation) is a game result: the
  referee returns it and it is counted once.
* What the machine did derives from :class:`InfrastructureError` (the sandbox, the cgroups,
  the bot store, the referee's own start-up). A service that holds a claim catches it in
  :func:`claimed`, gives the claim back (the match or the check is queued again, until it has
  had ``MATCH_MAX_ATTEMPTS`` tries) and raises it on; the task's wrapper :func:`run` retries
  the task after a growing pause. The same holds for the task's soft time limit (the work
  took longer than its budget, which the clocks bound: the machine was too slow or stuck) and
  for an unexpected exception (a defect of ours, never the bot's).
* A database that is briefly away (:class:`~django.db.OperationalError`) is retried a few
  times by the task, and by :func:`retrying` for the write that keeps a finished result.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

from celery import Task, current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import (
    DatabaseError,
    OperationalError,
    connections,
    transaction,
)
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as KombuOperationalError

from arena.privacy import strip_paths
from arena.referee.errors import InfrastructureError
from arena.referee.match import TimeControl

__all__ = [
    "CHECK_VERSION",
    "INLINE",
    "PLAY_MATCH",
    "InfrastructureError",
    "InlineSidecar",
    "Sidecar",
    "Tended",
    "ThreadSidecar",
    "budget_seconds",
    "claimed",
    "public_reason",
    "retrying",
    "run",
    "send_after_commit",
    "sidecar",
    "time_limits",
    "waiting_messages",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The tasks services send, by name (so that no service imports a tasks module).
PLAY_MATCH = "arena.games.tasks.play_match"
CHECK_VERSION = "arena.games.tasks.check_version"

#: The referee's allowance per request (not charged to the bot's clock).
MOVE_OVERHEAD_MS = 50
#: Retries of a task whose database was away; then the sweeper takes over.
DATABASE_RETRIES = 5


# ----------------------------------------------------------------------------- time limits


def budget_seconds(time_control: str, *, games: int = 1) -> float:
    """The most wall time ``games`` games at this time control can take, with start-up and
    shut-down, given the move cap ``MATCH_MAX_ACTIONS``: what a task's soft time limit is.

    >>> round(budget_seconds("10+0.1"))
    142
    """
    tc = TimeControl.parse(time_control)
    actions = settings.MATCH_MAX_ACTIONS
    per_game = (
        2 * tc.initial_ms / 1000
        + actions * (tc.increment_ms + MOVE_OVERHEAD_MS) / 1000
        + 2 * (settings.BOT_STARTUP_SECONDS + settings.BOT_EXIT_SECONDS)
        + 10.0  # unpacking, database writes
    )
    return per_game * games


def time_limits(time_control: str, *, games: int = 1, builds: int = 0) -> tuple[int, int]:
    """A task's (soft, hard) time limits in seconds: the budget, and a little above it.

    ``builds``: how many bots the task may have to build first (a worker builds a version
    the first time it runs it), each within ``BOT_BUILD_SECONDS``.
    """
    soft = int(budget_seconds(time_control, games=games)) + 1
    soft += builds * settings.BOT_BUILD_SECONDS
    return soft, soft + 30


def match_time_control(text: str) -> str:
    """A time control for a match of the site, normalised (``"10+0.1"``). Raises
    ``ValueError`` when it cannot be read, or when a game could outlast the broker's
    visibility timeout (its task would then be delivered twice)."""
    tc = TimeControl.parse(text)
    _, hard = time_limits(str(tc), builds=2)
    if hard >= settings.CELERY_VISIBILITY_TIMEOUT:
        raise ValueError(
            f"time control {tc} is too long: a game could take {hard} s, more than the "
            f"{settings.CELERY_VISIBILITY_TIMEOUT} s a task may run"
        )
    return str(tc)


# ----------------------------------------------------------------------------- sending


def send_after_commit(name: str, args: tuple[int, ...], *, soft: int, hard: int) -> None:
    """Send the task called ``name`` with these arguments (primary keys) once the current
    transaction commits (at once outside one), with these soft and hard time limits.

    If the broker cannot be reached the error is logged (``robust``) and the sweeper sends
    the task again later: the claims make a duplicate harmless.
    """

    def send() -> None:
        current_app.send_task(name, args=args, soft_time_limit=soft, time_limit=hard)

    transaction.on_commit(send, robust=True)


def waiting_messages() -> int | None:
    """How many messages wait in the broker's task queue (not those workers hold), or None
    when the broker cannot be asked. A queue the broker does not know holds none (a Redis
    that restarted without its data)."""
    queue = current_app.conf.task_default_queue
    try:
        with current_app.connection_for_read() as conn:
            channel: Any = conn.default_channel  # a kombu virtual channel (Redis, SQLAlchemy)
            return int(channel.queue_declare(queue=queue, passive=True)[1])
    except ChannelError:
        return 0
    except (OSError, KombuOperationalError) as e:
        log.warning("cannot count the broker's messages: %s", e)
        return None


# ----------------------------------------------------------------------------- the policy


@contextlib.contextmanager
def claimed(give_back: Callable[[str], object], what: str) -> Iterator[None]:
    """Run the work of one claim; if the machine fails under it, give the claim back.

    ``give_back(reason)`` puts the work back in the queue (or gives up on it once out of
    attempts). Infrastructure errors, the task's soft time limit, and unexpected exceptions
    (our defects) all give the claim back and raise :class:`InfrastructureError`, which
    :func:`run` retries. Nothing here is ever counted against a bot.
    """
    try:
        yield
    except InfrastructureError as e:
        log.warning("%s: the infrastructure failed: %s: %s", what, type(e).__name__, e)
        give_back(public_reason(e))
        raise
    except SoftTimeLimitExceeded as e:
        reason = "the work went over its time budget"
        log.warning("%s: %s", what, reason)
        give_back(reason)
        raise InfrastructureError(reason) from e
    except DatabaseError:
        raise  # the claim's own writes failed: the task retries, then the sweeper recovers
    except Exception as e:
        reason = f"an internal error ({type(e).__name__})"
        log.exception("%s: %s", what, reason)
        give_back(reason)
        raise InfrastructureError(f"{reason}: {e}") from e


def public_reason(error: BaseException) -> str:
    """What the site may show of a failure of the machine: its kind and message, with the
    server's paths left out (the log keeps them whole).

    >>> public_reason(OSError("cannot write /var/lib/arena/sandbox/slot-3: disk full"))
    'OSError: cannot write <path>: disk full'
    """
    return f"{type(error).__name__}: {strip_paths(str(error), every=True)}"


def run(task: Task[..., T], work: Callable[[], T]) -> T:
    """Run a task's work; retry the task after an infrastructure failure or a database that is
    away, with a growing pause (10 s, 20 s, ... at most 5 minutes).

    The one place a task catches failures. A service has already given its claim back (see
    :func:`claimed`), so a retry that finds the work taken, finished or given up is a no-op.
    """
    try:
        return work()
    except (InfrastructureError, OperationalError) as e:
        retries = int(task.request.retries or 0)
        if isinstance(e, OperationalError) and retries >= DATABASE_RETRIES:
            raise
        raise task.retry(exc=e, countdown=min(300, 10 * 2**retries)) from e


def retrying(write: Callable[[], T], tries: int = 5) -> T:
    """Run a database write, trying again a few times, on a new connection, if the database is
    briefly away (a game already played is worth a few seconds' wait)."""
    for i in range(tries):
        try:
            return write()
        except OperationalError:
            if i == tries - 1:
                raise
            time.sleep(0.5 * 2**i)
            _drop_broken_connections()
    raise AssertionError("unreachable")


def _drop_broken_connections() -> None:
    """Close this thread's connections that no longer work (the server restarted, say): the
    next query opens a new one. Not one inside a transaction: that transaction is lost
    anyway, and its owner ends it."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close_if_unusable_or_obsolete()


# ----------------------------------------------------------------------------- the sidecar


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
                _drop_broken_connections()
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
