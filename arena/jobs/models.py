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

    def queue(self) -> str | None:
        """The queue its task goes to (None: the match queue, the default)."""
        return None

    @classmethod
    def released(cls, reason: str) -> dict[str, object]:
        """What else is written when a claim is given back to the queue (none by default)."""
        return {}

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """The machine failed under its last allowed claim: end it without a verdict on what
        it was doing (guarded by the claim; False when the claim was lost)."""
        raise NotImplementedError


class WorkerBeat(models.Model):
    """A worker's own heartbeat, written by its main process every ``WORKER_ALIVE_EVERY_S``
    (:class:`arena.celery.Alive`) and removed when it stops: the metrics show how long each
    has been silent and how many are alive, from the database every host reaches (a worker
    host opens no port). One row per worker, written in place."""

    #: Celery's host name of the worker (``celery@host``).
    hostname = models.CharField(max_length=200, primary_key=True)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField()
    #: Its pool's size: how many tasks it runs at once.
    concurrency = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.hostname


class PeriodicRun(models.Model):
    """When each periodic task (``CELERY_BEAT_SCHEDULE``) last ran: one row per task, written
    in place at the end of every run (:func:`arena.jobs.periodic.periodic`), so that the
    metrics show a task that stopped running, whichever host ran it."""

    #: The task's name (``arena.jobs.tasks.sweep``).
    name = models.CharField(max_length=200, primary_key=True)
    #: When its latest run started, and when its latest run that did not fail finished.
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class Recovery(models.Model):
    """What one run of the sweeper (or a restarted worker) recovered, one row per kind of
    work and action, written only when it recovered something: the metrics' count of
    recoveries, which the log alone would lose."""

    class Action(models.TextChoices):
        #: Running work of a dead worker, queued again.
        REQUEUED = "requeued", "queued again"
        #: Running work of a dead worker out of attempts: aborted, or a version held.
        GIVEN_UP = "given_up", "given up"
        #: Queued work nobody claimed: its task sent again.
        RESENT = "resent", "sent again"

    at = models.DateTimeField()
    #: The kind of work (the model's label: ``games.match``).
    kind = models.CharField(max_length=100)
    action = models.CharField(max_length=10, choices=Action.choices)
    count = models.PositiveIntegerField()

    class Meta:
        verbose_name_plural = "recoveries"

    def __str__(self) -> str:
        return f"{self.kind} {self.action} {self.count}"
