"""The sweeper's periodic task (the kinds of work have their own tasks in their apps)."""

from __future__ import annotations

from celery import shared_task

from arena.jobs import claims, startup
from arena.jobs.periodic import periodic


@shared_task(name="arena.jobs.tasks.sweep", acks_late=True)
@periodic
def sweep() -> dict[str, dict[str, list[int]]]:
    """Recover the work of dead workers, resend lost messages, and reap what dead workers left
    on this host (periodic)."""
    report = claims.sweep()
    startup.reap()
    return {kind: vars(swept) for kind, swept in report.items()}
