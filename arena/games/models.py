"""Matches, their records, their live moves, the watch on versions that fail often, and the
ladder's seasons with their divisions.

The life of a :class:`Match`: PENDING (a tournament's or a duel's, waiting for its turn) ->
QUEUED (a task is on its way) -> RUNNING (claimed by one worker, which writes a heartbeat) ->
FINISHED (with a result) or ABORTED (not counted). A tournament or a duel can also CANCEL it. Only
:mod:`arena.games.services` changes a match's status, always with a guarded ``UPDATE``.

A finished rated match adds one to its pair's counts (:class:`arena.ratings.models.PairStats`)
in the same transaction that writes its result; :func:`arena.games.recount.recount_results`
counts them again from the matches at any time.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from arena.bots.models import Bot, BotVersion, Variant
from arena.games.signals import match_closed
from arena.jobs import limits
from arena.jobs.models import ClaimedWork
from arena.ratings.models import Ladder
from arena.referee.jsontypes import JSONObject
from arena.referee.outcomes import Failure


class Match(ClaimedWork):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        ABORTED = "aborted", "aborted"
        CANCELLED = "cancelled", "cancelled"

    QUEUED = Status.QUEUED
    RUNNING = Status.RUNNING
    #: The statuses of a match not over yet: waiting for its turn, queued, being played.
    OPEN_STATUSES = (Status.PENDING, Status.QUEUED, Status.RUNNING)
    OVER_STATUSES = (Status.FINISHED, Status.ABORTED, Status.CANCELLED)
    TASK = "arena.games.tasks.play_match"
    NOUN = "match"

    class Kind(models.TextChoices):
        LADDER = "ladder", "ladder"
        TOURNAMENT = "tournament", "tournament"
        QUALIFICATION = "qualification", "qualification"
        #: A game of a test between two versions (arena.duels).
        TEST = "test", "test"
        #: A game of a challenge of one bot by another (arena.duels).
        CHALLENGE = "challenge", "challenge"
        #: A person's game against a bot, played in the browser (arena.games.people).
        PERSON = "person", "against a person"
        #: A game of the open ladder, where remote bots play (arena.games.ladder), rated in
        #: the open ladder's own rating space.
        OPEN = "open", "open ladder"

    class Result(models.TextChoices):
        WHITE = "white", "1-0"
        BLACK = "black", "0-1"
        DRAW = "draw", "1/2-1/2"

    variant = models.CharField(max_length=10, choices=Variant.choices)
    kind = models.CharField(max_length=14, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    white = models.ForeignKey(BotVersion, models.PROTECT, related_name="matches_as_white")
    black = models.ForeignKey(BotVersion, models.PROTECT, related_name="matches_as_black")
    #: Seconds + increment, as the referee reads it: "10+0.1".
    time_control = models.CharField(max_length=20)
    seed = models.PositiveIntegerField(default=0)
    #: The actions played before the bots take over (ring placements, space-separated, as
    #: :func:`arena.referee.openings.opening` draws them): the game starts from there.
    opening = models.CharField(max_length=200, blank=True)
    rated = models.BooleanField(default=True)
    tournament = models.ForeignKey(
        "tournaments.Tournament", models.CASCADE, null=True, blank=True, related_name="matches"
    )
    #: A tournament's round; a test's or a challenge's pair (arena.duels.models.DuelPair).
    round = models.PositiveIntegerField(null=True, blank=True)
    #: A knockout's tie-break game: its number among its tie's tie-break games (from 1; 0 for
    #: every other game). Its round is then named ``3.1``, ``3.2``... (:attr:`round_label`).
    tiebreak = models.PositiveSmallIntegerField(default=0)
    #: The test or challenge the match belongs to.
    duel = models.ForeignKey(
        "duels.Duel", models.CASCADE, null=True, blank=True, related_name="matches"
    )

    result = models.CharField(max_length=5, choices=Result.choices, blank=True)
    termination = models.CharField(max_length=20, blank=True)
    #: What ended the game, for everyone (``black exited at ply 8``); never a bot's own words.
    reason = models.TextField(blank=True)
    #: The reason in full when a bot's failure ended the game: its exit code, sandbox violation,
    #: protocol error, the last lines of its standard error. Its owner's and the operators'
    #: only (arena.games.privacy.reason_for).
    detail = models.TextField(blank=True)
    #: The colour whose failure ended the game (crash, time, illegal move...), if any.
    fault = models.CharField(max_length=5, blank=True)
    plies = models.PositiveIntegerField(default=0)
    duration_s = models.FloatField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "matches"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=["pending", "queued", "running", "finished", "aborted", "cancelled"]
                ),
                name="match_status_valid",
            ),
            # A finished match has exactly one result; no other status has one.
            models.CheckConstraint(
                condition=(Q(status="finished") & Q(result__in=["white", "black", "draw"]))
                | (~Q(status="finished") & Q(result="")),
                name="match_result_iff_finished",
            ),
            models.CheckConstraint(
                condition=Q(fault__in=["", "white", "black"]), name="match_fault_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "kind", "variant"], name="match_status_kind_idx"),
            models.Index(fields=["white", "-id"], name="match_white_idx"),
            models.Index(fields=["black", "-id"], name="match_black_idx"),
            models.Index(fields=["tournament", "status"], name="match_tournament_idx"),
            models.Index(fields=["duel", "round"], name="match_duel_idx"),
            models.Index(fields=["-finished_at"], name="match_finished_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.white} - {self.black} ({self.variant})"

    def clean(self) -> None:
        """Both versions must declare the variant (checked by forms, e.g. the admin's; the
        ladder and tournaments choose only such versions)."""
        errors = {}
        for side in ("white", "black"):
            version = getattr(self, side) if getattr(self, f"{side}_id") is not None else None
            if version is not None and self.variant and not version.plays(self.variant):
                errors[side] = (
                    f"{version.label} does not play {self.variant}: it plays "
                    f"{', '.join(version.variant_names)}"
                )
        if errors:
            raise ValidationError(errors)

    def get_absolute_url(self) -> str:
        return reverse("match", args=[self.pk])

    def time_limits(self) -> tuple[int, int]:
        """Its task's limits: its game's budget, and the builds of both bots (with a remote
        player, its latency allowance on every action too)."""
        soft, hard = limits.time_limits(self.time_control, builds=2)
        if self.has_remote_player():
            extra = settings.MATCH_MAX_ACTIONS * settings.REMOTE_LATENCY_MS // 1000
            soft, hard = soft + extra, hard + extra
        return soft, hard

    def has_remote_player(self) -> bool:
        """Whether a side is a remote bot (:mod:`arena.games.remote`)."""
        return BotVersion.objects.filter(
            pk__in=(self.white_id, self.black_id), bot__kind__in=Bot.OVER_HTTP
        ).exists()

    def queue(self) -> str | None:
        """A game with a remote player waits for its moves over HTTP: it is played on the
        remote queue, whose worker waits in threads, never in a sandboxed game's process."""
        return settings.REMOTE_QUEUE if self.has_remote_player() else None

    @property
    def rating_space(self) -> Ladder:
        """The ladder whose ratings count it if rated: the open ladder's its own games, the
        sandboxed ladder's every other (:meth:`rating_spaces`)."""
        return Ladder.OPEN if self.kind == self.Kind.OPEN else Ladder.SANDBOX

    @classmethod
    def rating_spaces(cls) -> models.Case:
        """:attr:`rating_space` in a query (an annotation), for counting in the database."""
        return models.Case(
            models.When(kind=cls.Kind.OPEN, then=models.Value(Ladder.OPEN.value)),
            default=models.Value(Ladder.SANDBOX.value),
            output_field=models.CharField(),
        )

    @classmethod
    def released(cls, reason: str) -> dict[str, object]:
        return {"reason": reason[:4000]}

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """ABORTED (not counted) after the machine failed under its last allowed claim."""
        done = cls.objects.filter(pk=pk, status=cls.Status.RUNNING, attempts=attempt).update(
            status=cls.Status.ABORTED,
            reason=f"gave up after {attempt} attempts; last: {reason}"[:4000],
            termination=Failure.ABORTED.value,
            finished_at=timezone.now(),
        )
        if done:
            closed(pk)
        return bool(done)

    @property
    def round_label(self) -> str:
        """Its round as records and pages name it: ``3``, ``3.2`` for the second tie-break
        game of a knockout's round 3 (:attr:`arena.referee.formats.Game.label`); ``""``
        without a round."""
        if self.round is None:
            return ""
        return f"{self.round}.{self.tiebreak}" if self.tiebreak else str(self.round)

    @property
    def opening_actions(self) -> list[str]:
        """The opening's actions, in order (none: the game starts from the empty board)."""
        return self.opening.split()

    @property
    def score(self) -> str:
        """``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while it has no result."""
        return self.Result(self.result).label if self.result else "*"

    @property
    def is_over(self) -> bool:
        return self.status in self.OVER_STATUSES


def closed(match_id: int) -> None:
    """Announce that a match is closed (finished, aborted or given up), inside the transaction
    that closed it: the tournaments and duels release their next games
    (:mod:`arena.tournaments.receivers`). Its live moves go: its record holds the game now."""
    LiveMove.objects.filter(match_id=match_id).delete()
    tournament_id = Match.objects.values_list("tournament_id", flat=True).get(pk=match_id)
    match_closed.send(sender=Match, match_id=match_id, tournament_id=tournament_id)


class MatchRecord(models.Model):
    """A finished match's game record and transcript; one per match (the primary key)."""

    match = models.OneToOneField(Match, models.CASCADE, primary_key=True, related_name="data")
    #: The record file in the long notation (engine.Record.to_text(long=True)).
    record = models.TextField()
    #: The record file in the short notation.
    record_short = models.TextField()
    transcript: models.JSONField[JSONObject, JSONObject] = models.JSONField()

    def __str__(self) -> str:
        return f"record of match #{self.match_id}"


class LiveMove(models.Model):
    """An action of a running match, written as the referee plays it, so that its page can show
    the game live (:mod:`arena.games.live`): the action, its think time, both clocks (public),
    and the bot's ``info`` (its owner's alone). A claim writes its own rows (``attempt``); they
    are deleted when the match closes (its record then holds the whole game)."""

    match = models.ForeignKey(Match, models.CASCADE, related_name="live_moves")
    attempt = models.PositiveSmallIntegerField()
    #: The action's number in the game, the opening's included (1 for the first).
    ply = models.PositiveIntegerField()
    color = models.CharField(max_length=5)
    action = models.CharField(max_length=40)
    #: The bot's think time; None for a forced pass (it was not asked).
    think_ms = models.PositiveIntegerField(null=True, blank=True)
    #: Both clocks once the action was played, as the referee keeps them.
    white_ms = models.IntegerField()
    black_ms = models.IntegerField()
    #: Who acts next ("" when the game is over).
    turn = models.CharField(max_length=5, blank=True)
    at = models.DateTimeField(default=timezone.now)
    #: The bot's info with the action, as text to read: its owner's (live.feed shows it to them).
    info = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["match", "attempt", "ply"], name="livemove_unique_ply"),
        ]

    def __str__(self) -> str:
        return f"match #{self.match_id} ply {self.ply}: {self.action}"


class FailureAlert(models.Model):
    """A version found failing often in a variant (``FAILING_RATE`` of its recent games over at
    least ``FAILING_MIN_GAMES``): kept up to date after each of its games once flagged, when its
    owner was told, and when its owner last resumed it. See :mod:`arena.games.reliability`."""

    version = models.ForeignKey(BotVersion, models.CASCADE, related_name="failure_alerts")
    variant = models.CharField(max_length=10, choices=Variant.choices)
    games = models.PositiveIntegerField()
    failures = models.PositiveIntegerField()
    #: Whether it still fails often (the ladder pauses it when ``PAUSE_FAILING_VERSIONS``).
    failing = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    #: When its owner was told (None: not since it was last resumed).
    notified_at = models.DateTimeField(null=True, blank=True)
    #: When its owner last resumed it on the ladder: the verdict counts only games finished
    #: since (``games`` and ``failures`` too).
    resumed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "variant"], name="failurealert_unique"),
        ]
        indexes = [models.Index(fields=["variant", "failing"], name="failurealert_variant_idx")]

    def __str__(self) -> str:
        return f"{self.version} fails in {self.variant}: {self.failures}/{self.games}"

    @property
    def rate(self) -> float:
        return self.failures / self.games if self.games else 0.0


class Season(models.Model):
    """A season of one variant's ladder (:mod:`arena.games.seasons`): while it is open the
    ladder pairs bots within their divisions; once closed its final standings are kept as they
    were (:class:`SeasonEntry`). At most one season of a variant is open at a time."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        CLOSED = "closed", "closed"

    variant = models.CharField(max_length=10, choices=Variant.choices)
    #: Its number among the variant's seasons (1 for the first).
    number = models.PositiveIntegerField()
    #: What the operator called it (empty: "<Variant> season <number>").
    name = models.CharField(max_length=80, blank=True)
    status = models.CharField(max_length=6, choices=Status.choices, default=Status.OPEN)
    #: Bots per division when it opened; the last division takes the rest.
    division_size = models.PositiveSmallIntegerField()
    #: How many bots of each division go up, and how many go down, when it closes.
    movers = models.PositiveSmallIntegerField()
    #: The season its divisions came from (promotions and relegations applied); None: they
    #: were made by rating.
    previous = models.ForeignKey("self", models.SET_NULL, null=True, blank=True, related_name="+")
    opened_at = models.DateTimeField(default=timezone.now)
    #: Its last day (UTC): the periodic check closes it once that day is over. None: when the
    #: operator closes it.
    ends_on = models.DateField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["variant"], condition=Q(status="open"), name="season_one_open"
            ),
            models.UniqueConstraint(fields=["variant", "number"], name="season_number_unique"),
            models.CheckConstraint(
                condition=Q(status__in=["open", "closed"]), name="season_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(division_size__gte=2), name="season_division_size_valid"
            ),
            models.CheckConstraint(condition=Q(movers__gte=1), name="season_movers_valid"),
            # A closed season says when it closed; an open one has not.
            models.CheckConstraint(
                condition=(Q(status="closed") & Q(closed_at__isnull=False))
                | (Q(status="open") & Q(closed_at__isnull=True)),
                name="season_closed_at_iff_closed",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("season", args=[self.pk])

    @property
    def title(self) -> str:
        return self.name or f"{Variant(self.variant).label} season {self.number}"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class SeasonEntry(models.Model):
    """A bot's seat in a season: its division (1 is the top), and once the season closed, its
    final standing there, frozen: later games change nothing of it."""

    class Move(models.TextChoices):
        UP = "up", "promoted"
        STAY = "stay", "stayed"
        DOWN = "down", "relegated"

    season = models.ForeignKey(Season, models.CASCADE, related_name="entries")
    #: A bot that took part in a season is kept (withdrawn, not deleted), as one that played.
    bot = models.ForeignKey(Bot, models.PROTECT, related_name="season_entries")
    division = models.PositiveSmallIntegerField()
    #: Its place in the order the season was made in (the standings' last tie-break).
    seed = models.PositiveIntegerField()
    joined_at = models.DateTimeField(default=timezone.now)

    # Frozen when the season closes (null or zero before).
    #: The bot's version then: its active one, else its newest that passed its check.
    version = models.ForeignKey(
        BotVersion, models.PROTECT, null=True, blank=True, related_name="season_entries"
    )
    rank = models.PositiveIntegerField(null=True, blank=True)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    #: The Sonneborn-Berger score within its division (the first tie-break).
    tiebreak = models.FloatField(default=0.0)
    #: That version's rating in the variant then (None: not rated).
    elo = models.FloatField(null=True, blank=True)
    move = models.CharField(max_length=4, choices=Move.choices, blank=True)

    class Meta:
        verbose_name_plural = "season entries"
        ordering = ["season", "division", "rank", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["season", "bot"], name="seasonentry_unique"),
            models.CheckConstraint(condition=Q(division__gte=1), name="seasonentry_division"),
            models.CheckConstraint(
                condition=Q(move__in=["", "up", "stay", "down"]), name="seasonentry_move_valid"
            ),
        ]
        indexes = [models.Index(fields=["bot", "season"], name="seasonentry_bot_idx")]

    def __str__(self) -> str:
        return f"{self.bot} in division {self.division} of {self.season}"

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def next_division(self) -> int:
        """Its division in the next season, as its move says."""
        return self.division + {"up": -1, "down": 1}.get(self.move, 0)


class RemoteGame(models.Model):
    """A remote bot's side of one claim of a match (:mod:`arena.games.remote`): what its client
    finds when it asks for work, and what it forwarded of its program's standard error. Open
    until the referee lets the side go (``closed_at``)."""

    match = models.ForeignKey(Match, models.CASCADE, related_name="remote_games")
    attempt = models.PositiveSmallIntegerField()
    color = models.CharField(max_length=5)
    bot = models.ForeignKey(Bot, models.CASCADE, related_name="remote_games")
    created_at = models.DateTimeField(default=timezone.now)
    #: When the game let the client go (its result is written, or it was aborted).
    closed_at = models.DateTimeField(null=True, blank=True)
    #: The end of what the client forwarded of its program's standard error, and how many
    #: bytes it forwarded in all (the referee keeps them with the actions, as a pipe's).
    stderr_tail = models.TextField(blank=True, default="")
    stderr_bytes = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["match", "attempt", "color"], name="remotegame_one_per_side"
            ),
        ]
        indexes = [models.Index(fields=["bot", "closed_at"], name="remotegame_open_idx")]

    def __str__(self) -> str:
        return f"match #{self.match_id} ({self.color}, attempt {self.attempt})"


class RemoteLine(models.Model):
    """A protocol line the referee sent to a remote bot, and the line it answered: its client
    is given the newest unanswered line of each open game, and answers it by its ``id`` (the
    line's ``seq`` on the wire)."""

    game = models.ForeignKey(RemoteGame, models.CASCADE, related_name="lines")
    line = models.TextField()
    sent_at = models.DateTimeField(default=timezone.now)
    answer = models.TextField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.game}: line {self.pk}"
