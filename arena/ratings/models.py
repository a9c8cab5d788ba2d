"""The ratings: every pair's rated results (:class:`PairStats`, counted as each result is
written), and the ratings fitted from them (:class:`Rating`, the cached leaderboard, and
:class:`RatingPoint`, each version's history), with the state of each variant's fit.

Each ladder (:class:`Ladder`) has its own rating space in every variant: the sandboxed
ladder's (every rated game but the open ladder's) and the open ladder's, where remote bots
meet the sandboxed bots whose owners opted in. Every row names its ladder.

Their tables kept the names they had when the games app held them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from arena.bots.models import BotVersion, Variant


class Ladder(models.TextChoices):
    """A rating space of every variant: who plays there, and whose ratings those are."""

    #: Sandboxed bots only: the ladder, tournaments, tests, qualification games.
    SANDBOX = "sandbox", "ladder"
    #: Remote bots, and the sandboxed bots whose owners opted in (``Bot.open_ladder``).
    OPEN = "open", "open ladder"


def _ladder_field() -> models.CharField[str, str]:
    return models.CharField(
        max_length=7, choices=Ladder.choices, default=Ladder.SANDBOX, db_default=Ladder.SANDBOX
    )


class PairStats(models.Model):
    """Rated results of ``white`` against ``black`` in a variant, from white's side."""

    ladder = _ladder_field()
    variant = models.CharField(max_length=10, choices=Variant.choices)
    white = models.ForeignKey(BotVersion, models.CASCADE, related_name="+")
    black = models.ForeignKey(BotVersion, models.CASCADE, related_name="+")
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "games_pairstats"
        verbose_name = "pair statistics"
        verbose_name_plural = "pair statistics"
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "variant", "white", "black"], name="pairstats_unique_pair"
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.white} - {self.black} {self.variant}: +{self.wins}={self.draws}-{self.losses}"
        )

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


class RatingState(models.Model):
    """Per ladder and variant: how many rated results were written, and how many the ratings
    include."""

    ladder = _ladder_field()
    variant = models.CharField(max_length=10, choices=Variant.choices)
    results = models.PositiveBigIntegerField(default=0)
    fitted = models.PositiveBigIntegerField(default=0)
    fitted_at = models.DateTimeField(null=True, blank=True)
    white_advantage = models.FloatField(default=0.0)
    fit_seconds = models.FloatField(default=0.0)

    class Meta:
        db_table = "games_ratingstate"
        constraints = [
            models.UniqueConstraint(fields=["ladder", "variant"], name="ratingstate_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.variant} ({self.ladder}): {self.fitted}/{self.results} results fitted"

    @property
    def unfitted(self) -> int:
        """Results written since the last fit (the next includes them)."""
        return max(0, self.results - self.fitted)


class Rating(models.Model):
    """A bot version's current rating in a variant (the cached leaderboard, rebuilt per fit)."""

    ladder = _ladder_field()
    variant = models.CharField(max_length=10, choices=Variant.choices)
    version = models.ForeignKey(BotVersion, models.CASCADE, related_name="ratings")
    elo = models.FloatField()
    #: Half-width of the 95% interval (None when it cannot be estimated).
    error = models.FloatField(null=True, blank=True)
    games = models.PositiveIntegerField()
    #: Points scored (a draw is half a point).
    points = models.FloatField()
    rank = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "games_rating"
        ordering = ["ladder", "variant", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "variant", "version"], name="rating_unique"),
        ]
        indexes = [models.Index(fields=["ladder", "variant", "rank"], name="rating_rank_idx")]

    def __str__(self) -> str:
        interval = f"± {self.error:.0f}" if self.error is not None else "(interval unknown)"
        return f"{self.version} {self.variant}: {self.elo:.0f} {interval}"

    @property
    def percent(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    @property
    def provisional(self) -> bool:
        """Fitted from fewer than ``RATING_PROVISIONAL_GAMES`` games: the one definition of a
        provisional rating, for every page and the API."""
        return self.games < settings.RATING_PROVISIONAL_GAMES


class RatingPoint(models.Model):
    """One point of a version's rating history (kept when its games changed since the last)."""

    ladder = _ladder_field()
    variant = models.CharField(max_length=10, choices=Variant.choices)
    version = models.ForeignKey(BotVersion, models.CASCADE, related_name="rating_history")
    at = models.DateTimeField()
    elo = models.FloatField()
    error = models.FloatField(null=True, blank=True)
    games = models.PositiveIntegerField()

    class Meta:
        db_table = "games_ratingpoint"
        ordering = ["at"]
        indexes = [
            models.Index(fields=["version", "variant", "at"], name="ratingpoint_version_idx")
        ]

    def __str__(self) -> str:
        return f"{self.version} {self.variant} @ {self.at:%Y-%m-%d %H:%M}: {self.elo:.0f}"
