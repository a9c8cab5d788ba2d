"""What a worker does when it starts (connected to Celery's signals in ``GamesConfig.ready``).

A worker that was killed may have left a match RUNNING under its name, and its bots alive
and frozen on the host. When it starts again it takes the matches back at once
(:func:`arena.games.sweeper.recover_worker`, not waiting for their heartbeat to go stale), runs
a sweep (so that recovery does not wait for the scheduler when it was the only worker) and
reaps the host's leftovers (:func:`arena.games.runner.reap_leftovers`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from arena.games import runner, sweeper
from arena.referee.errors import InfrastructureError

log = logging.getLogger(__name__)

#: When this worker process started (before its pool took any task).
_started: datetime | None = None


def note_start(**kwargs: Any) -> None:
    """``worker_init``: remember when the worker started."""
    global _started
    _started = timezone.now()


def recover(sender: Any = None, **kwargs: Any) -> None:
    """``worker_ready``: reap the host, take back what this worker's previous life left,
    sweep."""
    hostname = str(getattr(sender, "hostname", "") or "")
    since = _started or timezone.now()
    reap()  # first: the bots of the dead are gone before their matches are sent again
    try:
        if hostname:
            sweeper.recover_worker(hostname, since)
        sweeper.sweep()
    except DatabaseError as e:  # the periodic sweeper will do it
        log.warning("start-up sweep failed: %s", e)


def reap() -> None:
    """Reap the host's leftovers; a failure is logged (the next sweep tries again)."""
    try:
        runner.reap_leftovers()
    except (InfrastructureError, OSError) as e:
        log.warning("could not remove what dead workers left on this host: %s", e)
