"""Ratings, cached per ladder and variant (each ladder is a rating space of its own,
:class:`arena.ratings.models.Ladder`): fitted from the per-pair result counts
(:mod:`arena.stats.rating`).

Each rated result is counted (:func:`count_result`) in the transaction that writes it. A fit is
a pure function of those counts, so it can run at any time, as often as wanted: :func:`refresh`
runs when new results arrived since the last fit (a periodic task, every ``RATING_INTERVAL_S``);
:func:`arena.games.recount.recount_results` counts them again from the matches themselves.
The built-in ``RATING_ANCHOR_BOT`` (``random``) is held at ``RATING_ANCHOR_ELO``; in a space
where it has no results (the open ladder's, unless it plays there) the mean rating is.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from arena.bots.models import Bot, BotVersion
from arena.ratings.models import Ladder, PairStats, Rating, RatingPoint, RatingState
from arena.stats import rating

log = logging.getLogger(__name__)


#: The counter of a pair (PairStats) each result adds to.
RESULT_FIELD = {"white": "wins", "draw": "draws", "black": "losses"}


@dataclass
class FitReport:
    variant: str
    ladder: Ladder
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


def fit_state(variant: str, ladder: Ladder = Ladder.SANDBOX) -> RatingState | None:
    """When the variant's ratings on the ladder were last fitted, and how many results they
    include of those written (None before its first result)."""
    return RatingState.objects.filter(ladder=ladder, variant=variant).first()


def refresh(
    variant: str, *, ladder: Ladder = Ladder.SANDBOX, force: bool = False
) -> FitReport | None:
    """Fit the variant's ratings on the ladder again if results arrived there since the last
    fit (or ``force``).

    Replaces the variant's :class:`Rating` rows of the ladder and adds a :class:`RatingPoint`
    for every version whose number of games changed.
    """
    space: dict[str, Any] = {"ladder": ladder, "variant": variant}
    state, _ = RatingState.objects.get_or_create(**space)
    target = state.results
    if not force and target == state.fitted:
        return None
    started = time.perf_counter()
    fitted = _fit(ladder, variant, state)
    now = timezone.now()
    with transaction.atomic():
        # One writer per space at a time (the row lock), so two fits cannot interleave.
        RatingState.objects.select_for_update().get(**space)
        # A version gets a history point when its games changed since the last fit.
        before = dict(Rating.objects.filter(**space).values_list("version_id", "games"))
        # A retired version keeps the rating it had when it retired (its row is written back
        # as it was); its results still inform everyone else's.
        frozen = {
            r.version_id: r
            for r in Rating.objects.filter(**space, version__status=BotVersion.Status.RETIRED)
        }
        written = [
            frozen.get(version_id)
            or Rating(
                **space,
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
        Rating.objects.filter(**space).delete()
        Rating.objects.bulk_create(written)
        RatingPoint.objects.bulk_create(
            RatingPoint(
                **space,
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
        RatingState.objects.filter(**space).update(
            fitted=target,
            fitted_at=timezone.now(),  # after the rows' updated_at
            white_advantage=fitted.white_advantage,
            fit_seconds=elapsed,
        )
    return FitReport(variant, ladder, len(written), fitted.pairs, target, elapsed)


@dataclass
class _Fitted:
    #: (version id, Elo, 95% half-interval, games, points) of every version that played.
    rows: list[tuple[int, float, float, int, float]]
    white_advantage: float
    pairs: int


def _fit(ladder: Ladder, variant: str, state: RatingState) -> _Fitted:
    """Fit the variant's pair counts on the ladder (read as arrays: no object per pair),
    starting from the stored ratings and first-player advantage (the last fit: a few
    iterations instead of several; the answer does not depend on the start)."""
    counts = np.array(
        PairStats.objects.filter(ladder=ladder, variant=variant)
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
    stored = dict(
        Rating.objects.filter(ladder=ladder, variant=variant).values_list("version_id", "elo")
    )
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


def count_result(
    variant: str, white_id: int, black_id: int, result: str, *, ladder: Ladder = Ladder.SANDBOX
) -> None:
    """Add one rated result to its pair's counts and to the variant's result counter, in the
    ladder's rating space (:attr:`arena.games.models.Match.rating_space`).

    Called inside the transaction that writes the result; the ratings follow at the next fit
    (:func:`arena.ratings.services.refresh`, every ``RATING_INTERVAL_S``). A version against
    itself teaches the ratings nothing and is not counted.
    """
    if white_id == black_id:
        return
    name = RESULT_FIELD[result]
    space: dict[str, Any] = {"ladder": ladder, "variant": variant}
    pair = PairStats.objects.filter(**space, white_id=white_id, black_id=black_id)
    if not pair.update(**{name: F(name) + 1}):
        try:
            with transaction.atomic():
                PairStats.objects.create(**space, white_id=white_id, black_id=black_id, **{name: 1})
        except IntegrityError:  # created by another worker meanwhile
            pair.update(**{name: F(name) + 1})
    state = RatingState.objects.filter(**space)
    if not state.update(results=F("results") + 1):
        try:
            with transaction.atomic():
                RatingState.objects.create(**space, results=1)
        except IntegrityError:
            state.update(results=F("results") + 1)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def refresh_all(*, force: bool = False) -> list[FitReport]:
    """Refresh every variant of every ladder that has results."""
    spaces = set(RatingState.objects.values_list("ladder", "variant"))
    if force:
        spaces |= set(PairStats.objects.values_list("ladder", "variant").distinct())
    out = []
    for ladder, v in sorted(spaces):
        report = refresh(v, ladder=Ladder(ladder), force=force)
        if report:
            out.append(report)
    return out


def leaderboard(
    variant: str, *, ladder: Ladder = Ladder.SANDBOX, include_retired: bool = False
) -> QuerySet[Rating]:
    """The variant's cached ratings on the ladder, best first, with the version, bot and owner
    joined."""
    qs = (
        Rating.objects.filter(ladder=ladder, variant=variant)
        .select_related("version__bot__owner")
        .order_by("rank")
    )
    if not include_retired:
        qs = qs.filter(
            version__status=BotVersion.Status.ACTIVE, version__bot__status=Bot.Status.ACTIVE
        )
    return qs
