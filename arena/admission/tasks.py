"""The Celery tasks of checks and trials: thin wrappers that take the work's id and call its
service, sent by name (:func:`arena.jobs.claims.dispatch`) with its time limits; they retry only
when the machine failed (:func:`arena.jobs.policy.run`), never because of what a bot did."""

from __future__ import annotations

from celery import Task, shared_task

from arena.admission import services, trials
from arena.admission.models import Trial
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


@shared_task(name=Trial.TASK, bind=True, acks_late=True, max_retries=None)
def run_trial(self: Task[[int], str], trial_id: int) -> str:
    """Play an upload's trial game."""
    return policy.run(self, lambda: trials.run(trial_id, self.request.hostname or "", sidecar()))
