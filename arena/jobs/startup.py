"""What a worker does when it starts (connected to Celery's signals in ``JobsConfig.ready``).

A worker that was killed may have left work RUNNING under its name, and its bots alive and
frozen on the host. When it starts again it takes the work back at once
(:func:`arena.jobs.claims.recover_worker`, not waiting for the heartbeats to go stale), runs a
sweep (so that recovery does not wait for the scheduler when it was the only worker) and reaps
the host's leftovers (:func:`reap`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from arena.jobs import claims
from arena.referee.errors import InfrastructureError
from arena.referee.sandbox import SandboxSettings
from arena.referee.sandbox import reap as reap_host

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
    reap()  # first: the bots of the dead are gone before their work is sent again
    try:
        if hostname:
            claims.recover_worker(hostname, since)
        claims.sweep()
    except DatabaseError as e:  # the periodic sweeper will do it
        log.warning("start-up sweep failed: %s", e)


def reap() -> None:
    """Remove the bots and sandbox state that dead workers left on this host (see
    :func:`arena.referee.sandbox.reap`; the slots of live workers are left alone): a worker
    does it when it starts, the sweeper on each run. A failure is logged (the next sweep
    tries again)."""
    try:
        reap_host(SandboxSettings(state_dir=str(settings.SANDBOX_STATE_DIR)))
    except (InfrastructureError, OSError) as e:
        log.warning("could not remove what dead workers left on this host: %s", e)
