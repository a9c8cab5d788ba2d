"""Celery tasks: thin wrappers that take ids and call a service.

``play_match`` is sent by name (:func:`arena.jobs.claims.dispatch`) with per-call time limits
(its game's budget); :func:`arena.jobs.policy.run` is its failure policy: it retries only when
the machine failed, never because of what a bot did.
"""

from __future__ import annotations

from celery import Task, shared_task

from arena.games import ladder, seasons, services
from arena.games.models import Match
from arena.jobs import policy
from arena.jobs.periodic import periodic
from arena.jobs.sidecar import sidecar


@shared_task(name=Match.TASK, bind=True, acks_late=True, max_retries=None)
def play_match(self: Task[[int], str], match_id: int) -> str:
    """Claim, play and finish one match."""
    return policy.run(self, lambda: services.play(match_id, self.request.hostname or "", sidecar()))


@shared_task(acks_late=True)
@periodic
def schedule_ladder() -> int:
    """Top up the ladder's queues (periodic)."""
    return len(ladder.schedule_ladder())


@shared_task(acks_late=True)
@periodic
def close_ended_seasons() -> int:
    """Close the ladder's seasons whose end date has passed (periodic)."""
    return len(seasons.close_ended())
