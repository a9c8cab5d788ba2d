"""The check's Celery task: a thin wrapper that takes the version's id and calls the service,
sent by name (:func:`arena.jobs.claims.dispatch`) with the check's time limits; it retries only
when the machine failed (:func:`arena.jobs.policy.run`), never because of what a bot did."""

from __future__ import annotations

from celery import Task, shared_task

from arena.admission import services
from arena.bots.models import BotVersion
from arena.jobs import policy
from arena.jobs.sidecar import sidecar


@shared_task(name=BotVersion.TASK, bind=True, acks_late=True, max_retries=None)
def check_version(self: Task[[int], str], version_id: int) -> str:
    """Unpack and check an uploaded bot version; it becomes active or is rejected."""
    return policy.run(
        self,
        lambda: services.check_version(version_id, self.request.hostname or "", sidecar()),
    )
