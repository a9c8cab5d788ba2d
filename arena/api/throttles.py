"""The API's request throttles: Django REST framework's, with the arena's rates.

``api`` limits each logged-in user's requests, ``anon`` each address's requests without a
login; both rates come from ``THROTTLE_RATES`` (``ARENA_THROTTLE_API``, ``ARENA_THROTTLE_ANON``)
when the request arrives, not when the module was imported. Operators (staff) are not limited.
An address is the client's as every per-address limit reads it (:func:`arena.web.clients.address`:
``X-Forwarded-For`` only behind ``ARENA_PROXY_COUNT`` proxies, from the right), not DRF's.
The limits on actions (uploads, tests, challenges, tournaments) are not here: the services
apply them (:mod:`arena.core.throttles`), for the site and the API alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from arena.core.throttles import parse_rate
from arena.web import clients

if TYPE_CHECKING:  # DRF's views import this module (its settings name it): no cycle at run time
    from rest_framework.views import APIView


class _SettingsRate:
    scope: str

    def get_rate(self) -> str | None:
        return settings.THROTTLE_RATES.get(self.scope) or None

    def parse_rate(self, rate: str | None) -> tuple[int | None, int | None]:
        parsed = parse_rate(rate)
        return (None, None) if parsed is None else (parsed.count, parsed.seconds)


class UserThrottle(_SettingsRate, UserRateThrottle):
    scope = "api"

    def allow_request(self, request: Request, view: APIView) -> bool:
        if request.user.is_staff:
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not request.user.is_authenticated:
            return None  # the anon throttle's
        return super().get_cache_key(request, view)


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    scope = "anon"

    def get_ident(self, request: Request) -> str:
        return clients.address(request)
