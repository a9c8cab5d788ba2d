"""System checks: refuse to run in production with development defaults."""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import Error, Tags, register

import engine
from arena.core.throttles import parse_rate


@register(Tags.security, deploy=False)
def check_secret_key(app_configs: Sequence[AppConfig] | None, **kwargs: object) -> list[Error]:
    if not settings.DEBUG and settings.SECRET_KEY == settings.DEFAULT_SECRET_KEY:
        return [
            Error(
                "SECRET_KEY is the development default while ARENA_DEBUG is off.",
                hint="Set the SECRET_KEY environment variable to a long random value.",
                id="arena.E001",
            )
        ]
    return []


@register()
def check_opening_plies(app_configs: Sequence[AppConfig] | None, **kwargs: object) -> list[Error]:
    """ARENA_OPENING_PLIES must fit every variant: an opening places rings only."""
    most = min(2 * v.rings for v in engine.VARIANTS.values())
    if not 0 <= settings.OPENING_PLIES <= most:
        return [
            Error(
                f"ARENA_OPENING_PLIES is {settings.OPENING_PLIES}; an opening places 0 to "
                f"{most} rings in every variant.",
                hint=f"Set ARENA_OPENING_PLIES to a number from 0 to {most}.",
                id="arena.E002",
            )
        ]
    return []


@register()
def check_throttle_rates(app_configs: Sequence[AppConfig] | None, **kwargs: object) -> list[Error]:
    """Every ARENA_THROTTLE_* rate must read as N/period (or be empty: no limit)."""
    errors = []
    for scope, rate in settings.THROTTLE_RATES.items():
        try:
            parse_rate(rate)
        except ValueError as e:
            errors.append(
                Error(
                    f"ARENA_THROTTLE_{scope.upper()}: {e}",
                    hint="Write N/second, N/minute, N/hour or N/day; leave it empty for none.",
                    id="arena.E003",
                )
            )
    return errors
