"""Tournaments in every format of :mod:`arena.referee.formats`.

A tournament fixes its format, entrants (bot versions, in seed order), variant, time control
and games per pairing when it is created. Its matches are made round by round as the format
makes them (all at once for round robins and gauntlets; a Swiss's or a knockout's next round
once the one before is played), PENDING, and released to the workers a few at a time
(``TOURNAMENT_PARALLEL``). Pausing takes the queued ones back; cancelling cancels everything
not finished.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from arena.bots.models import BotVersion, Variant
from arena.tournaments import limits


class Tournament(models.Model):
    class Format(models.TextChoices):
        """The formats of :class:`arena.referee.formats.Format` (the same values)."""

        ROUND_ROBIN = "round-robin", "round robin"
        DOUBLE_ROUND_ROBIN = "double-round-robin", "double round robin"
        SWISS = "swiss", "Swiss"
        GAUNTLET = "gauntlet", "gauntlet"
        KNOCKOUT = "knockout", "knockout"

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        FINISHED = "finished", "finished"
        #: Every game ended, but some were aborted (the machine failed them too often): its
        #: organiser may have them played again (``services.play_missing_again``).
        INCOMPLETE = "incomplete", "incomplete"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=limits.NAME_MAX_LENGTH)
    format = models.CharField(max_length=20, choices=Format.choices, default=Format.ROUND_ROBIN)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, related_name="tournaments"
    )
    variant = models.CharField(max_length=10, choices=Variant.choices)
    time_control = models.CharField(max_length=limits.TIME_CONTROL_MAX_LENGTH)
    #: Round robins: the games each pair plays (twice that in a double round robin); the other
    #: formats: the games of each mini-match.
    games_per_pair = models.PositiveIntegerField()
    #: A Swiss's rounds (None in the other formats, whose rounds follow from the entrants).
    rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    #: A knockout's tie-break mini-matches (of two games) in a level tie before the higher
    #: seed goes through (:attr:`arena.referee.formats.FormatSpec.max_tiebreaks`).
    max_tiebreaks = models.PositiveSmallIntegerField(default=limits.MAX_TIEBREAKS)
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
            models.CheckConstraint(
                condition=Q(
                    format__in=[
                        "round-robin",
                        "double-round-robin",
                        "swiss",
                        "gauntlet",
                        "knockout",
                    ]
                ),
                name="tournament_format_valid",
            ),
            # Only a Swiss is given its number of rounds, and it must be.
            models.CheckConstraint(
                condition=(Q(format="swiss") & Q(rounds__gte=1))
                | (~Q(format="swiss") & Q(rounds__isnull=True)),
                name="tournament_rounds_iff_swiss",
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


class Bye(models.Model):
    """An entry that sits out a round of a Swiss (scoring a won mini-match's points) or the
    first round of a knockout (going through), as the format gave it."""

    tournament = models.ForeignKey(Tournament, models.CASCADE, related_name="byes")
    entry = models.ForeignKey(Entry, models.CASCADE, related_name="byes")
    round = models.PositiveIntegerField()

    class Meta:
        ordering = ["tournament", "round", "entry__seed"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "round", "entry"], name="bye_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.entry.version} has a bye in round {self.round} of {self.tournament}"


class Schedule(models.Model):
    """A recurring tournament: every ``interval_days`` days from ``next_start`` its organiser's
    tournament of every opted-in bot (:attr:`arena.bots.models.Bot.scheduled_events`) that
    plays the variant is started (:mod:`arena.tournaments.schedules`), with the settings
    :func:`arena.tournaments.services.create` takes."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        PAUSED = "paused", "paused"

    name = models.CharField(max_length=limits.NAME_MAX_LENGTH)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, related_name="tournament_schedules"
    )
    variant = models.CharField(max_length=10, choices=Variant.choices)
    time_control = models.CharField(max_length=limits.TIME_CONTROL_MAX_LENGTH)
    format = models.CharField(
        max_length=20, choices=Tournament.Format.choices, default=Tournament.Format.ROUND_ROBIN
    )
    games_per_pair = models.PositiveIntegerField()
    #: A Swiss's rounds (None: its usual length for the entrants it gets; other formats: None).
    rounds = models.PositiveSmallIntegerField(null=True, blank=True)
    rated = models.BooleanField(default=False)
    #: When the next event starts; moved on by the interval as each one is due.
    next_start = models.DateTimeField()
    interval_days = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    #: Every tournament it started, the latest as ``last_tournament``.
    tournaments = models.ManyToManyField(Tournament, blank=True, related_name="schedules")
    last_tournament = models.ForeignKey(
        Tournament, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["next_start", "id"]
        indexes = [models.Index(fields=["status", "next_start"], name="schedule_due_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["active", "paused"]), name="schedule_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(interval_days__gte=limits.MIN_INTERVAL_DAYS)
                & Q(interval_days__lte=limits.MAX_INTERVAL_DAYS),
                name="schedule_interval_valid",
            ),
            models.CheckConstraint(
                condition=Q(games_per_pair__gte=1), name="schedule_games_positive"
            ),
            models.CheckConstraint(
                condition=Q(format="swiss") | Q(rounds__isnull=True),
                name="schedule_rounds_only_swiss",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("schedule", args=[self.pk])
