"""Ratings: fitted from the per-pair result counts with :mod:`arena.rating`, cached per variant.

A fit is a pure function of the finished rated results, so it can run at any time, as often as
wanted: :func:`refresh` runs when new results arrived since the last fit (a periodic task),
:func:`recompute` first rebuilds the counts from the matches themselves (a management command).
The built-in ``RATING_ANCHOR_BOT`` (``random``) is held at ``RATING_ANCHOR_ELO``.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.utils import timezone

from arena import rating
from arena.bots.models import Bot, BotVersion
from arena.games.models import Match, PairStats, Rating, RatingPoint, RatingState, Variant

log = logging.getLogger(__name__)


@dataclass
class FitReport:
    variant: str
    players: int
    pairs: int
    results: int
    seconds: float


def anchor_version_id() -> int | None:
    """The version the ratings are anchored to: the anchor bot's active version (else its
    newest one that was not rejected)."""
    versions = BotVersion.objects.filter(
        bot__name=settings.RATING_ANCHOR_BOT, bot__trusted=True
    ).exclude(status=BotVersion.Status.REJECTED)
    active = versions.filter(status=BotVersion.Status.ACTIVE).values_list("pk", flat=True).first()
    return active or versions.order_by("-number").values_list("pk", flat=True).first()


def refresh(variant: str, *, force: bool = False) -> FitReport | None:
    """Fit the variant's ratings again if results arrived since the last fit (or ``force``).

    Replaces the variant's :class:`Rating` rows and adds a :class:`RatingPoint` for every
    version whose number of games changed.
    """
    state, _ = RatingState.objects.get_or_create(variant=variant)
    target = state.results
    if not force and target == state.fitted:
        return None
    started = time.perf_counter()
    fitted = _fit(variant, state)
    now = timezone.now()
    with transaction.atomic():
        # One writer per variant at a time (the row lock), so two fits cannot interleave.
        RatingState.objects.select_for_update().get(variant=variant)
        # A version gets a history point when its games changed since the last fit: its
        # row counted other games then, or a result moved it since (update_after_result).
        last_fit = RatingState.objects.values_list("fitted_at", flat=True).get(variant=variant)
        before = {
            v: games if last_fit is not None and updated <= last_fit else -1
            for v, games, updated in Rating.objects.filter(variant=variant).values_list(
                "version_id", "games", "updated_at"
            )
        }
        # A retired version keeps the rating it had when it retired (its row is written back
        # as it was); its results still inform everyone else's.
        frozen = {
            r.version_id: r
            for r in Rating.objects.filter(
                variant=variant, version__status=BotVersion.Status.RETIRED
            )
        }
        written = [
            frozen.get(version_id)
            or Rating(
                variant=variant,
                version_id=version_id,
                elo=elo,
                error=_finite(error),
                games=games,
                points=points,
            )
            for version_id, elo, error, games, points in fitted.rows
        ]
        written.sort(key=lambda r: -r.elo)
        for rank, row in enumerate(written, 1):
            row.pk, row.rank = None, rank
        Rating.objects.filter(variant=variant).delete()
        Rating.objects.bulk_create(written)
        RatingPoint.objects.bulk_create(
            RatingPoint(
                variant=variant,
                version_id=r.version_id,
                at=now,
                elo=r.elo,
                error=r.error,
                games=r.games,
            )
            for r in written
            if r.version_id not in frozen and before.get(r.version_id) != r.games
        )
        elapsed = time.perf_counter() - started
        RatingState.objects.filter(variant=variant).update(
            fitted=target,
            fitted_at=timezone.now(),  # after the rows' updated_at
            white_advantage=fitted.white_advantage,
            fit_seconds=elapsed,
        )
    return FitReport(variant, len(written), fitted.pairs, target, elapsed)


@dataclass
class _Fitted:
    #: (version id, Elo, 95% half-interval, games, points) of every version that played.
    rows: list[tuple[int, float, float, int, float]]
    white_advantage: float
    pairs: int


def _fit(variant: str, state: RatingState) -> _Fitted:
    """Fit the variant's pair counts (read as arrays: no object per pair), starting from the
    stored ratings and first-player advantage (the last fit: a few iterations instead of
    several; the answer does not depend on the start)."""
    counts = np.array(
        PairStats.objects.filter(variant=variant)
        .exclude(white=F("black"))
        .values_list("white_id", "black_id", "wins", "draws", "losses"),
        dtype=np.int64,
    ).reshape(-1, 5)
    counts = counts[counts[:, 2:].sum(axis=1) > 0]
    ids, where = np.unique(counts[:, :2], return_inverse=True)
    where = where.reshape(-1, 2)
    n = len(ids)
    anchor = anchor_version_id()
    fixed = int(np.searchsorted(ids, anchor)) if anchor is not None and anchor in ids else None
    stored = dict(Rating.objects.filter(variant=variant).values_list("version_id", "elo"))
    start = None
    if n and stored:
        ref_id = int(ids[fixed if fixed is not None else 0])
        base = stored.get(ref_id, settings.RATING_ANCHOR_ELO)
        start = np.array([(stored.get(int(v), base) - base) * rating.ELO_SCALE for v in ids])
    result = rating.fit_arrays(
        where[:, 0],
        where[:, 1],
        counts[:, 2:].sum(axis=1).astype(np.float64),
        counts[:, 2] + counts[:, 3] / 2,
        n,
        fixed=fixed,
        start=start,
        start_advantage=state.white_advantage,
    )
    elo = result.elo + settings.RATING_ANCHOR_ELO
    rows = [
        (
            int(v),
            float(elo[k]),
            float(result.errors[k]),
            round(result.games[k]),
            float(result.points[k]),
        )
        for k, v in enumerate(ids)
    ]
    rows.sort(key=lambda r: (-r[1], str(r[0])))
    return _Fitted(rows, result.white_advantage, len(counts))


def update_after_result(variant: str, white_id: int, black_id: int) -> None:
    """Move the two players of a new result to their best ratings with everyone else's held
    where they are (:func:`arena.rating.fit_one`), and count their games and points: the
    leaderboard follows each result at once, for a few indexed queries. The next
    :func:`refresh` (periodic) writes the exact fit of every result, whatever these steps
    did: the ratings stay a pure function of the results.

    Called inside the result's transaction, after :func:`arena.games.services.count_result`
    (which holds the variant's :class:`RatingState` row, so updates and fits take turns). The
    anchor's rating stays put, a retired version's stays as it was; the intervals of rated
    versions are left to the fit, a newcomer gets one from its own games. White moves first,
    then black against white's new rating (one coordinate step each, as the fit would take).

    Four reads (the advantage; both players' pairs; the ratings of both and their opponents,
    with what says whether one is the anchor; the anchor itself only then) and one write per
    player: this runs after every rated game.
    """
    advantage = (
        RatingState.objects.filter(variant=variant)
        .values_list("white_advantage", flat=True)
        .first()
    ) or 0.0
    players = (white_id, black_id)
    against: dict[int, dict[int, list[float]]] = {white_id: {}, black_id: {}}
    for white, black, wins, draws, losses in (
        PairStats.objects.filter(variant=variant)
        .filter(Q(white_id__in=players) | Q(black_id__in=players))
        .exclude(white=F("black"))
        .values_list("white_id", "black_id", "wins", "draws", "losses")
    ):
        games = wins + draws + losses
        if white in against:  # as white: its points are the wins
            row = against[white].setdefault(black, [0.0, 0.0, 0.0, 0.0])
            row[0] += games
            row[1] += wins + draws / 2
        if black in against:  # as black: the losses
            row = against[black].setdefault(white, [0.0, 0.0, 0.0, 0.0])
            row[2] += games
            row[3] += losses + draws / 2
    opponents = {o for rows in against.values() for o in rows}
    elo_of: dict[int, float] = {}
    retired: set[int] = set()
    anchor_bot: set[int] = set()
    for v, elo, status, bot_name, trusted in Rating.objects.filter(
        variant=variant, version_id__in=[*opponents, *players]
    ).values_list(
        "version_id", "elo", "version__status", "version__bot__name", "version__bot__trusted"
    ):
        elo_of[v] = elo
        if status == BotVersion.Status.RETIRED:
            retired.add(v)
        if trusted and bot_name == settings.RATING_ANCHOR_BOT:
            anchor_bot.add(v)
    # A player without a rating yet may be the anchor too (its first game).
    maybe_anchor = anchor_bot & set(players) or any(p not in elo_of for p in players)
    anchor = anchor_version_id() if maybe_anchor else None
    last_rank: int | None = None
    for version_id in dict.fromkeys(players):
        rows = against[version_id]
        if not rows:
            continue
        last_rank = _update_one(
            variant, version_id, rows, elo_of, anchor, advantage, version_id in retired, last_rank
        )


def _update_one(
    variant: str,
    version_id: int,
    against: dict[int, list[float]],
    elo_of: dict[int, float],
    anchor: int | None,
    advantage: float,
    retired: bool,
    last_rank: int | None,
) -> int | None:
    """One player's step and write; ``elo_of`` follows it (the other player's step sees it).
    Returns the last rank of the leaderboard when it had to be read (a newcomer's)."""
    centre = settings.RATING_ANCHOR_ELO
    games = round(sum(r[0] + r[2] for r in against.values()))
    points = sum(r[1] + r[3] for r in against.values())
    opponents = [(elo_of.get(o, centre), r[0], r[1], r[2], r[3]) for o, r in against.items()]
    current = Rating.objects.filter(variant=variant, version_id=version_id)
    if version_id in elo_of:
        if version_id == anchor:
            current.update(games=games, points=points, updated_at=timezone.now())
        elif not retired:
            elo, _ = rating.fit_one(
                opponents,
                elo=elo_of[version_id],
                white_advantage=advantage,
                centre=centre,
            )
            elo_of[version_id] = elo
            current.update(elo=elo, games=games, points=points, updated_at=timezone.now())
        return last_rank
    elo, error = rating.fit_one(
        opponents,
        elo=centre,
        white_advantage=advantage,
        centre=centre,
    )
    if version_id == anchor:
        elo, error = centre, 0.0
    if last_rank is None:
        last_rank = Rating.objects.filter(variant=variant).aggregate(n=Max("rank"))["n"] or 0
    last_rank += 1
    elo_of[version_id] = elo
    Rating.objects.create(
        variant=variant,
        version_id=version_id,
        elo=elo,
        error=_finite(error),
        games=games,
        points=points,
        rank=last_rank,
    )
    return last_rank


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def refresh_all(*, force: bool = False) -> list[FitReport]:
    """Refresh every variant that has results."""
    variants = set(RatingState.objects.values_list("variant", flat=True))
    if force:
        variants |= set(PairStats.objects.values_list("variant", flat=True).distinct())
    out = []
    for v in sorted(variants):
        report = refresh(v, force=force)
        if report:
            out.append(report)
    return out


def rebuild_pair_stats(variant: str | None = None) -> int:
    """Recount every pair's results from the finished rated matches; returns the number of
    results. Leaves the ratings to :func:`refresh`.

    The counts never pass through Python: one ``GROUP BY`` over the matches goes into a
    temporary table, one join with the stored counts finds the pairs whose counts differ
    (none, unless something went wrong), and only those are written. Rewriting every row
    instead costs far more than counting (index upkeep and key checks for each pair).
    """
    finished = Match.objects.filter(status=Match.Status.FINISHED, rated=True).exclude(
        white=F("black")
    )
    if variant:
        finished = finished.filter(variant=variant)
    grouped = (
        finished.order_by()
        .values("variant", "white_id", "black_id")
        .annotate(
            wins=Count("pk", filter=Q(result="white")),
            draws=Count("pk", filter=Q(result="draw")),
            losses=Count("pk", filter=Q(result="black")),
        )
        .values_list("variant", "white_id", "black_id", "wins", "draws", "losses")
    )
    counting, count_params = grouped.query.sql_with_params()
    q = connection.ops.quote_name
    table = q(PairStats._meta.db_table)
    counted, changed = q("arena_counted_pairs"), q("arena_changed_pairs")
    current = f"SELECT id, variant, white_id, black_id, wins, draws, losses FROM {table}"
    current_params: list[str] = []
    if variant:
        current += " WHERE variant = %s"
        current_params.append(variant)
    keys = "c.variant = p.variant AND c.white_id = p.white_id AND c.black_id = p.black_id"
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL work_mem = '64MB'")  # the GROUP BY in memory
        cursor.execute(
            # columns variant, white_id, black_id, wins, draws, losses
            f"CREATE TEMPORARY TABLE {counted} AS " + counting,
            count_params,
        )
        cursor.execute(
            f"CREATE TEMPORARY TABLE {changed} AS "
            "SELECT p.id AS pid, c.variant, c.white_id, c.black_id, c.wins, c.draws, c.losses "
            f"FROM {counted} c FULL OUTER JOIN ({current}) p "
            f"ON {keys} WHERE p.id IS NULL OR c.variant IS NULL "
            "OR c.wins <> p.wins OR c.draws <> p.draws OR c.losses <> p.losses",
            current_params,
        )
        cursor.execute(
            f"DELETE FROM {table} WHERE id IN (SELECT pid FROM {changed} WHERE variant IS NULL)"
        )
        cursor.execute(
            f"UPDATE {table} SET "
            f"wins = (SELECT wins FROM {changed} WHERE pid = {table}.id), "
            f"draws = (SELECT draws FROM {changed} WHERE pid = {table}.id), "
            f"losses = (SELECT losses FROM {changed} WHERE pid = {table}.id) "
            f"WHERE id IN (SELECT pid FROM {changed} WHERE variant IS NOT NULL)"
        )
        cursor.execute(
            f"INSERT INTO {table} (variant, white_id, black_id, wins, draws, losses) "
            f"SELECT variant, white_id, black_id, wins, draws, losses FROM {changed} "
            "WHERE pid IS NULL"
        )
        cursor.execute(
            f"SELECT variant, SUM(wins + draws + losses) FROM {counted} GROUP BY variant"
        )
        total = {v: int(n) for v, n in cursor.fetchall()}
        cursor.execute(f"DROP TABLE {counted}")
        cursor.execute(f"DROP TABLE {changed}")
        for v in [variant] if variant else [c.value for c in Variant]:
            RatingState.objects.update_or_create(variant=v, defaults={"results": total.get(v, 0)})
    return sum(total.values())


def recompute(variant: str | None = None) -> list[FitReport]:
    """Rebuild the counts from the matches, then fit every variant again from scratch."""
    rebuild_pair_stats(variant)
    if variant:
        report = refresh(variant, force=True)
        return [report] if report else []
    return refresh_all(force=True)


def leaderboard(variant: str, *, include_retired: bool = False) -> QuerySet[Rating]:
    """The variant's cached ratings, best first, with the version, bot and owner joined."""
    qs = (
        Rating.objects.filter(variant=variant)
        .select_related("version__bot__owner")
        .order_by("rank")
    )
    if not include_retired:
        qs = qs.filter(
            version__status=BotVersion.Status.ACTIVE, version__bot__status=Bot.Status.ACTIVE
        )
    return qs
