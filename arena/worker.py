"""What every worker task needs, in one leaf module: the failure policy, database-write retries,
heartbeats, time limits, writing a result behind the next game, and sending a task by name
after the transaction commits.

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
import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

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
from arena.writer import WriterProcess

__all__ = [
    "CHECK_VERSION",
    "PLAY_MATCH",
    "Heartbeat",
    "InfrastructureError",
    "ProcessThread",
    "WriteBehind",
    "budget_seconds",
    "claimed",
    "drain_write_behind",
    "enable_write_behind",
    "public_reason",
    "retrying",
    "run",
    "send_after_commit",
    "time_limits",
    "waiting_messages",
    "write_behind",
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


# ----------------------------------------------------------------------------- heartbeat


class Heartbeat:
    """Calls ``beat()`` every ``interval`` seconds while a game (or a check) runs.

    ``beat`` writes the heartbeat and returns whether this worker still owns the work (a
    guarded ``UPDATE``); when it no longer does (the sweeper gave the match to another worker,
    or a tournament was cancelled), :attr:`cancel` is set and the referee aborts the game.

    The beats come from the process's heartbeat thread (:class:`_Beats`, one for all its
    games, on a database connection of its own): a game pays for no thread of its own (its
    start and stop had cost about a millisecond a game). When the last game of the process
    ends, that connection is closed before ``__exit__`` returns, as the game's own thread
    closed its own; a game shorter than ``interval`` never beats and opens none.

    A caller inside a transaction (a test, a check run by hand) holds its claim where no other
    session can see it, nor take it: there are then no beats (one, on its own session, would
    not find the claim and would abort the game as lost).
    """

    def __init__(self, beat: Callable[[], bool], interval: float) -> None:
        self.beat = beat
        self.interval = interval
        self.cancel = threading.Event()
        self._beats: _Beats | None = None

    def __enter__(self) -> Heartbeat:
        if not transaction.get_connection().in_atomic_block:
            self._beats = _Beats.of_this_process()
            self._beats.add(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._beats is not None:
            self._beats.remove(self)


# ------------------------------------------------------------- a process's threads; writing behind


class ProcessThread(threading.Thread):
    """A daemon thread of which a process has one of each kind, started on first use (a forked
    child starts its own): the live moves' writer, the results' writer."""

    #: The thread's name (each kind sets its own).
    kind = "process-thread"
    _current: ProcessThread | None = None
    _guard = threading.Lock()

    def __init__(self) -> None:
        super().__init__(name=self.kind, daemon=True)
        self.pid = os.getpid()

    @classmethod
    def of_this_process(cls) -> Self:
        """The process's thread of this kind, started on first use."""
        with ProcessThread._guard:
            current = cls.existing()
            if current is None:
                current = cls()
                cls._current = current
                current.start()
            return current

    @classmethod
    def existing(cls) -> Self | None:
        """The process's thread of this kind if it has started one."""
        current = cls.__dict__.get("_current")
        return current if current is not None and current.pid == os.getpid() else None


class _Beats(ProcessThread):
    """The thread that beats every running :class:`Heartbeat` of its process, each at its
    interval, in order of their turns."""

    kind = "heartbeat"

    def __init__(self) -> None:
        super().__init__()
        self._ready = threading.Condition()
        self._due: list[tuple[float, int, Heartbeat]] = []
        self._running: set[Heartbeat] = set()
        self._order = itertools.count()
        self._beating: Heartbeat | None = None
        self._connected = False  # a beat has used the thread's connection since it closed

    def add(self, hb: Heartbeat) -> None:
        with self._ready:
            self._running.add(hb)
            heapq.heappush(self._due, (time.monotonic() + hb.interval, next(self._order), hb))
            self._ready.notify_all()

    def remove(self, hb: Heartbeat, timeout: float = 30.0) -> None:
        """No more beats of ``hb`` (one under way is waited for); the last one removed waits
        until the thread's connection is closed (at most ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        with self._ready:
            self._running.discard(hb)
            self._due = [turn for turn in self._due if turn[2] is not hb]
            heapq.heapify(self._due)
            self._ready.notify_all()
            while self._beating is hb or (not self._due and self._connected):
                left = deadline - time.monotonic()
                if left <= 0:
                    log.error("the heartbeat thread did not answer within %.0f s", timeout)
                    return
                self._ready.wait(left)

    def run(self) -> None:
        while True:
            hb = self._next()
            if hb is None:  # nothing left to beat: let go of the connection
                connections.close_all()
                with self._ready:
                    self._connected = False
                    self._ready.notify_all()
                continue
            owned: bool | None = None
            try:
                owned = hb.beat()
            except DatabaseError as e:  # the database is away for a moment: try again
                log.warning("heartbeat failed: %s", e)
            except Exception:  # a defect of ours: logged, and the thread goes on
                log.exception("heartbeat failed")
            with self._ready:
                self._beating = None
                if owned is False:
                    log.info("lost ownership of the work: aborting the game")
                    hb.cancel.set()
                elif hb in self._running:
                    heapq.heappush(
                        self._due, (time.monotonic() + hb.interval, next(self._order), hb)
                    )
                self._ready.notify_all()

    def _next(self) -> Heartbeat | None:
        """The next heartbeat whose turn has come; None when none is left and the connection
        is open."""
        with self._ready:
            while True:
                if not self._due:
                    if self._connected:
                        return None
                    self._ready.wait()
                    continue
                now = time.monotonic()
                if self._due[0][0] <= now:
                    hb = heapq.heappop(self._due)[2]
                    self._beating, self._connected = hb, True
                    return hb
                self._ready.wait(self._due[0][0] - now)


class WriteBehind(ProcessThread):
    """The thread that has a worker process's results written while its next game starts.

    A game's result is a transaction of about twenty statements (the record, the counts, the
    ratings' update, the failure watch): 10 to 15 ms of interpreter time, which the next game
    waited for, and which a thread of the same process still took from the next game's
    referee (they share the interpreter lock). This thread hands each write to the process's
    writer, a child process with its own connection (:mod:`arena.writer`), and waits for its
    answer, mostly in a pipe's read: the write overlaps the task's acknowledgement, the next
    task's delivery and the next game, on another core.

    A write is a function of a module and its arguments (both pickled for the child). The
    writes are made in the order given; a write given while another waits blocks its caller,
    so a process holds at most one result unwritten beside the one being written. Each write
    is guarded as before by its claim: a worker (or writer) that dies before the commit
    leaves a running match whose heartbeat has stopped, which the sweeper gives back (the game
    is played again, never counted twice).

    Only in a Celery pool process (:func:`enable_write_behind`, from ``arena.celery``), which
    waits for the writes before it exits (:func:`drain_write_behind`). Elsewhere (a test, a
    shell, the local command) :func:`write_behind` writes at once, inside the caller's
    transaction if it has one.
    """

    enabled = False
    kind = "write-behind"

    def __init__(self) -> None:
        super().__init__()
        self._ready = threading.Condition()
        self._waiting: _Write | None = None
        self._writing = False
        self._writer = WriterProcess()

    def submit(self, fn: Callable[..., object], args: tuple[Any, ...], what: str) -> None:
        """Have ``fn(*args)`` called by the writer process, after the writes given before."""
        with self._ready:
            while self._waiting is not None:
                self._ready.wait()
            self._waiting = (fn, args, what)
            self._ready.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until every write given has been made; False if that took over ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._ready:
            while self._waiting is not None or self._writing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._ready.wait(left)
        return True

    def close(self, timeout: float = 60.0) -> bool:
        """Make every write given, then end the writer process (it closes its connection; the
        next write starts another). False if the writes took over ``timeout``."""
        drained = self.drain(timeout)
        if drained:
            self._writer.close(timeout)
        return drained

    @property
    def writer_pid(self) -> int | None:
        """The writer process's id, while it runs."""
        return self._writer.pid

    def run(self) -> None:
        while True:
            fn, args, what = self._next()
            try:
                if not self._writer.call(fn, args, what):
                    log.error("%s: the result was not written (the sweeper gives it back)", what)
            except Exception as e:
                log.error("%s: the result was not written (the sweeper gives it back): %s", what, e)
            finally:
                with self._ready:
                    self._writing = False
                    self._ready.notify_all()

    def _next(self) -> _Write:
        with self._ready:
            while self._waiting is None:
                self._ready.wait()
            job, self._waiting, self._writing = self._waiting, None, True
            self._ready.notify_all()
            return job


_Write = tuple[Callable[..., object], tuple[Any, ...], str]


def write_behind(fn: Callable[..., object], args: tuple[Any, ...], what: str) -> bool:
    """Have ``fn(*args)`` (a result's write, guarded by its claim; a function of a module, and
    arguments that pickle) made by this worker process's writer (:class:`WriteBehind`), and
    return True; or, where there is none (not a pool process, or inside a transaction, whose
    writes another connection could not see), return False: the caller writes at once."""
    if not WriteBehind.enabled or transaction.get_connection().in_atomic_block:
        return False
    WriteBehind.of_this_process().submit(fn, args, what)
    return True


def enable_write_behind() -> None:
    """In a Celery pool process: write results behind the next game (see :class:`WriteBehind`)."""
    WriteBehind.enabled = True


def drain_write_behind(timeout: float = 60.0) -> None:
    """Before a pool process exits: wait for the results it still has to write."""
    current = WriteBehind.existing()
    if current is not None and not current.close(timeout):
        log.error("results unwritten after %.0f s: the sweeper gives their matches back", timeout)
