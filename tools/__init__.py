"""Tools that measure the arena from outside: the benchmarks (:mod:`tools.bench`, ``./dev
bench``), the chaos run (:mod:`tools.chaos`, ``./dev chaos``) and the run on several hosts
(:mod:`tools.hosts`, ``./dev hosts``).

They are not part of the product: nothing in ``engine/``, ``arena/`` or ``bots/`` imports them
(tests/test_layout.py checks it) and the arena's package leaves them out (pyproject.toml).
They use the product as any client would; one that needs the arena's Django project sets it
up itself (:func:`setup_django`).
"""

from __future__ import annotations

import os

import django


class ToolError(Exception):
    """Why a tool stopped or failed: its command prints the message and exits with status 1."""


def setup_django() -> None:
    """Load the arena's settings (``DJANGO_SETTINGS_MODULE``, ``arena.settings`` unless set) and
    its apps, as ``manage.py`` does, for a tool run on its own."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    django.setup()
