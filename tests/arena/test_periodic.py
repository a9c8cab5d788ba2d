"""Periodic tasks: sent to their own queue, never with an expiry, and never piled up (one is
sent only when its previous message was taken, or lost)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from arena.games import periodic, tasks
from arena.games.models import PeriodicRun
from tests.arena.conftest import QUEUE


@pytest.mark.django_db
def test_a_periodic_task_is_sent_again_only_once_its_previous_message_was_taken() -> None:
    t0 = timezone.now()
    assert periodic.may_send("sweep", t0)
    assert not periodic.may_send("sweep", t0 + timedelta(seconds=5))  # still queued
    periodic.started("sweep", t0 + timedelta(seconds=6))
    assert periodic.may_send("sweep", t0 + timedelta(seconds=10))
    assert not periodic.may_send("sweep", t0 + timedelta(seconds=11))
    assert periodic.may_send("ratings", t0 + timedelta(seconds=11))  # each task on its own


@pytest.mark.django_db
def test_a_periodic_message_the_broker_lost_is_sent_again(settings: Any) -> None:
    settings.PERIODIC_LOST_AFTER_S = 20
    t0 = timezone.now()
    assert periodic.may_send("sweep", t0)
    assert not periodic.may_send("sweep", t0 + timedelta(seconds=19))
    assert periodic.may_send("sweep", t0 + timedelta(seconds=21))


@pytest.mark.django_db
def test_each_start_is_counted_with_the_longest_gap_between_starts() -> None:
    t0 = timezone.now()
    for seconds in (0, 5, 17, 20):
        periodic.started("sweep", t0 + timedelta(seconds=seconds))
    run = PeriodicRun.objects.get(name="sweep")
    assert run.runs == 4 and run.longest_gap_s == pytest.approx(12)
    assert run.started_at == t0 + timedelta(seconds=20)


@pytest.mark.django_db
def test_running_a_periodic_task_records_its_start() -> None:
    tasks.sweep()
    tasks.sweep()
    assert PeriodicRun.objects.get(name=tasks.sweep.name).runs == 2


@pytest.mark.django_db(transaction=True)
def test_the_scheduler_sends_nothing_while_the_previous_sweep_waits() -> None:
    """What beat calls: the first sending goes to the broker, the second is held back."""
    from arena import celery_app

    queue = f"{QUEUE}.periodic"  # nothing consumes it in this test
    with celery_app.connection_for_write() as conn:
        first = tasks.sweep.apply_async(queue=queue, connection=conn)
        second = tasks.sweep.apply_async(queue=queue, connection=conn)
        assert first is not None and second is None
        conn.default_channel.queue_purge(queue)
