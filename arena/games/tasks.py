"""Celery tasks of the games app: thin wrappers that take ids and call a service.

``play_match`` is sent with per-call time limits (the match's budget, see
:func:`arena.games.runner.time_limits`); it retries only on :class:`InfrastructureError`.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from arena.games import ratings, services

#: Retries of a task whose database was away.
DATABASE_RETRIES = 5


@shared_task(bind=True, acks_late=True, max_retries=None)
def play_match(self: Any, match_id: int) -> str:
    """Claim, play and finish one match."""
    try:
        return services.play(match_id, worker=self.request.hostname or "")
    except (services.InfrastructureError, OperationalError) as e:
        # An infrastructure failure: the match is back in the queue (or aborted once out of
        # attempts, which makes the retry a no-op). Try again after a growing pause. A database
        # that stays away is given a few tries; then the sweeper takes over.
        if isinstance(e, OperationalError) and self.request.retries >= DATABASE_RETRIES:
            raise
        raise self.retry(exc=e, countdown=min(300, 10 * 2**self.request.retries)) from e


@shared_task(acks_late=True)
def schedule_ladder() -> int:
    """Top up the ladder's queues (periodic)."""
    return len(services.schedule_ladder())


@shared_task(acks_late=True)
def sweep() -> dict[str, list[int]]:
    """Recover matches and checks of dead workers (periodic)."""
    return vars(services.sweep())


@shared_task(acks_late=True)
def refresh_ratings(force: bool = False) -> list[str]:
    """Fit the ratings of the variants that have new results (periodic)."""
    return [r.variant for r in ratings.refresh_all(force=force)]


def periodic_task_names() -> list[str]:
    """The tasks the beat schedule sends (checked by the tests)."""
    return [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
