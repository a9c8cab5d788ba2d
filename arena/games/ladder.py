"""The ladder: keeps rated games flowing between the active versions in every variant, each
version only in the variants it declares.

The periodic ``schedule_ladder`` task tops each variant up to ``LADDER_QUEUE_DEPTH`` matches
queued or running; :func:`schedule_variant` chooses who plays whom. Withdrawn bots' waiting
ladder matches are cancelled by :mod:`arena.games.receivers`.
"""

from __future__ import annotations

import random
from collections import Counter

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from arena.bots.models import Bot, BotVersion, playing
from arena.games import failures, services
from arena.games.models import Match, PairStats, Rating

S = Match.Status
_IN_FLIGHT = (S.QUEUED, S.RUNNING)


def schedule_ladder(rng: random.Random | None = None) -> list[Match]:
    """Top up every ladder variant's queue to ``LADDER_QUEUE_DEPTH`` matches in flight."""
    rng = rng or random.Random()
    created: list[Match] = []
    for variant in settings.LADDER_VARIANTS:
        created += schedule_variant(variant, rng=rng)
    return created


def schedule_variant(
    variant: str, *, rng: random.Random | None = None, depth: int | None = None
) -> list[Match]:
    """Queue ladder matches in one variant until ``depth`` are queued or running.

    Only the active versions that declare the variant play (both players of every match),
    except those paused for failing often there (``ARENA_PAUSE_FAILING_VERSIONS``).
    The player with the fewest games (counting its games in flight) plays first; its opponent
    is the one whose rating is closest, weighed against how many games that one has (another
    version of the same bot only when nobody else is there). Colours alternate per pair.
    """
    rng = rng or random.Random()
    depth = settings.LADDER_QUEUE_DEPTH if depth is None else depth
    tc = settings.LADDER_TIME_CONTROL
    created: list[Match] = []
    with transaction.atomic():
        flying = Match.objects.filter(
            kind=Match.Kind.LADDER, variant=variant, status__in=_IN_FLIGHT
        )
        room = depth - flying.count()
        if room <= 0:
            return []
        players = dict(
            BotVersion.objects.filter(
                playing(variant),
                failures.paused_versions(variant),
                status=BotVersion.Status.ACTIVE,
                bot__status=Bot.Status.ACTIVE,
            ).values_list("pk", "bot_id")
        )
        if len(players) < 2:
            return []
        elo: dict[int, float] = {}
        games: Counter[int] = Counter()
        for vid, e, g in Rating.objects.filter(variant=variant, version__in=players).values_list(
            "version_id", "elo", "games"
        ):
            elo[vid] = e
            games[vid] = g
        default_elo = sum(elo.values()) / len(elo) if elo else settings.RATING_ANCHOR_ELO
        busy: Counter[int] = Counter()
        colours: Counter[tuple[int, int]] = Counter()
        for w, b in flying.values_list("white_id", "black_id"):
            busy[w] += 1
            busy[b] += 1
            colours[w, b] += 1
        for _ in range(room):
            load = {v: games[v] + busy[v] for v in players}
            lightest = min(load.values())
            a = rng.choice(sorted(v for v in players if load[v] == lightest))
            others = [v for v in players if v != a and players[v] != players[a]] or [
                v for v in players if v != a
            ]
            scale = max(1.0, sum(load.values()) / len(load))
            ea = elo.get(a, default_elo)
            # Rating distance (200 Elo counts as much as an average load) plus load; ties at
            # random.
            scored = [
                (abs(ea - elo.get(v, default_elo)) / 200 + load[v] / scale, rng.random(), v)
                for v in others
            ]
            b = min(scored)[2]
            white, black = _colours(variant, a, b, colours)
            m = Match.objects.create(
                variant=variant,
                kind=Match.Kind.LADDER,
                status=S.QUEUED,
                queued_at=timezone.now(),
                white_id=white,
                black_id=black,
                time_control=tc,
                seed=rng.randrange(2**31),
            )
            services.dispatch(m.pk, tc)
            busy[a] += 1
            busy[b] += 1
            colours[white, black] += 1
            created.append(m)
    return created


def _colours(variant: str, a: int, b: int, in_flight: Counter[tuple[int, int]]) -> tuple[int, int]:
    """(white, black) for a and b: whoever had white less often in this pair gets it."""
    played = dict.fromkeys([(a, b), (b, a)], 0)
    for w, bl, wins, draws, losses in PairStats.objects.filter(
        Q(white_id=a, black_id=b) | Q(white_id=b, black_id=a), variant=variant
    ).values_list("white_id", "black_id", "wins", "draws", "losses"):
        played[w, bl] = wins + draws + losses
    ab = played[a, b] + in_flight[a, b]
    ba = played[b, a] + in_flight[b, a]
    if ab != ba:
        return (a, b) if ab < ba else (b, a)
    # Even so far: the one who had black in their latest game takes white.
    last = (
        Match.objects.filter(Q(white_id=a, black_id=b) | Q(white_id=b, black_id=a))
        .filter(variant=variant)
        .order_by("-pk")
        .values_list("white_id", flat=True)
        .first()
    )
    return (b, a) if last == a else (a, b)
