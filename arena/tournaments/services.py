"""Tournament state transitions (create, release, pause, resume, cancel) and their tables.

A tournament's format (:mod:`arena.referee.formats`, the one core of every format) makes its
rounds: :func:`create` makes the first ones, PENDING (all of a round robin's or a gauntlet's,
the first of a Swiss or a knockout). :func:`release` queues the next few, keeping
``TOURNAMENT_PARALLEL`` in flight, and once every game made is played asks the format for its
next round (a Swiss's, a knockout's, or a knockout tie's tie-breaks) and makes its matches; it
runs when the tournament is created or resumed, and inside the transaction that closes each of
its matches (the games app announces it: :mod:`arena.tournaments.receivers`), with the
tournament's row locked, so that a round is made once however many games end at once.

The format sees a tournament as an :class:`~arena.referee.formats.Event` rebuilt from the
database (:func:`event`): its entries are its players (seed 1 is player 0), its matches in the
order made are its games, its :class:`~arena.tournaments.models.Bye` rows its byes.
"""

from __future__ import annotations

import io
import json
import random
import re
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TypeGuard

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from arena import stats
from arena.bots.models import Bot, BotVersion, Variant
from arena.core import throttles
from arena.core.errors import Refused
from arena.games import downloads, privacy
from arena.games.models import Match, MatchRecord
from arena.games.services import opening_for, play_again, queue_pending
from arena.jobs import roles
from arena.jobs.limits import match_time_control
from arena.notifications.models import Event
from arena.notifications.services import notify
from arena.ratings.models import Ladder, Rating
from arena.referee import formats
from arena.tournaments import limits
from arena.tournaments.models import Bye, Entry, Tournament

M = Match.Status
TS = Tournament.Status
F = Tournament.Format


class TournamentError(Refused, ValueError):
    """A tournament that cannot be created as asked; the message says why, and ``field`` the
    input it is about when one is."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


# ----------------------------------------------------------------------------- permissions


def can_organise(user: User | AnonymousUser) -> TypeGuard[User]:
    """Whether the user may create tournaments (only a user who has logged in may)."""
    if not user.is_authenticated:
        return False
    return bool(settings.OPEN_TOURNAMENTS or user.has_perm("tournaments.organise_tournament"))


def can_control(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """Whether the user may pause, resume or cancel the tournament (its organiser, staff)."""
    return bool(user.is_authenticated and (user.pk == tournament.organiser_id or user.is_staff))


# ----------------------------------------------------------------------------- creating


def check_time_control(text: str) -> str:
    """The time control, normalised (:func:`arena.jobs.limits.match_time_control`); a
    :class:`TournamentError` says why not."""
    try:
        return match_time_control(text)
    except ValueError as e:
        raise TournamentError(str(e)) from None


def create(
    organiser: User | AnonymousUser,
    *,
    name: str,
    variant: str,
    time_control: str,
    games_per_pair: int,
    bots: Sequence[Bot],
    rated: bool | None = None,
    format: str = F.ROUND_ROBIN,
    rounds: int | None = None,
    seed: Bot | None = None,
) -> Tournament:
    """Create a tournament between the bots' active versions and start it. Every entrant's
    active version must declare the variant (a bot that does not is refused, by name).

    ``format`` is one of :class:`~arena.tournaments.models.Tournament.Format` (the formats of
    :mod:`arena.referee.formats`); ``games_per_pair`` is, in a round robin, the games each pair
    plays (twice that in a double round robin), in the other formats the games of each
    mini-match (a knockout's even). A Swiss plays ``rounds`` rounds (None: its usual length,
    :func:`~arena.referee.formats.swiss_rounds`); only a Swiss is given them. A gauntlet's
    ``seed`` (one of the bots; None: the first) plays all the others. The entrants are seeded
    in the order given, but for a Swiss and a knockout, seeded by their current rating in the
    variant (the unrated last, in the order given), and the gauntlet's seed first. What the
    format cannot play (too many Swiss rounds, an odd knockout mini-match...) is refused, and
    nothing is created.

    A rated tournament may include only bots that accept rated tournaments
    (:meth:`~arena.bots.models.Bot.accepts_rated_tournaments`: the organiser's own, built-in
    bots, and those whose owner accepts them); any other is refused, by name. ``rated`` None
    (a caller that does not say): rated when every entrant accepts, else unrated.

    The games of a colour-reversed pair (a *leg*, :attr:`arena.referee.formats.Game.leg`: a
    round robin's games of a pair in cycles ``2k`` and ``2k + 1``, a mini-match's games
    ``2k`` and ``2k + 1``) share a seed and so an opening (``OPENING_PLIES`` ring placements
    drawn with it); an odd last game has its own."""
    if not can_organise(organiser):
        raise PermissionDenied("you may not organise tournaments")
    if variant not in Variant.values:
        raise TournamentError(f"unknown variant {variant!r}", field="variant")
    tc = check_time_control(time_control)
    if not 1 <= games_per_pair <= limits.MAX_GAMES_PER_PAIR:
        raise TournamentError(
            f"games per pairing must be 1 to {limits.MAX_GAMES_PER_PAIR}", field="games_per_pair"
        )
    if not name.strip():
        raise TournamentError("a tournament needs a name", field="name")
    unique = list(dict.fromkeys(bots))
    if not limits.MIN_ENTRANTS <= len(unique) <= limits.MAX_ENTRANTS:
        raise TournamentError(
            f"a tournament needs {limits.MIN_ENTRANTS} to {limits.MAX_ENTRANTS} bots",
            field="bots",
        )
    spec = format_spec(format, len(unique), games_per_pair, rounds)
    if seed is not None:
        if spec.format is not formats.Format.GAUNTLET:
            raise TournamentError(
                f"only a gauntlet has a seed (who plays all the others), not a {spec.format}",
                field="seed",
            )
        if seed not in unique:
            raise TournamentError(
                f"the gauntlet's seed, {seed.name}, is not one of its bots", field="seed"
            )
    people = [b.name for b in unique if b.person]
    if people:
        raise TournamentError(f"not bots but people's seats: {', '.join(people)}")
    versions = {
        v.bot_id: v
        for v in BotVersion.objects.filter(
            bot__in=unique, status=BotVersion.Status.ACTIVE, bot__status=Bot.Status.ACTIVE
        )
    }
    missing = [b.name for b in unique if b.pk not in versions]
    if missing:
        raise TournamentError(f"no active version: {', '.join(missing)}")
    refused = [versions[b.pk] for b in unique if not versions[b.pk].plays(variant)]
    if refused:
        title = Variant(variant).label
        raise TournamentError(
            f"not playing {title}: "
            + "; ".join(f"{v.label} plays only {', '.join(v.variant_titles)}" for v in refused)
        )
    unwilling = [b.name for b in unique if not b.accepts_rated_tournaments(organiser.pk)]
    if rated is None:
        rated = not unwilling
    elif rated and unwilling:
        raise TournamentError(
            "a rated tournament may include other people's bots only if their owners accept "
            f"rated tournaments; these do not: {', '.join(unwilling)} (make it unrated, or "
            "leave them out)"
        )
    entrants = [versions[b.pk] for b in unique]
    if seed is not None:
        entrants.sort(key=lambda v: v.bot_id != seed.pk)
    elif spec.format in (formats.Format.SWISS, formats.Format.KNOCKOUT):
        entrants = by_rating(entrants, variant)
    with throttles.limited(organiser, "tournament"), transaction.atomic():
        t = Tournament.objects.create(
            name=name.strip()[: limits.NAME_MAX_LENGTH],
            organiser=organiser,
            format=spec.format.value,
            variant=variant,
            time_control=tc,
            games_per_pair=games_per_pair,
            rounds=spec.rounds,
            max_tiebreaks=spec.max_tiebreaks,
            rated=rated,
        )
        entries = Entry.objects.bulk_create(
            Entry(tournament=t, version=v, seed=i + 1) for i, v in enumerate(entrants)
        )
        _add_rounds(t, entries, formats.Event(spec).advance())
        release(t.pk)
    return t


def format_spec(
    format: str, players: int, games_per_pair: int, rounds: int | None = None
) -> formats.FormatSpec:
    """The format of a tournament of ``players`` entrants as the core plays it, a Swiss
    without ``rounds`` given its usual length; a :class:`TournamentError` says why it cannot
    be played."""
    if format not in F.values:
        known = ", ".join(F.values)
        raise TournamentError(f"unknown format {format!r}; the formats are {known}", field="format")
    if format == F.SWISS and rounds is None:
        rounds = formats.swiss_rounds(players)
    try:
        return formats.FormatSpec(
            formats.Format(format),
            players,
            games_per_pair,
            rounds,
            max_tiebreaks=limits.MAX_TIEBREAKS,
        )
    except formats.FormatError as e:
        raise TournamentError(str(e)) from None


def by_rating(versions: Sequence[BotVersion], variant: str) -> list[BotVersion]:
    """The versions by their current rating in the variant, highest first; the unrated after
    them, in the order given."""
    elo = dict(
        Rating.objects.filter(
            ladder=Ladder.SANDBOX, variant=variant, version__in=versions
        ).values_list("version_id", "elo")
    )
    return sorted(versions, key=lambda v: (v.pk not in elo, -elo.get(v.pk, 0.0)))


def _add_rounds(t: Tournament, entries: Sequence[Entry], made: Sequence[formats.Round]) -> int:
    """The matches (PENDING) and byes of the rounds the format just made; returns how many
    matches. The games of a leg share a seed and its opening."""
    rng = random.Random()
    seeds: dict[int, int] = {}
    starts: dict[int, str] = {}
    matches = []
    for r in made:
        for g in r.games:
            if g.leg not in seeds:
                seeds[g.leg] = rng.randrange(2**31)
                starts[g.leg] = opening_for(t.variant, seeds[g.leg])
            matches.append(
                Match(
                    variant=t.variant,
                    kind=Match.Kind.TOURNAMENT,
                    status=M.PENDING,
                    white_id=entries[g.white].version_id,
                    black_id=entries[g.black].version_id,
                    time_control=t.time_control,
                    seed=seeds[g.leg],
                    opening=starts[g.leg],
                    rated=t.rated,
                    tournament=t,
                    round=g.round,
                    tiebreak=g.tiebreak,
                )
            )
    # In the order made: the matches' order is the games' (:func:`event`).
    Match.objects.bulk_create(matches, batch_size=1000)
    Bye.objects.bulk_create(
        Bye(tournament=t, entry=entries[p], round=r.number) for r in made for p in r.byes
    )
    return len(matches)


def spec_of(tournament: Tournament, players: int | None = None) -> formats.FormatSpec:
    """The tournament's format as the core plays it (``players``: its entries, counted when
    not given)."""
    return formats.FormatSpec(
        formats.Format(tournament.format),
        players if players is not None else tournament.entries.count(),
        tournament.games_per_pair,
        tournament.rounds,
        max_tiebreaks=tournament.max_tiebreaks,
    )


def event(tournament: Tournament) -> formats.Event:
    """The tournament as its format sees it: the rounds made (its matches in the order they
    were made are the games, numbered from 1; its byes), and the results of the finished
    matches. Aborted, cancelled and unplayed matches are games without a result."""
    seeds = dict(tournament.entries.values_list("version_id", "seed"))
    games: dict[tuple[int, int], list[formats.Game]] = defaultdict(list)
    results: dict[int, str] = {}
    rows = (
        Match.objects.filter(tournament=tournament)
        .order_by("pk")
        .values_list("round", "tiebreak", "white_id", "black_id", "status", "result")
    )
    for number, (rnd, tiebreak, white, black, status, result) in enumerate(rows, 1):
        assert rnd is not None  # a tournament's match always has its round
        game = formats.Game(number, rnd, seeds[white] - 1, seeds[black] - 1, tiebreak, number)
        games[rnd, (tiebreak + 1) // 2].append(game)  # a tie-break mini-match is a stage
        if status == M.FINISHED:
            results[number] = result
    byes: dict[int, list[int]] = defaultdict(list)
    for rnd, seed in Bye.objects.filter(tournament=tournament).values_list("round", "entry__seed"):
        byes[rnd].append(seed - 1)
    steps = sorted(set(games) | {(rnd, 0) for rnd in byes})
    rounds = [
        formats.Round(rnd, tuple(games[rnd, stage]), tuple(byes[rnd]) if stage == 0 else (), stage)
        for rnd, stage in steps
    ]
    return formats.Event(spec_of(tournament, len(seeds)), rounds, results)


# ----------------------------------------------------------------------------- running


def release(tournament_id: int) -> int:
    """Queue the next pending matches of a running tournament, up to ``TOURNAMENT_PARALLEL``
    in flight; when every match made is finished, make the format's next round first (a
    Swiss's, a knockout's); mark it finished when nothing is left (incomplete when some games
    were aborted). Returns how many were queued.

    The tournament's row is locked first: of two workers finishing the last two games of a
    round at once, the second waits for the first to commit, then sees both games finished and
    makes the next round; the first saw the second's game still running. So a round is made
    once, and always."""
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=tournament_id)
        if t.status != TS.RUNNING:
            return 0
        matches = Match.objects.filter(tournament_id=tournament_id)
        if t.format in (F.SWISS, F.KNOCKOUT) and not matches.exclude(status=M.FINISHED).exists():
            next_round(t)
        room = (
            settings.TOURNAMENT_PARALLEL - matches.filter(status__in=[M.QUEUED, M.RUNNING]).count()
        )
        queued = 0
        if room > 0:
            ids = list(
                matches.filter(status=M.PENDING)
                .order_by("round", "tiebreak", "pk")
                .values_list("pk", flat=True)[:room]
            )
            queued = queue_pending(ids)
        done = not matches.filter(status__in=Match.OPEN_STATUSES).exists()
        # Some games aborted (the machine failed them too often): it says so, not "finished".
        end = TS.INCOMPLETE if done and matches.filter(status=M.ABORTED).exists() else TS.FINISHED
        if done and Tournament.objects.filter(pk=tournament_id, status=TS.RUNNING).update(
            status=end, finished_at=timezone.now()
        ):
            t.status = end
            announce_finished(t)
        return queued


def next_round(tournament: Tournament) -> int:
    """Ask the format for the rounds it can make now and make their matches and byes (none
    while a game is unplayed, none once it is over); returns how many matches. Called by
    :func:`release`, which holds the tournament's lock."""
    ev = event(tournament)
    made = ev.advance()
    if not made:
        return 0
    entries = list(tournament.entries.order_by("seed"))
    return _add_rounds(tournament, entries, made)


def announce_finished(tournament: Tournament) -> None:
    """The "tournament finished" notification, to its organiser and the owners of its
    entrants (each once), with the winner (the first of the format's standings; a knockout's
    champion, and none while it has none); sent once the transaction commits."""
    table = standings(tournament)
    text = f"{tournament.name} ({tournament.get_variant_display()}) finished"
    winner: Standing | None = table[0] if table else None
    if tournament.format == F.KNOCKOUT:
        drawn = bracket(tournament)
        winner = next((s for s in table if drawn and s.player == drawn.champion), None)
        if winner is not None:
            text += f": {winner.player.version.label} won the knockout."
    elif winner is not None:
        # A Swiss stalled by an aborted game has rounds not made yet: nobody won it yet.
        won = (
            "leads"
            if tournament.status == TS.INCOMPLETE and tournament.format == F.SWISS
            else "won"
        )
        text += (
            f": {winner.player.version.label} {won} with {stats.format_points(winner.points)}"
            f" points in {winner.games} games."
        )
    if not text.endswith("."):
        text += "."
    if tournament.status == TS.INCOMPLETE:
        missing = Match.objects.filter(tournament=tournament, status=M.ABORTED).count()
        text += (
            f" It is incomplete: {missing} game{'s' if missing != 1 else ''} could not be"
            " played (the arena failed them); its organiser may have them played again."
        )
    users = [tournament.organiser_id] + [s.player.version.bot.owner_id for s in table]
    for user_id in dict.fromkeys(users):
        notify(
            user_id,
            Event.TOURNAMENT_FINISHED,
            f"Tournament {tournament.name} finished",
            text,
            tournament.get_absolute_url(),
            data={
                "tournament": tournament.pk,
                "name": tournament.name,
                "variant": tournament.variant,
                "format": tournament.format,
                "winner": winner.player.version.label if winner is not None else None,
                "standings": [
                    {"rank": s.rank, "version": s.player.version.label, "points": s.points}
                    for s in table
                ],
            },
        )


def pause(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """RUNNING -> PAUSED; its queued matches go back to pending (running ones finish)."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may pause the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.RUNNING).update(
            status=TS.PAUSED
        ):
            return False
        # Their tasks find them PENDING and do nothing.
        Match.objects.filter(tournament=tournament, status=M.QUEUED).update(
            status=M.PENDING, queued_at=None
        )
    return True


def resume(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """PAUSED -> RUNNING, and release matches again."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may resume the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.PAUSED).update(
            status=TS.RUNNING
        ):
            return False
        release(tournament.pk)
    return True


def play_missing_again(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """INCOMPLETE -> RUNNING: its aborted games are played again (fresh attempts), and the
    tournament finishes when they do."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may play the missing games again")
    with transaction.atomic():
        if not Tournament.objects.filter(pk=tournament.pk, status=TS.INCOMPLETE).update(
            status=TS.RUNNING, finished_at=None
        ):
            return False
        play_again(
            Match.objects.filter(tournament=tournament, status=M.ABORTED).values_list(
                "pk", flat=True
            )
        )
        release(tournament.pk)
    return True


def cancel(user: User | AnonymousUser, tournament: Tournament) -> bool:
    """Cancel a running or paused tournament: every match not finished is cancelled (a running
    game is stopped by its worker at the next heartbeat, its result discarded)."""
    if not can_control(user, tournament):
        raise PermissionDenied("only the organiser may cancel the tournament")
    with transaction.atomic():
        if not Tournament.objects.filter(
            pk=tournament.pk, status__in=[TS.RUNNING, TS.PAUSED]
        ).update(status=TS.CANCELLED, finished_at=timezone.now()):
            return False
        Match.objects.filter(tournament=tournament, status__in=Match.OPEN_STATUSES).update(
            status=M.CANCELLED, finished_at=timezone.now()
        )
    return True


# ----------------------------------------------------------------------------- tables


@dataclass(kw_only=True)
class Standing(stats.Standing[Entry]):
    """A row of a tournament's standings, its entry the player: its games' score, its rank,
    its Sonneborn-Berger score (``tiebreak``), its score against each entry it played
    (``against``), and the tie-breaks of the format (:class:`arena.referee.formats.Standing`):
    ``byes`` and their points, ``buchholz``, ``head_to_head``, and in a knockout the round it
    reached (``round_reached``; the rounds plus one for the champion)."""

    byes: int = 0
    bye_points: float = 0.0
    buchholz: float = 0.0
    head_to_head: float = 0.0
    round_reached: int = 0

    @property
    def points(self) -> float:
        """Its games' points and its byes'."""
        return self.game_points + self.bye_points

    @property
    def game_points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def percent(self) -> float:
        """Its games' points in per cent of its games (0 without games)."""
        return 100.0 * self.game_points / self.games if self.games else 0.0

    @property
    def sonneborn_berger(self) -> float:
        return self.tiebreak


@dataclass
class Progress:
    """A tournament's matches by status (those made so far: a Swiss or a knockout makes its
    rounds as it goes), the last round made and the rounds it plays (a knockout's tie-breaks
    belong to their round)."""

    total: int
    finished: int
    running: int
    queued: int
    pending: int
    aborted: int
    cancelled: int
    round: int = 0
    rounds: int = 0

    @property
    def done(self) -> int:
        """The games played to their end: the finished ones. Cancelled and aborted games are
        counted apart, never as done."""
        return self.finished

    @property
    def percent(self) -> float:
        """How much of the tournament was played: finished games in per cent of all."""
        return 100.0 * self.done / self.total if self.total else 100.0

    def summary(self) -> str:
        """``3 of 200 games finished, 197 cancelled``: what is done, then what will never be."""
        apart = [
            f"{n} {what}"
            for n, what in ((self.aborted, "aborted"), (self.cancelled, "cancelled"))
            if n
        ]
        return ", ".join([f"{self.done} of {self.total} games finished", *apart])


def progress(tournament: Tournament) -> Progress:
    counts = dict(
        Match.objects.filter(tournament=tournament)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    last = Match.objects.filter(tournament=tournament).aggregate(last=Max("round"))["last"]
    return Progress(
        round=last or 0,
        rounds=spec_of(tournament).round_count,
        total=sum(counts.values()),
        finished=counts.get(M.FINISHED, 0),
        running=counts.get(M.RUNNING, 0),
        queued=counts.get(M.QUEUED, 0),
        pending=counts.get(M.PENDING, 0),
        aborted=counts.get(M.ABORTED, 0),
        cancelled=counts.get(M.CANCELLED, 0),
    )


def standings(tournament: Tournament) -> list[Standing]:
    """The table, best first, as the format ranks it
    (:meth:`arena.referee.formats.Event.standings`): a round robin's by points, then
    Sonneborn-Berger, then wins, then seed (:func:`arena.stats.standings`, from the results
    counted by the database); a Swiss's by points (byes included), Buchholz,
    Sonneborn-Berger, head-to-head, seed; a gauntlet's by points, then seed; a knockout's by
    the round reached (the champion first), then seed. Each row also has its score against
    each other entry (``against``)."""
    entries = list(
        tournament.entries.select_related("version__bot__owner")
        .defer(*roles.private_user_fields("version__bot__owner"))
        .order_by("seed")
    )
    if tournament.format in (F.ROUND_ROBIN, F.DOUBLE_ROUND_ROBIN):
        by_version = {e.version_id: e for e in entries}
        grouped = (
            Match.objects.filter(tournament=tournament, status=M.FINISHED)
            .values_list("white_id", "black_id", "result")
            .annotate(n=Count("pk"))
            .order_by()
        )
        table = stats.standings(
            entries, [(by_version[w], by_version[b], result, n) for w, b, result, n in grouped]
        )
        names = [f.name for f in fields(stats.Standing)]
        return [Standing(**{n: getattr(s, n) for n in names}) for s in table]
    return [
        Standing(
            player=entries[s.player],
            seed=s.player,
            wins=s.score.wins,
            draws=s.score.draws,
            losses=s.score.losses,
            tiebreak=s.sonneborn_berger,
            rank=s.rank,
            against={entries[o]: score for o, score in s.against.items()},
            byes=s.byes,
            bye_points=s.bye_points,
            buchholz=s.buchholz,
            head_to_head=s.head_to_head,
            round_reached=s.round_reached,
        )
        for s in event(tournament).standings()
    ]


def crosstable(table: list[Standing]) -> list[tuple[Standing, list[str]]]:
    """Each standing with its row of cells against the others, in standings order:
    ``"1.5/2"``, ``""`` when they have not played, ``"x"`` on the diagonal
    (:func:`arena.stats.cross_table`)."""
    return [(s, cells) for s, (_, cells) in zip(table, stats.cross_table(table), strict=True)]


@dataclass
class GauntletScore:
    """The gauntlet's seed against one opponent: the seed's wins, draws and losses."""

    opponent: Entry
    score: stats.Score


@dataclass
class Gauntlet:
    """A gauntlet's table as its page shows it: the seed's row, and its score against each
    other entrant in seed order."""

    seed: Standing
    scores: list[GauntletScore]


def gauntlet(tournament: Tournament, table: list[Standing]) -> Gauntlet | None:
    """The seed's score against each other entrant (None for the other formats)."""
    if tournament.format != F.GAUNTLET:
        return None
    rows = {s.player.seed: s for s in table}
    seed = rows[1]
    return Gauntlet(
        seed,
        [
            GauntletScore(rows[n].player, seed.against.get(rows[n].player) or stats.Score())
            for n in sorted(rows)
            if n != 1
        ],
    )


@dataclass
class Tie:
    """A knockout pairing as pages show it (:class:`arena.referee.formats.Tie`, with entries):
    the higher seed and the lower (None: a bye), each one's points in its finished games
    (tie-breaks included), the games made, the tie-break mini-matches made, the winner once
    decided and how (``bye``, ``games``, ``tie-break``, ``decider``: the higher seed, the
    tie-breaks all level)."""

    high: Entry
    low: Entry | None
    points: tuple[float, float] = (0.0, 0.0)
    games: int = 0
    tiebreaks: int = 0
    winner: Entry | None = None
    decided_by: str = ""


@dataclass
class BracketRound:
    """A knockout round: its number, its name (``Final``...) and its ties in bracket order
    (the winners of ties ``2j`` and ``2j + 1`` meet next); a tie not yet known is None."""

    number: int
    name: str
    ties: list[Tie | None] = field(default_factory=list)


@dataclass
class Bracket:
    rounds: list[BracketRound]
    champion: Entry | None


def round_name(number: int, rounds: int) -> str:
    """A knockout round's name: ``Final``, ``Semi-finals``, ``Quarter-finals``, else
    ``Round 2``.

    >>> [round_name(n, 4) for n in (1, 2, 3, 4)]
    ['Round 1', 'Quarter-finals', 'Semi-finals', 'Final']
    """
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(
        rounds - number, f"Round {number}"
    )


def bracket(tournament: Tournament) -> Bracket | None:
    """A knockout's bracket, every round of it (the ties not known yet None), and its champion
    once decided; None for the other formats."""
    if tournament.format != F.KNOCKOUT:
        return None
    entries = list(tournament.entries.select_related("version__bot").order_by("seed"))
    ev = event(tournament)
    total = ev.spec.round_count
    known = ev.bracket()

    def points(t: formats.Tie) -> tuple[float, float]:
        # The points of its finished games (the core's count only once all are finished).
        high = [
            stats.points(ev.results[g.number], "white" if g.white == t.high else "black")
            for g in t.games
            if g.number in ev.results
        ]
        return sum(high), len(high) - sum(high)

    out = []
    for number in range(1, total + 1):
        ties: list[Tie | None] = [None] * (formats.knockout_size(len(entries)) >> number)
        if number <= len(known):
            ties = [
                Tie(
                    entries[t.high],
                    entries[t.low] if t.low is not None else None,
                    points(t),
                    len(t.games),
                    t.tiebreaks,
                    entries[t.winner] if t.winner is not None else None,
                    t.decided_by,
                )
                for t in known[number - 1]
            ]
        out.append(BracketRound(number, round_name(number, total), ties))
    champion = ev.champion
    return Bracket(out, entries[champion] if champion is not None else None)


def byes(tournament: Tournament) -> list[Bye]:
    """The byes given so far, by round."""
    return list(
        Bye.objects.filter(tournament=tournament)
        .select_related("entry__version__bot")
        .order_by("round", "entry__seed")
    )


def describe(tournament: Tournament) -> str:
    """The format in words: ``Swiss, 3 rounds, mini-matches of 2 games``.

    The entrants are counted for the rounds that follow from them."""
    g = tournament.games_per_pair
    games = f"{g} game{'s' if g != 1 else ''}"
    if tournament.format == F.ROUND_ROBIN:
        return f"round robin, {games} per pairing"
    if tournament.format == F.DOUBLE_ROUND_ROBIN:
        return f"double round robin, {2 * g} games per pairing"
    rounds = spec_of(tournament).round_count
    if tournament.format == F.SWISS:
        return f"Swiss, {rounds} round{'s' if rounds != 1 else ''}, mini-matches of {games}"
    if tournament.format == F.GAUNTLET:
        seed = tournament.entries.select_related("version__bot").get(seed=1)
        return f"gauntlet of {seed.version.label}, mini-matches of {games}"
    return f"knockout, {rounds} round{'s' if rounds != 1 else ''}, mini-matches of {games}"


# ----------------------------------------------------------------------------- archive


def archive(tournament: Tournament, user: privacy.Viewer = None) -> bytes:
    """Every finished game of the tournament in one zip: the records (long and short form),
    the transcripts, all games in one file, and the standings.

    The transcripts are as ``user`` may read them (:func:`arena.games.privacy.transcript_for`):
    the stderr and ``info`` of their own bots only; None (anyone) sees no bot's."""
    slug = re.sub(r"[^a-z0-9]+", "-", tournament.name.lower()).strip("-") or "tournament"
    top = f"tournament-{tournament.pk}-{slug}"
    buf = io.BytesIO()
    table = standings(tournament)
    records = (
        MatchRecord.objects.filter(match__tournament=tournament, match__status=M.FINISHED)
        .select_related("match__white__bot", "match__black__bot")
        .order_by("match__round", "match__tiebreak", "match__pk")
    )
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        everything = []
        for rec in records.iterator(chunk_size=200):
            tiebreak = f".{rec.match.tiebreak}" if rec.match.tiebreak else ""
            name = f"round-{rec.match.round:03d}{tiebreak}-match-{rec.match_id}"
            zf.writestr(f"{top}/records/{name}.txt", rec.record)
            zf.writestr(f"{top}/records-short/{name}.txt", rec.record_short)
            zf.writestr(
                f"{top}/transcripts/{name}.json",
                json.dumps(
                    privacy.transcript_for(user, rec.match, rec.transcript),
                    indent=1,
                    ensure_ascii=False,
                ),
            )
            everything.append(rec.record)
        zf.writestr(f"{top}/all-games.txt", "".join(downloads.games_file(everything)))
        zf.writestr(f"{top}/standings.txt", standings_text(tournament, table))
    return buf.getvalue()


def standings_text(tournament: Tournament, table: list[Standing]) -> str:
    p = progress(tournament)
    title = (
        f"{tournament.name} ({tournament.get_variant_display()}, {tournament.time_control}, "
        f"{describe(tournament)}): {p.summary()}"
    )
    return f"{title}\n\n{stats.standings_text(table, lambda e: e.version.label)}\n"
