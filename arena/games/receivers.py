"""The games app's answers to what the bots app announces (:mod:`arena.bots.signals`).

Connected in :meth:`arena.games.apps.GamesConfig.ready`.
"""

from __future__ import annotations

from arena.games.models import Match


def cancel_ladder_matches(sender: object, *, version_ids: list[int], **kwargs: object) -> None:
    """The ladders' matches not started yet of versions that stopped playing on the ladder (a
    withdrawn bot's, a retired version's) are cancelled: only active versions play there."""
    waiting = Match.objects.filter(
        kind__in=[Match.Kind.LADDER, Match.Kind.OPEN],
        status__in=[Match.Status.PENDING, Match.Status.QUEUED],
    )
    waiting.filter(white__in=version_ids).update(status=Match.Status.CANCELLED)
    waiting.filter(black__in=version_ids).update(status=Match.Status.CANCELLED)
