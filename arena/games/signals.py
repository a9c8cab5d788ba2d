"""What the games app announces to the apps above it (which it never imports).

Receivers live in the receiving app's ``receivers`` module and are connected in its
``AppConfig.ready`` (as :mod:`arena.tournaments.receivers` is).
"""

from __future__ import annotations

from django.dispatch import Signal

#: A match was closed: finished with a result, or aborted. Sent inside the transaction that
#: closed it, so that what a receiver writes commits (or not) with the result.
#: Arguments: ``match_id`` and ``tournament_id`` (None for a ladder or qualification game).
match_closed = Signal()
