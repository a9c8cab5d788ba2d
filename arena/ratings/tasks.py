"""The rating fit's periodic task."""

from __future__ import annotations

from celery import shared_task

from arena.jobs.periodic import periodic
from arena.ratings import services


@shared_task(name="arena.ratings.tasks.refresh_ratings", acks_late=True)
@periodic
def refresh_ratings(force: bool = False) -> list[str]:
    """Fit the ratings of the variants that have new results (periodic)."""
    return [r.variant for r in services.refresh_all(force=force)]
