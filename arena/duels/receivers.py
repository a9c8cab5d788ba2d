"""The duels app's answers to what the games and bots apps announce (:mod:`arena.games.signals`,
:mod:`arena.bots.signals`).

Connected in :meth:`arena.duels.apps.DuelsConfig.ready`.
"""

from __future__ import annotations

from arena.duels import services


def count_and_continue(sender: object, *, match_id: int, **kwargs: object) -> None:
    """A match closed: if it belongs to a test or a challenge, count its pair when both games
    are over, stop at a verdict, and queue the next games."""
    services.match_closed(match_id)


def stop_for_withdrawn_bot(sender: object, *, version_ids: list[int], **kwargs: object) -> None:
    """A bot was withdrawn: its running tests and challenges are cancelled."""
    services.stop_for_versions(version_ids)
