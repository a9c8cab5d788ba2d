"""What the duels app announces to the apps above it (which it never imports).

Receivers live in the receiving app's ``receivers`` module and are connected in its
``AppConfig.ready``.
"""

from __future__ import annotations

from django.dispatch import Signal

#: A test or a challenge finished: its verdict is reached, its fixed number of games is played
#: or its game budget is spent (not sent when its creator cancels it). Sent inside the
#: transaction that finished it (use ``transaction.on_commit`` for anything outside the
#: database). Arguments: ``duel_id``.
duel_finished = Signal()
