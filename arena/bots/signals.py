"""What the bots app announces to the apps above it (which it never imports).

Receivers live in the receiving app's ``receivers`` module and are connected in its
``AppConfig.ready``.
"""

from __future__ import annotations

from django.dispatch import Signal

#: A bot was withdrawn by its owner, inside the transaction that withdrew it.
#: Arguments: ``bot_id`` and ``version_ids`` (all its versions).
bot_withdrawn = Signal()

#: Versions stopped being active (a newer version passed its check, or the owner made another
#: version the active one), inside the transaction that retired them.
#: Arguments: ``bot_id`` and ``version_ids`` (the versions retired).
versions_retired = Signal()
