"""An analysis request: one bot version asked, by one user, for its action in one position.

The position is given as the history of actions that reaches it, with its variant (what the bot
receives in its ``request``, as in a game). A worker answers it in the sandbox on a short clock
(:mod:`arena.analysis.services`); like a check or a trial it is claimed work, so a worker killed
under it gives it back to the queue. The asker waits a few seconds for it: one that no worker
answered within ``ANALYSIS_DEADLINE_S`` is ended as EXPIRED, never left pending.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from arena.bots.models import BotVersion, Variant
from arena.jobs.models import ClaimedWork


class AnalysisStatus(models.TextChoices):
    QUEUED = "queued", "waiting for a worker"
    RUNNING = "running", "thinking"
    #: The bot answered with a legal action.
    ANSWERED = "answered", "answered"
    #: The bot failed: no start, out of time, a crash, an illegal or malformed answer.
    FAILED = "failed", "failed"
    #: The machine could not run it, attempt after attempt (never the bot's fault).
    ABORTED = "aborted", "not run"
    #: No worker answered within ``ANALYSIS_DEADLINE_S`` (the arena is busy).
    EXPIRED = "expired", "no answer in time"


class Analysis(ClaimedWork):
    """One bot version's answer in one position, for the user who asked."""

    Status = AnalysisStatus
    QUEUED = Status.QUEUED
    RUNNING = Status.RUNNING
    TASK = "arena.analysis.tasks.analyse"
    NOUN = "analysis"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="analyses")
    version = models.ForeignKey(BotVersion, models.SET_NULL, null=True, related_name="+")
    #: The version as the answer names it (kept when its bot is deleted).
    bot_label = models.CharField(max_length=80)
    variant = models.CharField(max_length=20, choices=Variant.choices)
    #: The actions that reach the position, in the official notation, separated by spaces.
    history = models.TextField(blank=True)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: The bot's action (ANSWERED), its ``info`` and how long it thought.
    action = models.CharField(max_length=80, blank=True)
    info = models.JSONField(null=True, blank=True)
    think_ms = models.FloatField(null=True, blank=True)
    #: Why it did not answer, in public words (never the bot's standard error), and the
    #: referee's termination when the bot failed (``time``, ``crash``, ``illegal-move``...).
    termination = models.CharField(max_length=20, blank=True)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-pk"]
        verbose_name_plural = "analyses"
        indexes = [models.Index(fields=["owner", "-created_at"])]

    def __str__(self) -> str:
        return f"analysis #{self.pk} by {self.bot_label}"

    @property
    def done(self) -> bool:
        return self.status not in (AnalysisStatus.QUEUED, AnalysisStatus.RUNNING)

    @property
    def actions(self) -> list[str]:
        """The history, as a list of actions."""
        return self.history.split()

    def time_limits(self) -> tuple[int, int]:
        seconds = settings.ANALYSIS_MOVE_MS / 1000
        soft = int(seconds + settings.BOT_STARTUP_SECONDS + settings.BOT_EXIT_SECONDS) + 30
        soft += settings.BOT_BUILD_SECONDS  # its version's first run on this worker builds it
        return soft, soft + 30

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """ABORTED: the arena could not run it; the asker may ask again."""
        return bool(
            cls.objects.filter(pk=pk, status=AnalysisStatus.RUNNING, attempts=attempt).update(
                status=AnalysisStatus.ABORTED,
                finished_at=timezone.now(),
                reason=f"the arena could not run the bot ({attempt} attempts; try again later)",
            )
        )
