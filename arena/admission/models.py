"""Trials: an upload played once against a chosen opponent before it is published.

A :class:`Trial` keeps the uploaded bytes in the bot store like a version, but it is no version:
nothing is rated, nothing is listed, and only its owner sees it. A worker unpacks it, builds it
and plays one game (:mod:`arena.admission.trials`); the owner reads the whole game with the
bot's log, and may then publish the same upload as a version. Like a check, a trial is claimed
work: a worker killed under it gives it back to the queue.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from arena.bots.models import UPLOAD_KINDS, Bot, BotVersion, Variant, variant_title
from arena.jobs import limits
from arena.jobs.models import ClaimedWork


class TrialStatus(models.TextChoices):
    QUEUED = "queued", "waiting for a worker"
    RUNNING = "running", "playing"
    #: The game was played (whatever its result).
    PLAYED = "played", "played"
    #: The upload could not play: it could not be unpacked, or its build failed.
    FAILED = "failed", "could not play"
    #: The machine could not run it, attempt after attempt (never the bot's fault).
    ABORTED = "aborted", "not played"


class Colour(models.TextChoices):
    WHITE = "white", "white"
    BLACK = "black", "black"


class Trial(ClaimedWork):
    """One game of an upload against an opponent's active version, for its owner's eyes."""

    Status = TrialStatus
    QUEUED = Status.QUEUED
    RUNNING = Status.RUNNING
    TASK = "arena.admission.tasks.run_trial"
    NOUN = "trial"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="trials")
    #: The bot it would become a version of, when its owner said so (else a new bot).
    bot = models.ForeignKey(Bot, models.SET_NULL, null=True, blank=True, related_name="trials")
    sha256 = models.CharField(max_length=64)
    kind = models.CharField(max_length=8, choices=UPLOAD_KINDS)
    filename = models.CharField(max_length=100)
    size = models.PositiveIntegerField()

    variant = models.CharField(max_length=20, choices=Variant.choices)
    #: The colour the upload plays.
    colour = models.CharField(max_length=5, choices=Colour.choices)
    opponent = models.ForeignKey(
        BotVersion, models.SET_NULL, null=True, related_name="+", help_text="Its opponent."
    )
    #: The opponent as the record names it (kept when the opponent's bot is deleted).
    opponent_label = models.CharField(max_length=80)
    time_control = models.CharField(max_length=32)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: What the worker did: unpacking, the build, the game (lines for the owner).
    report = models.JSONField(default=list, blank=True)
    #: Why it could not play (FAILED, ABORTED), or what ended the game (PLAYED).
    reason = models.TextField(blank=True)
    #: The game's winner (``white``, ``black``, ``draw``; empty until played), and how it ended.
    result = models.CharField(max_length=8, blank=True)
    termination = models.CharField(max_length=20, blank=True)
    #: The colour at fault when a player failed (crash, time, illegal move), else empty.
    fault = models.CharField(max_length=5, blank=True)
    #: The game in the official notation (long form) and its transcript, the opponent's
    #: logs left out.
    record = models.TextField(blank=True)
    transcript = models.JSONField(null=True, blank=True)
    #: The end of the upload's standard error, or of its build's output when the build failed.
    stderr_tail = models.TextField(blank=True)

    class Meta:
        ordering = ["-pk"]
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"trial #{self.pk} of {self.filename}"

    def get_absolute_url(self) -> str:
        return reverse("trial", args=[self.pk])

    @property
    def done(self) -> bool:
        return self.status not in (TrialStatus.QUEUED, TrialStatus.RUNNING)

    @property
    def variant_title(self) -> str:
        return variant_title(self.variant)

    @property
    def score(self) -> str:
        """The upload's score in the game (``1``, ``0``, ``½``), empty until played."""
        if self.status != TrialStatus.PLAYED or not self.result:
            return ""
        if self.result == "draw":
            return "½"
        return "1" if self.result == self.colour else "0"

    def time_limits(self) -> tuple[int, int]:
        return limits.time_limits(self.time_control, builds=1)

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """ABORTED: the arena could not run it; its owner may try again."""
        return bool(
            cls.objects.filter(pk=pk, status=TrialStatus.RUNNING, attempts=attempt).update(
                status=TrialStatus.ABORTED,
                finished_at=timezone.now(),
                reason=f"the arena could not play it ({attempt} attempts; try again later)",
            )
        )
