"""The failure policy of every worker task, in one place:

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
import logging
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, OperationalError, connections

from arena.referee.errors import InfrastructureError
from arena.referee.redaction import strip_paths

__all__ = ["InfrastructureError", "claimed", "public_reason", "retrying", "run"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Retries of a task whose database was away; then the sweeper takes over.
DATABASE_RETRIES = 5


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
            drop_broken_connections()
    raise AssertionError("unreachable")


def drop_broken_connections() -> None:
    """Close this thread's connections that no longer work (the server restarted, say): the
    next query opens a new one. Not one inside a transaction: that transaction is lost
    anyway, and its owner ends it."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close_if_unusable_or_obsolete()
