"""The notification tasks (the scheduler's worker runs them, on the periodic queue): thin
wrappers that take an id and call the service."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from arena.notifications import services


@shared_task(name=services.DELIVER, bind=True, acks_late=True, max_retries=None)
def deliver(self: Task[[int], str], delivery_id: int) -> str:
    """Send one notification by email or webhook; after a failure, try again after a growing
    pause (``ARENA_NOTIFY_RETRY_DELAY`` seconds, doubled each time, at most an hour) until
    ``ARENA_NOTIFY_ATTEMPTS`` attempts were made."""
    outcome = services.deliver(delivery_id)
    if outcome == services.RETRY:
        retries = int(self.request.retries or 0)
        delay = min(3600, settings.NOTIFY_RETRY_DELAY_S * 2**retries)
        raise self.retry(countdown=delay, queue=settings.PERIODIC_QUEUE)
    return outcome


@shared_task(name=services.FAN_OUT, acks_late=True)
def fan_out(notification_id: int) -> int:
    """Write and send the deliveries of one notification; returns how many."""
    return services.fan_out(notification_id)
