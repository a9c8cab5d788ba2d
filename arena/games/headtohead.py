"""Head-to-head: how two bots did against each other, every version of each, in every game.

The score counts every finished game between them (ladder, tournaments, tests, challenges;
rated or not), from the first bot's side; the Elo difference, its 95% interval and the
likelihood of superiority are those of that score (:func:`arena.stats.trinomial_estimate`, the
per-game figures of a test's page and the leaderboard's LOS table).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from arena import stats
from arena.bots.models import Bot
from arena.core.errors import Refused
from arena.games.models import Match


class HeadToHeadError(Refused, ValueError):
    """Two bots that cannot be compared (a bot and itself)."""


@dataclass(kw_only=True)
class HeadToHead(stats.Score):
    """``a``'s score against ``b`` (in ``variant``, or in every variant when it is empty)."""

    a: Bot
    b: Bot
    variant: str

    @property
    def estimate(self) -> stats.Estimate:
        """``a``'s Elo advantage over ``b``, its 95% interval, score and LOS."""
        return stats.trinomial_estimate(self.wins, self.draws, self.losses)


def _between(a: Bot, b: Bot, variant: str) -> QuerySet[Match]:
    if a.pk == b.pk:
        raise HeadToHeadError(f"{a.name} against itself: choose another bot")
    qs = Match.objects.filter(Q(white__bot=a, black__bot=b) | Q(white__bot=b, black__bot=a))
    return qs.filter(variant=variant) if variant else qs


def games(a: Bot, b: Bot, variant: str = "") -> QuerySet[Match]:
    """Every game between the two bots (any status), newest first."""
    return _between(a, b, variant).select_related("white__bot", "black__bot").order_by("-id")


def head_to_head(a: Bot, b: Bot, variant: str = "") -> HeadToHead:
    """The finished games' score from ``a``'s side (one grouped query)."""
    grouped = (
        _between(a, b, variant)
        .filter(status=Match.Status.FINISHED)
        .values_list("white__bot_id", "result")
        .annotate(n=Count("pk"))
        .order_by()
    )
    score = HeadToHead(a=a, b=b, variant=variant)
    for white_bot, result, n in grouped:
        score.add(result, "white" if white_bot == a.pk else "black", n)
    return score
