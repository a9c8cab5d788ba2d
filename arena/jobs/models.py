"""Claimed work: what a worker claims, beats while it runs, and gives back when the machine fails.

A match to play and a bot version to check are both :class:`ClaimedWork`: QUEUED (its task is
on its way) -> RUNNING (claimed by one worker, which writes a heartbeat) -> whatever the work
decides, or back to QUEUED when the machine failed under it (a dead worker, a broken sandbox),
until it has had ``MATCH_MAX_ATTEMPTS`` claims; then it is given up (:meth:`give_up`: a match
is aborted, a version held for an operator). :mod:`arena.jobs.claims` makes these changes, each
an ``UPDATE`` guarded by the status and the claim's attempt number.
"""

from __future__ import annotations

from typing import ClassVar

from django.db import models


class ClaimedWork(models.Model):
    """The columns and the few facts the claim needs; each kind of work says the rest."""

    #: Each kind of work has statuses of its own (it overrides this with its choices).
    status = models.CharField(max_length=10)
    #: How many times a worker claimed it (the claim that may finish it is the latest).
    attempts = models.PositiveSmallIntegerField(default=0)
    #: The worker (Celery's host name) that holds it, or held it last.
    worker = models.CharField(max_length=200, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    #: Written every ``MATCH_HEARTBEAT_S`` while a worker holds it; one older than
    #: ``MATCH_STALE_AFTER_S`` belongs to a dead worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    objects = models.Manager()

    #: Its status while it waits for a worker, and while one holds it.
    QUEUED: ClassVar[str]
    RUNNING: ClassVar[str]
    #: The name of the Celery task that does it, sent with its primary key.
    TASK: ClassVar[str]
    #: What the logs and reasons call one (``match``, ``check of version``).
    NOUN: ClassVar[str]

    class Meta:
        abstract = True

    def time_limits(self) -> tuple[int, int]:
        """Its task's (soft, hard) time limits in seconds."""
        raise NotImplementedError

    @classmethod
    def released(cls, reason: str) -> dict[str, object]:
        """What else is written when a claim is given back to the queue (none by default)."""
        return {}

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """The machine failed under its last allowed claim: end it without a verdict on what
        it was doing (guarded by the claim; False when the claim was lost)."""
        raise NotImplementedError
