"""Fill the database with bots and finished matches for the page and rating benchmarks.

    ./dev bench data --bots 1000 --matches 100000 [--clear]

Use a scratch database (``DATABASE_URL=postgres://.../arena_bench``): the data is synthetic.
Bots are named ``bench-NNNN`` and owned by ``bench-owner-N`` users; results are drawn from
hidden true strengths (Elo model with draws), so the fitted ratings are meaningful. Each
version gets a rating history of ``--history`` points. ``--clear`` removes earlier bench data.
On PostgreSQL the tables are analysed at the end, so that the pages are measured with the
plans a live database has.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Sequence
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from arena.bots.models import Bot, BotVersion
from arena.games import recount
from arena.games.models import Match
from arena.ratings.models import Rating, RatingPoint

PREFIX = "bench-"
BATCH = 5000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench data",
        description="Make synthetic bots and finished matches for ./dev bench arena pages|ratings.",
    )
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--variant", default="yinsh")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--history", type=int, default=30, help="rating points per version")
    parser.add_argument("--clear", action="store_true", help="remove bench data first")
    o = parser.parse_args(argv)
    rng = random.Random(o.seed)
    started = time.perf_counter()
    if o.clear:
        clear()
    versions = _bots(o.bots, rng)
    strength = {v: rng.gauss(1200, 300) for v in versions}
    _matches(versions, strength, o.matches, o.variant, rng)
    print("fitting the ratings ...")
    for r in recount.recompute(o.variant):
        print(f"  {r.variant}: {r.players} versions, {r.pairs} pairs, {r.seconds:.2f} s")
    _history(versions, o.variant, o.history, rng)
    if connection.vendor == "postgresql":
        # The planner's statistics of the tables just filled (autovacuum would take its
        # time): the page benchmarks measure the plans a live database has.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"done in {time.perf_counter() - started:.1f} s")
    return 0


def _bots(n: int, rng: random.Random) -> list[int]:
    user_model = get_user_model()
    owners = []
    for i in range(max(1, n // 10)):
        u, _ = user_model.objects.get_or_create(username=f"{PREFIX}owner-{i}")
        owners.append(u)
    with transaction.atomic():
        bots = Bot.objects.bulk_create(
            [
                Bot(
                    name=f"{PREFIX}{i:04d}",
                    owner=owners[i % len(owners)],
                    description="A synthetic bot for the benchmarks.",
                )
                for i in range(n)
            ],
            batch_size=BATCH,
        )
        versions = []
        for b in bots:
            retired = rng.random() < 0.2
            if retired:
                versions.append(_version(b, 1, BotVersion.Status.RETIRED))
            versions.append(_version(b, 2 if retired else 1, BotVersion.Status.ACTIVE))
        made = BotVersion.objects.bulk_create(versions, batch_size=BATCH)
    print(f"{n} bots, {len(made)} versions")
    return [v.pk for v in made]


def _matches(
    versions: list[int],
    strength: dict[int, float],
    n: int,
    variant: str,
    rng: random.Random,
) -> None:
    now = timezone.now()
    order = sorted(versions, key=strength.__getitem__)
    made = 0
    while made < n:
        batch = []
        for _ in range(min(BATCH, n - made)):
            i = rng.randrange(len(order))
            j = min(len(order) - 1, max(0, i + rng.choice([-1, 1]) * rng.randint(1, 40)))
            if i == j:
                j = (i + 1) % len(order)
            w, b = order[i], order[j]
            expected = 1 / (1 + math.pow(10, (strength[b] - strength[w]) / 400))
            u = rng.random()
            result = "draw" if u < 0.1 else ("white" if rng.random() < expected else "black")
            at = now - timedelta(seconds=rng.randrange(90 * 86400))
            batch.append(
                Match(
                    variant=variant,
                    kind=Match.Kind.LADDER,
                    status=Match.Status.FINISHED,
                    white_id=w,
                    black_id=b,
                    time_control="10+0.1",
                    result=result,
                    termination="rows",
                    reason="synthetic",
                    plies=rng.randint(40, 140),
                    duration_s=1.0,
                    attempts=1,
                    started_at=at,
                    heartbeat_at=at,
                    finished_at=at,
                )
            )
        Match.objects.bulk_create(batch, batch_size=BATCH)
        made += len(batch)
        print(f"  {made} matches")


def _history(versions: list[int], variant: str, points: int, rng: random.Random) -> None:
    now = timezone.now()
    final = dict(Rating.objects.filter(variant=variant).values_list("version_id", "elo"))
    batch = []
    for v in versions:
        target = final.get(v)
        if target is None:
            continue
        for k in range(points):
            frac = (k + 1) / points
            batch.append(
                RatingPoint(
                    variant=variant,
                    version_id=v,
                    at=now - timedelta(hours=points - k),
                    elo=1000 + (target - 1000) * frac + rng.gauss(0, 30 * (1 - frac)),
                    error=200 * (1 - frac) + 20,
                    games=int(100 * frac),
                )
            )
        if len(batch) >= BATCH:
            RatingPoint.objects.bulk_create(batch)
            batch = []
    RatingPoint.objects.bulk_create(batch)


def _version(bot: Bot, number: int, status: str) -> BotVersion:
    return BotVersion(
        bot=bot,
        number=number,
        status=status,
        sha256="0" * 64,
        kind=BotVersion.Kind.TARGZ,
        filename=f"{bot.name}.tar.gz",
        size=1,
    )


def clear() -> None:
    """Remove every bench bot, its versions, matches and ratings."""
    with transaction.atomic():
        versions = BotVersion.objects.filter(bot__name__startswith=PREFIX)
        Match.objects.filter(white__in=versions).delete()
        Match.objects.filter(black__in=versions).delete()
        Bot.objects.filter(name__startswith=PREFIX).delete()
        get_user_model().objects.filter(username__startswith=f"{PREFIX}owner-").delete()
