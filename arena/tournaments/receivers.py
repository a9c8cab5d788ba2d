"""The tournaments app's answers to what the games app announces (:mod:`arena.games.signals`).

Connected in :meth:`arena.tournaments.apps.TournamentsConfig.ready`.
"""

from __future__ import annotations

from arena.tournaments import services


def release_next_games(sender: object, *, tournament_id: int | None, **kwargs: object) -> None:
    """A tournament's match closed: queue its next games, or mark it finished."""
    if tournament_id is not None:
        services.release(tournament_id)
