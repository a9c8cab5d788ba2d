"""Celery tasks of tournaments: thin wrappers that call a service."""

from __future__ import annotations

from celery import shared_task

from arena.jobs.periodic import periodic
from arena.tournaments import schedules


@shared_task(acks_late=True)
@periodic
def start_scheduled() -> int:
    """Start the due events of the schedules (periodic); returns how many started."""
    return len(schedules.start_due())
