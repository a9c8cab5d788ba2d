"""Celery tasks: thin wrappers that take ids and call a service.

``play_match`` and ``check_version`` are sent by name (:func:`arena.worker.send_after_commit`)
with per-call time limits (the work's budget); :func:`arena.worker.run` is their one failure
policy: they retry only when the machine failed, never because of what a bot did.
"""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from arena import worker
from arena.games import checks, ladder, ratings, services, startup, sweeper


@shared_task(name=worker.PLAY_MATCH, bind=True, acks_late=True, max_retries=None)
def play_match(self: Task[[int], str], match_id: int) -> str:
    """Claim, play and finish one match."""
    return worker.run(
        self, lambda: services.play(match_id, self.request.hostname or "", worker.sidecar())
    )


@shared_task(name=worker.CHECK_VERSION, bind=True, acks_late=True, max_retries=None)
def check_version(self: Task[[int], str], version_id: int) -> str:
    """Unpack and check an uploaded bot version; it becomes active or is rejected."""
    return worker.run(self, lambda: checks.check_version(version_id, worker.sidecar()))


@shared_task(acks_late=True)
def schedule_ladder() -> int:
    """Top up the ladder's queues (periodic)."""
    return len(ladder.schedule_ladder())


@shared_task(acks_late=True)
def sweep() -> dict[str, list[int]]:
    """Recover matches and checks of dead workers, and reap what they left on this host
    (periodic)."""
    report = sweeper.sweep()
    startup.reap()
    return vars(report)


@shared_task(acks_late=True)
def refresh_ratings(force: bool = False) -> list[str]:
    """Fit the ratings of the variants that have new results (periodic)."""
    return [r.variant for r in ratings.refresh_all(force=force)]


def periodic_task_names() -> list[str]:
    """The tasks the beat schedule sends (checked by the tests)."""
    return [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
