"""System checks: refuse settings the arena cannot run with, and warn of production ones
(``manage.py check --deploy``) it should not."""

from __future__ import annotations

import os
from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.checks import Error, Tags, register

import engine
from arena.core.throttles import parse_rate


@register(Tags.security, deploy=True)
def check_secret_key(
    app_configs: Sequence[AppConfig] | None, **kwargs: object
) -> list[checks.CheckMessage]:
    """A site on a database server may be served by several machines: each would make its
    own key (arena.env.machine_secret_key), and a session or a password-reset link made on
    one would be refused by another."""
    if "DATABASE_URL" in os.environ and not os.environ.get("SECRET_KEY"):
        return [
            checks.Warning(
                "SECRET_KEY is not set: this machine signs with a key of its own "
                "(var/secret-key), which other web servers do not share.",
                hint="Set the SECRET_KEY environment variable to one long random value "
                "on every machine of the arena.",
                id="arena.W001",
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


@register()
def check_season_settings(app_configs: Sequence[AppConfig] | None, **kwargs: object) -> list[Error]:
    """The seasons' settings must make sense: a share from 0 to 1, divisions of two bots or
    more, at least one bot going up and down, a positive interval between periodic checks."""
    errors = []
    if not 0.0 <= settings.SEASON_CROSS_SHARE <= 1.0:
        errors.append(
            Error(
                f"ARENA_SEASON_CROSS_SHARE is {settings.SEASON_CROSS_SHARE}: a share of the "
                "ladder's games, from 0 to 1.",
                hint="Set it to 0.1 for a tenth of the games across the divisions' boundaries.",
                id="arena.E004",
            )
        )
    if settings.SEASON_DIVISION_SIZE < 2:
        errors.append(
            Error(
                f"ARENA_SEASON_DIVISION_SIZE is {settings.SEASON_DIVISION_SIZE}: a division "
                "holds at least 2 bots.",
                hint="Set it to 2 or more (8 by default).",
                id="arena.E005",
            )
        )
    if settings.SEASON_MOVERS < 1:
        errors.append(
            Error(
                f"ARENA_SEASON_MOVERS is {settings.SEASON_MOVERS}: at least 1 bot of a "
                "division goes up and down at the end of a season.",
                hint="Set it to 1 or more (2 by default).",
                id="arena.E006",
            )
        )
    if settings.SEASON_CHECK_INTERVAL_S < 1:
        errors.append(
            Error(
                f"ARENA_SEASON_CHECK_INTERVAL is {settings.SEASON_CHECK_INTERVAL_S}: seconds "
                "between two checks for seasons to close, at least 1.",
                hint="Set it to 300 (the default) or so.",
                id="arena.E007",
            )
        )
    return errors
