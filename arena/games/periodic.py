"""Periodic tasks that are never discarded and never pile up.

The scheduler (``celery beat``) sends the sweeper, the rating refresh and the ladder to their
own queue (``PERIODIC_QUEUE``), which the scheduler's own worker consumes, so they never wait
behind matches. Their messages carry no ``expires`` (a worker would throw an expired one away
unrun, behind a backlog); instead :class:`PeriodicTask` sends one only when the previous
message of the same task was taken by a worker (:func:`may_send`), or is older than
``PERIODIC_LOST_AFTER_S`` (the broker lost it). Each run records its start
(:func:`started`), and with it the longest gap between two runs.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from celery import Task
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import F, Q
from django.utils import timezone

from arena.games.models import PeriodicRun

log = logging.getLogger(__name__)


def may_send(name: str, now: datetime | None = None) -> bool:
    """Whether the task ``name`` may be sent now; if so, its sending is recorded.

    True when it was never sent, when a worker took its previous message, or when that message
    is older than ``PERIODIC_LOST_AFTER_S``. A guarded ``UPDATE``: two schedulers sending at
    once (there should be one) send it once.
    """
    now = now or timezone.now()
    PeriodicRun.objects.get_or_create(name=name)
    lost = now - timedelta(seconds=settings.PERIODIC_LOST_AFTER_S)
    taken = Q(sent_at__isnull=True) | Q(started_at__gte=F("sent_at")) | Q(sent_at__lt=lost)
    return bool(PeriodicRun.objects.filter(taken, name=name).update(sent_at=now))


def started(name: str, now: datetime | None = None) -> None:
    """Record that a worker started the task ``name`` (and the gap since its last start)."""
    now = now or timezone.now()
    run, _ = PeriodicRun.objects.get_or_create(name=name)
    fields: dict[str, Any] = {"started_at": now, "runs": F("runs") + 1}
    if run.started_at is not None:
        gap = (now - run.started_at).total_seconds()
        if gap > run.longest_gap_s:
            fields["longest_gap_s"] = gap
    PeriodicRun.objects.filter(name=name).update(**fields)


def _may_send_reconnecting(name: str) -> bool:
    """:func:`may_send`, once more on a new connection if the first failed. The scheduler is a
    long-lived process outside any request or task, where nothing else would close a
    connection the database server ended (a restart): every later try would fail on it."""
    try:
        return may_send(name)
    except DatabaseError:
        if connection.in_atomic_block:
            raise
        connection.close()
        return may_send(name)


class PeriodicTask(Task[Any, Any]):
    """The base of the periodic tasks: sent only when :func:`may_send` allows it."""

    def apply_async(  # type: ignore[override]  # None when held back (beat accepts it)
        self, args: Any = None, kwargs: Any = None, **options: Any
    ) -> Any:
        try:
            send = _may_send_reconnecting(self.name)
        except DatabaseError as e:  # better a copy too many than no sweep
            log.warning("%s: cannot read its last sending (%s); sending it", self.name, e)
            send = True
        if not send:
            log.info("%s: not sent, its previous message is still queued", self.name)
            return None
        return super().apply_async(args, kwargs, **options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            started(self.name)
        except DatabaseError as e:
            log.warning("%s: cannot record its start (%s)", self.name, e)
        return super().__call__(*args, **kwargs)
