"""The ladders: keep rated games flowing between the active versions in every variant, each
version only in the variants it declares.

There are two (:data:`LADDERS`), each rated in its own space (:class:`Ladder`): the ladder of
the sandboxed bots, and the open ladder, where remote bots whose client is connected meet the
sandboxed bots whose owners opted in (``Bot.open_ladder``). The periodic ``schedule_ladder``
task tops each variant of each up to its depth (``LADDER_QUEUE_DEPTH``,
``OPEN_LADDER_QUEUE_DEPTH``) of matches queued or running, in pairs of games with the colours
reversed from one opening; :func:`schedule_variant` chooses who plays whom: on the sandboxed
ladder within divisions while a season of the variant is open (:mod:`arena.games.seasons`).
The waiting ladder matches of withdrawn bots and retired versions are cancelled by
:mod:`arena.games.receivers`.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from arena.bots.models import Bot, BotVersion, playing
from arena.games import reliability, seasons, services
from arena.games.models import Match
from arena.jobs import claims
from arena.ratings.models import Ladder, PairStats, Rating

S = Match.Status
_IN_FLIGHT = (S.QUEUED, S.RUNNING)


@dataclass(frozen=True)
class LadderRules:
    """What sets a ladder apart: its rating space, the kind of its matches, who may play there
    (:meth:`players`), its settings, and whether seasons divide it."""

    ladder: Ladder
    kind: Match.Kind
    #: The names of the settings of its depth and time control.
    depth_setting: str
    time_control_setting: str
    seasons: bool
    #: Whether each pairing has a remote bot in it (its first player).
    remote_in_each: bool

    @property
    def depth(self) -> int:
        return int(getattr(settings, self.depth_setting))

    @property
    def time_control(self) -> str:
        return str(getattr(settings, self.time_control_setting))

    def players(self) -> Q:
        """The bots that may play, as a filter on versions: on the sandboxed ladder the
        sandboxed bots (a remote bot runs outside the sandbox's limits); on the open ladder
        those whose owners opted in, and the remote bots (never a person's seat) whose client
        asked for work within ``REMOTE_SEEN_S`` (an absent one would lose every game)."""
        sandboxed = Q(bot__kind=Bot.Kind.UPLOAD)
        if self.ladder == Ladder.SANDBOX:
            return sandboxed
        seen = timezone.now() - timedelta(seconds=settings.REMOTE_SEEN_S)
        return (sandboxed & Q(bot__open_ladder=True)) | Q(
            bot__kind=Bot.Kind.REMOTE, bot__seen_at__gte=seen
        )


LADDERS = {
    Ladder.SANDBOX: LadderRules(
        Ladder.SANDBOX,
        Match.Kind.LADDER,
        "LADDER_QUEUE_DEPTH",
        "LADDER_TIME_CONTROL",
        seasons=True,
        remote_in_each=False,
    ),
    Ladder.OPEN: LadderRules(
        Ladder.OPEN,
        Match.Kind.OPEN,
        "OPEN_LADDER_QUEUE_DEPTH",
        "OPEN_LADDER_TIME_CONTROL",
        seasons=False,
        remote_in_each=True,
    ),
}

#: The kinds of the ladders' matches.
LADDER_KINDS = [rules.kind for rules in LADDERS.values()]


def schedule_ladder(rng: random.Random | None = None) -> list[Match]:
    """Top up every variant of every ladder to its depth of matches in flight (one more at
    most: a pair is never split)."""
    rng = rng or random.Random()
    created: list[Match] = []
    for ladder in LADDERS:
        for variant in settings.LADDER_VARIANTS:
            created += schedule_variant(variant, rng=rng, ladder=ladder)
    return created


def schedule_variant(
    variant: str,
    *,
    rng: random.Random | None = None,
    depth: int | None = None,
    ladder: Ladder = Ladder.SANDBOX,
) -> list[Match]:
    """Queue a ladder's matches in one variant, a pair at a time, while fewer than ``depth``
    (the ladder's setting by default) are queued or running (so at most ``depth + 1`` are: a
    pair is never split).

    Only the active versions of bots not withdrawn that declare the variant and may play on
    the ladder (:meth:`LadderRules.players`) play (both players of every match), except those
    paused for failing often there
    (``ARENA_PAUSE_FAILING_VERSIONS``, on by default: until their owner resumes them or their
    recent games are good again, :mod:`arena.games.reliability`). The player with the fewest
    games (counting its games in flight) plays first; its opponent is the one whose rating is
    closest on that ladder, weighed against how many games that one has (for a share
    ``LADDER_ANY_RATING_SHARE`` of the pairings: how many games alone), among the versions of
    other owners (the same owner's other bots only when nobody else is there). While a season
    of the variant is open (on the sandboxed ladder: the open ladder has none), that opponent
    comes from the first player's division, or, for a share ``SEASON_CROSS_SHARE`` of the
    pairings, from the division next to it (:func:`_opponents`).
    Each pairing is two matches with the colours reversed, from the same seed and opening
    (``OPENING_PLIES`` ring placements drawn with that seed), so that neither side profits from
    an easy start.
    """
    rng = rng or random.Random()
    rules = LADDERS[ladder]
    depth = rules.depth if depth is None else depth
    tc = rules.time_control
    created: list[Match] = []
    with transaction.atomic():
        flying = Match.objects.filter(kind=rules.kind, variant=variant, status__in=_IN_FLIGHT)
        in_flight = flying.count()
        if in_flight >= depth:
            return []
        found = list(
            BotVersion.objects.filter(
                playing(variant),
                reliability.paused_versions(variant),
                rules.players(),
                status=BotVersion.Status.ACTIVE,
                bot__status=Bot.Status.ACTIVE,
            ).values_list("pk", "bot__owner_id", "bot_id", "bot__kind")
        )
        owners = {pk: owner for pk, owner, _, _ in found}
        bots = {pk: bot for pk, _, bot, _ in found}
        players = sorted(owners)
        # On the open ladder every pairing has a remote bot in it: two sandboxed bots meet on
        # the sandboxed ladder already (and without a remote bot connected, nothing is played).
        first = [
            pk for pk, _, _, kind in found if kind == Bot.Kind.REMOTE or not rules.remote_in_each
        ]
        if len(players) < 2 or not first:
            return []
        division = seasons.ladder_divisions(variant, bots) if rules.seasons else None
        share = settings.SEASON_CROSS_SHARE
        elo: dict[int, float] = {}
        games: Counter[int] = Counter()
        for vid, e, g in Rating.objects.filter(
            ladder=ladder, variant=variant, version__in=players
        ).values_list("version_id", "elo", "games"):
            elo[vid] = e
            games[vid] = g
        default_elo = sum(elo.values()) / len(elo) if elo else settings.RATING_ANCHOR_ELO
        busy: Counter[int] = Counter()
        colours: Counter[tuple[int, int]] = Counter()
        for w, b in flying.values_list("white_id", "black_id"):
            busy[w] += 1
            busy[b] += 1
            colours[w, b] += 1
        while in_flight < depth:
            load = {v: games[v] + busy[v] for v in players}
            lightest = min(load[v] for v in first)
            a = rng.choice([v for v in first if load[v] == lightest])
            if division is None:
                others = [v for v in players if owners[v] != owners[a]] or [
                    v for v in players if v != a
                ]
            else:
                others = _opponents(a, players, owners, division, share, rng)
            scale = max(1.0, sum(load.values()) / len(load))
            ea = elo.get(a, default_elo)
            # Rating distance (200 Elo counts as much as an average load) plus load; ties at
            # random. A share of the pairings looks at load alone, so that every rating stays
            # tied to those far from it (a bad start is not kept for ever).
            by_rating = rng.random() >= settings.LADDER_ANY_RATING_SHARE
            scored = [
                (
                    abs(ea - elo.get(v, default_elo)) / 200 * by_rating + load[v] / scale,
                    rng.random(),
                    v,
                )
                for v in others
            ]
            b = min(scored)[2]
            white, black = _colours(ladder, variant, a, b, colours, rng)
            for m in services.create_pair(
                variant,
                white,
                black,
                seed=rng.randrange(2**31),
                kind=rules.kind,
                status=S.QUEUED,
                queued_at=timezone.now(),
                time_control=tc,
            ):
                claims.dispatch(m)
                colours[m.white_id, m.black_id] += 1
                created.append(m)
            busy[a] += 2
            busy[b] += 2
            in_flight += 2
    return created


def _opponents(
    a: int,
    players: list[int],
    owners: dict[int, int],
    division: dict[int, int],
    share: float,
    rng: random.Random,
) -> list[int]:
    """Whom ``a`` may meet while a season is open: the players of its division; with the
    probability ``share``, those of the nearest divisions around it instead (the adjacent ones,
    unless nobody plays there). Other owners' bots first: those of the chosen group, else of the
    other group; the same owner's only when there are no others. A player alone in its division
    meets those of the nearest divisions."""
    mine = division[a]
    same = [v for v in players if v != a and division[v] == mine]
    gaps = {abs(division[v] - mine) for v in players if division[v] != mine}
    near = [v for v in players if gaps and abs(division[v] - mine) == min(gaps)]
    first, second = same, near
    if near and (not same or rng.random() < share):
        first, second = near, same
    for group in (first, second):
        theirs = [v for v in group if owners[v] != owners[a]]
        if theirs:
            return theirs
    return first or second


def _colours(
    ladder: Ladder,
    variant: str,
    a: int,
    b: int,
    in_flight: Counter[tuple[int, int]],
    rng: random.Random,
) -> tuple[int, int]:
    """(white, black) of a pairing's first game: whoever had white less often in this pair
    (a game of a pair may have been cancelled), else either at random."""
    played = dict.fromkeys([(a, b), (b, a)], 0)
    for w, bl, wins, draws, losses in PairStats.objects.filter(
        Q(white_id=a, black_id=b) | Q(white_id=b, black_id=a), ladder=ladder, variant=variant
    ).values_list("white_id", "black_id", "wins", "draws", "losses"):
        played[w, bl] = wins + draws + losses
    ab = played[a, b] + in_flight[a, b]
    ba = played[b, a] + in_flight[b, a]
    if ab != ba:
        return (a, b) if ab < ba else (b, a)
    return (a, b) if rng.random() < 0.5 else (b, a)
