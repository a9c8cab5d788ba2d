"""What the bots app announces to the apps above it (which it never imports).

Receivers live in the receiving app's ``receivers`` module and are connected in its
``AppConfig.ready``.
"""

from __future__ import annotations

from django.dispatch import Signal

#: A bot was withdrawn by its owner, inside the transaction that withdrew it.
#: Arguments: ``bot_id`` and ``version_ids`` (all its versions).
bot_withdrawn = Signal()
