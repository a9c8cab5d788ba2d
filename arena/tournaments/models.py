"""Round-robin tournaments.

A tournament fixes its entrants (bot versions), variant, time control and games per pairing
when it is created; all its matches are created then, PENDING, and released to the workers a
few at a time (``TOURNAMENT_PARALLEL``). Pausing takes the queued ones back; cancelling
cancels everything not finished.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from arena.bots.models import BotVersion, Variant
from arena.tournaments import limits


class Tournament(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        FINISHED = "finished", "finished"
        #: Every game ended, but some were aborted (the machine failed them too often): its
        #: organiser may have them played again (``services.play_missing_again``).
        INCOMPLETE = "incomplete", "incomplete"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=limits.NAME_MAX_LENGTH)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, related_name="tournaments"
    )
    variant = models.CharField(max_length=10, choices=Variant.choices)
    time_control = models.CharField(max_length=limits.TIME_CONTROL_MAX_LENGTH)
    games_per_pair = models.PositiveIntegerField()
    rated = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        permissions = [("organise_tournament", "Can organise tournaments")]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=["running", "paused", "finished", "incomplete", "cancelled"]
                ),
                name="tournament_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(games_per_pair__gte=1), name="tournament_games_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("tournament", args=[self.pk])

    @property
    def is_open(self) -> bool:
        """Running or paused: it can still change."""
        return self.status in (self.Status.RUNNING, self.Status.PAUSED)


class Entry(models.Model):
    """A bot version playing in a tournament (the version active when it was created)."""

    tournament = models.ForeignKey(Tournament, models.CASCADE, related_name="entries")
    version = models.ForeignKey(BotVersion, models.PROTECT, related_name="entries")
    seed = models.PositiveIntegerField()

    class Meta:
        verbose_name_plural = "entries"
        ordering = ["tournament", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "version"], name="entry_unique"),
            models.UniqueConstraint(fields=["tournament", "seed"], name="entry_seed_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.version} in {self.tournament}"
