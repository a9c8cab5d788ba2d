"""Tests and challenges: one bot version against another, in colour-reversed pairs of games.

A :class:`Duel` is a TEST (an owner's version against another version, usually a sequential
probability ratio test, see :mod:`arena.stats.sequential`) or a CHALLENGE (a user's version
against someone else's bot, a fixed number of games). Its games are played in
:class:`DuelPair` s: two matches from the same opening, the candidate white in the first and
black in the second. Only pairs whose two games finished are counted (pentanomial counts, wins,
draws, losses, the log-likelihood ratio); a pair with an aborted game is void and replaced. Only
:mod:`arena.duels.services` changes a duel's status or its counts.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from arena import stats
from arena.bots.models import BotVersion, Variant


class Duel(models.Model):
    class Kind(models.TextChoices):
        TEST = "test", "test"
        CHALLENGE = "challenge", "challenge"

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    class Verdict(models.TextChoices):
        NONE = "", "no verdict"
        H0 = "H0", "H0 accepted: not stronger by elo1"
        H1 = "H1", "H1 accepted: stronger"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    #: The duel's number among those of its kind ("Test #3", "Challenge #1"), from 1, given at
    #: creation (:func:`arena.duels.services.next_number`); pages and links keep the ``id``.
    number = models.PositiveIntegerField()
    variant = models.CharField(max_length=10, choices=Variant.choices)
    time_control = models.CharField(max_length=20)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="duels")
    #: The version under test (the challenger's, for a challenge).
    candidate = models.ForeignKey(BotVersion, models.PROTECT, related_name="duels_as_candidate")
    opponent = models.ForeignKey(BotVersion, models.PROTECT, related_name="duels_as_opponent")
    #: A sequential test's bounds (logistic Elo) and error rates; None for a fixed number of
    #: games.
    elo0 = models.FloatField(null=True, blank=True)
    elo1 = models.FloatField(null=True, blank=True)
    alpha = models.FloatField(null=True, blank=True)
    beta = models.FloatField(null=True, blank=True)
    #: A fixed number of games (even), or None for a sequential test.
    games = models.PositiveIntegerField(null=True, blank=True)
    #: The most games a sequential test plays before it stops without a verdict.
    max_games = models.PositiveIntegerField()
    rated = models.BooleanField(default=False)
    #: Openings of pair ``n`` are drawn with seed ``seed + n``.
    seed = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    verdict = models.CharField(max_length=2, choices=Verdict.choices, blank=True)

    # Counts of the counted pairs, from the candidate's side.
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    #: Pairs in which the candidate scored 0, 1/2, 1, 3/2 and 2 points.
    p0 = models.PositiveIntegerField(default=0)
    p1 = models.PositiveIntegerField(default=0)
    p2 = models.PositiveIntegerField(default=0)
    p3 = models.PositiveIntegerField(default=0)
    p4 = models.PositiveIntegerField(default=0)
    llr = models.FloatField(default=0.0)
    #: Pairs made so far (counted, void or in play): the next pair's number.
    pairs_made = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["running", "finished", "cancelled"]),
                name="duel_status_valid",
            ),
            models.CheckConstraint(condition=Q(kind__in=["test", "challenge"]), name="duel_kind"),
            models.CheckConstraint(condition=Q(verdict__in=["", "H0", "H1"]), name="duel_verdict"),
            # Either SPRT bounds or a fixed number of games.
            models.CheckConstraint(
                condition=(
                    Q(games__isnull=True)
                    & Q(elo0__isnull=False)
                    & Q(elo1__isnull=False)
                    & Q(alpha__isnull=False)
                    & Q(beta__isnull=False)
                )
                | (Q(games__isnull=False) & Q(elo0__isnull=True) & Q(elo1__isnull=True)),
                name="duel_sprt_or_games",
            ),
            models.CheckConstraint(
                condition=~Q(candidate=models.F("opponent")), name="duel_two_versions"
            ),
            models.UniqueConstraint(fields=["kind", "number"], name="duel_number_unique"),
        ]
        indexes = [
            models.Index(fields=["kind", "-id"], name="duel_kind_idx"),
            models.Index(fields=["created_by", "kind", "created_at"], name="duel_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.title}: {self.candidate} - {self.opponent}"

    @property
    def title(self) -> str:
        """ "Test #3" or "Challenge #1": the number users see."""
        return f"{self.get_kind_display().capitalize()} #{self.number}"

    def get_absolute_url(self) -> str:
        return reverse("test" if self.kind == self.Kind.TEST else "challenge", args=[self.pk])

    @property
    def outcome(self) -> str:
        """The verdict in a word or two, as lists and pages show it: "running", "cancelled";
        a finished sequential test's "stronger" (H1 accepted), "not stronger" (H0) or
        "inconclusive" (budget spent); a fixed number of games' "won", "lost" or "drawn" (the
        candidate's points against half of the games)."""
        if self.status != self.Status.FINISHED:
            return self.get_status_display()
        if self.verdict == self.Verdict.H1:
            return "stronger"
        if self.verdict == self.Verdict.H0:
            return "not stronger"
        if self.is_sprt or self.played == 0:
            return "inconclusive"
        half = self.played / 2
        return "won" if self.points > half else "lost" if self.points < half else "drawn"

    @property
    def is_sprt(self) -> bool:
        return self.games is None

    @property
    def counts(self) -> tuple[int, int, int, int, int]:
        """The pentanomial counts (pairs by the candidate's points: 0, 1/2, 1, 3/2, 2)."""
        return self.p0, self.p1, self.p2, self.p3, self.p4

    @property
    def pairs(self) -> int:
        """Pairs counted."""
        return sum(self.counts)

    @property
    def played(self) -> int:
        """Games counted (those of the counted pairs)."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def target_games(self) -> int:
        """The fixed number of games, or the budget of a sequential test."""
        return self.games if self.games is not None else self.max_games

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The log-likelihood ratio's (lower, upper) bounds of a sequential test."""
        if self.alpha is None or self.beta is None:
            return None
        return stats.bounds(self.alpha, self.beta)

    @property
    def pentanomial(self) -> stats.Estimate:
        return stats.pentanomial_estimate(self.counts)

    @property
    def trinomial(self) -> stats.Estimate:
        return stats.trinomial_estimate(self.wins, self.draws, self.losses)


class DuelPair(models.Model):
    """Two games of a duel from one opening, the candidate white in the first (its matches are
    the duel's matches whose ``round`` is ``number``)."""

    class Status(models.TextChoices):
        PLAYING = "playing", "playing"
        COUNTED = "counted", "counted"
        #: A game was aborted (or cancelled): the pair is not counted and another replaces it.
        VOID = "void", "void"

    duel = models.ForeignKey(Duel, models.CASCADE, related_name="pair_set")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PLAYING)
    #: The candidate's points in the pair (0 to 2) once counted.
    points = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["duel", "number"]
        constraints = [
            models.UniqueConstraint(fields=["duel", "number"], name="duelpair_unique"),
            models.CheckConstraint(
                condition=Q(status__in=["playing", "counted", "void"]), name="duelpair_status"
            ),
        ]

    def __str__(self) -> str:
        return f"pair {self.number} of duel #{self.duel_id}"
