"""The analysis board's Celery task: a thin wrapper that takes the request's id and calls its
service, sent by name (:func:`arena.jobs.claims.dispatch`) with its time limits on the normal
queue; it retries only when the machine failed (:func:`arena.jobs.policy.run`), never because
of what a bot did."""

from __future__ import annotations

from celery import Task, shared_task

from arena.analysis import services
from arena.analysis.models import Analysis
from arena.jobs import policy
from arena.jobs.sidecar import sidecar


@shared_task(name=Analysis.TASK, bind=True, acks_late=True, max_retries=None)
def analyse(self: Task[[int], str], analysis_id: int) -> str:
    """Ask a bot for its action in the request's position."""
    return policy.run(
        self, lambda: services.run(analysis_id, self.request.hostname or "", sidecar())
    )
