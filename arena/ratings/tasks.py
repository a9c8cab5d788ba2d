"""The rating fit's periodic task."""

from __future__ import annotations

from celery import shared_task

from arena.jobs.periodic import periodic
from arena.ratings import services
from arena.ratings.models import Ladder


@shared_task(name="arena.ratings.tasks.refresh_ratings", acks_late=True)
@periodic
def refresh_ratings(force: bool = False) -> list[str]:
    """Fit the ratings of the variants that have new results (periodic): their names, the
    open ladder's as ``yinsh (open ladder)``."""
    return [
        r.variant if r.ladder == Ladder.SANDBOX else f"{r.variant} ({r.ladder.label})"
        for r in services.refresh_all(force=force)
    ]
