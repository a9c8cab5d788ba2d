"""Periodic tasks: sent to their own queue, and dropped unrun by a worker that takes one after
its interval (the next is on its way), so that copies never pile up."""

from __future__ import annotations

from django.conf import settings

from arena.celery import app as celery_app
from arena.jobs import tasks
from tests.arena.conftest import QUEUE


def test_each_periodic_task_goes_to_the_periodic_queue_and_expires_after_its_interval() -> None:
    assert set(settings.CELERY_BEAT_SCHEDULE) == {
        "ladder",
        "sweep",
        "ratings",
        "seasons",
        "schedules",
    }
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["options"] == {"queue": settings.PERIODIC_QUEUE, "expires": entry["schedule"]}


def test_a_message_sent_with_the_schedules_options_carries_its_expiry() -> None:
    """What beat sends: the broker holds the message with the time after which a worker drops
    it."""
    options = dict(settings.CELERY_BEAT_SCHEDULE["sweep"]["options"], queue=f"{QUEUE}.periodic")
    with celery_app.connection_for_write() as conn:
        queue = conn.SimpleQueue(options["queue"])
        # This run's periodic queue may hold what earlier tests sent there (a notification's
        # fan-out once a test's transaction committed): the test reads only its own message.
        queue.clear()
        tasks.sweep.apply_async(connection=conn, **options)
        try:
            message = queue.get(timeout=10)
            assert message.headers["task"] == tasks.sweep.name
            assert message.headers["expires"]
            message.ack()
        finally:
            queue.close()
