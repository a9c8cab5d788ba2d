"""System checks: refuse to run in production with development defaults."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=False)
def check_secret_key(app_configs: Any, **kwargs: Any) -> list[Error]:
    if not settings.DEBUG and settings.SECRET_KEY == settings.DEFAULT_SECRET_KEY:
        return [
            Error(
                "SECRET_KEY is the development default while ARENA_DEBUG is off.",
                hint="Set the SECRET_KEY environment variable to a long random value.",
                id="arena.E001",
            )
        ]
    return []
