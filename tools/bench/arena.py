"""Benchmarks of the arena: game throughput, page times, rating recomputation.

    ./dev bench arena games   [--games 200] [--rounds 3] [--concurrency 1]
    ./dev bench arena pages   [--requests 30]   (after ./dev bench data)
    ./dev bench arena ratings [--cold]          (after ./dev bench data)

``games`` plays the same number of games between two copies of the built-in ``random`` bot
(instant bots) twice, in several rounds: with the bare referee in this process, then through the
full path (the matches queued, a real Celery worker process claiming, playing and finishing
them, the result and its counts written, the ratings fitted at the end), and compares games per
minute. It uses the configured database and broker (set DATABASE_URL / REDIS_URL to measure
PostgreSQL and Redis) and removes what it made.

``pages`` times the leaderboard, its API and two bot pages with Django's test client
(rendering included). ``ratings`` recounts every pair from the matches and refits every
variant, and prints the peak memory of its process; ``--cold`` deletes the stored ratings
first, so that the fit starts from nothing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min
from django.test import Client

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.celery import app as celery_app
from arena.games import recount, runner
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings import services as ratings
from arena.ratings.models import Rating, RatingState
from tools import ToolError
from tools.bench.data import PREFIX as DATA_PREFIX
from tools.bench.worker import Worker

#: The names of the bots ``games`` makes (and removes).
PREFIX = "benchgames-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench arena",
        description="Measure game throughput, page response times and rating recomputation.",
    )
    parser.add_argument("part", choices=["games", "pages", "ratings"])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--variant", default="yinsh")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cold",
        action="store_true",
        help="ratings: delete the stored ratings first (the fit starts from nothing)",
    )
    o = parser.parse_args(argv)
    if o.part == "games":
        games(o.games, o.concurrency, o.variant, o.rounds)
    elif o.part == "pages":
        pages(o.variant, o.requests)
    else:
        recomputation(cold=o.cold)
    return 0


# ----------------------------------------------------------------------------- games


def games(n: int, c: int, variant: str, rounds: int) -> None:
    """Games per minute of the bare referee and of the full path, round by round, and the
    medians."""
    print(
        f"database {settings.DATABASES['default']['ENGINE']}, broker "
        f"{str(settings.CELERY_BROKER_URL).split(':', 1)[0]}, {n} games, "
        f"concurrency {c}, variant {variant}"
    )
    white, black = _bench_versions()
    rows = []
    try:
        # Alternate the two, several rounds: the machine's other work comes and goes.
        for r in range(rounds):
            bare = _bare(white, black, n, c, variant)
            full = _full(white, black, n, c, variant)
            rows.append((bare, full))
            print(
                f"round {r + 1}: bare referee {bare:.0f} games/min, full path {full:.0f} "
                f"games/min ({100 * full / bare:.0f}%)"
            )
    finally:
        _remove_bench_versions()
    bare = statistics.median(b for b, _ in rows)
    full = statistics.median(f for _, f in rows)
    ratio = statistics.median(f / b for b, f in rows)
    print(
        f"median: bare referee {bare:.0f} games/min, full path {full:.0f} "
        f"games/min; full/bare {100 * ratio:.0f}%"
    )


def _bare(white: BotVersion, black: BotVersion, n: int, c: int, variant: str) -> float:
    ws, bs = runner.load_spec(white), runner.load_spec(black)
    referee = runner.referee()

    def one(i: int) -> None:
        config = runner.game_config(
            variant=variant,
            white=ws,
            black=bs,
            white_label=white.label,
            black_label=black.label,
            time_control="10+0.1",
            seed=i,
            event="bench",
        )
        referee.play(config)

    one(-1)  # warm up (the sandbox's first launch)
    started = time.perf_counter()
    with ThreadPoolExecutor(c) as pool:
        list(pool.map(one, range(n)))
    return n / (time.perf_counter() - started) * 60


def _full(white: BotVersion, black: BotVersion, n: int, c: int, variant: str) -> float:
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    celery_app.conf.task_default_queue = queue
    with transaction.atomic():
        ids = []
        for i in range(n):
            m = Match.objects.create(
                variant=variant,
                kind=Match.Kind.LADDER,
                status=Match.Status.QUEUED,
                white=white if i % 2 == 0 else black,
                black=black if i % 2 == 0 else white,
                time_control="10+0.1",
                seed=i,
            )
            claims.dispatch(m)
            ids.append(m.pk)
    with Worker(queue, c) as worker:
        worker.play(ids)
    # Steady state: from the end of the first game (the worker's start-up and its sandbox's
    # probe are behind it, as the bare referee's warm-up game is) to the end of the last.
    span = Match.objects.filter(pk__in=ids).aggregate(a=Min("finished_at"), b=Max("finished_at"))
    fit_started = time.perf_counter()
    ratings.refresh(variant)
    fit = time.perf_counter() - fit_started
    aborted = Match.objects.filter(pk__in=ids, status="aborted").count()
    seconds = (span["b"] - span["a"]).total_seconds() + fit
    print(
        f"full path: {n - 1} games in {seconds:.1f} s (rating fit {fit:.2f} s), {aborted} aborted"
    )
    return (n - 1) / seconds * 60


def _bench_versions() -> tuple[BotVersion, BotVersion]:
    a, b = (
        bots.builtin_copy(f"{PREFIX}{name}", "random", BotVersion.Status.RETIRED)
        for name in ("a", "b")
    )
    return a, b


def _remove_bench_versions() -> None:
    with transaction.atomic():
        versions = BotVersion.objects.filter(bot__name__startswith=PREFIX)
        Match.objects.filter(white__in=versions).delete()
        Match.objects.filter(black__in=versions).delete()
        Bot.objects.filter(name__startswith=PREFIX).delete()
    recount.recompute()


# ----------------------------------------------------------------------------- pages


def pages(variant: str, requests: int) -> None:
    """The median, least and greatest time of ``requests`` requests of each page (after three
    not counted)."""
    bot = Bot.objects.filter(name__startswith=DATA_PREFIX).order_by("name").first()
    if bot is None:
        raise ToolError("no bench data: run ./dev bench data first")
    client = Client()
    print(
        f"{Bot.objects.count()} bots, {Match.objects.count()} matches, database "
        f"{settings.DATABASES['default']['ENGINE']}"
    )
    busiest = (
        Match.objects.filter(variant=variant)
        .values("white__bot__name")
        .annotate(n=Count("pk"))
        .order_by("-n")
        .values_list("white__bot__name", flat=True)
        .first()
    )
    for label, url in (
        ("leaderboard", f"/leaderboard/{variant}/"),
        ("leaderboard API", f"/api/ratings/?variant={variant}"),
        ("bot page", f"/bots/{bot.name}/"),
        ("bot page (busiest)", f"/bots/{busiest}/"),
    ):
        times = []
        for i in range(requests + 3):
            started = time.perf_counter()
            r = client.get(url)
            elapsed = time.perf_counter() - started
            if r.status_code != 200:
                raise ToolError(f"{url}: {r.status_code}")
            if i >= 3:
                times.append(elapsed * 1000)
        print(
            f"{label:<20} median {statistics.median(times):6.1f} ms  "
            f"(min {min(times):.1f}, max {max(times):.1f}) {url}"
        )


# ----------------------------------------------------------------------------- ratings


def recomputation(*, cold: bool) -> None:
    """Recount every pair from the matches, refit every variant, and say how long each took."""
    n = Match.objects.filter(status="finished").count()
    if cold:
        # From nothing: the stored ratings and advantages the fit would start from go.
        Rating.objects.all().delete()
        RatingState.objects.update(white_advantage=0.0)
    started = time.perf_counter()
    counted = recount.recount_results()
    rebuilt = time.perf_counter() - started
    reports = ratings.refresh_all(force=True)
    total = time.perf_counter() - started
    print(f"{n} finished matches ({counted} rated results)")
    print(f"recount from the matches: {rebuilt:.2f} s")
    for r in reports:
        print(f"fit {r.variant}: {r.players} versions, {r.pairs} pairs, {r.seconds:.2f} s")
    print(f"full recomputation: {total:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MiB")
