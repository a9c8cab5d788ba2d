"""Workers' own heartbeats (:class:`arena.jobs.models.WorkerBeat`), written by each worker's
main process (:class:`arena.celery.Alive`). A database that cannot be reached is logged and
never stops the worker: the next beat tries again."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import Error as DatabaseError
from django.utils import timezone

from arena.jobs.models import WorkerBeat

__all__ = ["beat", "stopped"]

log = logging.getLogger(__name__)


def beat(hostname: str, started: datetime, concurrency: int) -> bool:
    """Write the worker's heartbeat (one statement: an upsert of its row). False, logged,
    when the database refused it."""
    now = timezone.now()
    try:
        WorkerBeat.objects.bulk_create(
            [
                WorkerBeat(
                    hostname=hostname[:200],
                    started_at=started,
                    seen_at=now,
                    concurrency=concurrency,
                )
            ],
            update_conflicts=True,
            unique_fields=["hostname"],
            update_fields=["started_at", "seen_at", "concurrency"],
        )
    except DatabaseError as e:
        log.warning("could not write the heartbeat of %s: %s", hostname, e)
        return False
    return True


def stopped(hostname: str) -> None:
    """The worker stops (a warm shutdown): remove its heartbeat, so that it is not taken for
    a dead one."""
    try:
        WorkerBeat.objects.filter(hostname=hostname[:200]).delete()
    except DatabaseError as e:
        log.warning("could not remove the heartbeat of %s: %s", hostname, e)
