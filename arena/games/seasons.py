"""The ladder's seasons and divisions, one variant at a time.

An operator opens a season of a variant (``manage.py season open``, or the admin): the bots that
play the variant are put in order, best first, and cut into divisions (:func:`split`). The first
season of a variant orders them by rating; the next one starts from the divisions the last one
ended with, promotions and relegations applied, and adds the bots new since at the end, by
rating (:func:`order`). While the season is open the ladder pairs bots within their divisions,
and a share of its games (``ARENA_SEASON_CROSS_SHARE``) across the boundary with the adjacent
ones (:func:`arena.games.ladder.schedule_variant`); a bot that starts playing during the season
joins the bottom division (:func:`ladder_divisions`).

A division's standings count the ladder games finished while the season is open between two
bots of the division, whichever of their versions played (games across a boundary count for
the ratings only): points (a win 1, a draw 1/2), then the Sonneborn-Berger score, then wins,
then the order the season was made in (:func:`arena.stats.standings`, as a tournament's). When
the season closes (:func:`close_season`, or :func:`close_ended` once its end date has passed)
the top ``movers`` of each division but the first go up, the bottom ``movers`` of each but the
last go down, and every bot's standing is written into its :class:`SeasonEntry`, where later
games cannot change it: the season's page, the API and the CSV file read it from there.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from arena import stats
from arena.bots.models import Bot, BotVersion, Variant, playing
from arena.core.errors import Refused
from arena.games.downloads import Download
from arena.games.models import Match, Season, SeasonEntry
from arena.ratings.models import Ladder, Rating

__all__ = [
    "CSV_TYPE",
    "BotSeason",
    "Division",
    "Row",
    "SeasonError",
    "bot_seasons",
    "check",
    "close_ended",
    "close_season",
    "close_variant",
    "ladder_divisions",
    "new_season",
    "open_season",
    "open_season_of",
    "order",
    "split",
    "standings",
    "standings_csv",
    "start",
]

T = TypeVar("T")
S = Season.Status
Move = SeasonEntry.Move
CSV_TYPE = "text/csv; charset=utf-8"
#: The longest name a season may have (:attr:`Season.name`).
NAME_MAX_LENGTH = 80


class SeasonError(Refused, ValueError):
    """An operator's request about seasons that cannot be done; the message says why, and
    nothing was changed."""


# ----------------------------------------------------------------------------- opening


def open_season_of(variant: str) -> Season | None:
    """The variant's open season, if any."""
    return Season.objects.filter(variant=variant, status=Season.Status.OPEN).first()


def new_season(
    variant: str,
    *,
    division_size: int | None = None,
    movers: int | None = None,
    name: str = "",
    ends_on: dt.date | None = None,
) -> Season:
    """A season not opened yet (not saved): :func:`start` opens it. Unless they are given, its
    divisions hold ``ARENA_SEASON_DIVISION_SIZE`` bots and ``ARENA_SEASON_MOVERS`` of each go up
    and down (at most half a division)."""
    size = settings.SEASON_DIVISION_SIZE if division_size is None else division_size
    if movers is None:
        movers = max(1, min(settings.SEASON_MOVERS, size // 2))
    return Season(
        variant=variant, name=name.strip(), division_size=size, movers=movers, ends_on=ends_on
    )


def check(season: Season, *, today: dt.date | None = None) -> None:
    """Refuse (:class:`SeasonError`) a season that cannot open as it is: its variant, sizes,
    name and end date, and another season of its variant already open."""
    variant = season.variant
    if variant not in Variant.values:
        raise SeasonError(f"no variant {variant!r}: one of {', '.join(Variant.values)}")
    if variant not in settings.LADDER_VARIANTS:
        raise SeasonError(
            f"the ladder does not play {variant} (ARENA_LADDER_VARIANTS: "
            f"{', '.join(settings.LADDER_VARIANTS) or 'none'})"
        )
    if season.division_size < 2:
        raise SeasonError(f"a division holds at least 2 bots, not {season.division_size}")
    if season.movers < 1:
        raise SeasonError(f"at least 1 bot of a division goes up and down, not {season.movers}")
    if 2 * season.movers > season.division_size:
        raise SeasonError(
            f"with divisions of {season.division_size} bots, at most "
            f"{season.division_size // 2} go up and as many down, not {season.movers}"
        )
    if len(season.name) > NAME_MAX_LENGTH:
        raise SeasonError(f"a season's name has at most {NAME_MAX_LENGTH} characters")
    today = today or timezone.now().date()
    if season.ends_on is not None and season.ends_on < today:
        raise SeasonError(f"its end date {season.ends_on} has passed (today is {today}, UTC)")
    current = open_season_of(variant)
    if current is not None and current.pk != season.pk:
        raise SeasonError(_already_open(current))


def _already_open(current: Season) -> str:
    return (
        f"{current.title} is open already (since {current.opened_at:%Y-%m-%d}): one season of "
        f"a variant at a time; close it first (manage.py season close --variant "
        f"{current.variant})"
    )


def open_season(
    variant: str,
    *,
    division_size: int | None = None,
    movers: int | None = None,
    name: str = "",
    ends_on: dt.date | None = None,
    today: dt.date | None = None,
) -> Season:
    """Open a season of ``variant`` (:func:`new_season`, then :func:`start`)."""
    season = new_season(
        variant, division_size=division_size, movers=movers, name=name, ends_on=ends_on
    )
    return start(season, today=today)


def start(season: Season, *, today: dt.date | None = None) -> Season:
    """Open ``season`` (a :func:`new_season`, or the admin's form): number it, and place the
    bots that play its variant in divisions (:func:`order`, :func:`split`). Refused with
    :class:`SeasonError` (nothing written) when :func:`check` refuses it or fewer than two bots
    play the variant."""
    check(season, today=today)
    variant = season.variant
    with transaction.atomic():
        previous = (
            Season.objects.filter(variant=variant, status=Season.Status.CLOSED)
            .order_by("-closed_at", "-id")
            .first()
        )
        bots = order(variant, previous)
        if len(bots) < 2:
            raise SeasonError(
                f"a season needs at least 2 bots that play {variant}; "
                f"{len(bots) or 'none'} {'does' if len(bots) == 1 else 'do'}"
            )
        last = Season.objects.filter(variant=variant).aggregate(n=Max("number"))["n"] or 0
        season.number = last + 1
        season.previous = previous
        season.status = Season.Status.OPEN
        season.opened_at = timezone.now()
        season.closed_at = None
        try:
            with transaction.atomic():
                season.save()
        except IntegrityError:  # another season of the variant opened meanwhile
            current = open_season_of(variant)
            raise SeasonError(
                _already_open(current) if current else f"a season of {variant} is open already"
            ) from None
        seed = 0
        entries = []
        for number, members in enumerate(split(bots, season.division_size), 1):
            for bot_id in members:
                entries.append(
                    SeasonEntry(
                        season=season,
                        bot_id=bot_id,
                        division=number,
                        seed=seed,
                        joined_at=season.opened_at,
                    )
                )
                seed += 1
        SeasonEntry.objects.bulk_create(entries)
    return season


def _playing(variant: str) -> dict[int, int]:
    """The bots that play ``variant`` now, each with its active version: bot id -> version id."""
    return dict(
        BotVersion.objects.filter(
            playing(variant), status=BotVersion.Status.ACTIVE, bot__status=Bot.Status.ACTIVE
        ).values_list("bot_id", "pk")
    )


def _by_rating(variant: str, bots: dict[int, int]) -> list[int]:
    """``bots`` (bot id -> version id) best first by their versions' ratings in ``variant``;
    those not rated yet after them, in the order they were registered."""
    elo = dict(
        Rating.objects.filter(
            ladder=Ladder.SANDBOX, variant=variant, version__in=list(bots.values())
        ).values_list("version_id", "elo")
    )
    return sorted(bots, key=lambda b: (bots[b] not in elo, -elo.get(bots[b], 0.0), b))


def order(variant: str, previous: Season | None) -> list[int]:
    """The bots that play ``variant`` now (ids), in the order a new season cuts into divisions.

    Without a previous season: by rating (:func:`_by_rating`). After one: its bots that still
    play, by the division each ends in (:attr:`SeasonEntry.next_division`), then the division
    it was in, then its final rank there (so that a bot relegated to a division comes before
    those that stayed, and these before a bot promoted to it); then the bots new since, by
    rating. Bots that no longer play are left out, and the others close up."""
    bots = _playing(variant)
    ranked = _by_rating(variant, bots)
    if previous is None:
        return ranked
    last = {
        e.bot_id: (e.next_division, e.division, e.rank or 0, e.seed) for e in previous.entries.all()
    }
    kept = sorted((b for b in bots if b in last), key=last.__getitem__)
    return kept + [b for b in ranked if b not in last]


def split(bots: Sequence[T], size: int) -> list[list[T]]:
    """``bots``, best first, cut into divisions of ``size``: as many as ``size`` goes whole into
    their number (at least one), the last taking the rest (``size`` to ``2 * size - 1`` bots),
    so that no division is left with a bot or two.

    >>> split("abcdefghij", 4)
    [['a', 'b', 'c', 'd'], ['e', 'f', 'g', 'h', 'i', 'j']]
    >>> split("abcdefgh", 4)
    [['a', 'b', 'c', 'd'], ['e', 'f', 'g', 'h']]
    >>> split("abc", 4)
    [['a', 'b', 'c']]
    """
    if size < 1:
        raise ValueError(f"a division holds at least 1 bot, not {size}")
    count = max(1, len(bots) // size)
    cuts = [list(bots[k * size : (k + 1) * size]) for k in range(count - 1)]
    return [*cuts, list(bots[(count - 1) * size :])]


# ----------------------------------------------------------------------------- the ladder


def ladder_divisions(variant: str, bots: dict[int, int]) -> dict[int, int] | None:
    """The division of each of the ladder's players (``bots``: version id -> bot id) while a
    season of ``variant`` is open, by version id; None when none is. A bot without a seat
    (it started playing during the season) joins the bottom division. Called by the ladder
    inside its transaction."""
    season = open_season_of(variant)
    if season is None:
        return None
    seats = dict(
        SeasonEntry.objects.filter(season=season, bot__in=set(bots.values())).values_list(
            "bot_id", "division"
        )
    )
    newcomers = sorted(set(bots.values()) - set(seats))
    if newcomers:
        with transaction.atomic():
            # Wait for a close under way (it updates this row first): a seat is never added to a
            # season whose standings are being written.
            if not Season.objects.select_for_update().filter(pk=season.pk, status=S.OPEN).exists():
                return None
            tail = season.entries.aggregate(division=Max("division"), seed=Max("seed"))
            bottom = tail["division"] or 1
            seed = tail["seed"] + 1 if tail["seed"] is not None else 0
            now = timezone.now()
            SeasonEntry.objects.bulk_create(
                [
                    SeasonEntry(
                        season=season, bot_id=b, division=bottom, seed=seed + k, joined_at=now
                    )
                    for k, b in enumerate(newcomers)
                ],
                ignore_conflicts=True,
            )
            seats.update(
                SeasonEntry.objects.filter(season=season, bot__in=newcomers).values_list(
                    "bot_id", "division"
                )
            )
    return {version: seats[bot] for version, bot in bots.items()}


# ----------------------------------------------------------------------------- standings


@dataclass(frozen=True)
class Row:
    """A bot's line in its division's standings."""

    rank: int
    entry: SeasonEntry
    #: Its version (when the season closed, or now): its active one, else its newest checked.
    version: BotVersion | None
    wins: int
    draws: int
    losses: int
    #: Its Sonneborn-Berger score in the division.
    tiebreak: float
    #: Its version's rating in the variant (when the season closed, or now).
    elo: float | None
    #: Up, down or stays: where it went (a closed season), or would go if the season closed now.
    move: str

    @property
    def bot(self) -> Bot:
        return self.entry.bot

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def percent(self) -> float:
        return 100.0 * self.points / self.games if self.games else 0.0

    @property
    def move_label(self) -> str:
        return Move(self.move).label if self.move else ""


@dataclass(frozen=True)
class Division:
    number: int
    rows: list[Row]


def standings(season: Season) -> list[Division]:
    """Each division's standings, the top division first: frozen for a closed season (what
    its entries keep), counted from the ladder's games so far for an open one."""
    entries = list(season.entries.select_related("bot__owner", "version").order_by("seed"))
    if not season.is_open:
        return _frozen(season, entries)
    return _live(season, entries, until=timezone.now())


def _frozen(season: Season, entries: list[SeasonEntry]) -> list[Division]:
    by_division: dict[int, list[Row]] = {}
    for e in sorted(entries, key=lambda e: (e.division, e.rank or 0, e.seed)):
        by_division.setdefault(e.division, []).append(
            Row(e.rank or 0, e, e.version, e.wins, e.draws, e.losses, e.tiebreak, e.elo, e.move)
        )
    return [Division(n, rows) for n, rows in sorted(by_division.items())]


def _live(
    season: Season,
    entries: list[SeasonEntry],
    *,
    until: dt.datetime,
    bottom: int | None = None,
    one_division: bool = False,
) -> list[Division]:
    """The standings of an open season's divisions from its games finished by ``until``:
    those of ``entries``, every bot of the season or, with ``one_division``, those of one
    division (whose games alone are read; ``bottom``, the season's last division, is then
    needed)."""
    division = {e.bot_id: e.division for e in entries}
    games = Match.objects.filter(
        kind=Match.Kind.LADDER,
        variant=season.variant,
        status=Match.Status.FINISHED,
        rated=True,
        finished_at__gte=season.opened_at,
        finished_at__lte=until,
    )
    if one_division:
        games = games.filter(white__bot__in=list(division), black__bot__in=list(division))
    results: dict[int, list[tuple[int, int, str, int]]] = {}
    for white, black, result, n in (
        games.order_by()
        .values("white__bot_id", "black__bot_id", "result")
        .annotate(n=Count("id"))
        .values_list("white__bot_id", "black__bot_id", "result", "n")
    ):
        where = division.get(white)
        if white != black and where is not None and where == division.get(black):
            results.setdefault(where, []).append((white, black, result, n))
    versions = _versions([e.bot_id for e in entries], season.variant)
    members: dict[int, list[SeasonEntry]] = {}
    for e in entries:
        members.setdefault(e.division, []).append(e)
    if bottom is None:
        bottom = max(members, default=1)
    out = []
    for number, group in sorted(members.items()):
        by_bot = {e.bot_id: e for e in group}
        table = stats.standings([e.bot_id for e in group], results.get(number, []))
        moves = _moves(len(table), number, bottom, season.movers)
        rows = []
        for s, move in zip(table, moves, strict=True):
            version, elo = versions.get(s.player, (None, None))
            rows.append(
                Row(
                    s.rank,
                    by_bot[s.player],
                    version,
                    s.wins,
                    s.draws,
                    s.losses,
                    s.tiebreak,
                    elo,
                    move,
                )
            )
        out.append(Division(number, rows))
    return out


def _moves(size: int, division: int, bottom: int, movers: int) -> list[str]:
    """Where each place of a division's standings goes: the top ``movers`` up (not from the
    first division), the bottom ``movers`` down (not from the last), the others stay.

    >>> _moves(5, 2, 3, 2)
    ['up', 'up', 'stay', 'down', 'down']
    >>> _moves(3, 1, 1, 1)
    ['stay', 'stay', 'stay']
    """
    moves = [Move.STAY.value] * size
    for k in range(size):
        if division > 1 and k < movers:
            moves[k] = Move.UP.value
        elif division < bottom and k >= size - movers:
            moves[k] = Move.DOWN.value
    return moves


def _versions(bot_ids: list[int], variant: str) -> dict[int, tuple[BotVersion, float | None]]:
    """Each bot's version as its standing names it (its active one, else its newest that
    passed its check) with that version's rating in ``variant``."""
    chosen: dict[int, BotVersion] = {}
    for v in BotVersion.objects.filter(
        bot__in=bot_ids, status__in=[BotVersion.Status.ACTIVE, BotVersion.Status.RETIRED]
    ).order_by("bot_id", "-number"):
        current = chosen.get(v.bot_id)
        if current is None or (
            v.status == BotVersion.Status.ACTIVE and current.status != BotVersion.Status.ACTIVE
        ):
            chosen[v.bot_id] = v
    elo = dict(
        Rating.objects.filter(
            ladder=Ladder.SANDBOX, variant=variant, version__in=[v.pk for v in chosen.values()]
        ).values_list("version_id", "elo")
    )
    return {b: (v, elo.get(v.pk)) for b, v in chosen.items()}


# ----------------------------------------------------------------------------- closing


def close_season(season: Season) -> Season:
    """Close an open season: its standings as they are now are written into its entries (the
    division's rank, wins, draws, losses, tie-break, the version and its rating, and whether
    the bot goes up, stays or goes down), where later games change nothing. Refused with
    :class:`SeasonError` when it is closed already."""
    now = timezone.now()
    with transaction.atomic():
        done = Season.objects.filter(pk=season.pk, status=Season.Status.OPEN).update(
            status=Season.Status.CLOSED, closed_at=now
        )
        if not done:
            raise SeasonError(f"{season.title} is closed already")
        entries = list(season.entries.select_related("bot").order_by("seed"))
        written = []
        for division in _live(season, entries, until=now):
            for row in division.rows:
                e = row.entry
                e.rank, e.version = row.rank, row.version
                e.wins, e.draws, e.losses = row.wins, row.draws, row.losses
                e.tiebreak, e.elo, e.move = row.tiebreak, row.elo, row.move
                written.append(e)
        SeasonEntry.objects.bulk_update(
            written,
            ["rank", "version", "wins", "draws", "losses", "tiebreak", "elo", "move"],
        )
    season.refresh_from_db()
    return season


def close_variant(variant: str) -> Season:
    """Close the open season of ``variant`` (:func:`close_season`); refused when none is."""
    if variant not in Variant.values:
        raise SeasonError(f"no variant {variant!r}: one of {', '.join(Variant.values)}")
    season = open_season_of(variant)
    if season is None:
        raise SeasonError(f"no season of {variant} is open")
    return close_season(season)


def close_ended(today: dt.date | None = None) -> list[Season]:
    """Close the open seasons whose last day is over (``today``, UTC, is later): the periodic
    check. A season closed meanwhile by someone else is left alone."""
    today = today or timezone.now().date()
    closed = []
    for season in Season.objects.filter(status=Season.Status.OPEN, ends_on__lt=today):
        with contextlib.suppress(SeasonError):
            closed.append(close_season(season))
    return closed


# ----------------------------------------------------------------------------- a bot, a file


@dataclass(frozen=True)
class BotSeason:
    """A bot in an open season: its row of its division's standings so far, how many bots its
    division holds, and how many divisions the season has."""

    season: Season
    row: Row
    members: int
    divisions: int


def bot_seasons(bot: Bot) -> tuple[list[BotSeason], list[SeasonEntry]]:
    """The open seasons ``bot`` has a seat in (with its standing so far), and its closed
    seasons' entries, the latest first."""
    entries = list(bot.season_entries.select_related("season", "version").order_by("-season_id"))
    now = []
    for e in entries:
        if not e.season.is_open:
            continue
        # Its division's games only: a bot's page does not read the whole season's.
        bottom = e.season.entries.aggregate(n=Max("division"))["n"] or 1
        mates = list(
            e.season.entries.filter(division=e.division)
            .select_related("bot__owner")
            .order_by("seed")
        )
        (division,) = _live(e.season, mates, until=timezone.now(), bottom=bottom, one_division=True)
        (row,) = (r for r in division.rows if r.entry.bot_id == bot.pk)
        now.append(BotSeason(e.season, row, len(division.rows), bottom))
    history = sorted(
        (e for e in entries if not e.season.is_open),
        key=lambda e: (e.season.closed_at or e.season.opened_at, e.season_id),
        reverse=True,
    )
    return now, history


CSV_COLUMNS = (
    "division",
    "rank",
    "bot",
    "version",
    "owner",
    "games",
    "wins",
    "draws",
    "losses",
    "points",
    "sonneborn_berger",
    "elo",
    "move",
)


def standings_csv(season: Season) -> Download:
    """The season's standings as a CSV file, a row per bot, division by division: frozen for a
    closed season, as they are now for an open one."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for division in standings(season):
        for row in division.rows:
            writer.writerow(
                [
                    division.number,
                    row.rank,
                    row.bot.name,
                    row.version.number if row.version else "",
                    row.bot.owner.username,
                    row.games,
                    row.wins,
                    row.draws,
                    row.losses,
                    stats.format_points(row.points),
                    f"{row.tiebreak:.2f}",
                    f"{row.elo:.0f}" if row.elo is not None else "",
                    row.move,
                ]
            )
    name = f"season-{season.variant}-{season.number}.csv"
    return Download(out.getvalue().encode(), name, CSV_TYPE)
