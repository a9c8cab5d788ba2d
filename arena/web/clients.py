"""Who is asking: the client's address, the one definition every per-address limit uses (the
login limits of :mod:`arena.web.logins` through django-axes, password resets, the pages'
rate limit, the API's limit on anonymous requests).

Without a proxy (``ARENA_PROXY_COUNT=0``, the default unless ``ARENA_HTTPS``) it is the
connection's own address.
Behind ``ARENA_PROXY_COUNT`` reverse proxies it is the address the outermost proxy was reached
from: each proxy appends the address it was reached from to ``X-Forwarded-For``, so that one
stands that many places from the right. Whatever a client writes in the header itself stands
further left and is never believed. docs/deployment.md says how to set it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Protocol

from django.conf import settings

__all__ = ["address"]


class Request(Protocol):
    """A request as Django's and DRF's both are, as far as addresses go."""

    @property
    def META(self) -> Mapping[str, Any]: ...  # Django's name


def address(request: Request) -> str:
    """The client's address (``""`` when the request has none).

    >>> from django.test import RequestFactory, override_settings
    >>> forwarded = {"HTTP_X_FORWARDED_FOR": "6.6.6.6, 1.2.3.4"}
    >>> r = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", **forwarded)
    >>> address(r)
    '10.0.0.2'
    >>> with override_settings(PROXY_COUNT=1):
    ...     address(r)
    '1.2.3.4'
    >>> with override_settings(PROXY_COUNT=2):
    ...     address(r)
    '6.6.6.6'
    >>> with override_settings(PROXY_COUNT=3):  # fewer hops than proxies: not through them all
    ...     address(r)
    '10.0.0.2'
    """
    remote = str(request.META.get("REMOTE_ADDR") or "")
    count = settings.PROXY_COUNT
    if count <= 0:
        return remote
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "")
    hops = [h.strip() for h in forwarded.split(",") if h.strip()]
    if len(hops) < count:
        return remote
    try:
        return str(ipaddress.ip_address(hops[-count]))
    except ValueError:  # a proxy wrote what is not an address: trust the connection
        return remote
