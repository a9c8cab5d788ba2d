"""The record of the periodic tasks' runs (:class:`arena.jobs.models.PeriodicRun`).

Each periodic task is wrapped in :func:`periodic`, under its ``shared_task`` decorator: one
write at the end of every run tells the metrics when the task last ran, so that an operator
learns of a task that stopped (a scheduler that died, a periodic queue nobody consumes)
before the users do.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import datetime
from typing import ParamSpec, TypeVar

from django.db import Error as DatabaseError
from django.utils import timezone

from arena.jobs.models import PeriodicRun

__all__ = ["periodic", "record_run"]

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def periodic(fn: Callable[P, R]) -> Callable[P, R]:
    """Record each run of ``fn``, a periodic task named as Celery names it by default
    (``module.function``): when it started, and when it finished unless it failed. The record
    failing is logged, never the task's failure (the task did its work)."""
    name = f"{fn.__module__}.{fn.__name__}"

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        started = timezone.now()
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            record_run(name, started, None)
            raise
        record_run(name, started, timezone.now())
        return result

    return run


def record_run(name: str, started: datetime, finished: datetime | None) -> None:
    """Write the task's run in its row, made the first time (one statement: an upsert). A
    failed run (``finished`` None) leaves the last finish as it was."""
    fields = ["started_at", "finished_at"] if finished is not None else ["started_at"]
    try:
        PeriodicRun.objects.bulk_create(
            [PeriodicRun(name=name, started_at=started, finished_at=finished)],
            update_conflicts=True,
            unique_fields=["name"],
            update_fields=fields,
        )
    except DatabaseError as e:
        log.warning("could not record the run of %s: %s", name, e)
