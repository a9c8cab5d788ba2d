"""System checks: refuse to run in production with development defaults."""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import Error, Tags, register


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
