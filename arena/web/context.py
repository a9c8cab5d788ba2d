"""What every page's template may use beside the request and the user."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict[str, Any]:
    """``source_url``: where the arena's source code is published (empty: not said)."""
    return {"source_url": settings.SOURCE_URL}
